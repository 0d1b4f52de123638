// The one JSON/JSONL layer: typed field access naming file, line and field; the JSONL rule for
// blank, malformed and torn lines; the non-throwing parse.
#include "io/json.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/files.hpp"

namespace numcheck::io {
namespace {
namespace fs = std::filesystem;

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(JsonParse, TryParseReturnsTheErrorAsAValue) {
  const auto ok = try_parse_json(R"({"a": 1})", "x.json");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok.value)["a"], 1);
  const auto bad = try_parse_json("{\n\"a\": 1,\n}", "x.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error.where, "x.json");
  EXPECT_EQ(bad.error.what().rfind("x.json: invalid JSON at line 3, column 1", 0), 0u) << bad.error.what();
  // out_of_range from the parser is an error value too, never an exception.
  const auto huge = try_parse_ordered_json("[1e999]", "h.json");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.error.what().find("h.json: invalid JSON"), std::string::npos);
  EXPECT_THROW((void)parse_json("[1e999]", "t"), Error);
}

TEST(JsonRecord, TypedAccessNamesFileLineAndField) {
  const Json j = parse_json(
      R"({"s": "x", "n": 5, "neg": -3, "big": 18446744073709551615, "f": 2.5, "b": true, "nul": null,
          "list": ["a", "b"], "mixed": ["a", 1], "o": {"inner": "y", "k": "seven"}, "objs": [{"v": 1}, {"v": "z"}]})",
      "t");
  const Record r = Record::of(j, "f.jsonl:7");
  EXPECT_EQ(r.string("s"), "x");
  EXPECT_EQ(r.integer("n", 0, 10), 5);
  EXPECT_EQ(r.integer("neg"), -3);
  EXPECT_EQ(r.unsigned_integer("big"), 18446744073709551615ull);
  EXPECT_DOUBLE_EQ(r.number("f"), 2.5);
  EXPECT_TRUE(r.boolean("b"));
  EXPECT_EQ(r.strings("list"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.object("o").string("inner"), "y");
  EXPECT_FALSE(r.opt_string("nul"));
  EXPECT_FALSE(r.opt_string("absent"));
  EXPECT_FALSE(r.opt_integer("absent"));
  EXPECT_TRUE(r.contains("nul"));
  EXPECT_FALSE(r.has("nul"));

  EXPECT_EQ(error_of([&] { (void)r.string("absent"); }), "f.jsonl:7: missing field 'absent'");
  EXPECT_EQ(error_of([&] { (void)r.string("n"); }), "f.jsonl:7: field 'n' must be a string");
  EXPECT_EQ(error_of([&] { (void)r.opt_string("n"); }), "f.jsonl:7: field 'n' must be a string or null");
  EXPECT_EQ(error_of([&] { (void)r.integer("n", 0, 4); }),
            "f.jsonl:7: field 'n' must be an integer from 0 to 4");
  EXPECT_EQ(error_of([&] { (void)r.integer("neg", 0); }),
            "f.jsonl:7: field 'neg' must be a non-negative integer");
  EXPECT_EQ(error_of([&] { (void)r.integer("big"); }), "f.jsonl:7: field 'big' must be an integer");
  EXPECT_EQ(error_of([&] { (void)r.integer("f"); }), "f.jsonl:7: field 'f' must be an integer");
  EXPECT_EQ(error_of([&] { (void)r.unsigned_integer("neg"); }),
            "f.jsonl:7: field 'neg' must be a non-negative integer");
  EXPECT_EQ(error_of([&] { (void)r.boolean("s"); }), "f.jsonl:7: field 's' must be true or false");
  EXPECT_EQ(error_of([&] { (void)r.number("s"); }), "f.jsonl:7: field 's' must be a number");
  EXPECT_EQ(error_of([&] { (void)r.strings("mixed"); }),
            "f.jsonl:7: field 'mixed' must be a list of strings");
  EXPECT_EQ(error_of([&] { (void)r.object("o").integer("k"); }), "f.jsonl:7: field 'o.k' must be an integer");
  EXPECT_EQ(error_of([&] { (void)r.object("s"); }), "f.jsonl:7: field 's' must be an object");
  const auto objs = r.objects("objs");
  ASSERT_EQ(objs.size(), 2u);
  EXPECT_EQ(objs[0].integer("v"), 1);
  EXPECT_EQ(error_of([&] { (void)objs[1].integer("v"); }), "f.jsonl:7: field 'objs[1].v' must be an integer");
  EXPECT_EQ(error_of([&] { (void)r.objects("list"); }), "f.jsonl:7: field 'list[0]' must be an object");
  EXPECT_EQ(error_of([&] { (void)Record::of(Json::array(), "a.json"); }), "a.json: expected a JSON object");
  // Errors are Error(kInvalidInput): exit code 1 with the message, never "internal error".
  try {
    (void)r.string("n");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidInput);
  }
}

struct Read {
  std::vector<std::size_t> record_lines;
  std::vector<std::string> bad;  // "line: what"
  JsonlStats stats;
};

Read read_text(std::string_view text, TornTail torn, bool collect_bad) {
  Read out;
  JsonlOptions o;
  o.torn = torn;
  if (collect_bad) {
    o.on_bad_line = [&](const JsonError& e, std::size_t line) {
      out.bad.push_back(fmt::format("{}: {}{}", line, e.what(), e.torn ? " [torn]" : ""));
    };
  }
  out.stats = read_jsonl_text(
      text, "r.jsonl",
      [&](const Record& r, std::size_t line) {
        EXPECT_EQ(r.where(), fmt::format("r.jsonl:{}", line));
        out.record_lines.push_back(line);
      },
      o);
  return out;
}

