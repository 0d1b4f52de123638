#!/usr/bin/env bash
# The main job (`make run`): generate the orbit benchmark, validate it, run a system on it, score
# the responses, run the consensus study (H3) on the same system, and write the report with the
# consensus section. The system is the model behind $NUMCHECK_ENDPOINT (an
# OpenAI-compatible base URL including /v1, model $NUMCHECK_MODEL, key in the variable named by
# $NUMCHECK_API_KEY_ENV) when set, else the built-in simulated reference system with injected
# faults, so the whole pipeline can be seen without a model.
#
# The consensus study needs paraphrase records, which the main benchmark does not have (it stays
# the default 3,600 bases / 8,600 prompts): it uses its own benchmark, generated with the same seed
# plus --paraphrases, in $out/consensus/bench. NUMCHECK_CONSENSUS=0 skips the study;
# NUMCHECK_CONSENSUS_PER_TEMPLATE sets its bases per template (default 30: 120 bases, 1,440 calls).
#
# The claim pipeline (scripts/claims-job.sh) runs when the QuanTemp data is found in
# $NUMCHECK_QUANTEMP (default ../shared/data/quantemp relative to the repository) and adds a claims
# section to the report; otherwise it prints one line saying where to get the data.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
nc="${NUMCHECK_BIN:-$root/build/release/src/cli/numcheck}"
out="${NUMCHECK_OUT:-$root/out}"
seed="${NUMCHECK_SEED:-20260725}"

mkdir -p "$out"
echo "== generate (seed $seed) -> $out/bench"
"$nc" orbit generate --out "$out/bench" --seed "$seed"
echo "== validate"
"$nc" orbit validate "$out/bench"

# The system, shared by `orbit run` and `orbit consensus run`.
system_args=()
if [[ -n "${NUMCHECK_ENDPOINT:-}" ]]; then
  system_args+=(--endpoint "$NUMCHECK_ENDPOINT" --model "${NUMCHECK_MODEL:?set NUMCHECK_MODEL}")
  if [[ -n "${NUMCHECK_API_KEY_ENV:-}" ]]; then system_args+=(--api-key-env "$NUMCHECK_API_KEY_ENV"); fi
  system_name="$NUMCHECK_MODEL at $NUMCHECK_ENDPOINT"
else
  system_args+=(--system reference --inject "times_ten=0.05,markdown=0.03,unit_slip=0.02,truncation=0.01")
  system_name="simulated reference system (set NUMCHECK_ENDPOINT and NUMCHECK_MODEL for a real model)"
fi

run_args=(--bench "$out/bench" --out "$out/run" --resume "${system_args[@]}")
if [[ -n "${NUMCHECK_LIMIT:-}" ]]; then
  echo "numcheck: NUMCHECK_LIMIT was replaced by NUMCHECK_BASES (a stratified sample of whole orbits)" >&2
  exit 2
fi
# NUMCHECK_BASES=N: a quick smoke run on a stratified, seeded sample of N bases (whole orbits);
# score and report are scoped to that selection.
if [[ -n "${NUMCHECK_BASES:-}" ]]; then run_args+=(--bases "$NUMCHECK_BASES"); fi
echo "== run: $system_name"
"$nc" orbit run "${run_args[@]}"
echo "== score"
"$nc" orbit score --bench "$out/bench" --responses "$out/run/responses.jsonl" --out "$out/scores.jsonl"

report_args=(--bench "$out/bench" --scores "$out/scores.jsonl" --out "$out/report")
if [[ "${NUMCHECK_CONSENSUS:-1}" != 0 ]]; then
  c="$out/consensus"
  echo "== consensus: generate the paraphrase benchmark (seed $seed) -> $c/bench"
  "$nc" orbit generate --out "$c/bench" --seed "$seed" --paraphrases
  "$nc" orbit validate "$c/bench"
  echo "== consensus: plan"
  "$nc" orbit consensus plan --bench "$c/bench" --out "$c/plan.json" \
    --per-template "${NUMCHECK_CONSENSUS_PER_TEMPLATE:-30}"
  echo "== consensus: run: $system_name"
  "$nc" orbit consensus run --plan "$c/plan.json" --out "$c/run" --resume "${system_args[@]}"
  echo "== consensus: analyze"
  "$nc" orbit consensus analyze --plan "$c/plan.json" --run "$c/run" --out "$c/analysis"
  report_args+=(--consensus "$c/analysis")
fi
# The claim pipeline (QuanTemp data in $NUMCHECK_QUANTEMP, default ../shared/data/quantemp): one
# line saying where to get the data when it is absent.
NUMCHECK_BIN="$nc" bash "$root/scripts/claims-job.sh" "$out"
if [[ -f "$out/claims/section.json" ]]; then report_args+=(--claims "$out/claims/section.json"); fi
for d in "$out/claims/orbits/gold-report" "$out/claims/orbits/val-report"; do
  if [[ -f "$d/metrics.json" ]]; then report_args+=(--claim-orbits "$d"); fi
done
echo "== report"
"$nc" orbit report "${report_args[@]}"
echo
echo "report: $out/report/report.html (also report.md with figures/*.svg, report.tex, metrics.json)"
echo "next: open the report; compare systems with numcheck orbit report --scores A.jsonl --scores B.jsonl;"
echo "      a quick smoke run of another endpoint first: NUMCHECK_BASES=20 NUMCHECK_OUT=out/smoke make run"
