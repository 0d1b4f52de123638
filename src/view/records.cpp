#include "view/records.hpp"

#include <fmt/format.h>

#include "core/ascii.hpp"
#include "core/utf8.hpp"

namespace numcheck::view {

LineParser::Kind LineParser::parse(const FileLine& line, std::size_t number, std::string_view file,
                                   std::size_t readable_after) {
  where_ = fmt::format("{}:{}", file, number);
  if (line.cut) {
    error_ = fmt::format("line of {} bytes, longer than the viewer reads ({} bytes)", line.bytes,
                         line.text.size());
    return Kind::kBroken;
  }
  if (io::is_blank_line(line.text)) return Kind::kBlank;
  if (line.terminated && parser_.walk(line.text, values_, readable_after)) return Kind::kRecord;
  io::JsonError error;
  auto j = io::parse_jsonl_line<io::OrderedJson>(line.text, line.terminated, io::TornTail::kAppendLog, where_,
                                                 error);
  if (!j) {
    error_ = error.message.empty() ? "not a JSON object" : error.message;
    return Kind::kBroken;
  }
  fallback_ = std::move(*j);
  io::flatten(fallback_, values_);
  return Kind::kRecord;
}

std::string_view clip_utf8(std::string_view text, std::size_t max_bytes, bool& cut) noexcept {
  cut = text.size() > max_bytes;
  return utf8::prefix(text, max_bytes);
}

bool contains_folded(std::string_view hay, std::string_view needle) noexcept {
  if (needle.empty()) return true;
  if (needle.size() > hay.size()) return false;
  for (std::size_t i = 0; i + needle.size() <= hay.size(); ++i) {
    std::size_t k = 0;
    while (k < needle.size() && ascii::to_lower(hay[i + k]) == ascii::to_lower(needle[k])) ++k;
    if (k == needle.size()) return true;
  }
  return false;
}

std::string_view text_field(const io::LineRecord& r, std::string_view key) {
  const io::FlatValue* v = r.find(key);
  return v != nullptr && v->is_string() ? v->text : std::string_view();
}

}  // namespace numcheck::view
