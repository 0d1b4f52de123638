#pragma once
// The flags of the backend and runner options shared by `orbit run` and `orbit consensus run`, so
// both commands take exactly the same options with the same meaning (docs/runner.md). The options
// themselves are a plain struct of the llm library (llm/options.hpp).
#include <CLI/CLI.hpp>

#include "llm/options.hpp"

namespace numcheck::cli {

// Adds every runner flag to `app`, writing into `o`. Without `model_flag` there is no --model
// (for a command that already has one, like `claims verify`; set o.model yourself).
void add_run_flags(CLI::App& app, llm::RunOptions& o, bool model_flag = true);

}  // namespace numcheck::cli
