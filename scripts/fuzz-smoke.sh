#!/usr/bin/env bash
# Runs every libFuzzer target built by the 'fuzz' preset for a few seconds each, starting from the
# committed corpus in fuzz/corpus/<target>/. Any crash fails the run (and leaves crash-* files in
# build/fuzz/artifacts/ to turn into named regression tests).
set -euo pipefail
seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
art="$root/build/fuzz/artifacts"
mkdir -p "$art"
found=0
for bin in "$root"/build/fuzz/fuzz/fuzz_*; do
  [[ -x "$bin" ]] || continue
  found=1
  name=$(basename "$bin")
  corpus="$root/build/fuzz/corpus/$name"
  mkdir -p "$corpus"
  if [[ -d "$root/fuzz/corpus/$name" ]]; then cp -n "$root/fuzz/corpus/$name"/* "$corpus"/ 2>/dev/null || true; fi
  echo "fuzz: $name for ${seconds}s"
  "$bin" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$art/$name-" -print_final_stats=1 "$corpus" 2>&1 | tail -n 12
done
[[ $found -eq 1 ]] || { echo "fuzz: no targets built"; exit 1; }
