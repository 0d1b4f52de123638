#!/usr/bin/env bash
# clang-tidy with the committed .clang-tidy over the project's own sources (src/ and fuzz/; the
# tests are GoogleTest macro code the checks mostly misread). Uses the compile commands of a
# configured build (default build/release; `cmake --preset release` writes them). Any finding
# fails the run (and CI, which runs it through `make tidy`): fix it, or, when the check is wrong
# for that line, silence it there with NOLINT(check-name) and a reason.
#
# The presets build in unity batches (a target's files compiled eight at a time, CMAKE_UNITY_BUILD),
# so the compile commands name the batches, not the files: clang-tidy checks each batch that holds
# a file asked for, and reports the findings of every file of src/ and fuzz/ it holds. With the
# sanitizer build's commands (build/asan, clang, once built) it also reads that build's
# precompiled headers; a g++ build's .gch files are unreadable to clang, so their commands are
# used without them. Cost: clang-tidy 14 runs every check over each unit's whole AST, system
# headers included; .clang-tidy says which checks were dropped for cost.
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
db=$(mktemp -d)
# Writes the compile commands clang-tidy gets, and prints the units to check (one per line).
mapfile -t units < <(python3 - "$build/compile_commands.json" "$db/compile_commands.json" "$root" "${files[@]}" <<'PY'
import json, os, re, shlex, sys
src, dst, root, wanted = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
wanted = {os.path.normpath(os.path.join(root, f)) for f in wanted}
cmds = json.load(open(src))
units, covered = [], set()
for c in cmds:
    args = shlex.split(c["command"]) if "command" in c else c["arguments"]
    if args and args[0] == "ccache":
        args = args[1:]
    if not (args and "clang" in os.path.basename(args[0])):
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
        args = out
    c.pop("command", None)
    c["arguments"] = args
    f = os.path.normpath(os.path.join(c["directory"], c["file"]))
    holds = {f}
    if "/Unity/" in f:
        holds = {os.path.normpath(m) for m in re.findall(r'#include "([^"]+)"', open(f).read())}
    hit = holds & wanted
    if hit:
        units.append(f)
        covered |= hit
json.dump(cmds, open(dst, "w"))
missing = sorted(wanted - covered)
if missing:
    sys.stderr.write("clang-tidy: no compile command holds " + ", ".join(os.path.relpath(m, root) for m in missing)
                     + " (configure the build again)\n")
    sys.exit(2)
print("\n".join(sorted(set(units))))
PY
)
[[ ${#units[@]} -gt 0 ]] || { rm -rf "$db"; exit 2; }
# run-clang-tidy takes regular expressions; anchor each unit so a.cpp never matches xa.cpp.
patterns=()
for u in "${units[@]}"; do patterns+=("${u//./\\.}\$"); done
log=$(mktemp)
start=$(date +%s)
set +e
# The configuration is passed, not looked up: clang-tidy would look for .clang-tidy above each
# unit, and a build folder outside the repository has none.
"$tidy" -p "$db" -j "${JOBS:-$(nproc)}" -quiet -config="$(cat "$root/.clang-tidy")" \
  -header-filter="^$root/(src|fuzz)/.*" "${patterns[@]}" >"$log" 2>&1
rc=$?
set -e
# The findings (file:line:col: warning|error: ... [check]) in src/ and fuzz/, each once (headers are
# seen by many units). A unit's own file only #includes the batch's files (bugprone-suspicious-include
# says so of every unity batch): it is not project code. clang-tidy 14 colours its diagnostics even
# into a file: strip the escape sequences first, or no line would start with the path and every
# finding would go uncounted.
sed -E 's/\x1b\[[0-9;]*m//g' "$log" | grep -E "^$root/(src|fuzz)/.*:[0-9]+:[0-9]+: (warning|error):" | sort -u >"$log.findings" || true
# A unit that clang cannot compile is a failure too, wherever its error lies.
if grep -qE '^/.*:[0-9]+:[0-9]+: error:' <(sed -E 's/\x1b\[[0-9;]*m//g' "$log"); then
  sed -E 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^/.*:[0-9]+:[0-9]+: error:' | sort -u >>"$log.findings"
fi
sort -u -o "$log.findings" "$log.findings"
n=$(wc -l <"$log.findings")
cat "$log.findings"
if [[ $rc -ne 0 && $n -eq 0 ]]; then tail -n 30 "$log"; fi
echo "clang-tidy: ${#files[@]} files in ${#units[@]} units, $n findings, $(( $(date +%s) - start )) s"
rm -rf "$log" "$log.findings" "$db"
[[ $n -eq 0 && $rc -eq 0 ]]
