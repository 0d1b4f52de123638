#pragma once
// The claim pipeline's stages that talk to a model through the runner (llm/runner.hpp): claim
// decomposition (ClaimDecomp, ProgramFC), the LLM verifier, and question relevance through
// /v1/embeddings. Each stage turns claims into runner work items, lets run_items do the requests
// (cache, resume, retries, provenance, errors.jsonl), then parses the run's records into its own
// output file next to them. Parsing is a pure function of the run directory, so a resumed run
// gives the same output as an uninterrupted one.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "claims/claim.hpp"
#include "claims/decompose.hpp"
#include "claims/llm_verify.hpp"
#include "claims/prompt.hpp"
#include "claims/question_quality.hpp"
#include "llm/embeddings.hpp"
#include "llm/runner.hpp"

namespace numcheck::claimsllm {

// Output counts of a stage (also written to its summary file).
struct StageCounts {
  std::size_t records = 0;
  std::size_t ok = 0;
  std::size_t parse_failures = 0;
  std::size_t errors = 0;  // request failed or still unanswered: status "error"
};

// --- decomposition ---------------------------------------------------------------------------

// Applies the prompt file's "sampling" defaults to settings, except the fields the user set
// (names as in the sampling object: temperature, top_p, top_k, max_tokens, frequency_penalty,
// presence_penalty). top_k is sent only when the user or the prompt file sets it: otherwise it is
// unset here (the runner's default top_k 1 would make the prompt's temperature do nothing).
void apply_prompt_sampling(llm::RunSettings& settings, const claims::PromptSpec& spec,
                           const std::vector<std::string>& user_set);

struct DecomposeSpec {
  claims::DecompMethod method = claims::DecompMethod::kClaimDecomp;
  claims::PromptSpec prompt;
  std::string claims_path;  // for the manifest
};

// One work item per claim: id claims::claim_id, the method's prompt (system + user).
[[nodiscard]] std::vector<llm::WorkItem> decompose_items(const std::vector<claims::Claim>& claims,
                                                         const DecomposeSpec& spec);

// Reads out_dir's responses.jsonl/errors.jsonl and writes out_dir/decompositions.jsonl (one
// record per claim, claims order) and out_dir/decompose.json (counts, method, prompt).
StageCounts write_decompositions(const std::vector<claims::Claim>& claims, const DecomposeSpec& spec,
                                 const std::filesystem::path& out_dir);

// Writes released questions (claims::released_decompositions) as out_dir/decompositions.jsonl
// and out_dir/decompose.json, without a model.
StageCounts write_released(const std::vector<claims::Claim>& claims, const std::string& source_path,
                           const std::filesystem::path& out_dir);

// --- LLM verifier ------------------------------------------------------------------------------

struct VerifySpec {
  claims::PromptSpec prompt;  // verify_zero_shot or verify_few_shot
  std::size_t shots = 0;
  claims::ShotSelection selection = claims::ShotSelection::kRandom;
  std::uint64_t shot_seed = 20260725;
  std::size_t folds = 0;  // > 1: shots from other folds of the evaluated set (no --train)
  claims::PromptLimits limits;
  std::string evidence_path, train_path;  // for the manifest
  // Ids of --train claims left out of the example pool as near-duplicates of the verified claims
  // (claims/normalize.hpp), recorded in the manifest.
  std::vector<std::string> pool_left_out;
};

// One work item per claim, with the ids of its shots in the record field "shots". `pool` is the
// labelled example pool (the --train file, or the evaluated claims themselves when folds > 1).
[[nodiscard]] std::vector<llm::WorkItem> verify_items(const std::vector<claims::VerifyInput>& claims,
                                                      const std::vector<claims::VerifyInput>& pool,
                                                      const VerifySpec& spec);

// Parses the run into the files every verifier writes (verify/predictions.hpp:
// predictions.jsonl in claims order, read by `claims evaluate`, with label "unparseable" for an
// answer without a strict verdict; scores.jsonl; manifest.json with prompt, shots and counts) and
// out_dir/verdicts.jsonl (claims::VerifyRecord: status, justification, shots, reason, raw text).
StageCounts write_predictions(const std::vector<claims::VerifyInput>& claims, const VerifySpec& spec,
                              const std::filesystem::path& out_dir);

// --- question relevance ------------------------------------------------------------------------

// Mean over records (status ok) of the mean cosine between each question's embedding and the
// claim's, through the project's embeddings client (llm/embeddings.hpp: runner directory
// opt.run_dir, cache, probe-checked dimension and model). Sets q.relevance and q.relevance_model
// (the model the server reported). Throws Error (kIncomplete, exit 3) when some texts got no
// vector after all retries: run again with opt.resume.
void add_relevance(claims::QuestionQuality& q, const std::vector<claims::Decomposition>& records,
                   const llm::EmbedOptions& opt);

}  // namespace numcheck::claimsllm
