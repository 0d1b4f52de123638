#pragma once
// How wide a doc table renders, estimated from its text, for tests that check that every table fits
// the page (header-only; include as "../support/table_width.hpp").
//  - HTML: header and text cells wrap at spaces, numeric cells never wrap (td.n is nowrap), so a
//    column needs its longest word or its widest numeric cell; each column adds 16 px of padding,
//    about 2.3 characters of the 13.5 px table font (about 7 px a character). The page's content
//    is 1,132 px wide (max-width 1180 px less the padding), about 160 characters.
//  - LaTeX: tabular cells never wrap, so a column needs its widest cell or header, plus about 2
//    characters of column separation; a table wider than the line is shrunk to fit.
#include <algorithm>
#include <cstddef>
#include <string_view>

#include "doc/html.hpp"

namespace numcheck::testing {

// Characters (UTF-8 code points) of s.
inline std::size_t text_chars(std::string_view s) {
  std::size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

inline std::size_t longest_word(std::string_view s) {
  std::size_t best = 0;
  while (!s.empty()) {
    const auto sp = s.find(' ');
    best = std::max(best, text_chars(s.substr(0, sp)));
    if (sp == std::string_view::npos) break;
    s.remove_prefix(sp + 1);
  }
  return best;
}

// The table's narrowest HTML width, in characters of the table font.
inline double html_min_chars(const doc::html::Table& t) {
  double total = 0;
  for (std::size_t c = 0; c < t.header.size(); ++c) {
    std::size_t w = longest_word(t.header[c]);
    for (const auto& row : t.rows) {
      if (c >= row.size()) continue;
      w = std::max(w, row[c].numeric ? text_chars(row[c].text) : longest_word(row[c].text));
    }
    total += static_cast<double>(w) + 2.3;
  }
  return total;
}

// The table's LaTeX width, in characters of its font. A text column with a cell longer than 20
// characters is a 10em paragraph column (doc::Document::to_latex): about 20 characters wide.
inline double latex_chars(const doc::html::Table& t) {
  double total = 0;
  for (std::size_t c = 0; c < t.header.size(); ++c) {
    std::size_t w = 0;
    bool wraps = false;
    for (const auto& row : t.rows) {
      if (c >= row.size()) continue;
      w = std::max(w, text_chars(row[c].text));
      wraps = wraps || (!row[c].numeric && row[c].text.size() > 20);
    }
    w = wraps ? std::max<std::size_t>(20, longest_word(t.header[c])) : std::max(w, text_chars(t.header[c]));
    total += static_cast<double>(w) + 2;
  }
  return total;
}

// The limits the report's tables keep: HTML well inside the 1,132 px content width; LaTeX at most
// 110 characters (at \small in a 345 pt article line, shrunk to no less than about 6.5 pt).
inline constexpr double kHtmlMaxChars = 140;
inline constexpr double kLatexMaxChars = 110;

}  // namespace numcheck::testing
