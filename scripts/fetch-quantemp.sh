#!/usr/bin/env bash
# Downloads the upstream QuanTemp claim files (Venktesh V, Anand, Anand, Setty: "QuanTemp: A
# Real-world Open-domain Benchmark for Fact-checking Numerical Claims", SIGIR 2024; data licence
# CC BY-NC 4.0) for a user with internet access, and checks each file's SHA-256 against the value
# recorded here. A file whose hash does not match is deleted and the script exits 1.
#
# Usage: scripts/fetch-quantemp.sh [--dest DIR] [--base-url URL] [--manifest FILE]
#   --dest DIR       where to put the files (default: $NUMCHECK_QUANTEMP, else ../shared/data/quantemp
#                    relative to the repository)
#   --base-url URL   where raw_data/ lives (default: the QuanTemp repository's data folder on
#                    GitHub); any URL curl reads works, file:// included
#   --manifest FILE  lines "<relative path> <sha256>" to fetch instead of the built-in list
#
# Exit codes: 0 all files present and verified, 1 a download failed or a hash did not match,
# 2 usage.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${NUMCHECK_QUANTEMP:-$repo_root/../shared/data/quantemp}"
base_url="https://raw.githubusercontent.com/factiverse/QuanTemp/main/data"
manifest=""

while [[ $# -gt 0 ]]; do
  case "$1" in
    --dest) dest="$2"; shift 2 ;;
    --base-url) base_url="${2%/}"; shift 2 ;;
    --manifest) manifest="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fetch-quantemp: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

# The upstream full splits (train 9,935 / val 3,084 / test 2,495 claims) and their SHA-256.
builtin_manifest="raw_data/train_claims_quantemp.json 4df1543a25416d85e727f206cf4de2c509b30c7db1eb93a62e0ee3968667d626
raw_data/val_claims_quantemp.json 49ad37aea769714a0cf53beacd74f78d18f81b95df9d0d2bf578e2457454ccd3
raw_data/test_claims_quantemp.json b0a1241b1779040db5f0862252be9122d45ff0da157c0bc5ea5ac96e9acd43a7"

if [[ -n "$manifest" ]]; then
  [[ -r "$manifest" ]] || { echo "fetch-quantemp: cannot read manifest $manifest" >&2; exit 2; }
  list="$(grep -v '^[[:space:]]*\(#\|$\)' "$manifest")"
else
  list="$builtin_manifest"
fi

command -v curl >/dev/null || { echo "fetch-quantemp: curl is not installed" >&2; exit 1; }
mkdir -p "$dest"
status=0
while read -r rel want; do
  [[ -n "$rel" ]] || continue
  out="$dest/$(basename "$rel")"
  if [[ -f "$out" ]] && [[ "$(sha256sum "$out" | cut -d' ' -f1)" == "$want" ]]; then
    echo "ok (already present)  $out"
    continue
  fi
  tmp="$out.part"
  if ! curl -fsSL --retry 3 -o "$tmp" "$base_url/$rel"; then
    rm -f "$tmp"
    echo "fetch-quantemp: download failed: $base_url/$rel" >&2
    status=1
    continue
  fi
  got="$(sha256sum "$tmp" | cut -d' ' -f1)"
  if [[ "$got" != "$want" ]]; then
    rm -f "$tmp"
    echo "fetch-quantemp: SHA-256 mismatch for $rel: got $got, expected $want (file removed)" >&2
    status=1
    continue
  fi
  mv "$tmp" "$out"
  echo "ok (verified)         $out"
done <<< "$list"
exit "$status"