TEST(Jsonl, BlankLinesAreSkippedAndCounted) {
  const Read r = read_text("{\"a\":1}\n\n  \t\r\n{\"a\":2}\r\n", TornTail::kError, false);
  EXPECT_EQ(r.record_lines, (std::vector<std::size_t>{1, 4}));
  EXPECT_EQ(r.stats.blank_lines, 2u);
  EXPECT_EQ(r.stats.records, 2u);
  EXPECT_EQ(r.stats.lines, 4u);
  EXPECT_EQ(r.stats.torn_line, 0u);
}

TEST(Jsonl, MalformedLineIsAnErrorNamingFileAndLine) {
  EXPECT_EQ(error_of([] {
              (void)read_text("{\"a\":1}\n{oops\n", TornTail::kError, false);
            }).rfind("r.jsonl:2: not valid JSON (column 2", 0),
            0u);
  EXPECT_EQ(error_of([] { (void)read_text("[1]\n", TornTail::kError, false); }),
            "r.jsonl:1: not a JSON object");
  // With on_bad_line the error is a value and reading goes on.
  const Read r = read_text("{oops\n[1]\n{\"a\":1}\n", TornTail::kError, true);
  EXPECT_EQ(r.record_lines, (std::vector<std::size_t>{3}));
  ASSERT_EQ(r.bad.size(), 2u);
  EXPECT_EQ(r.bad[1], "2: r.jsonl:2: not a JSON object");
  EXPECT_EQ(r.stats.bad_lines, 2u);
}

TEST(Jsonl, TornLastLineIsReportedAsTorn) {
  // A truncated object never parses: a torn record, not a record and not "invalid JSON".
  EXPECT_EQ(error_of([] { (void)read_text("{\"a\":1}\n{\"a\":2, \"b", TornTail::kError, false); }),
            "r.jsonl:2: last line is not terminated (torn by a crash?)");
  const Read r = read_text("{\"a\":1}\n{\"a\":2, \"b", TornTail::kError, true);
  EXPECT_EQ(r.record_lines, (std::vector<std::size_t>{1}));
  ASSERT_EQ(r.bad.size(), 1u);
  EXPECT_EQ(r.bad[0], "2: r.jsonl:2: last line is not terminated (torn by a crash?) [torn]");
  EXPECT_EQ(r.stats.torn_line, 2u);
  EXPECT_EQ(r.stats.torn_bytes, 10u);
  // A complete object without the final newline (written by another tool) is a record...
  EXPECT_EQ(read_text("{\"a\":1}\n{\"a\":2}", TornTail::kError, false).record_lines,
            (std::vector<std::size_t>{1, 2}));
  // ...except in files numcheck appends to itself: any unterminated tail is torn and skipped.
  const Read log = read_text("{\"a\":1}\n{\"a\":2}", TornTail::kAppendLog, false);
  EXPECT_EQ(log.record_lines, (std::vector<std::size_t>{1}));
  EXPECT_EQ(log.stats.torn_line, 2u);
  EXPECT_EQ(log.stats.torn_bytes, 7u);
  // A trailing blank fragment is blank, not torn.
  EXPECT_EQ(read_text("{\"a\":1}\n  ", TornTail::kError, false).stats.torn_line, 0u);
}

TEST(Jsonl, FileReaderStreamsTheSameRule) {
  const fs::path d = fs::temp_directory_path() / fmt::format("numcheck_io_jsonl_{}", ::getpid());
  fs::remove_all(d);
  fs::create_directories(d);
  const fs::path f = d / "x.jsonl";
  write_file_atomic(f, "{\"k\":\"v\",\"a\":1}\n\n{\"k\":\"w\",\"a\":2}\n{\"k\"");
  std::vector<std::string> keys;
  JsonlOptions o;
  o.torn = TornTail::kAppendLog;
  const JsonlStats s = read_jsonl(
      f, [&](const Record& r, std::size_t) { keys.push_back(r.string("k")); }, o);
  EXPECT_EQ(keys, (std::vector<std::string>{"v", "w"}));
  EXPECT_EQ(s.blank_lines, 1u);
  EXPECT_EQ(s.torn_line, 4u);
  // Ordered records keep the key order of the file.
  std::vector<std::string> order;
  (void)read_jsonl<OrderedJson>(f,
                                [&](const OrderedRecord& r, std::size_t) {
                                  for (const auto& [k, v] : r.json().items()) order.push_back(k);
                                },
                                {TornTail::kAppendLog, nullptr});
  EXPECT_EQ(order, (std::vector<std::string>{"k", "a", "k", "a"}));
  EXPECT_EQ(error_of([&] { (void)read_jsonl(d / "absent.jsonl", [](const Record&, std::size_t) {}); }),
            (d / "absent.jsonl").string() + ": file not found");
  // A field error inside the callback names the file, line and field.
  EXPECT_EQ(error_of([&] {
              (void)read_jsonl(
                  f, [](const Record& r, std::size_t) { (void)r.integer("k"); }, o);
            }),
            f.string() + ":1: field 'k' must be an integer");
  fs::remove_all(d);
}

}  // namespace
}  // namespace numcheck::io
