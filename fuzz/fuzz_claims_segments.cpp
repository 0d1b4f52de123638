// Fuzz target: quantity-segment extraction, categorizer and label normalization over untrusted
// text. Must never throw, crash or hang; segments must lie inside the text and not overlap.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "claims/category.hpp"
#include "claims/labels.hpp"
#include "claims/segment.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto segs = numcheck::claims::find_segments(text);
  std::size_t last = 0;
  for (const auto& s : segs) {
    if (s.begin < last || s.end > text.size() || s.begin >= s.end) std::abort();
    last = s.end;
    (void)numcheck::claims::segment_json(s);
  }
  (void)numcheck::claims::categorize(text, segs);
  (void)numcheck::claims::LabelMap::builtin().map(text);
  return 0;
}
