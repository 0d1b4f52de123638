#!/usr/bin/env bash
# Runs every libFuzzer target of the 'asan' preset's clang build (which builds them beside the
# sanitizer tests) for a few seconds each, starting from the committed corpus
# in fuzz/corpus/<target>/, FUZZ_JOBS targets at a time (default: one per core). Any crash fails
# the run (and leaves crash-* files in BUILD/artifacts/ to turn into named regression tests); each
# target's last lines are printed when it ends, whole.
#   scripts/fuzz-smoke.sh [SECONDS] [BUILD_DIR]   (default 60 s, build/asan)
set -euo pipefail
seconds=${1:-60}
jobs=${FUZZ_JOBS:-$(nproc)}
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/${2:-build/asan}"
art="$build/artifacts"
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
mkdir -p "$art"
bins=()
for bin in "$build"/fuzz/fuzz_*; do
  [[ -x "$bin" ]] && bins+=("$bin")
done
[[ ${#bins[@]} -gt 0 ]] || { echo "fuzz: no targets built in $build"; exit 1; }

run_one() {
  local bin=$1 name corpus
  name=$(basename "$bin")
  corpus="$build/corpus/$name"
  mkdir -p "$corpus"
  if [[ -d "$root/fuzz/corpus/$name" ]]; then cp -n "$root/fuzz/corpus/$name"/* "$corpus"/ 2>/dev/null || true; fi
  "$bin" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$art/$name-" -print_final_stats=1 "$corpus" >"$logs/$name.log" 2>&1
}

failed=0
running=()
names=()
finish() {  # waits for the oldest running target and prints its summary
  local pid=${running[0]} name=${names[0]} rc=0
  wait "$pid" || rc=$?
  echo "fuzz: $name for ${seconds}s: exit $rc"
  tail -n 12 "$logs/$name.log"
  [[ $rc -eq 0 ]] || failed=1
  running=("${running[@]:1}")
  names=("${names[@]:1}")
}
for bin in "${bins[@]}"; do
  [[ ${#running[@]} -lt $jobs ]] || finish
  run_one "$bin" &
  running+=("$!")
  names+=("$(basename "$bin")")
done
while [[ ${#running[@]} -gt 0 ]]; do finish; done
[[ $failed -eq 0 ]] || { echo "fuzz: a target failed (artifacts in $art)"; exit 1; }
