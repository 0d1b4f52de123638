#pragma once
// Shared by the claim commands that talk to a model (`claims decompose`, `claims verify --method
// llm`): the runner flags, the method's sampling defaults unless the user set a flag, and the
// HTTP backend (the simulated reference system answers arithmetic, not claims).
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "claims/prompt.hpp"
#include "claimsllm/stages.hpp"
#include "cli/run_flags.hpp"
#include "core/error.hpp"
#include "llm/options.hpp"

namespace numcheck::cli {

// Sampling fields (prompt-file names) whose flags appear on the command line.
inline std::vector<std::string> sampling_flags_given(const CLI::App& app) {
  static constexpr std::pair<const char*, const char*> kFlags[] = {
      {"--temperature", "temperature"},
      {"--top-p", "top_p"},
      {"--top-k", "top_k"},
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

}  // namespace numcheck::cli
