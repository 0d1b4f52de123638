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
#
# NUMCHECK_BASES=N is a smoke run, and it limits every step that sends requests: the orbit run to a
# stratified sample of N bases (whole orbits), the consensus study to N/4 bases per template (at
# least 1; NUMCHECK_CONSENSUS_PER_TEMPLATE still wins when set), and the claim pipeline's model
# requests (the LLM verifier and its claim orbits) to the first N test claims. Before the first
# request the job prints how many requests each step will send and the total (an upper bound: a
# resumed run or the response cache sends fewer).
#
# The report folder $out/report belongs to one run: a second job whose system differs from the one
# the report there was made for (another endpoint or model) stops before any request instead of
# replacing it; give it its own NUMCHECK_OUT, compare the systems in one report with a study file
# (NUMCHECK_CONFIG), or remove $out/report to replace it. The same job again (same system) resumes
# its runs and rewrites its own report.
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

if [[ -n "${NUMCHECK_BASES:-}" && ! "$NUMCHECK_BASES" =~ ^[1-9][0-9]*$ ]]; then
  echo "numcheck: NUMCHECK_BASES=$NUMCHECK_BASES: give a positive number of bases" >&2
  exit 2
fi
# Bases per template of the consensus study: NUMCHECK_CONSENSUS_PER_TEMPLATE, else N/4 (at least 1)
# for a smoke run of N bases, else 30 (120 bases, 1,440 calls).
per_template="${NUMCHECK_CONSENSUS_PER_TEMPLATE:-}"
if [[ -z "$per_template" ]]; then
  if [[ -n "${NUMCHECK_BASES:-}" ]]; then
    per_template=$(( NUMCHECK_BASES / 4 > 0 ? NUMCHECK_BASES / 4 : 1 ))
  else
    per_template=30
  fi
fi

# The consensus study's paraphrase benchmark (same seed) and plan, in folder $1; sets
# consensus_requests to the plan's number of calls.
consensus_requests=0
consensus_plan() {
  echo "== consensus: generate the paraphrase benchmark (seed $seed) -> $1/bench"
  "$nc" orbit generate --out "$1/bench" --seed "$seed" --paraphrases
  "$nc" orbit validate "$1/bench"
  echo "== consensus: plan ($per_template bases per template)"
  local line
  line=$("$nc" orbit consensus plan --bench "$1/bench" --out "$1/plan.json" --per-template "$per_template")
  echo "$line"
  consensus_requests=$(sed -n 's/.* \([0-9][0-9]*\) distinct requests$/\1/p' <<< "$line")
  if [[ -z "$consensus_requests" ]]; then
    echo "numcheck: cannot read the number of requests from: $line" >&2
    exit 1
  fi
}

# The model requests of the claim pipeline (0 without the data or without an endpoint).
claims_requests() {
  NUMCHECK_BIN="$nc" bash "$root/scripts/claims-job.sh" "$out" --count
}

