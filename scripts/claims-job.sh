#!/usr/bin/env bash
# The claim half of the main job (called by scripts/main-job.sh; runnable alone): on the QuanTemp
# data in $NUMCHECK_QUANTEMP (default ../shared/data/quantemp relative to the repository) it builds
# the evidence files, trains and cross-validates the trained verifier on the labelled val split,
# verifies the 249 labelled test claims with their gold evidence, evaluates them beside the QuanTemp
# authors' released predictions for the same claims, runs the LLM verifier too when
# $NUMCHECK_ENDPOINT is set (and this build has it), and writes $out/claims/section.json for
# `orbit report --claims`. Without the data it prints one line saying where to get it and exits 0.
#
# Usage: scripts/claims-job.sh OUT_DIR   (numcheck from $NUMCHECK_BIN, else build/release)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
nc="${NUMCHECK_BIN:-$root/build/release/src/cli/numcheck}"
out="${1:?usage: claims-job.sh OUT_DIR}"
q="${NUMCHECK_QUANTEMP:-$root/../shared/data/quantemp}"
val="$q/val_claimonly_evidence_question_mapping.json"
gold="$q/model_gpt4o_test_results.csv"
preds="$q/predictions"

if [[ ! -f "$val" || ! -f "$gold" ]]; then
  echo "== claims: skipped: no QuanTemp data in $q (set NUMCHECK_QUANTEMP to its folder; scripts/fetch-quantemp.sh downloads the upstream files; see docs/claims.md)"
  exit 0
fi
c="$out/claims"
mkdir -p "$c"
echo "== claims: evidence files from $q"
"$nc" claims evidence --from "$val" --out "$c/val.jsonl"
"$nc" claims evidence --from "$gold" --out "$c/gold.jsonl"

# HOOK (retrieval, issue 13): when this build has `claims index` / `claims retrieve`, index the
# local evidence corpus and retrieve evidence for the val claims here, writing $c/val-retrieved.jsonl
# (an evidence file, selection lexical or embeddings:<model>), and train/cross-validate on it
# instead of the val file's shipped top-3 snippets. Until then the shipped snippets are used.
train_ev="$c/val.jsonl"
if "$nc" claims --help | grep -E '^ +retrieve +' > /dev/null; then
  echo "== claims: retrieval: \`claims retrieve\` is available but not wired in yet (see the HOOK in scripts/claims-job.sh); using the val file's top-3 snippets"
else
  echo "== claims: retrieval: not in this build; using the val file's top-3 snippets (selection val-top3)"
fi

echo "== claims: train the trained verifier on $(basename "$train_ev")"
"$nc" claims train --evidence "$train_ev" --out "$c/model.json"
echo "== claims: grouped 5-fold cross-validation (3 seeds) with baselines and ablations"
"$nc" claims cv --evidence "$train_ev" --json "$c/cv.json" > "$c/cv.md"
echo "== claims: verify the 249 labelled test claims with their gold evidence"
"$nc" claims verify --method trained --model "$c/model.json" --evidence "$c/gold.jsonl" --out "$c/verify-trained"
cp "$c/verify-trained/predictions.jsonl" "$c/numcheck_trained.jsonl"
eval_preds=(--pred "$c/numcheck_trained.jsonl")
notes=()
if [[ -n "${NUMCHECK_ENDPOINT:-}" ]]; then
  if "$nc" claims verify --help | grep -E -- '--method TEXT:\{[^}]*llm' > /dev/null; then
    echo "== claims: LLM verifier: ${NUMCHECK_MODEL:?set NUMCHECK_MODEL} at $NUMCHECK_ENDPOINT"
    llm_args=(--method llm --evidence "$c/gold.jsonl" --endpoint "$NUMCHECK_ENDPOINT" --model "$NUMCHECK_MODEL"
              --out "$c/verify-llm")
    if [[ -n "${NUMCHECK_API_KEY_ENV:-}" ]]; then llm_args+=(--api-key-env "$NUMCHECK_API_KEY_ENV"); fi
    "$nc" claims verify "${llm_args[@]}"
    cp "$c/verify-llm/predictions.jsonl" "$c/numcheck_llm.jsonl"
    eval_preds+=(--pred "$c/numcheck_llm.jsonl")
  else
    notes+=(--note "The LLM verifier was not run: this build has no \`claims verify --method llm\`.")
  fi
fi
for f in finqa_roberta_claimdecomp_test unified_claimdecomp_final claim_only_numdecomp_final_5; do
  if [[ -f "$preds/$f.csv" ]]; then eval_preds+=(--pred "$preds/$f.csv"); fi
