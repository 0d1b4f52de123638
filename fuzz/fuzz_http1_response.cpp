// Fuzz target for numcheck's own HTTP/1.1 response parser (llm/http1.hpp), which reads whatever a
// server (or anything listening on the port) sends: any bytes as a response, fed whole and again
// in pieces cut where the input's first two bytes say, optionally followed by the end of the
// connection. The parser must never crash, hang or read past its input; both feedings must end
// in the same state with the same status, body and reuse decision; a refusal says why in one
// line; a body never exceeds the limit. The input also goes through plain_http_target as a URL.
#include <cstdint>
#include <string>
#include <string_view>

#include "llm/http1.hpp"

namespace {

struct Outcome {
  numcheck::llm::http1::ResponseParser::State state;
  int status;
  std::string body;
  bool keep_alive;
  std::string error;
  std::size_t used;
  bool operator==(const Outcome&) const = default;
};

Outcome run(std::string_view bytes, std::size_t piece, bool eof) {
  constexpr std::size_t kMaxBody = 4096;
  numcheck::llm::http1::ResponseParser p(kMaxBody);
  std::size_t used = 0;
  for (std::size_t at = 0; at < bytes.size() && !p.done() && !p.failed(); at += piece) {
    const std::string_view part = bytes.substr(at, piece);
    const std::size_t n = p.feed(part);
    if (n > part.size()) __builtin_trap();
    used += n;
    if (n < part.size() && !p.done() && !p.failed()) __builtin_trap();  // only the end stops early
  }
  if (eof && !p.done() && !p.failed()) p.end_of_stream();
  if (p.body().size() > kMaxBody) __builtin_trap();
  if (p.failed() && (p.error().empty() || p.error().find('\n') != std::string::npos)) __builtin_trap();
  return {p.state(), p.status(), p.body(), p.keep_alive(), p.error(), p.failed() ? 0 : used};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t piece = 1 + data[0] % 64;
  const bool eof = (data[1] & 1U) != 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 2, size - 2);
  const Outcome whole = run(bytes, bytes.size() + 1, eof);
  if (!(run(bytes, piece, eof) == whole)) __builtin_trap();
  (void)numcheck::llm::http1::plain_http_target(bytes);
  return 0;
}
