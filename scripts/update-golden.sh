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
# The run's session times differ on every run: pinned as "<time>" (golden_test.cpp masks them too).
for f in metrics.json report.md; do
  sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z/<time>/g' \
    "$work/out/report/$f" >"$root/tests/golden/main-job/$f"
done
echo "updated tests/golden/main-job/ (git diff --stat tests/golden):"
git -C "$root" diff --stat -- tests/golden
