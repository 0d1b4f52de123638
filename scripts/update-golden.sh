#!/usr/bin/env bash
# Rewrites tests/golden/main-job/{metrics.json,report.md} from the current release build by running
# the main job on the simulated reference system in an empty folder, exactly as
# tests/integration/golden_test.cpp does. Review `git diff tests/golden` before committing, and
# say in the commit message why the pinned output changed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && env -i PATH="$PATH" HOME="$work" NUMCHECK_QUANTEMP=/nonexistent \
   NUMCHECK_OUT=out NUMCHECK_BIN="${NUMCHECK_BIN:-$root/build/release/src/cli/numcheck}" \
   bash "$root/scripts/main-job.sh" >/dev/null)
cp "$work/out/report/metrics.json" "$work/out/report/report.md" "$root/tests/golden/main-job/"
echo "updated tests/golden/main-job/ (git diff --stat tests/golden):"
git -C "$root" diff --stat -- tests/golden
