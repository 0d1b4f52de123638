#pragma once
// `--batch-export FILE` / `--batch-import FILE` of a claims LLM stage (docs/batch.md): the
// stage's requests written as a batch input file instead of sent, or a batch's output file(s)
// imported as the stage's run folder, which the stage then parses as it parses a live run.
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "claimsllm/batch.hpp"
#include "cli/claims_llm.hpp"
#include "core/error.hpp"
#include "llm/batch.hpp"
#include "llm/options.hpp"

namespace numcheck::cli {

inline void add_batch_options(CLI::App& app, std::string& export_file,
                              std::vector<std::string>& import_files) {
  app.add_option("--batch-export", export_file,
                 "llm: write the requests as a batch input file (OpenAI Batch API, vLLM run_batch) and send "
                 "nothing");
  app.add_option(
      "--batch-import", import_files,
      "llm: read the answers from a batch output file (repeat for a retried batch's) instead of an "
      "endpoint; give the command line of the export");
}

// Runs the stage as a batch when one of the two options is given: returns false otherwise (the
// caller runs it live). Export: the input file and a line on stdout. Import: the run folder `out`,
// then write() (the stage's own output), its counts line and the import's summary (Error
// kIncomplete, exit 3, when some claims are unanswered).
template <class Write>
bool run_claims_batch(const char* kind, const std::vector<llm::WorkItem>& items, const llm::RunSettings& s,
                      const llm::RunOptions& o, const std::string& export_file,
                      const std::vector<std::string>& import_files, const std::string& out,
                      const StageOutput& what, Write&& write) {
  if (export_file.empty() && import_files.empty()) return false;
  if (!export_file.empty() && !import_files.empty())
    fail(ErrorCode::kUsage, "--batch-export and --batch-import are two steps: give one of them");
  if (!o.endpoints.empty() || !o.system.empty() || !o.api_key_env.empty() || o.resume)
    fail(ErrorCode::kUsage,
         "a batch sends no request: --endpoint, --system, --api-key-env and --resume do not apply");
  const llm::Api api = o.api == "completions" ? llm::Api::kCompletions : llm::Api::kChat;
  const llm::RunSettings settings = claimsllm::stage_batch_settings(s, kind);
  if (!export_file.empty()) {
    const std::size_t n = claimsllm::export_stage_batch(items, settings, api, export_file);
    fmt::print("{}: {} request lines for {} ({})\n", export_file, n, settings.model, llm::batch_url(api));
    return true;
  }
  const std::vector<std::filesystem::path> outputs(import_files.begin(), import_files.end());
  const llm::BatchImport r = claimsllm::import_stage_batch(items, settings, api, outputs, out);
  print_stage_counts(out, what, write());
  fmt::print("{}\n", llm::batch_summary(r, out, "claims"));
  llm::check_batch_complete(r, out, "claims");
  return true;
}

}  // namespace numcheck::cli
