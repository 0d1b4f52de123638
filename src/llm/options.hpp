#pragma once
// The backend and runner options shared by `orbit run` and `orbit consensus run`, as a plain
// struct: the CLI defines their flags (src/cli/run_flags.hpp, documented in docs/runner.md) and
// any other caller can fill the struct directly.
//
//   llm::RunOptions opts;                       // filled by cli::add_run_flags(sub, opts)
//   auto backend = llm::make_backend(opts, solver);  // validates the combination, reads the key
//   llm::RunSettings settings = llm::settings_from(opts);
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llm/backend.hpp"
#include "llm/reference.hpp"
#include "llm/runner.hpp"

namespace numcheck::llm {

struct RunOptions {
  std::vector<std::string> endpoints;  // base URLs including /v1
  std::string model;
  std::string api_key_env;   // name of the environment variable holding the key
  std::string api = "chat";  // "chat" or "completions"
  std::string system;        // "" (use --endpoint) or "reference"
  std::string inject;        // reference faults: "times_ten=0.05,markdown=0.03,..."
  std::size_t concurrency = 1;
  double timeout_s = 600;
  int retries = 4;
  double retry_base_s = 1.0;
  double retry_max_s = 30.0;
  std::optional<std::size_t> max_errors;
  std::size_t stop_after_same_errors = 5;
  double temperature = 0.0;
  double top_p = 1.0;
  std::optional<std::int64_t> top_k = 1;  // unset (--no-top-k): not sent, for APIs that refuse it
  std::uint64_t seed = 20260725;
  std::int64_t max_tokens = 1024;
  std::optional<double> frequency_penalty;  // unset: not sent
  std::optional<double> presence_penalty;   // unset: not sent
  std::string extra_body;                   // JSON object text
  std::string system_prompt;                // "" = none
  // The model's weights file (e.g. the GGUF llama-server loaded): its SHA-256 binds the run and is
  // recorded in run.json "model_file" {name, bytes, sha256} (the report's systems table shows it).
  std::string model_file;  // "" = not given
  bool resume = false;
  bool no_cache = false;
  std::string cache_dir;  // "" = default (NUMCHECK_CACHE_DIR, XDG_CACHE_HOME, ~/.cache)
  std::string progress = "auto";
  std::size_t max_response_mb = 16;
  bool no_fsync = false;
};

// The backend the options ask for: the reference system (--system reference, answering with
// `reference_solver`, e.g. llm::benchmark_solver(bench)) or the HTTP backend (--endpoint ...
// --model ...). Throws Error (kUsage) for a wrong combination, an unset API key variable, a
// malformed URL or --inject spec.
[[nodiscard]] std::unique_ptr<Backend> make_backend(const RunOptions& o, SolveFn reference_solver);

// Runner settings from the options (sampling, extra body, concurrency, retries, cache, progress,
// resume). Throws Error (kUsage) for malformed --extra-body.
[[nodiscard]] RunSettings settings_from(const RunOptions& o);

}  // namespace numcheck::llm
