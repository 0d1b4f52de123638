#include "cli/run_flags.hpp"

namespace numcheck::cli {

void add_run_flags(CLI::App& app, llm::RunOptions& o, bool model_flag) {
  app.add_option("--endpoint", o.endpoints,
                 "OpenAI-compatible base URL including /v1 (repeat for replicas of one model)");
  if (model_flag) app.add_option("--model", o.model, "Model name sent in every request");
  app.add_option("--api-key-env", o.api_key_env,
                 "Name of the environment variable that holds the API key (sent as a Bearer token)");
  app.add_option("--api", o.api, "Route: chat (/chat/completions) or completions (/completions)")
      ->check(CLI::IsMember({"chat", "completions"}))
      ->capture_default_str();
  app.add_option("--system", o.system,
                 "Built-in system instead of an endpoint: 'reference' (the reference solver, simulated)")
      ->check(CLI::IsMember({"reference"}));
  app.add_option(
      "--inject", o.inject,
      "Faults for --system reference: times_ten=R,markdown=R,unit_slip=R,truncation=R (rates in [0,1])");
  app.add_option("--concurrency", o.concurrency, "Requests in flight per endpoint")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1024}))
      ->capture_default_str();
  app.add_option("--timeout", o.timeout_s, "Seconds before one request attempt is abandoned")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str();
  app.add_option("--retries", o.retries, "Extra attempts after a retryable failure")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  app.add_option("--retry-base-delay", o.retry_base_s, "First backoff delay in seconds (doubles per retry)")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--retry-max-delay", o.retry_max_s, "Largest backoff delay in seconds")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--max-errors", o.max_errors, "Stop after this many prompts failed (default: never)");
  app.add_option("--stop-after-same-errors", o.stop_after_same_errors,
                 "Stop when the first K requests all fail with the same non-retryable error (0: never)")
      ->capture_default_str();
  app.add_option("--temperature", o.temperature, "Sampling temperature")->capture_default_str();
  app.add_option("--top-p", o.top_p, "Nucleus sampling top_p")->capture_default_str();
  auto* top_k = app.add_option_function<std::int64_t>(
                       "--top-k", [&o](const std::int64_t& k) { o.top_k = k; }, "Top-k sampling")
                    ->default_str(o.top_k ? std::to_string(*o.top_k) : "not sent");
  app.add_flag_callback(
         "--no-top-k", [&o] { o.top_k.reset(); },
         "Send no top_k, for APIs that refuse the field (OpenAI's, and its Batch API); the server's own "
         "top-k then applies")
      ->excludes(top_k);
  app.add_option("--seed", o.seed, "Sampling seed sent with every request")->capture_default_str();
  app.add_option("--max-tokens", o.max_tokens, "Generation cap (max_tokens) for every request")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--frequency-penalty", o.frequency_penalty,
                 "frequency_penalty sent with every request (default: not sent)")
      ->check(CLI::Range(-2.0, 2.0));
  app.add_option("--presence-penalty", o.presence_penalty,
                 "presence_penalty sent with every request (default: not sent)")
      ->check(CLI::Range(-2.0, 2.0));
  app.add_option("--extra-body", o.extra_body,
                 "JSON object merged into every request body, e.g. '{\"cache_prompt\": false}'");
  app.add_option("--system-prompt", o.system_prompt, "System message sent before every prompt");
  app.add_option("--model-file", o.model_file,
                 "The model's weights file (e.g. the GGUF the server loaded): its SHA-256 is recorded in "
                 "run.json and the report, and binds --resume");
  app.add_flag("--resume", o.resume, "Continue the run in --out (a fresh directory simply starts)");
  app.add_flag("--no-cache", o.no_cache, "Neither read nor write the response cache");
  app.add_option(
      "--cache-dir", o.cache_dir,
      "Response cache folder (default: $NUMCHECK_CACHE_DIR, $XDG_CACHE_HOME/numcheck, ~/.cache/numcheck)");
  app.add_option("--progress", o.progress, "Progress display: auto, live, plain, none")
      ->check(CLI::IsMember({"auto", "live", "plain", "none"}))
      ->capture_default_str();
  app.add_option("--max-response-mb", o.max_response_mb, "Largest response body accepted, in MiB")
      ->check(CLI::Range(std::size_t{1}, std::size_t{4096}))
      ->capture_default_str();
  app.add_flag("--no-fsync", o.no_fsync,
               "Do not fdatasync records (a process crash still loses nothing; a power loss may)");
}

}  // namespace numcheck::cli
