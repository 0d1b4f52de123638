#pragma once
// The one rule for a JSONL line that did not parse, shared by read_jsonl (json.cpp) and
// read_jsonl_fast (jsonl_fast.cpp); private to src/io.
#include <cstddef>
#include <functional>

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

}  // namespace numcheck::io::detail