done
echo "== claims: evaluate beside the released predictions"
"$nc" claims evaluate --gold "$gold" "${eval_preds[@]}" --by-category --json "$c/eval.json" > "$c/eval.md" 2> "$c/eval.log"
"$nc" claims section --eval "$c/eval.json" --cv "$c/cv.json" --ours numcheck_trained "${notes[@]}" \
  --gold-note "Gold-evidence setting: the 249 labelled QuanTemp test claims (a random 10% sample of the test split) with the fact-checker's justification as the one evidence document; our trained verifier was trained on the 3,084 labelled val claims with their shipped top-3 snippets, never tuned on these claims. The released predictions are the QuanTemp authors' test-set outputs joined to the same claims by exact text." \
  --out "$c/section.json" > "$c/section.md"

# Claim orbits (docs/claim-orbits.md): every quantity of a claim rewritten into exactly equivalent
# forms; does the verifier's verdict survive? Two trained verifiers side by side: the normal one
# (number tokens through the quantity layer) and a plain bag of words (numbers as written). On the
# 249 gold-evidence claims (models trained on val) and on the val claims in grouped 5-fold CV.
o="$c/orbits"
echo "== claims: claim orbits on the 249 gold-evidence claims and on the val claims (5-fold CV)"
"$nc" claims train --evidence "$train_ev" --numbers surface --out "$c/model-surface.json" > /dev/null
"$nc" claims orbit generate --claims "$c/gold.jsonl" --out "$o/gold" > /dev/null
"$nc" claims orbit generate --claims "$train_ev" --out "$o/val" > /dev/null
mkdir -p "$o/gold-predictions" "$o/val-predictions"
for numbers in canonical surface; do
  model="$c/model.json"; [[ $numbers == surface ]] && model="$c/model-surface.json"
  "$nc" claims orbit run --orbits "$o/gold" --evidence "$c/gold.jsonl" --method trained --model "$model" \
    --out "$o/gold-run-$numbers" > /dev/null
  cp "$o/gold-run-$numbers/predictions.csv" "$o/gold-predictions/trained_${numbers}_gold249.csv"
  "$nc" claims orbit run --orbits "$o/val" --evidence "$train_ev" --method trained --folds 5 --numbers "$numbers" \
    --out "$o/val-run-$numbers" > /dev/null
  cp "$o/val-run-$numbers/predictions.csv" "$o/val-predictions/trained_${numbers}_val_cv5.csv"
done
gold_orbit_preds=(--predictions "$o/gold-predictions/trained_canonical_gold249.csv"
                  --predictions "$o/gold-predictions/trained_surface_gold249.csv")
if [[ -n "${NUMCHECK_ENDPOINT:-}" && -f "$c/verify-llm/predictions.jsonl" ]]; then
  # The LLM verifier on every variant, through the orbits' evidence file (same settings as above).
  echo "== claims: claim orbits: the LLM verifier ($NUMCHECK_MODEL) on every variant of the 249 claims"
  "$nc" claims orbit evidence --orbits "$o/gold" --evidence "$c/gold.jsonl" --out "$o/gold-evidence.jsonl" > /dev/null
  orbit_llm_args=(--method llm --evidence "$o/gold-evidence.jsonl" --endpoint "$NUMCHECK_ENDPOINT"
                  --model "$NUMCHECK_MODEL" --out "$o/gold-run-llm" --resume)
  if [[ -n "${NUMCHECK_API_KEY_ENV:-}" ]]; then orbit_llm_args+=(--api-key-env "$NUMCHECK_API_KEY_ENV"); fi
  "$nc" claims verify "${orbit_llm_args[@]}"
  cp "$o/gold-run-llm/predictions.jsonl" "$o/gold-predictions/llm_gold249.jsonl"
  gold_orbit_preds+=(--predictions "$o/gold-predictions/llm_gold249.jsonl")
fi
"$nc" claims orbit report --orbits "$o/gold" --gold "$gold" --out "$o/gold-report" "${gold_orbit_preds[@]}" > /dev/null
"$nc" claims orbit report --orbits "$o/val" --gold "$val" --out "$o/val-report" \
  --predictions "$o/val-predictions/trained_canonical_val_cv5.csv" \
  --predictions "$o/val-predictions/trained_surface_val_cv5.csv" > /dev/null
echo "claims: $c/section.md (cv.md, eval.md, model.json, verify-trained/); claim orbits: $o/gold-report, $o/val-report"
