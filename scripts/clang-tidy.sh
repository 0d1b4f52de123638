#!/usr/bin/env bash
# clang-tidy with the committed .clang-tidy over the project's own sources (src/ and fuzz/; the
# tests are GoogleTest macro code the checks mostly misread). Uses the compile commands of a
# configured build (default build/release; `cmake --preset release` writes them). Any finding
# fails the run (and CI, which runs it through `make tidy`): fix it, or, when the check is wrong
# for that line, silence it there with NOLINT(check-name) and a reason. Cost: clang-tidy 14 runs
# every check over each file's whole AST, system headers included, about 9 s of CPU per file (15 s
# for the CLI files, which include CLI11); .clang-tidy says which checks were dropped for cost.
#   scripts/clang-tidy.sh [BUILD_DIR] [FILE...]   (JOBS=N parallel runs, default nproc)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${1:-build/release}
shift || true
if [[ ! -f "$build/compile_commands.json" ]]; then
  echo "clang-tidy: $build/compile_commands.json missing; run 'cmake --preset release' first" >&2
  exit 2
fi
tidy=$(command -v run-clang-tidy || command -v run-clang-tidy-14 || true)
[[ -n "$tidy" ]] || { echo "clang-tidy: run-clang-tidy not installed (apt-get install clang-tidy)" >&2; exit 2; }
if [[ $# -gt 0 ]]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files 'src/*.cpp' 'fuzz/*.cpp')
fi
# The build precompiles headers with g++ (cmake/numcheck.cmake); clang cannot read g++'s .gch files,
# so clang-tidy gets the compile commands without the precompiled header (it reads the headers
# themselves, as a build without NUMCHECK_PCH would).
db=$(mktemp -d)
python3 - "$build/compile_commands.json" "$db/compile_commands.json" <<'PY'
import json, shlex, sys
cmds = json.load(open(sys.argv[1]))
for c in cmds:
    args = shlex.split(c["command"]) if "command" in c else c["arguments"]
    out, skip = [], False
    for i, a in enumerate(args):
        if skip:
            skip = False
            continue
        if a == "-Winvalid-pch":
            continue
        if a == "-include" and i + 1 < len(args) and args[i + 1].endswith("cmake_pch.hxx"):
            skip = True
            continue
        out.append(a)
    c.pop("command", None)
    c["arguments"] = out
json.dump(cmds, open(sys.argv[2], "w"))
PY
build=$db
# run-clang-tidy takes regular expressions; anchor each file so a.cpp never matches xa.cpp.
patterns=()
for f in "${files[@]}"; do patterns+=("$root/${f//./\\.}\$"); done
log=$(mktemp)
start=$(date +%s)
set +e
"$tidy" -p "$build" -j "${JOBS:-$(nproc)}" -quiet -header-filter="^$root/src/.*" "${patterns[@]}" >"$log" 2>&1
rc=$?
set -e
# The findings (file:line:col: warning|error: ... [check]), each once (headers are seen by many TUs).
# clang-tidy 14 colours its diagnostics even into a file: strip the escape sequences first, or no
# line would start with the path and every finding would go uncounted.
sed -E 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^/.*:[0-9]+:[0-9]+: (warning|error):' | sort -u >"$log.findings" || true
n=$(wc -l <"$log.findings")
cat "$log.findings"
echo "clang-tidy: ${#files[@]} files, $n findings, $(( $(date +%s) - start )) s"
rm -rf "$log" "$log.findings" "$db"
[[ $n -eq 0 && $rc -eq 0 ]]
