#include "io/json.hpp"

#include "core/error.hpp"
#include "io/files.hpp"
#include "io/jsonl_rule.hpp"

namespace numcheck::io {

// ------------------------------------------------------------------------------ errors

std::string JsonError::what() const {
  std::string out = where;
  if (!out.empty()) out += ": ";
  if (!field.empty()) out += fmt::format("field '{}' ", field);
  out += message;
  return out;
}

void JsonError::raise() const { throw Error(ErrorCode::kInvalidInput, what()); }

// ------------------------------------------------------------------------------ parsing

namespace {

// "line L, column C" of a 1-based byte offset within text.
std::string position_of(std::string_view text, std::size_t byte) {
  std::size_t line = 1, col = 1;
  const std::size_t upto = std::min<std::size_t>(byte == 0 ? 0 : byte - 1, text.size());
  for (std::size_t i = 0; i < upto; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return fmt::format("line {}, column {}", line, col);
}

// The parser's own explanation without its "[json.exception...] parse error at line L, column C: "
// prefix (the position is reported by position_of).
std::string parse_detail(const nlohmann::json::parse_error& e) {
  std::string what = e.what();
  if (auto p = what.find("parse error"); p != std::string::npos) what = what.substr(p);
  if (what.starts_with("parse error at line ")) {
    if (auto p = what.find(": "); p != std::string::npos) return what.substr(p + 2);
  }
  return what;
}

template <typename J>
JsonResult<J> try_parse_impl(std::string_view text, std::string_view where) {
  JsonResult<J> r;
  try {
    r.value = J::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    r.error = {std::string(where), "",
               fmt::format("invalid JSON at {}: {}", position_of(text, e.byte), parse_detail(e))};
  } catch (const nlohmann::json::exception& e) {
    // out_of_range (a number such as 1e999 that no double holds) and any other library error.
    r.error = {std::string(where), "", fmt::format("invalid JSON: {}", e.what())};
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    r.error = {std::string(where), "", fmt::format("invalid JSON: {}", e.what())};
  }
  return r;
}

template <typename J>
J parse_or_throw(std::string_view text, std::string_view where) {
  auto r = try_parse_impl<J>(text, where);
  if (!r.value) r.error.raise();
  return std::move(*r.value);
}

}  // namespace

JsonResult<Json> try_parse_json(std::string_view text, std::string_view where) {
  return try_parse_impl<Json>(text, where);
}
JsonResult<OrderedJson> try_parse_ordered_json(std::string_view text, std::string_view where) {
  return try_parse_impl<OrderedJson>(text, where);
}
Json parse_json(std::string_view text, std::string_view where) { return parse_or_throw<Json>(text, where); }
OrderedJson parse_ordered_json(std::string_view text, std::string_view where) {
  return parse_or_throw<OrderedJson>(text, where);
}

Json read_json_file(const std::filesystem::path& path) { return parse_json(read_file(path), path.string()); }
OrderedJson read_ordered_json_file(const std::filesystem::path& path) {
  return parse_ordered_json(read_file(path), path.string());
}

// ------------------------------------------------------------------------------ writing

std::string to_line(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }
std::string to_line(const OrderedJson& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }
std::string to_pretty(const OrderedJson& j) {
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}
std::string to_pretty(const Json& j) { return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n"; }

// ------------------------------------------------------------------------------ typed access

template <typename J>
BasicRecord<J> BasicRecord<J>::of(const J& j, std::string_view where) {
  if (!j.is_object()) fail("{}{}expected a JSON object", where, where.empty() ? "" : ": ");
  return BasicRecord(j, std::string(where), "");
}

template <typename J>
std::optional<BasicRecord<J>> BasicRecord<J>::try_of(const J& j, std::string_view where, JsonError& error) {
  if (!j.is_object()) {
    error = {std::string(where), "", "not a JSON object"};
    return std::nullopt;
  }
  return BasicRecord(j, std::string(where), "");
}

template <typename J>
std::string BasicRecord<J>::path(std::string_view key) const {
  return prefix_ + std::string(key);
}

template <typename J>
JsonError BasicRecord<J>::field_error(std::string_view key, std::string_view message) const {
  return {where_, path(key), std::string(message)};
}

template <typename J>
void BasicRecord<J>::fail_field(std::string_view key, std::string_view message) const {
  field_error(key, message).raise();
}

template <typename J>
const J* BasicRecord<J>::find(std::string_view key) const {
  auto it = j_->find(key);
  return it == j_->end() ? nullptr : &*it;
}

template <typename J>
bool BasicRecord<J>::contains(std::string_view key) const {
  return find(key) != nullptr;
}

template <typename J>
bool BasicRecord<J>::has(std::string_view key) const {
  const J* v = find(key);
  return v != nullptr && !v->is_null();
}

template <typename J>
const J& BasicRecord<J>::at(std::string_view key) const {
  const J* v = find(key);
  if (v == nullptr) {
    if (where_.empty()) fail("missing field '{}'", path(key));
    fail("{}: missing field '{}'", where_, path(key));
  }
  return *v;
}

template <typename J>
std::string BasicRecord<J>::string(std::string_view key) const {
  const J& v = at(key);
  if (!v.is_string()) fail_field(key, "must be a string");
  return v.template get<std::string>();
}

template <typename J>
std::optional<std::string> BasicRecord<J>::opt_string(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  const J& v = at(key);
  if (!v.is_string()) fail_field(key, "must be a string or null");
  return v.template get<std::string>();
}

namespace detail {

std::string integer_rule(std::int64_t min, std::int64_t max) {
  constexpr auto kLo = std::numeric_limits<std::int64_t>::min();
  constexpr auto kHi = std::numeric_limits<std::int64_t>::max();
  if (min == 0 && max == kHi) return "must be a non-negative integer";
  if (min == kLo && max == kHi) return "must be an integer";
  if (max == kHi) return fmt::format("must be an integer >= {}", min);
  if (min == kLo) return fmt::format("must be an integer <= {}", max);
  return fmt::format("must be an integer from {} to {}", min, max);
}

}  // namespace detail

template <typename J>
typename BasicRecord<J>::Int BasicRecord<J>::integer(std::string_view key, Int min, Int max) const {
  const J& v = at(key);
  Int n = 0;
  if (v.is_number_unsigned()) {
    const auto u = v.template get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(kMaxInt)) fail_field(key, detail::integer_rule(min, max));
    n = static_cast<Int>(u);
  } else if (v.is_number_integer()) {
    n = v.template get<Int>();
  } else {
    fail_field(key, detail::integer_rule(min, max));
  }
  if (n < min || n > max) fail_field(key, detail::integer_rule(min, max));
  return n;
}

template <typename J>
std::optional<typename BasicRecord<J>::Int> BasicRecord<J>::opt_integer(std::string_view key, Int min,
                                                                        Int max) const {
  if (!has(key)) return std::nullopt;
  return integer(key, min, max);
}

template <typename J>
std::uint64_t BasicRecord<J>::unsigned_integer(std::string_view key, std::uint64_t max) const {
  const J& v = at(key);
  const std::string rule = max == std::numeric_limits<std::uint64_t>::max()
                               ? std::string("must be a non-negative integer")
                               : fmt::format("must be an integer from 0 to {}", max);
  std::uint64_t n = 0;
  if (v.is_number_unsigned()) {
    n = v.template get<std::uint64_t>();
  } else if (v.is_number_integer() && v.template get<std::int64_t>() >= 0) {
    n = static_cast<std::uint64_t>(v.template get<std::int64_t>());
  } else {
    fail_field(key, rule);
  }
  if (n > max) fail_field(key, rule);
  return n;
}

template <typename J>
double BasicRecord<J>::number(std::string_view key) const {
  const J& v = at(key);
  if (!v.is_number()) fail_field(key, "must be a number");
  return v.template get<double>();
}

template <typename J>
std::optional<double> BasicRecord<J>::opt_number(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return number(key);
}

template <typename J>
bool BasicRecord<J>::boolean(std::string_view key) const {
  const J& v = at(key);
  if (!v.is_boolean()) fail_field(key, "must be true or false");
  return v.template get<bool>();
}

template <typename J>
std::optional<bool> BasicRecord<J>::opt_boolean(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return boolean(key);
}

template <typename J>
std::vector<std::string> BasicRecord<J>::strings(std::string_view key) const {
  const J& v = at(key);
  if (!v.is_array()) fail_field(key, "must be a list of strings");
  std::vector<std::string> out;
  out.reserve(v.size());
  for (const auto& e : v) {
    if (!e.is_string()) fail_field(key, "must be a list of strings");
    out.push_back(e.template get<std::string>());
  }
  return out;
}

template <typename J>
std::optional<std::vector<std::string>> BasicRecord<J>::opt_strings(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return strings(key);
}

template <typename J>
BasicRecord<J> BasicRecord<J>::object(std::string_view key) const {
  const J& v = at(key);
  if (!v.is_object()) fail_field(key, "must be an object");
  return BasicRecord(v, where_, path(key) + ".");
}

template <typename J>
std::optional<BasicRecord<J>> BasicRecord<J>::opt_object(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return object(key);
}

template <typename J>
const J& BasicRecord<J>::array(std::string_view key) const {
  const J& v = at(key);
  if (!v.is_array()) fail_field(key, "must be a list");
  return v;
}

template <typename J>
std::vector<BasicRecord<J>> BasicRecord<J>::objects(std::string_view key) const {
  const J& v = array(key);
  std::vector<BasicRecord> out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string p = fmt::format("{}[{}]", path(key), i);
    if (!v[i].is_object()) JsonError{where_, p, "must be an object"}.raise();
    out.push_back(BasicRecord(v[i], where_, p + "."));
  }
  return out;
}

template class BasicRecord<Json>;
template class BasicRecord<OrderedJson>;

const Json& require(const Json& obj, std::string_view key, std::string_view where) {
  return Record::of(obj, where).at(key);
}

std::string require_string(const Json& obj, std::string_view key, std::string_view where) {
  return Record::of(obj, where).string(key);
}

// ------------------------------------------------------------------------------ JSONL reading

bool is_blank_line(std::string_view text) noexcept {
  return text.find_first_not_of(" \t\r\v\f") == std::string_view::npos;
}

template <typename J>
std::optional<J> parse_jsonl_line(std::string_view text, bool terminated, TornTail torn,
                                  std::string_view where, JsonError& error) {
  error = {};
  if (is_blank_line(text)) return std::nullopt;
  constexpr std::string_view kTorn = "last line is not terminated (torn by a crash?)";
  if (!terminated && torn == TornTail::kAppendLog) {
    error = {std::string(where), "", std::string(kTorn), true};
    return std::nullopt;
  }
  auto r = try_parse_impl<J>(text, "");
  if (!r.value) {
    if (!terminated) {
      error = {std::string(where), "", std::string(kTorn), true};
    } else {
      std::string m = r.error.message;  // "invalid JSON at line 1, column C: ..." -> "column C: ..."
      if (m.starts_with("invalid JSON at line 1, "))
        m = m.substr(std::string_view("invalid JSON at line 1, ").size());
      if (m.starts_with("invalid JSON: ")) m = m.substr(std::string_view("invalid JSON: ").size());
      error = {std::string(where), "", fmt::format("not valid JSON ({})", m)};
    }
    return std::nullopt;
  }
  if (!r.value->is_object()) {
    error = {std::string(where), "", terminated ? "not a JSON object" : std::string(kTorn), !terminated};
    return std::nullopt;
  }
  return std::move(r.value);
}

namespace {

template <typename J>
void handle_line(std::string_view name, std::string_view text, std::size_t number, bool terminated,
                 const std::function<void(const BasicRecord<J>&, std::size_t)>& fn,
                 const BasicJsonlOptions<J>& options, JsonlStats& stats) {
  stats.lines = number;
  const std::string where = fmt::format("{}:{}", name, number);
  JsonError error;
  auto j = parse_jsonl_line<J>(text, terminated, options.torn, where, error);
  if (!j) {
    if (error.message.empty()) {
      ++stats.blank_lines;
      return;
    }
    detail::take_bad_line(error, number, text.size(), options.torn, options.on_bad_line, stats);
    return;
  }
  ++stats.records;
  fn(BasicRecord<J>::of(*j, where), number);
}

}  // namespace

template <typename J>
JsonlStats read_jsonl(const std::filesystem::path& path,
                      const std::type_identity_t<std::function<void(const BasicRecord<J>&, std::size_t)>>& fn,
                      const BasicJsonlOptions<J>& options) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail(ErrorCode::kIo, "{}: file not found", path.string());
  JsonlStats stats;
  const std::string name = path.string();
  for_each_line(path, [&](const Line& line) {
    handle_line<J>(name, line.text, line.number, line.terminated, fn, options, stats);
  });
  return stats;
}

