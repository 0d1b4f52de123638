#pragma once
// A claims stage that talks to a model (the LLM verifier), run as a batch instead of live
// requests (docs/batch.md): its work items written as a batch input file, and a batch's output
// file(s) turned into the stage's run folder, which the stage then parses as it parses a live
// run's (claimsllm/stages.hpp write_predictions). The stage's command line is given again at
// import: the items and request bodies are made from it, and every output line's custom_id must
// name one of them with the same body hash (llm/batch.hpp).
#include <filesystem>
#include <string>
#include <vector>

#include "llm/batch.hpp"
#include "llm/runner.hpp"

namespace numcheck::claimsllm {

// The run settings of a claims stage as run_claims_stage (src/cli/claims_llm.hpp) sets them:
// kind `kind`, records keyed by "id".
[[nodiscard]] llm::RunSettings stage_batch_settings(llm::RunSettings s, const std::string& kind);

// Writes the stage's batch input file (requests on `api`, as the live run sends them). Returns the number of
// request lines.
std::size_t export_stage_batch(const std::vector<llm::WorkItem>& items, const llm::RunSettings& settings,
                               llm::Api api, const std::filesystem::path& file);

// Imports the batch output file(s) into out_dir (the stage's run folder).
[[nodiscard]] llm::BatchImport import_stage_batch(const std::vector<llm::WorkItem>& items,
                                                  const llm::RunSettings& settings, llm::Api api,
                                                  const std::vector<std::filesystem::path>& outputs,
                                                  const std::filesystem::path& out_dir);

}  // namespace numcheck::claimsllm
