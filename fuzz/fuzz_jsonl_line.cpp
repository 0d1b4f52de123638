// Fuzz target for the fast JSONL reader (io/json.hpp read_jsonl_fast, simdjson with nlohmann as
// the fallback). Besides "no crash, no hang, no leak" it aborts when the two readers disagree:
// - per line: the simdjson walk accepts only lines nlohmann parses into an object, with the same
//   values (strings, numbers as nlohmann classifies them, key order);
// - per text: read_jsonl_fast_text and read_jsonl_text give the same records (line, place,
//   values), the same bad-line errors, the same stats, or throw the same error, under both
//   torn-tail rules.
// The first input byte chooses the torn-tail rule and whether bad lines are collected.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "io/json.hpp"

namespace io = numcheck::io;

namespace {

[[noreturn]] void violated(const char* what) {
  std::fprintf(stderr, "fuzz_jsonl_line: invariant violated: %s\n", what);
  std::abort();
}

// Integers compare by value (FlatValue::operator== does the same).
std::string describe(const std::vector<io::FlatValue>& v) {
  std::string out;
  for (const auto& f : v) {
    out += std::to_string(f.end) + ":" + std::string(f.key) + "=";
    switch (f.kind) {
      case io::FlatValue::Kind::kUnsigned:
        out += "i" + std::to_string(f.u);
        break;
      case io::FlatValue::Kind::kInteger:
        out += "i" + std::to_string(f.i);
        break;
      case io::FlatValue::Kind::kFloat: {
        char buf[64];
        std::snprintf(buf, sizeof buf, "f%a", f.d);
        out += buf;
        break;
      }
      case io::FlatValue::Kind::kString:
        out += "s" + std::to_string(f.text.size()) + ":" + std::string(f.text);
        break;
      case io::FlatValue::Kind::kBool:
        out += f.boolean ? "T" : "F";
        break;
      default:
        out += std::to_string(static_cast<int>(f.kind));
    }
    out += ";";
  }
  return out;
}

struct Seen {
  std::vector<std::string> events;
  io::JsonlStats stats;
  std::string thrown;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto torn = (data[0] & 1) != 0 ? io::TornTail::kAppendLog : io::TornTail::kError;
  const bool collect = (data[0] & 2) != 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);

  // Per line.
  io::FastLineParser parser;
  std::vector<io::FlatValue> fast, slow;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t e = text.find('\n', pos);
    if (e == std::string_view::npos) e = text.size();
    const std::string_view line = text.substr(pos, e - pos);
    pos = e + 1;
    if (!parser.walk(line, fast)) continue;
    io::JsonError err;
    const auto j = io::parse_jsonl_line<io::OrderedJson>(line, true, io::TornTail::kError, "x", err);
    if (!j) violated("the walk accepted a line nlohmann refuses");
    io::flatten(*j, slow);
    if (!(fast == slow) || describe(fast) != describe(slow))
      violated("the walk read other values than nlohmann");
  }

  // Every plain zero (no minus sign, any fraction and exponent) takes the fast path: runner
  // records carry "temperature":0.0, and a walk that refused zeros sent every line to the DOM path.
  {
    const std::uint8_t b = data[size - 1];
    std::string zero = "0";
    if ((b & 1) != 0) zero += "." + std::string(1 + ((b >> 4) & 7), '0');
    if ((b & 2) != 0) {
      zero += (b & 4) != 0 ? "E" : "e";
      if ((b & 8) != 0) zero += (b & 128) != 0 ? "-" : "+";
      zero += std::to_string(size % 400);
    }
    const std::string line = R"({"request":{"temperature":)" + zero + R"(,"top_p":1.0},"n":0})";
    if (!parser.walk(line, fast)) violated("the walk refused a plain zero");
    io::JsonError err;
    const auto j = io::parse_jsonl_line<io::OrderedJson>(line, true, io::TornTail::kError, "x", err);
    if (!j) violated("nlohmann refused a plain zero");
    io::flatten(*j, slow);
    if (!(fast == slow) || describe(fast) != describe(slow)) violated("the walk read a zero otherwise");
  }

  // Per text.
  Seen a, b;
  {
    io::OrderedJsonlOptions o;
    o.torn = torn;
    if (collect)
      o.on_bad_line = [&](const io::JsonError& e, std::size_t n) {
        a.events.push_back(std::to_string(n) + e.what());
      };
    try {
      a.stats = io::read_jsonl_text<io::OrderedJson>(
          text, "f",
          [&](const io::OrderedRecord& r, std::size_t n) {
            io::flatten(r.json(), slow);
            a.events.push_back(std::to_string(n) + r.where() + describe(slow));
          },
          o);
    } catch (const numcheck::Error& e) {
      a.thrown = e.what();
    }
  }
  {
    io::JsonlOptions o;
    o.torn = torn;
    if (collect)
      o.on_bad_line = [&](const io::JsonError& e, std::size_t n) {
        b.events.push_back(std::to_string(n) + e.what());
      };
    try {
      b.stats = io::read_jsonl_fast_text(
          text, "f",
          [&](const io::LineRecord& r, std::size_t n) {
            b.events.push_back(std::to_string(n) + std::string(r.where()) + describe(r.values()));
          },
          o);
    } catch (const numcheck::Error& e) {
      b.thrown = e.what();
    }
  }
  if (a.thrown != b.thrown) violated("the readers threw differently");
  if (a.events != b.events) violated("the readers gave different records or errors");
  if (a.stats.lines != b.stats.lines || a.stats.records != b.stats.records ||
      a.stats.blank_lines != b.stats.blank_lines || a.stats.bad_lines != b.stats.bad_lines ||
      a.stats.torn_line != b.stats.torn_line || a.stats.torn_bytes != b.stats.torn_bytes) {
    violated("the readers counted differently");
  }
  return 0;
}
