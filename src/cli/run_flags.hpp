#pragma once
// The flags of the backend and runner options shared by `orbit run` and `orbit consensus run`, so
// both commands take exactly the same options with the same meaning (docs/runner.md). The options
// themselves are a plain struct of the llm library (llm/options.hpp).
#include <CLI/CLI.hpp>

#include "llm/options.hpp"

namespace numcheck::cli {

// Adds every runner flag to `app`, writing into `o`.
void add_run_flags(CLI::App& app, llm::RunOptions& o);

}  // namespace numcheck::cli
