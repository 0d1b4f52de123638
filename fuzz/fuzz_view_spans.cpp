// Fuzz target for the viewer's inputs (src/view): any bytes as a page cursor and, when they parse as
// a JSON object, as a claim-orbit variant whose spans cut its text into segments. A cursor either
// is refused with numcheck::Error or survives a round trip; segments, when the spans fit, put the
// variant's text back together byte for byte.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "io/json.hpp"
#include "view/claims.hpp"
#include "view/runs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace numcheck;
  if (size > 65536) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const view::Cursor c = view::Cursor::parse(text);
    const view::Cursor back = view::Cursor::parse(c.str());
    if (back.offset != c.offset || back.lines != c.lines || back.score_offset != c.score_offset)
      __builtin_trap();
  } catch (const Error&) {  // NOLINT(bugprone-empty-catch): a refused cursor is the expected outcome
  }
  auto j = io::try_parse_json(text, "fuzz");
  if (!j.ok() || !j.value->is_object()) return 0;
  try {
    const auto segments = view::span_segments(*j.value);
    if (!segments) return 0;
    std::string joined;
    for (const auto& s : *segments) joined += s["text"].get<std::string>();
    const auto t = j.value->find("text");
    const std::string expected =
        t != j.value->end() && t->is_string() ? t->get<std::string>() : std::string();
    if (joined != expected) __builtin_trap();
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "span_segments threw: %s\n", ex.what());
    __builtin_trap();
  }
  return 0;
}
