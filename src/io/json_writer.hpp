#pragma once
// Direct JSON writing, part of the one JSON layer (io/json.hpp): records written straight into a
// string, byte for byte what to_line writes for the same value built as a DOM, without building it.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace numcheck::io {

// Appends s as a JSON string literal, byte for byte as to_line writes it: `"` and `\` escaped,
// \b \f \n \r \t, other bytes below 0x20 as \u00xx, UTF-8 passed through; a string that is not
// valid UTF-8 is written by nlohmann with invalid bytes replaced by U+FFFD (to_line's rule).
void append_json_string(std::string& out, std::string_view s);

// Appends a JSON value (io::Json or io::OrderedJson) byte for byte as to_line writes it, without
// nlohmann's serializer (which sets up a buffer and a locale lookup per call) except for
// floating-point numbers, whose form is nlohmann's own.
void append_json(std::string& out, const nlohmann::json& j);
void append_json(std::string& out, const nlohmann::ordered_json& j);

// A member name known when compiling to need no escape (printable ASCII without `"` and `\`),
// written as it is: w.key("prompt_id"_key). A literal that would need one does not compile. Its
// text is the member's whole lead-in, made when compiling: `,"prompt_id":` (an object's first
// member drops the comma), so that JsonWriter::key appends it in one piece.
struct JsonKey {
  std::string_view text;
};
namespace detail {
template <std::size_t N>
struct KeyLiteral {
  char name[N]{};                             // the literal with its terminating NUL
  consteval KeyLiteral(const char (&s)[N]) {  // implicit: the literal operator takes a string literal
    for (std::size_t i = 0; i < N; ++i) {
      const auto c = static_cast<unsigned char>(s[i]);
      if (i + 1 < N && (c < 0x20 || c >= 0x7F || c == '"' || c == '\\'))
        throw "a _key literal must need no JSON escape";
      name[i] = s[i];
    }
  }
};
template <std::size_t N>
struct KeyText {
  char s[N + 3];  // , " the N - 1 characters " :
};
template <KeyLiteral L>
inline constexpr KeyText<sizeof(L.name)> kKeyText = [] {
  constexpr std::size_t kLength = sizeof(L.name) - 1;
  KeyText<sizeof(L.name)> t{};
  t.s[0] = ',';
  t.s[1] = '"';
  for (std::size_t i = 0; i < kLength; ++i) t.s[2 + i] = L.name[i];
  t.s[kLength + 2] = '"';
  t.s[kLength + 3] = ':';
  return t;
}();
}  // namespace detail
namespace literals {
template <detail::KeyLiteral L>
constexpr JsonKey operator""_key() {
  return JsonKey{std::string_view(detail::kKeyText<L>.s, sizeof(L.name) + 3)};
}
}  // namespace literals

// Writes one record (or any value) straight into a string, without building a JSON value: the
// bytes are to_line's for the same value built as an OrderedJson (keys in the order written).
// Commas and colons are placed by the writer:
//   JsonWriter w(line);
//   w.begin_object().key("id").value("a\"b").key("n").value(std::uint64_t{3}).key("x").null();
//   w.key("tags").begin_array().value("t").end_array().end_object();
//   -> {"id":"a\"b","n":3,"x":null,"tags":["t"]}
// Numbers are integers only (to_line's floating-point form is nlohmann's own; write those through
// a DOM). The caller keeps the structure well formed (a key before each member's value).
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(&out) {}
  JsonWriter& begin_object() {
    comma();
    out_->push_back('{');
    first_ = true;
    return *this;
  }
  JsonWriter& end_object() {
    out_->push_back('}');
    first_ = false;
    return *this;
  }
  JsonWriter& begin_array() {
    comma();
    out_->push_back('[');
    first_ = true;
    return *this;
  }
  JsonWriter& end_array() {
    out_->push_back(']');
    first_ = false;
    return *this;
  }
  JsonWriter& key(std::string_view k) {
    comma();
    append_json_string(*out_, k);
    out_->push_back(':');
    first_ = true;  // the member's value takes no comma
    return *this;
  }
  JsonWriter& key(JsonKey k) {
    out_->append(first_ ? k.text.substr(1) : k.text);
    first_ = true;
    return *this;
  }
  JsonWriter& value(std::string_view s) {
    comma();
    append_json_string(*out_, s);
    first_ = false;
    return *this;
  }
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(bool b) {
    comma();
    out_->append(b ? "true" : "false");
    first_ = false;
    return *this;
  }
  JsonWriter& value(std::int64_t v);
  JsonWriter& value(std::uint64_t v);
  JsonWriter& value(int v) { return value(static_cast<std::int64_t>(v)); }
  JsonWriter& null() {
    comma();
    out_->append("null");
    first_ = false;
    return *this;
  }
  // A string or null.
  JsonWriter& value(const std::optional<std::string_view>& s) { return s ? value(*s) : null(); }
  // A JSON value (append_json: to_line's bytes).
  JsonWriter& json(const nlohmann::json& j) {
    comma();
    append_json(*out_, j);
    first_ = false;
    return *this;
  }
  JsonWriter& json(const nlohmann::ordered_json& j) {
    comma();
    append_json(*out_, j);
    first_ = false;
    return *this;
  }
  // A value already written in to_line's form (a line of to_line, a JsonWriter's output), as it is.
  JsonWriter& raw(std::string_view json) {
    comma();
    out_->append(json);
    first_ = false;
    return *this;
  }

 private:
  void comma() {
    if (!first_) out_->push_back(',');
  }
  std::string* out_;
  bool first_ = true;
};

}  // namespace numcheck::io