# Prints each step's number of requests and the total, from "step count" argument pairs; a step
# that sends anything also sends one 1-token set-up probe first (the runner's preflight).
print_requests() {
  local total=0 text=""
  while (( $# >= 2 )); do
    if (( $2 > 0 )); then
      text+="${text:+, }$1 $2 + 1 probe"
      total=$(( total + $2 + 1 ))
    else
      text+="${text:+, }$1 0"
    fi
    shift 2
  done
  echo "== requests to send: $text; total $total (at most: a resumed run or the response cache sends fewer)"
}

# Stops before any request when $out/report holds the report of other systems than $1 (a
# comma-separated list of run folders, relative to $out) would write there.
check_report_owner() {
  local metrics="$out/report/metrics.json" want="$1" have
  [[ -f "$metrics" ]] || return 0
  have=$(sed -n 's|^ *"scores_file": "\.\./\(runs/[^"]*\)/scores\.jsonl",\{0,1\}$|\1|p' "$metrics" | paste -sd, -)
  if [[ "$have" != "$want" ]]; then
    echo "numcheck: $out/report holds the report of ${have:-another job} (not this job's $want): this job would replace it." >&2
    echo "  keep both: give this job its own folder (NUMCHECK_OUT=$out-2 ...);" >&2
    echo "  compare the systems in one report: a study file (NUMCHECK_CONFIG=study.json, docs/study.md);" >&2
    echo "  or replace it: remove $out/report and run again." >&2
    exit 2
  fi
}

if [[ -n "${NUMCHECK_CONFIG:-}" ]]; then
  if [[ -n "${NUMCHECK_ENDPOINT:-}" ]]; then
    echo "numcheck: set NUMCHECK_CONFIG or NUMCHECK_ENDPOINT, not both (the study file lists the systems)" >&2
    exit 2
  fi
  if [[ -f "$out/report/metrics.json" ]] && ! grep -q '"section": "study"' "$out/report/metrics.json"; then
    echo "numcheck: $out/report holds the report of a single-system job: this study would replace it." >&2
    echo "  keep both: give the study its own folder (NUMCHECK_OUT=$out/study ...);" >&2
    echo "  or replace it: remove $out/report and run again." >&2
    exit 2
  fi
  study_args=(--config "$NUMCHECK_CONFIG" --out "$out" --bench "$out/bench" --resume)
  if [[ -n "${NUMCHECK_BASES:-}" ]]; then study_args+=(--bases "$NUMCHECK_BASES"); fi
  if [[ "${NUMCHECK_CONSENSUS:-1}" != 0 ]]; then
    c="$out/consensus"
    consensus_plan "$c"
    study_args+=(--consensus-plan "$c/plan.json")
  fi
  # What every step will send, before the first request: each system's run and consensus calls
  # (`orbit study --dry-run`), and the claim pipeline's.
  read -r claims_verifier claims_orbits <<< "$(claims_requests)"
  steps=()
  while IFS=$'\t' read -r name prompts calls; do
    steps+=("$name: orbit run" "$prompts")
    if (( calls > 0 )); then steps+=("$name: consensus" "$calls"); fi
  done < <("$nc" orbit study "${study_args[@]}" --dry-run |
           sed -n 's/^dry run: \(.*\): \([0-9][0-9]*\) prompts, \([0-9][0-9]*\) consensus calls$/\1\t\2\t\3/p')
  print_requests "${steps[@]}" "claims LLM verifier" "$claims_verifier" "claim orbits (LLM verifier)" "$claims_orbits"
  NUMCHECK_BIN="$nc" bash "$root/scripts/claims-job.sh" "$out"
  if [[ -f "$out/claims/section.json" ]]; then study_args+=(--claims "$out/claims/section.json"); fi
  for d in "$out/claims/orbits/gold-report" "$out/claims/orbits/val-report"; do
    if [[ -f "$d/metrics.json" ]]; then study_args+=(--claim-orbits "$d"); fi
  done
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

check_report_owner "runs/$run_name"

run_args=(--bench "$out/bench" --out "$run_dir" --resume "${system_args[@]}")
# NUMCHECK_BASES=N: a quick smoke run on a stratified, seeded sample of N bases (whole orbits);
# score and report are scoped to that selection.
if [[ -n "${NUMCHECK_BASES:-}" ]]; then run_args+=(--bases "$NUMCHECK_BASES"); fi
consensus_on=0
if [[ "${NUMCHECK_CONSENSUS:-1}" != 0 ]]; then
  consensus_on=1
  c="$out/consensus"
  consensus_plan "$c"
fi

# What every step will send, before the first request.
orbit_requests=$("$nc" orbit run "${run_args[@]}" --dry-run | sed -n 's/^dry run: \([0-9][0-9]*\) prompts.*/\1/p')
claims_counts=$(claims_requests)
read -r claims_verifier claims_orbits <<< "$claims_counts"
if [[ -n "${NUMCHECK_ENDPOINT:-}" ]]; then
  print_requests "orbit run" "$orbit_requests" "consensus" "$consensus_requests" \
    "claims LLM verifier" "$claims_verifier" "claim orbits (LLM verifier)" "$claims_orbits"
else
  echo "== calls to the simulated reference system (no network): orbit run $orbit_requests, consensus $consensus_requests"
fi

echo "== run: $system_name -> $run_dir"
"$nc" orbit run "${run_args[@]}"
echo "== score"
"$nc" orbit score --bench "$out/bench" --responses "$run_dir/responses.jsonl" --out "$run_dir/scores.jsonl"

report_args=(--bench "$out/bench" --scores "$run_dir/scores.jsonl" --out "$out/report")
if (( consensus_on )); then
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
echo "next: open the report; compare several systems with a study file:"
echo "      NUMCHECK_CONFIG=study.json NUMCHECK_OUT=$out/study make run (docs/study.md); this run's folder: $run_dir"
echo "      a quick smoke run of another endpoint first: NUMCHECK_BASES=20 NUMCHECK_OUT=out/smoke-2 make run"
