#include "io/json.hpp"

#include "core/error.hpp"
#include "io/files.hpp"

namespace numcheck::io {

template <typename J>
static J parse_impl(std::string_view text, std::string_view where) {
  try {
    return J::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based; report the line and column within `text`.
    std::size_t line = 1, col = 1;
    const std::size_t upto = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    for (std::size_t i = 0; i < upto; ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string what = e.what();
    if (auto p = what.find("parse error"); p != std::string::npos) what = what.substr(p);
    fail(ErrorCode::kInvalidInput, "{}: invalid JSON at line {}, column {}: {}", where, line, col, what);
  } catch (const nlohmann::json::exception& e) {
    // out_of_range (a number such as 1e999 that no double holds) and any other library error.
    fail(ErrorCode::kInvalidInput, "{}: invalid JSON: {}", where, e.what());
  }
}

Json parse_json(std::string_view text, std::string_view where) { return parse_impl<Json>(text, where); }
OrderedJson parse_ordered_json(std::string_view text, std::string_view where) {
  return parse_impl<OrderedJson>(text, where);
}

Json read_json_file(const std::filesystem::path& path) { return parse_json(read_file(path), path.string()); }

std::string to_line(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }
std::string to_line(const OrderedJson& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }
std::string to_pretty(const OrderedJson& j) {
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

const Json& require(const Json& obj, std::string_view key, std::string_view where) {
  if (!obj.is_object()) fail("{}: expected a JSON object", where);
  auto it = obj.find(key);
  if (it == obj.end()) fail("{}: missing field '{}'", where, key);
  return *it;
}

std::string require_string(const Json& obj, std::string_view key, std::string_view where) {
  const Json& v = require(obj, key, where);
  if (!v.is_string()) fail("{}: field '{}' must be a string", where, key);
  return v.get<std::string>();
}

}  // namespace numcheck::io
