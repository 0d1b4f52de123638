// Fuzz target for the HTTP backend's response parsing: any bytes as a response body (chat or
// completions route, by the first byte) and as a Retry-After header value. Parsing must never
// crash, hang or throw: a body either is a completion or yields an error text, and the error text
// is one bounded line; the fast and the DOM parse paths agree. Crashes found here become named tests in
// tests/llm/http_test.cpp.
#include <cstdint>
#include <string_view>

#include "llm/http_backend.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace numcheck;
  const llm::Api api = (size > 0 && (data[0] & 1U) != 0) ? llm::Api::kCompletions : llm::Api::kChat;
  const std::string_view body(reinterpret_cast<const char*>(data) + (size > 0 ? 1 : 0),
                              size > 0 ? size - 1 : 0);
  const llm::ParsedBody p = llm::parse_completion_body(body, api);
  if (!p.ok && p.error.empty()) __builtin_trap();  // a refusal always says why
  // The fast path (simdjson's walk) never takes a body the DOM path refuses, never reads another
  // completion from it, and the two together are what parse_completion_body gives.
  const llm::ParsedBody dom = llm::detail::parse_completion_dom(body, api);
  llm::Completion fast;
  if (llm::detail::parse_completion_fast(body, api, fast) && (!dom.ok || !(fast == dom.completion)))
    __builtin_trap();
  if (p.ok != dom.ok || p.error != dom.error || !(p.completion == dom.completion)) __builtin_trap();
  const std::string msg = llm::error_message_from_body(body);
  if (msg.find('\n') != std::string::npos || msg.size() > 600) __builtin_trap();
  if (const auto ra = llm::parse_retry_after(body); ra && !(*ra >= 0)) __builtin_trap();
  (void)llm::strip_credentials(body);
  return 0;
}
