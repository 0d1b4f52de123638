#!/usr/bin/env bash
# Runs every libFuzzer target built by the 'fuzz' preset for a few seconds each, starting from the
# committed corpus in fuzz/corpus/<target>/, FUZZ_JOBS targets at a time (default: one per core).
# Any crash fails the run (and leaves crash-* files in build/fuzz/artifacts/ to turn into named
# regression tests); each target's last lines are printed when it ends, whole.
set -euo pipefail
seconds=${1:-60}
jobs=${FUZZ_JOBS:-$(nproc)}
root=$(cd "$(dirname "$0")/.." && pwd)
art="$root/build/fuzz/artifacts"
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
mkdir -p "$art"
bins=()
for bin in "$root"/build/fuzz/fuzz/fuzz_*; do
  [[ -x "$bin" ]] && bins+=("$bin")
done
[[ ${#bins[@]} -gt 0 ]] || { echo "fuzz: no targets built"; exit 1; }

run_one() {
  local bin=$1 name corpus
  name=$(basename "$bin")
  corpus="$root/build/fuzz/corpus/$name"
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
