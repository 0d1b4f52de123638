#!/usr/bin/env bash
# Runs every Google Benchmark program under build/release/bench and writes JSON results to
# build/release/bench-results/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/build/release/bench-results"
mkdir -p "$out"
for bin in "$root"/build/release/bench/bench_*; do
  [[ -x "$bin" ]] || continue
  name=$(basename "$bin")
  echo "== $name"
  "$bin" --benchmark_out="$out/$name.json" --benchmark_out_format=json "$@"
done
