#pragma once
// The OpenAI-compatible HTTP backend: POST {base}/chat/completions (or /completions), GET
// {base}/models, and llama-server's GET {root}/props (and vLLM's GET {root}/version) when present.
// libcurl carries every request (http and https, credentials in the URL, a proxy named in the
// environment): a session's transfers share its connections, kept alive per endpoint.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llm/backend.hpp"

namespace numcheck::llm {

struct HttpConfig {
  std::vector<std::string> endpoints;  // base URLs including /v1 ("http://localhost:8080/v1")
  std::string model;
  std::string api_key;  // the key itself ("" = none); never logged, recorded or put in errors
  Api api = Api::kChat;
  std::chrono::milliseconds timeout{600000};
  std::chrono::milliseconds connect_timeout{10000};
  std::size_t max_response_bytes = std::size_t{16} << 20;
  // Once a response has begun (its headers arrived), it must keep arriving at low_speed_bytes per
  // second, measured over windows of low_speed_time; a slower (stalled or trickling) response is
  // abandoned as a retryable failure. The wait for the headers (a model generating a
  // non-streamed answer sends nothing) is bounded by `timeout` only.
  std::size_t low_speed_bytes = 100;
  std::chrono::milliseconds low_speed_time{30000};
};

// Throws Error (kUsage) for an endpoint that is not an http(s) URL, or that is the full URL of a
// route (".../v1/chat/completions": the error names the base URL to give instead). Sends nothing.
[[nodiscard]] std::unique_ptr<Backend> make_http_backend(HttpConfig config);

// The base URL of a URL that ends with an OpenAI route (/chat/completions, /completions,
// /embeddings, /models): "http://h:8080/v1/chat/completions" -> "http://h:8080/v1"; nullopt for
// other URLs.
[[nodiscard]] std::optional<std::string> base_of_route_url(std::string_view url);

// `text` with every occurrence of `secret` replaced by "[redacted]": literal occurrences, and
// spellings with JSON string escapes (backslash-slash, backslash-u hex escapes, surrogate pairs),
// so that text decoded from a JSON body never holds it either. Every byte a server sends goes
// through it before anything parses, cuts, stores or prints it.
[[nodiscard]] std::string redact_secret(std::string text, std::string_view secret);

// The URL without user:password@ (what records and run.json show).
[[nodiscard]] std::string strip_credentials(std::string_view url);

// Parses an OpenAI-shaped response body (chat or completions). Returns the error text instead
// when the body is not a well-formed completion.
struct ParsedBody {
  bool ok = false;
  Completion completion;
  std::string error;
};
[[nodiscard]] ParsedBody parse_completion_body(std::string_view body, Api api);

namespace detail {
// The two paths of parse_completion_body, for the tests and the fuzzer. The DOM path (nlohmann)
// decides every body. The fast path (simdjson's walk, io::FastLineParser) returns true only for a
// completion it accepts (compact JSON, the plain shape, at most 1 MiB), and `out` is then what the
// DOM path gives (on false, `out` may hold part of a completion: discard it);
// parse_completion_body takes the fast path when it can and asks the DOM path otherwise.
[[nodiscard]] ParsedBody parse_completion_dom(std::string_view body, Api api);
[[nodiscard]] bool parse_completion_fast(std::string_view body, Api api, Completion& out);
}  // namespace detail

// The message of an OpenAI-shaped error body ({"error": {"message": ...}}) or a short prefix of
// the body when it has none.
[[nodiscard]] std::string error_message_from_body(std::string_view body);

// One blocking POST of a JSON body to `url` (side routes such as /embeddings; completions go
// through the backend). `ok` for a 2xx answer; otherwise `error` is one line without the key and
// `retryable` tells connection errors, timeouts, 429 and 5xx apart from the rest.
struct HttpReply {
  bool ok = false;
  long status = 0;  // 0 when no HTTP response arrived
  std::string body;
  std::string error;
  bool retryable = false;
  std::optional<double> retry_after_s;
};
[[nodiscard]] HttpReply post_json(const std::string& url, const std::string& body, const std::string& api_key,
                                  std::chrono::milliseconds timeout, std::size_t max_response_bytes);

// Retry-After as seconds (delta-seconds or HTTP-date); nullopt when absent or malformed.
[[nodiscard]] std::optional<double> parse_retry_after(std::string_view value);

}  // namespace numcheck::llm
