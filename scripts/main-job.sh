#!/usr/bin/env bash
# The main job (`make run`): generate the orbit benchmark, validate it, run a system on it, score
# the responses, and write the report. The system is the model behind $NUMCHECK_ENDPOINT (an
# OpenAI-compatible base URL including /v1, model $NUMCHECK_MODEL, key in the variable named by
# $NUMCHECK_API_KEY_ENV) when set, else the built-in simulated reference system with injected
# faults, so the whole pipeline can be seen without a model.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
nc="$root/build/release/src/cli/numcheck"
out="${NUMCHECK_OUT:-$root/out}"
seed="${NUMCHECK_SEED:-20260725}"

mkdir -p "$out"
echo "== generate (seed $seed) -> $out/bench"
"$nc" orbit generate --out "$out/bench" --seed "$seed"
echo "== validate"
"$nc" orbit validate "$out/bench"

run_args=(--bench "$out/bench" --out "$out/run" --resume)
if [[ -n "${NUMCHECK_ENDPOINT:-}" ]]; then
  run_args+=(--endpoint "$NUMCHECK_ENDPOINT" --model "${NUMCHECK_MODEL:?set NUMCHECK_MODEL}")
  [[ -n "${NUMCHECK_API_KEY_ENV:-}" ]] && run_args+=(--api-key-env "$NUMCHECK_API_KEY_ENV")
  [[ -n "${NUMCHECK_LIMIT:-}" ]] && run_args+=(--limit "$NUMCHECK_LIMIT")
  echo "== run: $NUMCHECK_MODEL at $NUMCHECK_ENDPOINT"
else
  run_args+=(--system reference --inject "times_ten=0.05,markdown=0.03,unit_slip=0.02,truncation=0.01")
  echo "== run: simulated reference system (set NUMCHECK_ENDPOINT and NUMCHECK_MODEL for a real model)"
fi
"$nc" orbit run "${run_args[@]}"
echo "== score"
"$nc" orbit score --bench "$out/bench" --responses "$out/run/responses.jsonl" --out "$out/scores.jsonl"
echo "== report"
"$nc" orbit report --bench "$out/bench" --scores "$out/scores.jsonl" --out "$out/report"
echo
echo "report: $out/report/report.html (also report.md, report.tex, metrics.json)"
