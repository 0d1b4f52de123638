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
# Run folders are named per system ($out/runs/<name>, $out/consensus/runs/<name>; the name is the
# model and the endpoint's host and port, or "reference"), so a second `make run` with another
# endpoint starts its own folder instead of colliding with the first one's.
#
# NUMCHECK_CONFIG=FILE runs a study instead: the systems listed in the study file
# (docs/study.md) through `numcheck orbit study`, each in $out/runs/<name>, scored and reported
# together in $out/report, with the consensus study run for every system ($out/consensus/runs/<name>)
# and analysed together, unless NUMCHECK_CONSENSUS=0.
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

if [[ -n "${NUMCHECK_LIMIT:-}" ]]; then
  echo "numcheck: NUMCHECK_LIMIT was replaced by NUMCHECK_BASES (a stratified sample of whole orbits)" >&2
  exit 2
fi

# A folder name from any text: letters, digits, '.', '_' and '-' kept, anything else '_'.
folder_name() { printf '%s' "$1" | tr -c 'A-Za-z0-9._-' '_' | cut -c1-64; }

# The consensus study's paraphrase benchmark (same seed) and plan, in folder $1.
consensus_plan() {
  echo "== consensus: generate the paraphrase benchmark (seed $seed) -> $1/bench"
  "$nc" orbit generate --out "$1/bench" --seed "$seed" --paraphrases
  "$nc" orbit validate "$1/bench"
  echo "== consensus: plan"
  "$nc" orbit consensus plan --bench "$1/bench" --out "$1/plan.json" \
    --per-template "${NUMCHECK_CONSENSUS_PER_TEMPLATE:-30}"
}

if [[ -n "${NUMCHECK_CONFIG:-}" ]]; then
  if [[ -n "${NUMCHECK_ENDPOINT:-}" ]]; then
    echo "numcheck: set NUMCHECK_CONFIG or NUMCHECK_ENDPOINT, not both (the study file lists the systems)" >&2
    exit 2
  fi
  study_args=(--config "$NUMCHECK_CONFIG" --out "$out" --bench "$out/bench" --resume)
  if [[ -n "${NUMCHECK_BASES:-}" ]]; then study_args+=(--bases "$NUMCHECK_BASES"); fi
  NUMCHECK_BIN="$nc" bash "$root/scripts/claims-job.sh" "$out"
  if [[ -f "$out/claims/section.json" ]]; then study_args+=(--claims "$out/claims/section.json"); fi
  for d in "$out/claims/orbits/gold-report" "$out/claims/orbits/val-report"; do
    if [[ -f "$d/metrics.json" ]]; then study_args+=(--claim-orbits "$d"); fi
  done
  if [[ "${NUMCHECK_CONSENSUS:-1}" != 0 ]]; then
    c="$out/consensus"
    consensus_plan "$c"
    study_args+=(--consensus-plan "$c/plan.json")
  fi
  echo "== study: $NUMCHECK_CONFIG"
  "$nc" orbit study "${study_args[@]}"
  echo "also: $out/report/report.md with figures/*.svg, report.tex, metrics.json; runs in $out/runs/<system>"
  echo "next: add a system to $NUMCHECK_CONFIG and run again (finished systems are resumed, not re-asked)"
  exit 0
fi

# The system, shared by `orbit run` and `orbit consensus run`.
system_args=()
if [[ -n "${NUMCHECK_ENDPOINT:-}" ]]; then
  system_args+=(--endpoint "$NUMCHECK_ENDPOINT" --model "${NUMCHECK_MODEL:?set NUMCHECK_MODEL}")
  if [[ -n "${NUMCHECK_API_KEY_ENV:-}" ]]; then system_args+=(--api-key-env "$NUMCHECK_API_KEY_ENV"); fi
  if [[ -n "${NUMCHECK_MODEL_FILE:-}" ]]; then system_args+=(--model-file "$NUMCHECK_MODEL_FILE"); fi
  system_name="$NUMCHECK_MODEL at $NUMCHECK_ENDPOINT"
  # model@host:port, without scheme, credentials or path
  hostport="${NUMCHECK_ENDPOINT#*://}"; hostport="${hostport%%/*}"; hostport="${hostport##*@}"
  run_name=$(folder_name "$NUMCHECK_MODEL@$hostport")
else
  system_args+=(--system reference --inject "times_ten=0.05,markdown=0.03,unit_slip=0.02,truncation=0.01")
  system_name="simulated reference system (set NUMCHECK_ENDPOINT and NUMCHECK_MODEL for a real model)"
  run_name=reference
fi
run_dir="$out/runs/$run_name"

run_args=(--bench "$out/bench" --out "$run_dir" --resume "${system_args[@]}")
# NUMCHECK_BASES=N: a quick smoke run on a stratified, seeded sample of N bases (whole orbits);
# score and report are scoped to that selection.
if [[ -n "${NUMCHECK_BASES:-}" ]]; then run_args+=(--bases "$NUMCHECK_BASES"); fi
echo "== run: $system_name -> $run_dir"
"$nc" orbit run "${run_args[@]}"
echo "== score"
"$nc" orbit score --bench "$out/bench" --responses "$run_dir/responses.jsonl" --out "$run_dir/scores.jsonl"

report_args=(--bench "$out/bench" --scores "$run_dir/scores.jsonl" --out "$out/report")
if [[ "${NUMCHECK_CONSENSUS:-1}" != 0 ]]; then
  c="$out/consensus"
  consensus_plan "$c"
  echo "== consensus: run: $system_name"
  "$nc" orbit consensus run --plan "$c/plan.json" --out "$c/runs/$run_name" --resume "${system_args[@]}"
  echo "== consensus: analyze"
  "$nc" orbit consensus analyze --plan "$c/plan.json" --run "$c/runs/$run_name" --out "$c/analysis"
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
echo "next: open the report; compare several systems with a study file: NUMCHECK_CONFIG=study.json make run"
echo "      (docs/study.md); this run's folder: $run_dir"
echo "      a quick smoke run of another endpoint first: NUMCHECK_BASES=20 NUMCHECK_OUT=out/smoke make run"