template <typename J>
JsonlStats read_jsonl_text(
    std::string_view text, std::string_view name,
    const std::type_identity_t<std::function<void(const BasicRecord<J>&, std::size_t)>>& fn,
    const BasicJsonlOptions<J>& options) {
  JsonlStats stats;
  detail::for_each_text_line(text, [&](std::string_view l, std::size_t number, bool terminated) {
    handle_line<J>(name, l, number, terminated, fn, options, stats);
  });
  return stats;
}

#define NUMCHECK_JSONL_INSTANTIATE(J)                                                               \
  template JsonlStats read_jsonl<J>(                                                                \
      const std::filesystem::path&,                                                                 \
      const std::type_identity_t<std::function<void(const BasicRecord<J>&, std::size_t)>>&,         \
      const BasicJsonlOptions<J>&);                                                                 \
  template JsonlStats read_jsonl_text<J>(                                                           \
      std::string_view, std::string_view,                                                           \
      const std::type_identity_t<std::function<void(const BasicRecord<J>&, std::size_t)>>&,         \
      const BasicJsonlOptions<J>&);                                                                 \
  template std::optional<J> parse_jsonl_line<J>(std::string_view, bool, TornTail, std::string_view, \
                                                JsonError&);

NUMCHECK_JSONL_INSTANTIATE(Json)
NUMCHECK_JSONL_INSTANTIATE(OrderedJson)
#undef NUMCHECK_JSONL_INSTANTIATE

}  // namespace numcheck::io
