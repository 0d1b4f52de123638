#pragma once
// One JSONL line of a file the viewer reads, parsed the way numcheck's fast reader parses it
// (simdjson walk, nlohmann for every line the walk does not take), with what is wrong with a line
// that is not a record kept as a message for an error row instead of stopping the page.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/json.hpp"
#include "view/lines.hpp"

namespace numcheck::view {

class LineParser {
 public:
  enum class Kind { kRecord, kBlank, kBroken };
  // Parses `line` (number `number` of `file`); `readable_after`: LineReader::readable_after.
  Kind parse(const FileLine& line, std::size_t number, std::string_view file, std::size_t readable_after);
  // The record of the last kRecord parse (valid until the next parse).
  [[nodiscard]] io::LineRecord record() const { return {values_, 0, where_}; }
  // Why the last kBroken line is not a record.
  [[nodiscard]] const std::string& error() const noexcept { return error_; }

 private:
  io::FastLineParser parser_;
  std::vector<io::FlatValue> values_;
  io::OrderedJson fallback_;  // holds the strings of values_ when nlohmann parsed the line
  std::string where_;
  std::string error_;
};

// `text` cut to at most `max_bytes` at a UTF-8 character boundary; `cut` says whether it was.
[[nodiscard]] std::string_view clip_utf8(std::string_view text, std::size_t max_bytes, bool& cut) noexcept;

// ASCII case-insensitive substring search (an empty needle is found).
[[nodiscard]] bool contains_folded(std::string_view hay, std::string_view needle) noexcept;

// A string field of a record, or "" when absent or not a string.
[[nodiscard]] std::string_view text_field(const io::LineRecord& r, std::string_view key);

}  // namespace numcheck::view
