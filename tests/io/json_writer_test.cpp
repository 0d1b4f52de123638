// The direct writer (JsonWriter, append_json_string) against to_line over a DOM: the same bytes for
// every string (escapes, control bytes, UTF-8, invalid UTF-8), integer and structure.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/prng.hpp"
#include "io/json.hpp"
#include "io/json_writer.hpp"

namespace numcheck::io {
namespace {

std::string literal(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

std::string dom(std::string_view s) { return to_line(Json(std::string(s))); }

TEST(JsonWriter, EveryByteAloneAndInsideAsciiMatchesToLine) {
  for (int c = 0; c < 256; ++c) {
    const std::string one(1, static_cast<char>(c));
    EXPECT_EQ(literal(one), dom(one)) << "byte " << c;
    // At every position of a string of every length up to 17: the short strings' overlapping
    // loads (up to 16 bytes) and the 8-byte words the writer scans in longer ones.
    for (std::size_t n = 1; n <= 17; ++n) {
      for (std::size_t at = 0; at < n; ++at) {
        std::string s(n, 'x');
        s[at] = static_cast<char>(c);
        EXPECT_EQ(literal(s), dom(s)) << "byte " << c << " at " << at << " of " << n;
      }
    }
  }
}

TEST(JsonWriter, TrickyStringsMatchToLine) {
  const std::vector<std::string> cases = {
      "",
      "plain ascii text that is longer than eight bytes",
      "a\"b\\c/d\n\t\r\b\f\x01\x1f\x7f end",
      "\xc3\xa9t\xc3\xa9 \xc3\x97 10^3 \xe2\x82\xac 5 \xf0\x9f\x98\x80 \xe2\x80\xa8 \xef\xbf\xbf "
      "\xf4\x8f\xbf\xbf",
      std::string("nul \0 inside", 12),
      "\x80",  // a lone continuation byte
      "ab\xc0\xaf"
      "cd",                          // an overlong '/'
      "\xed\xa0\x80 surrogate",      // U+D800 encoded
      "cut \xe2\x82",                // a truncated sequence at the end
      "\xe2\x82 cut in the middle",  // and in the middle
      "\xf4\x90\x80\x80 beyond U+10FFFF",
      "\xff\xfe",
      "mixed \xc3\xa9 and \xff and \"quotes\"\n",
      "12345678\"2345678\\2345678\n",  // specials at word starts
  };
  for (const auto& s : cases) EXPECT_EQ(literal(s), dom(s)) << s;
}

TEST(JsonWriter, RandomStringsMatchToLine) {
  // Bytes drawn from pieces that exercise every branch: ASCII runs, escapes, valid UTF-8 of each
  // length, and invalid bytes.
  const std::vector<std::string> pieces = {"a",
                                           "Zq",
                                           "0123456789",
                                           " ",
                                           "\"",
                                           "\\",
                                           "\n",
                                           "\x01",
                                           "\x1f",
                                           "\x7f",
                                           "\xc3\xa9",
                                           "\xe2\x82\xac",
                                           "\xf0\x9f\x98\x80",
                                           "\x80",
                                           "\xc3",
                                           "\xed\xa0\x80",
                                           "\xff",
                                           "/"};
  Rng rng(20261201, "json-writer");
  for (int n = 0; n < 20000; ++n) {
    std::string s;
    const std::uint64_t parts = rng.below(24);
    for (std::uint64_t k = 0; k < parts; ++k) s += pieces[rng.below(pieces.size())];
    ASSERT_EQ(literal(s), dom(s)) << "case " << n;
  }
}

TEST(JsonWriter, RecordsMatchTheOrderedDom) {
  std::string line;
  JsonWriter w(line);
  w.begin_object();
  w.key("id").value("p-1:canonical");
  w.key("family").null();
  w.key("opt").value(std::optional<std::string_view>("x\"y"));
  w.key("none").value(std::optional<std::string_view>());
  w.key("min").value(std::numeric_limits<std::int64_t>::min());
  w.key("max").value(std::numeric_limits<std::int64_t>::max());
  w.key("umax").value(std::numeric_limits<std::uint64_t>::max());
  w.key("zero").value(std::uint64_t{0});
  w.key("neg").value(-7);
  w.key("yes").value(true);
  w.key("no").value(false);
  w.key("empty_list").begin_array().end_array();
  w.key("empty_object").begin_object().end_object();
  w.key("list").begin_array().value("a").value(std::int64_t{2}).null().begin_object().key("k").value("v");
  w.end_object().begin_array().end_array().end_array();
  w.key("nested").begin_object().key("inner").begin_object().key("deep").value("\xc3\x97\n").end_object();
  w.key("after").value(false).end_object();
  w.key("ke\"y\n").value("");
  w.end_object();

  OrderedJson j = OrderedJson::object();
  j["id"] = "p-1:canonical";
  j["family"] = nullptr;
  j["opt"] = "x\"y";
  j["none"] = nullptr;
  j["min"] = std::numeric_limits<std::int64_t>::min();
  j["max"] = std::numeric_limits<std::int64_t>::max();
  j["umax"] = std::numeric_limits<std::uint64_t>::max();
  j["zero"] = std::uint64_t{0};
  j["neg"] = -7;
  j["yes"] = true;
  j["no"] = false;
  j["empty_list"] = OrderedJson::array();
  j["empty_object"] = OrderedJson::object();
  j["list"] = OrderedJson::array({"a", 2, nullptr, {{"k", "v"}}, OrderedJson::array()});
  j["nested"] = {{"inner", {{"deep", "\xc3\x97\n"}}}, {"after", false}};
  j["ke\"y\n"] = "";
  EXPECT_EQ(line, to_line(j));

  std::string top;
  JsonWriter(top).begin_array().value("x").value(1).end_array();
  EXPECT_EQ(top, "[\"x\",1]");
}

// append_json (and JsonWriter::json) against to_line on random values of both kinds: nested
// objects and arrays, every number kind (floats through nlohmann), awkward strings and keys.
template <class J>
J random_value(Rng& rng, int depth, const std::vector<std::string>& strings) {
  const std::uint64_t kind = rng.below(depth > 3 ? 7 : 9);
  switch (kind) {
    case 0:
      return nullptr;
    case 1:
      return rng.below(2) == 1;
    case 2:
      return static_cast<std::int64_t>(rng.next()) >> rng.below(64);
    case 3:
      return rng.next() >> rng.below(64);
    case 4: {
      const double d = static_cast<double>(static_cast<std::int64_t>(rng.next() >> 11)) /
                       static_cast<double>(std::uint64_t{1} << rng.below(60));
      return rng.below(2) == 1 ? -d : d;
    }
    case 5:
    case 6:
      return strings[rng.below(strings.size())] + strings[rng.below(strings.size())];
    case 7: {
      J a = J::array();
      for (std::uint64_t n = rng.below(5); n > 0; --n) a.push_back(random_value<J>(rng, depth + 1, strings));
      return a;
    }
    default: {
      J o = J::object();
      for (std::uint64_t n = rng.below(5); n > 0; --n)
        o[strings[rng.below(strings.size())]] = random_value<J>(rng, depth + 1, strings);
      return o;
    }
  }
}

// Key literals carry their lead-in (`,"name":`) made when compiling: the comma is dropped for the
// first member of every object, nested or in an array, whatever wrote the member before.
TEST(JsonWriter, KeyLiteralsWriteWhatRuntimeKeysWrite) {
  using literals::operator""_key;
  std::string with_literals, with_views;
  for (const bool literal : {true, false}) {
    std::string& line = literal ? with_literals : with_views;
    JsonWriter w(line);
    const auto key = [&](JsonKey k, std::string_view name) -> JsonWriter& {
      EXPECT_EQ(k.text, "," + to_line(Json(std::string(name))) + ":");
      return literal ? w.key(k) : w.key(name);
    };
    w.begin_object();
    key("prompt_id"_key, "prompt_id").value("p-1");
    key("strict"_key, "strict").begin_object();
    key("outcome"_key, "outcome").value("correct");
    key("value"_key, "value").null();
    w.end_object();
    w.key("runtime").value(std::uint64_t{3});  // a runtime key between literal ones
    key("rules"_key, "rules").begin_array();
    w.begin_object();
    key("a"_key, "a").value(true);
    key(""_key, "").value(false);
    w.end_object().begin_object();
    key("b"_key, "b").begin_object().end_object();
    w.end_object().end_array();
    key("last"_key, "last").value(-1);
    w.end_object();
  }
  EXPECT_EQ(with_literals, with_views);
  EXPECT_EQ(with_literals, R"({"prompt_id":"p-1","strict":{"outcome":"correct","value":null},"runtime":3,)"
                           R"("rules":[{"a":true,"":false},{"b":{}}],"last":-1})");
}

TEST(JsonWriter, AppendJsonMatchesToLineOnRandomValues) {
  const std::vector<std::string> strings = {"",     "a",    "key",  "\"",       "\\",
                                            "\n\t", "\x01", "\x7f", "\xc3\xa9", "\xf0\x9f\x98\x80",
                                            "\xff", "\xc3", "1.5",  "null"};
  Rng rng(20261201, "append-json");
  for (int n = 0; n < 5000; ++n) {
    const Json j = random_value<Json>(rng, 0, strings);
    const OrderedJson o = random_value<OrderedJson>(rng, 0, strings);
    std::string a, b;
    append_json(a, j);
    append_json(b, o);
    ASSERT_EQ(a, to_line(j)) << "case " << n;
    ASSERT_EQ(b, to_line(o)) << "case " << n;
  }
  for (const double d : {0.0, -0.0, 1e308, 5e-324, 0.1, 2.75, -1e-7, 123456789012345678.0}) {
    std::string a;
    append_json(a, Json(d));
    EXPECT_EQ(a, to_line(Json(d)));
  }
  std::string line;
  JsonWriter w(line);
  w.begin_object()
      .key("a")
      .json(Json::parse(R"({"z":1,"b":[true,null,0.5]})"))
      .key("b")
      .json(OrderedJson::array());
  w.end_object();
  EXPECT_EQ(line, R"({"a":{"b":[true,null,0.5],"z":1},"b":[]})");
}

}  // namespace
}  // namespace numcheck::io
