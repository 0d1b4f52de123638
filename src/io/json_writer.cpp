// Direct JSON writing: string literals and integers byte for byte as to_line writes them.
#include "io/json_writer.hpp"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include "io/json.hpp"

namespace numcheck::io {

namespace {

constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
constexpr std::uint64_t kHighs = 0x8080808080808080ULL;

// Whether any of the 8 bytes of w needs attention: below 0x20, '"', '\\', or 0x80 and above (UTF-8,
// which must be checked). The classic "has a zero byte" and "has a byte below n" tests.
inline bool special(std::uint64_t w) {
  const std::uint64_t below = (w - kOnes * 0x20) & ~w;
  const std::uint64_t q = w ^ (kOnes * '"');
  const std::uint64_t b = w ^ (kOnes * '\\');
  const std::uint64_t quote = (q - kOnes) & ~q;
  const std::uint64_t backslash = (b - kOnes) & ~b;
  return ((below | quote | backslash | w) & kHighs) != 0;
}

inline std::uint64_t load8(const char* p) {
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}
inline std::uint32_t load4(const char* p) {
  std::uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}

// The escape of byte c (below 0x20, '"' or '\\'), as nlohmann's serializer writes it.
void append_escape(std::string& out, unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default: {
      const char u[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
      out.append(u, 6);
    }
  }
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  if (s.size() <= 16) {
    // Most strings written are short (ids, names, outcomes, values): checked with two loads of a
    // fixed size that overlap (no copy of a variable length), and appended with one call.
    const char* p = s.data();
    const std::size_t n = s.size();
    bool plain = false;
    if (n >= 8) {
      plain = !special(load8(p)) && !special(load8(p + n - 8));
    } else if (n >= 4) {
      plain = !special((std::uint64_t{load4(p)} << 32) | load4(p + n - 4));
    } else {  // 0 to 3 bytes: each of them among the first, middle and last, after plain 'a's
      std::uint64_t v = kOnes * 'a';
      if (n > 0) {
        v = (v << 8) | static_cast<unsigned char>(p[0]);
        v = (v << 8) | static_cast<unsigned char>(p[n / 2]);
        v = (v << 8) | static_cast<unsigned char>(p[n - 1]);
      }
      plain = !special(v);
    }
    if (plain) {
      const std::size_t at = out.size();
      out.append(n + 2, '"');
      if (n > 0) std::memcpy(out.data() + at + 1, p, n);
      return;
    }
  }
  {
    // Most strings need no escape and are ASCII: checked 8 bytes at a time (the tail padded with a
    // plain byte), then appended at once.
    const char* p = s.data();
    const std::size_t n = s.size();
    std::size_t i = 0;
    bool plain = true;
    for (; plain && i + 8 <= n; i += 8) {
      std::uint64_t w;
      std::memcpy(&w, p + i, 8);
      plain = !special(w);
    }
    if (plain && i < n) {
      std::uint64_t w = kOnes * 'a';
      std::memcpy(&w, p + i, n - i);
      plain = !special(w);
    }
    if (plain) {
      out.push_back('"');
      out.append(p, n);
      out.push_back('"');
      return;
    }
  }
  const std::size_t start = out.size();
  out.push_back('"');
  const char* p = s.data();
  const std::size_t n = s.size();
  bool non_ascii = false;
  std::size_t run = 0;  // start of the pending run of bytes written as they are
  std::size_t i = 0;
  while (i < n) {
    if (i + 8 <= n) {
      std::uint64_t w;
      std::memcpy(&w, p + i, 8);
      if (!special(w)) {
        i += 8;
        continue;
      }
    }
    const std::size_t end = std::min(n, i + 8);
    for (; i < end; ++i) {
      const auto c = static_cast<unsigned char>(p[i]);
      if (c >= 0x80) {
        non_ascii = true;
      } else if (c < 0x20 || c == '"' || c == '\\') {
        out.append(p + run, i - run);
        append_escape(out, c);
        run = i + 1;
      }
    }
  }
  out.append(p + run, n - run);
  out.push_back('"');
  if (non_ascii && !simdjson::validate_utf8(p, n)) {
    // Not UTF-8: nlohmann's replacement rule (U+FFFD for each invalid sequence), exactly.
    out.resize(start);
    out += Json(std::string(s)).dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

namespace {
// A 64-bit integer in decimal (at most 20 digits and a sign).
template <class Int>
void append_integer(std::string& out, Int v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}
}  // namespace

namespace {
template <class J>
void append_json_value(std::string& out, const J& j) {
  switch (j.type()) {
    case J::value_t::null:
      out += "null";
      return;
    case J::value_t::boolean:
      out += j.template get<bool>() ? "true" : "false";
      return;
    case J::value_t::number_integer:
      append_integer(out, j.template get<std::int64_t>());
      return;
    case J::value_t::number_unsigned:
      append_integer(out, j.template get<std::uint64_t>());
      return;
    case J::value_t::number_float:
    case J::value_t::binary:
    case J::value_t::discarded:
      out += j.dump(-1, ' ', false, Json::error_handler_t::replace);
      return;
    case J::value_t::string:
      append_json_string(out, j.template get_ref<const std::string&>());
      return;
    case J::value_t::array: {
      out.push_back('[');
      bool first = true;
      for (const auto& v : j) {
        if (!first) out.push_back(',');
        first = false;
        append_json_value(out, v);
      }
      out.push_back(']');
      return;
    }
    case J::value_t::object: {
      out.push_back('{');
      bool first = true;
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (!first) out.push_back(',');
        first = false;
        append_json_string(out, it.key());
        out.push_back(':');
        append_json_value(out, it.value());
      }
      out.push_back('}');
      return;
    }
  }
}
}  // namespace

void append_json(std::string& out, const Json& j) { append_json_value(out, j); }
void append_json(std::string& out, const OrderedJson& j) { append_json_value(out, j); }

JsonWriter& JsonWriter::value(std::int64_t v) {
  comma();
  append_integer(*out_, v);
  first_ = false;
  return *this;
}

JsonWriter& JsonWriter::value(std::uint64_t v) {
  comma();
  append_integer(*out_, v);
  first_ = false;
  return *this;
}

}  // namespace numcheck::io
