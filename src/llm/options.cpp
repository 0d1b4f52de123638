#include "llm/options.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "core/error.hpp"
#include "io/sha256.hpp"
#include "llm/cache.hpp"
#include "llm/http_backend.hpp"

namespace numcheck::llm {

namespace {

std::chrono::milliseconds seconds_ms(double s) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(s * 1000.0)));
}

bool looks_like_variable_name(const std::string& s) {
  if (s.empty() || s.size() > 64 || (s[0] >= '0' && s[0] <= '9')) return false;
  for (const char c : s) {
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

}  // namespace

std::unique_ptr<Backend> make_backend(const RunOptions& o, SolveFn reference_solver) {
  if (o.system == "reference") {
    if (!o.endpoints.empty())
      fail(ErrorCode::kUsage, "give either --system reference or --endpoint, not both");
    if (!o.api_key_env.empty()) fail(ErrorCode::kUsage, "--api-key-env needs --endpoint");
    return make_reference_backend(parse_fault_rates(o.inject), std::move(reference_solver));
  }
  if (!o.system.empty())
    fail(ErrorCode::kUsage, "--system: unknown system '{}' (known: reference)", o.system);
  if (!o.inject.empty()) fail(ErrorCode::kUsage, "--inject works only with --system reference");
  if (o.endpoints.empty()) fail(ErrorCode::kUsage, "give --endpoint URL --model NAME, or --system reference");
  HttpConfig cfg;
  cfg.endpoints = o.endpoints;
  cfg.model = o.model;
  cfg.api = o.api == "completions" ? Api::kCompletions : Api::kChat;
  cfg.timeout = seconds_ms(o.timeout_s);
  cfg.max_response_bytes = o.max_response_mb << 20;
  if (!o.api_key_env.empty()) {
    const char* key = std::getenv(o.api_key_env.c_str());
    if (key == nullptr || *key == 0) {
      // The value may be the key itself, given by mistake: name it only when it looks like a
      // variable name (upper case, digits, underscores).
      if (!looks_like_variable_name(o.api_key_env)) {
        fail(ErrorCode::kUsage,
             "--api-key-env takes the NAME of an environment variable holding the key (e.g. OPENAI_API_KEY), "
             "not the key itself; the value given is not shown");
      }
      fail(ErrorCode::kUsage, "--api-key-env {}: that environment variable is not set", o.api_key_env);
    }
    cfg.api_key = key;
  }
  return make_http_backend(std::move(cfg));
}

RunSettings settings_from(const RunOptions& o) {
  RunSettings s;
  s.model = o.system == "reference" ? std::string("reference") : o.model;
  s.sampling.temperature = o.temperature;
  s.sampling.top_p = o.top_p;
  s.sampling.top_k = o.top_k;
  s.sampling.seed = o.seed;
  s.sampling.max_tokens = o.max_tokens;
  s.sampling.frequency_penalty = o.frequency_penalty;
  s.sampling.presence_penalty = o.presence_penalty;
  if (!o.system_prompt.empty()) s.system_prompt = o.system_prompt;
  if (!o.extra_body.empty()) {
    io::Json j = io::Json::parse(o.extra_body, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      fail(ErrorCode::kUsage, "--extra-body is not a JSON object: {}", o.extra_body);
    s.extra_body = std::move(j);
  }
  s.concurrency = o.concurrency;
  s.retry.retries = o.retries;
  s.retry.base_delay = seconds_ms(o.retry_base_s);
  s.retry.max_delay = seconds_ms(o.retry_max_s);
  s.max_errors = o.max_errors;
  s.stop_after_same_errors = o.stop_after_same_errors;
  // The reference system is computed, not fetched: caching it would only fill the user's cache.
  s.use_cache = !o.no_cache && o.system != "reference";
  s.cache_path = default_cache_path(o.cache_dir);
  s.resume = o.resume;
  s.progress = o.progress == "live"    ? ProgressMode::kLive
               : o.progress == "plain" ? ProgressMode::kPlain
               : o.progress == "none"  ? ProgressMode::kNone
                                       : ProgressMode::kAuto;
  s.fsync = !o.no_fsync;
  s.recorded["timeout_s"] = o.timeout_s;
  s.recorded["max_response_mb"] = o.max_response_mb;
  if (!o.api_key_env.empty()) s.recorded["api_key_env"] = o.api_key_env;  // the name, never the key
  if (!o.model_file.empty()) {
    // Binds the run: answers of two different weight files never mix in one run folder. Only the
    // file name is recorded (a path would make run.json depend on where the model lives).
    std::error_code ec;
    if (!std::filesystem::is_regular_file(o.model_file, ec))
      fail(ErrorCode::kUsage, "--model-file {}: not a readable file", o.model_file);
    io::OrderedJson mf = io::OrderedJson::object();
    mf["name"] = std::filesystem::path(o.model_file).filename().string();
    mf["bytes"] = static_cast<std::uint64_t>(std::filesystem::file_size(o.model_file));
    mf["sha256"] = io::sha256_file(o.model_file);
    s.binding["model_file"] = mf;
  }
  return s;
}

}  // namespace numcheck::llm
