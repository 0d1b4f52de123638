#pragma once
// Shared by the claim commands that talk to a model (`claims decompose`, `claims verify --method
// llm`): the runner flags, the method's sampling defaults unless the user set a flag, the HTTP
// backend (the simulated reference system answers arithmetic, not claims), and the run itself
// (run_claims_stage: runner, the stage's output file, its counts line, the runner's summary).
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "claims/prompt.hpp"
#include "claimsllm/stages.hpp"
#include "cli/cli_util.hpp"
#include "cli/run_flags.hpp"
#include "core/error.hpp"
#include "llm/options.hpp"

namespace numcheck::cli {

// Sampling fields (prompt-file names) whose flags appear on the command line (--no-top-k sets
// top_k: to none, which a prompt file's top_k then does not override).
inline std::vector<std::string> sampling_flags_given(const CLI::App& app) {
  static constexpr std::pair<const char*, const char*> kFlags[] = {
      {"--temperature", "temperature"},
      {"--top-p", "top_p"},
      {"--top-k", "top_k"},
      {"--no-top-k", "top_k"},
      {"--max-tokens", "max_tokens"},
      {"--frequency-penalty", "frequency_penalty"},
      {"--presence-penalty", "presence_penalty"}};
  std::vector<std::string> out;
  for (const auto& [flag, name] : kFlags) {
    const CLI::Option* o = app.get_option_no_throw(flag);
    if (o != nullptr && o->count() > 0) out.emplace_back(name);
  }
  return out;
}

// The backend and runner settings of a claims LLM stage.
inline std::unique_ptr<llm::Backend> claims_backend(const llm::RunOptions& o) {
  if (!o.system.empty())
    fail(ErrorCode::kUsage, "--system: claim stages need a model: give --endpoint URL --model NAME");
  return llm::make_backend(o, nullptr);
}

// The run settings of a claims LLM stage: the runner flags, then the prompt file's sampling
// defaults for the fields whose flags the user did not give.
inline llm::RunSettings claims_stage_settings(const llm::RunOptions& o, const claims::PromptSpec& prompt,
                                              const CLI::App& app) {
  llm::RunSettings s = llm::settings_from(o);
  claimsllm::apply_prompt_sampling(s, prompt, sampling_flags_given(app));
  return s;
}

// What a stage writes and how its counts line names them.
struct StageOutput {
  const char* file;     // "decompositions.jsonl"
  const char* ok;       // what a parsed answer is ("ok", "verdicts")
  const char* failure;  // what an unparsed one is ("parse failures", "unparseable")
};

// "<out>/<file>: N claims, N ok, N parse failures, N errors"
inline void print_stage_counts(const std::string& out, const StageOutput& what,
                               const claimsllm::StageCounts& c) {
  fmt::print("{}/{}: {} claims, {} {}, {} {}, {} errors\n", out, what.file, c.records, c.ok, what.ok,
             c.parse_failures, what.failure, c.errors);
}

// The run of a claims LLM stage, once its items and settings (with their bindings) are made: the
// runner (kind `kind`, records keyed by "id") into `out`, then write() (the stage's own output,
// parsed from the run's records), the counts line, and the runner's summary (Error kIncomplete,
// exit 3, when some claims are unanswered).
template <class Write>
void run_claims_stage(const char* kind, const std::vector<llm::WorkItem>& items, llm::RunSettings s,
                      llm::Backend& backend, const std::string& out, const StageOutput& what, Write&& write) {
  s.kind = kind;
  s.id_field = "id";
  const llm::RunSummary r = llm::run_items(items, s, backend, out);
  const claimsllm::StageCounts c = write();
  print_stage_counts(out, what, c);
  finish_run(out, r, "claims");
}

}  // namespace numcheck::cli
