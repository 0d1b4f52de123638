#pragma once
// Cutting UTF-8 text to a byte budget without splitting a character.
#include <cstddef>
#include <string_view>

namespace numcheck::utf8 {

// The longest prefix of `text` of at most `max_bytes` bytes that ends at a character boundary
// (continuation bytes 10xxxxxx never start the cut-off part). Text of ill-formed UTF-8 is cut at
// max_bytes or before a run of continuation bytes.
[[nodiscard]] inline std::string_view prefix(std::string_view text, std::size_t max_bytes) noexcept {
  if (text.size() <= max_bytes) return text;
  std::size_t n = max_bytes;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0U) == 0x80U) --n;
  return text.substr(0, n);
}

}  // namespace numcheck::utf8
