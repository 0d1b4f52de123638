// claims verify --method llm: the QuanTemp paper's prompting verifier (Appendix E, Tables 11 and
// 12) through an OpenAI-compatible endpoint on the runner, zero-shot or few-shot. See
// docs/claims-reference.md, "LLM verifier".
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "claims/evidence.hpp"
#include "claims/llm_verify.hpp"
#include "claims/normalize.hpp"
#include "claimsllm/stages.hpp"
#include "cli/claims_batch.hpp"
#include "cli/claims_llm.hpp"
#include "cli/claims_verify.hpp"
#include "cli/cli_util.hpp"
#include "core/error.hpp"
#include "io/sha256.hpp"
#include "llm/runner.hpp"

namespace numcheck::cli {
namespace {

struct LlmOpts {
  std::size_t shots = 0;
  std::string selection = "random";
  std::string train;
  std::size_t folds = 0;
  std::uint64_t shot_seed = 20260725;
  std::string prompt;
  std::size_t evidence_bytes = 3000;
  std::size_t shot_evidence_bytes = 1000;
  llm::RunOptions run;
  std::string batch_export;               // --batch-export FILE
  std::vector<std::string> batch_import;  // --batch-import FILE (repeatable)
  CLI::App* app = nullptr;
};
LlmOpts opts;

claims::VerifyInput input_of(const claims::EvidenceRecord& r) {
  claims::VerifyInput x;
  x.id = r.id;
  x.claim = r.claim;
  x.label = r.label;
  x.questions = r.questions;
  for (const auto& d : r.evidence) x.evidence.push_back(d.text);
  return x;
}

std::vector<claims::VerifyInput> inputs_of(const std::string& path) {
  std::vector<claims::VerifyInput> out;
  claims::for_each_evidence(path, [&](claims::EvidenceRecord&& r) { out.push_back(input_of(r)); });
  return out;
}

void add_options(CLI::App& app) {
  opts.app = &app;
  app.add_option("--shots", opts.shots, "llm: in-context examples per claim (0: zero-shot, Table 12)")
      ->capture_default_str();
  app.add_option("--shot-selection", opts.selection,
                 "llm: random (seeded), similar (TF-IDF cosine) or bm25 (BM25 over the pool's claim texts)")
      ->check(CLI::IsMember({"random", "similar", "bm25"}))
      ->capture_default_str();
  app.add_option("--train", opts.train, "llm: labelled evidence file the examples come from");
  app.add_option("--folds", opts.folds,
                 "llm: without --train, take examples from the other folds of the evaluated file (k-fold)");
  app.add_option("--shot-seed", opts.shot_seed, "llm: seed of random example selection and folds")
      ->capture_default_str();
  app.add_option(
      "--prompt", opts.prompt,
      "llm: prompt file (default data/claims/prompts/verify_zero_shot.json or verify_few_shot.json)");
  app.add_option("--evidence-bytes", opts.evidence_bytes, "llm: evidence kept per claim")
      ->capture_default_str();
  app.add_option("--shot-evidence-bytes", opts.shot_evidence_bytes, "llm: evidence kept per example")
      ->capture_default_str();
  add_run_flags(app, opts.run, /*model_flag=*/false);
  add_batch_options(app, opts.batch_export, opts.batch_import);
}

void run(const VerifyArgs& a) {
  if (a.model.empty()) fail(ErrorCode::kUsage, "--method llm needs --endpoint URL --model NAME");
  opts.run.model = a.model;
  if (opts.shots > 0 && opts.train.empty() && opts.folds < 2)
    fail(ErrorCode::kUsage, "--shots needs --train FILE or --folds K (examples are never the claim itself)");
  if (opts.shots == 0 && (!opts.train.empty() || opts.folds > 0))
    fail(ErrorCode::kUsage, "--train and --folds choose few-shot examples: give --shots K");
  // A batch sends nothing: no endpoint (docs/batch.md).
  const bool batch = !opts.batch_export.empty() || !opts.batch_import.empty();
  const std::unique_ptr<llm::Backend> backend = batch ? nullptr : claims_backend(opts.run);
  claimsllm::VerifySpec spec;
  spec.prompt = !opts.prompt.empty() ? claims::load_prompt(opts.prompt)
                : opts.shots > 0     ? claims::builtin_prompt("verify_few_shot")
                                     : claims::builtin_prompt("verify_zero_shot");
  spec.shots = opts.shots;
  spec.selection = *claims::shot_selection_from_name(opts.selection);
  spec.shot_seed = opts.shot_seed;
  spec.folds = opts.train.empty() ? opts.folds : 0;
  spec.limits.evidence_bytes = opts.evidence_bytes;
  spec.limits.shot_evidence_bytes = opts.shot_evidence_bytes;
  spec.evidence_path = a.evidence;
  spec.train_path = opts.train;
  llm::RunSettings s = claims_stage_settings(opts.run, spec.prompt, *opts.app);

  auto claims = inputs_of(a.evidence);
  const std::vector<claims::VerifyInput> pool = opts.shots == 0
                                                    ? std::vector<claims::VerifyInput>{}
                                                    : (opts.train.empty() ? claims : inputs_of(opts.train));
  if (a.limit > 0 && claims.size() > a.limit) claims.resize(a.limit);
  if (claims.empty()) fail("{}: no claims", a.evidence);
  std::vector<claims::VerifyInput> labelled;
  for (const auto& p : pool)
    if (p.label) labelled.push_back(p);
  if (!opts.train.empty()) {
    // Examples never include a reworded or re-quoted copy of a claim being verified.
    std::vector<std::string> pool_texts, claim_texts;
    for (const auto& p : labelled) pool_texts.push_back(p.claim);
    for (const auto& c : claims) claim_texts.push_back(c.claim);
    const auto drop = claims::near_duplicates_of(pool_texts, claim_texts);
    std::vector<claims::VerifyInput> kept;
    std::size_t k = 0;
    for (std::size_t i = 0; i < labelled.size(); ++i) {
      if (k < drop.size() && drop[k] == i) {
        spec.pool_left_out.push_back(labelled[i].id);
        ++k;
        continue;
      }
      kept.push_back(std::move(labelled[i]));
    }
    labelled = std::move(kept);
    fmt::print("left out {} of the --train examples as near-duplicates of the claims verified{}{}\n",
               spec.pool_left_out.size(), spec.pool_left_out.empty() ? "" : ": ",
               fmt::join(spec.pool_left_out, ", "));
  }
  const auto items = claimsllm::verify_items(claims, labelled, spec);

  s.binding["prompt_sha256"] = spec.prompt.sha256;
  s.binding["evidence_sha256"] = io::sha256_file(a.evidence);
  s.binding["train_sha256"] =
      opts.train.empty() ? io::OrderedJson() : io::OrderedJson(io::sha256_file(opts.train));
  s.binding["shots"] = {{"k", spec.shots},
                        {"selection", opts.selection},
                        {"seed", spec.shot_seed},
                        {"folds", spec.folds},
                        {"evidence_bytes", spec.limits.evidence_bytes},
                        {"shot_evidence_bytes", spec.limits.shot_evidence_bytes}};
  s.info["selection"] = {{"evidence", a.evidence}, {"limit", a.limit}};
  const StageOutput what{"predictions.jsonl", "verdicts", "unparseable"};
  if (run_claims_batch("claims verify llm", items, s, opts.run, opts.batch_export, opts.batch_import, a.out,
                       what, [&] { return claimsllm::write_predictions(claims, spec, a.out); }))
    return;
  run_claims_stage("claims verify llm", items, s, *backend, a.out, what,
                   [&] { return claimsllm::write_predictions(claims, spec, a.out); });
}

const VerifyMethodRegistration reg(
    {"llm", "a chat model through an OpenAI-compatible endpoint (QuanTemp Tables 11/12)", add_options, run});

}  // namespace
}  // namespace numcheck::cli
