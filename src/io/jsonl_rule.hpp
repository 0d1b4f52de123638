#pragma once
// The line splitting of in-memory texts and the one rule for a JSONL line that did not parse, shared by
// read_jsonl (json.cpp) and read_jsonl_fast (jsonl_fast.cpp); private to src/io.
#include <cstddef>
#include <functional>
#include <string_view>

#include "io/json.hpp"

namespace numcheck::io::detail {

// `error` is what parse_jsonl_line reported for line `number` (`bytes` long). A torn last line is
// counted (stats.torn_line, torn_bytes) and, for an append log, dropped; any other bad line is an
// error, or, with `on_bad_line`, counted and handed to it.
inline void take_bad_line(const JsonError& error, std::size_t number, std::size_t bytes, TornTail torn,
                          const std::function<void(const JsonError&, std::size_t)>& on_bad_line,
                          JsonlStats& stats) {
  if (error.torn) {
    stats.torn_line = number;
    stats.torn_bytes = bytes;
    if (torn == TornTail::kAppendLog) return;
  }
  if (!on_bad_line) error.raise();
  ++stats.bad_lines;
  on_bad_line(error, number);
}

// The lines of an in-memory JSONL text as for_each_line splits a file: "\n"-terminated, a trailing
// "\r" removed, the last line unterminated when the text does not end in "\n"; calls
// fn(line, number, terminated) with 1-based numbers.
template <class Fn>
void for_each_text_line(std::string_view text, Fn&& fn) {
  std::size_t pos = 0, number = 0;
  while (pos < text.size()) {
    std::size_t e = text.find('\n', pos);
    const bool terminated = e != std::string_view::npos;
    if (!terminated) e = text.size();
    std::string_view l = text.substr(pos, e - pos);
    pos = e + 1;
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    fn(l, ++number, terminated);
  }
}

}  // namespace numcheck::io::detail
