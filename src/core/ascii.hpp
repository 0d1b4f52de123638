#pragma once
// ASCII character classes, case folding and trimming: the one definition for every library.
// Locale-independent on purpose (std::isspace and friends depend on the C locale and are
// undefined for negative chars); bytes >= 0x80 (UTF-8) are never space, digit or letter.
#include <string>
#include <string_view>

namespace numcheck::ascii {

// Whitespace: space, tab, newline, carriage return, vertical tab, form feed (the C locale's
// isspace set). There is one definition of whitespace in numcheck: this one.
[[nodiscard]] constexpr bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}
// Blank within a line: space or tab only.
[[nodiscard]] constexpr bool is_blank(char c) noexcept { return c == ' ' || c == '\t'; }
[[nodiscard]] constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
[[nodiscard]] constexpr bool is_alpha(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
[[nodiscard]] constexpr bool is_alnum(char c) noexcept { return is_alpha(c) || is_digit(c); }
// Letters, digits and any byte >= 0x80 (part of a UTF-8 letter): the characters a word boundary
// test treats as inside a word.
[[nodiscard]] constexpr bool is_wordish(char c) noexcept {
  return is_alnum(c) || static_cast<unsigned char>(c) >= 0x80;
}
// Letters, digits and '_' (identifier characters).
[[nodiscard]] constexpr bool is_word(char c) noexcept { return is_alnum(c) || c == '_'; }
[[nodiscard]] constexpr char to_lower(char c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}
[[nodiscard]] constexpr char to_upper(char c) noexcept {
  return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
}

// s with ASCII letters lowered (other bytes, including UTF-8, unchanged).
[[nodiscard]] inline std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = to_lower(c);
  return r;
}

// s without leading and trailing whitespace (is_space).
[[nodiscard]] constexpr std::string_view trim(std::string_view s) noexcept {
  std::size_t b = 0, e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

// True when s is empty or holds only whitespace.
[[nodiscard]] constexpr bool is_blank_text(std::string_view s) noexcept { return trim(s).empty(); }

// Case-insensitive ASCII equality.
[[nodiscard]] constexpr bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (to_lower(a[i]) != to_lower(b[i])) return false;
  }
  return true;
}

}  // namespace numcheck::ascii
