#!/usr/bin/env bash
# Installs every Debian 12 package numcheck needs, and nothing else. Idempotent: it asks dpkg what
# is missing and calls apt-get only for that. Usage: scripts/setup.sh [--with-test-tools]
#   --with-test-tools  also installs what only the tests and checks need (chromium for the HTML
#                      report test, clang-tidy for `make tidy`).
set -euo pipefail

build_pkgs=(
  build-essential cmake ninja-build pkg-config git
  libgmp-dev libfmt-dev libcli11-dev nlohmann-json3-dev libsimdjson-dev libssl-dev
  libcurl4-openssl-dev libsqlite3-dev libcpp-httplib-dev libicu-dev libstemmer-dev libarchive-dev libzstd-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev clang-format
  python3 python3-numpy
  liblinear-dev libxgboost-dev
)
test_pkgs=(chromium wrk clang-tidy nginx-light hyperfine time libxapian-dev)  # time, nginx-light, hyperfine: bench/compare.sh; libxapian-dev: bench_retrieval peer

want=("${build_pkgs[@]}")
if [[ "${1:-}" == "--with-test-tools" ]]; then want+=("${test_pkgs[@]}"); fi

missing=()
for p in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup: all ${#want[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
