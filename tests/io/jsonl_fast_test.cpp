// read_jsonl_fast (io/json.hpp): the simdjson reader gives exactly what read_jsonl gives -- the
// same records with the same values, the same blank/torn/bad-line handling and stats, the same
// errors naming file, line and field -- on well-formed lines and on every kind of bad one.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/prng.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "io/jsonl_rule.hpp"

namespace numcheck::io {
namespace {

// What a reader saw: per record its line and flat values (strings copied), per bad line the error.
struct Seen {
  std::vector<std::string> events;
  JsonlStats stats;
  std::string thrown;
};

std::string describe(const std::vector<FlatValue>& v) {
  std::string out;
  // Integers by value ("-0" is signed to nlohmann, perhaps unsigned to simdjson; every accessor
  // reads 0 either way).
  for (const auto& f : v) {
    if (f.kind == FlatValue::Kind::kUnsigned) {
      out += fmt::format("[int|{}|{}|{}]", f.key, f.end, f.u);
    } else if (f.kind == FlatValue::Kind::kInteger) {
      out += fmt::format("[int|{}|{}|{}]", f.key, f.end, f.i);
    } else {
      out +=
          fmt::format("[{}|{}|{}|{}|{}|{}]", static_cast<int>(f.kind), f.key, f.end, f.boolean, f.d, f.text);
    }
  }
  return out;
}

Seen read_slow(std::string_view text, TornTail torn, bool collect) {
  Seen s;
  OrderedJsonlOptions o;
  o.torn = torn;
  if (collect)
    o.on_bad_line = [&](const JsonError& e, std::size_t n) {
      s.events.push_back(fmt::format("bad {} {}", n, e.what()));
    };
  try {
    s.stats = read_jsonl_text<OrderedJson>(
        text, "f.jsonl",
        [&](const OrderedRecord& r, std::size_t n) {
          std::vector<FlatValue> v;
          flatten(r.json(), v);
          s.events.push_back(fmt::format("rec {} {} {}", n, r.where(), describe(v)));
        },
        o);
  } catch (const Error& e) {
    s.thrown = e.what();
  }
  return s;
}

// What read_jsonl_fast (read(fn, options) calls it on a text or a file) hands out.
template <class Read>
Seen read_fast_with(TornTail torn, bool collect, const Read& read) {
  Seen s;
  JsonlOptions o;
  o.torn = torn;
  if (collect)
    o.on_bad_line = [&](const JsonError& e, std::size_t n) {
      s.events.push_back(fmt::format("bad {} {}", n, e.what()));
    };
  try {
    s.stats = read(
        [&](const LineRecord& r, std::size_t n) {
          // The record's values as the walk (or the fallback) made them.
          s.events.push_back(fmt::format("rec {} {} {}", n, r.where(), describe(r.values())));
        },
        o);
  } catch (const Error& e) {
    s.thrown = e.what();
  }
  return s;
}

Seen read_fast(std::string_view text, TornTail torn, bool collect) {
  return read_fast_with(torn, collect, [&](const auto& fn, const JsonlOptions& o) {
    return read_jsonl_fast_text(text, "f.jsonl", fn, o);
  });
}

// Lines the walk takes and lines it leaves to nlohmann (or that are errors for both).
const std::vector<std::string> kLines = {
    R"({"prompt_id":"CV-0001:canonical","response":"FINAL: 2.75 L","finish_reason":"stop","usage":{"completion_tokens":31}})",
    R"({"a":"\u00e9\n\"q\"","b":[1,-2,3.5,true,false,null,{"c":[]}],"d":{}})",
    R"({"n":18446744073709551615,"m":-9223372036854775808,"big":18446744073709551616,"f":1e308,"z":-0,"z2":0.0,"e":1E2})",
    R"({"dup":1,"dup":2})",
    R"({"s":"\ud83d\ude00","lone":"\udc00"})",
    R"({"s":"\ud800"})",
    "{\"tab\":\t1}",
    "{\"ctl\":\"a\x01b\"}",
    R"({"x":01})",
    R"({"x":1.})",
    R"({"x":1e999})",
    R"({"x":1e-400})",
    R"({"x":"bad \x escape"})",
    R"({"a":1} trailing)",
    R"({"a":1}})",
    R"([1,2])",
    R"("just a string")",
    R"({"a":)",
    "   ",
    "",
    "{\"bad utf8\":\"\xff\xfe\"}",
    "\xef\xbb\xbf{\"bom\":1}",
    R"({"deep":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]})",
};

TEST(JsonlFast, EveryLineGivesWhatReadJsonlGives) {
  for (const auto& line : kLines) {
    for (const bool collect : {true, false}) {
      const std::string text = line + "\n" + R"({"ok":1})" + "\n";
      const Seen a = read_slow(text, TornTail::kError, collect);
      const Seen b = read_fast(text, TornTail::kError, collect);
      EXPECT_EQ(a.thrown, b.thrown) << line;
      ASSERT_EQ(a.events.size(), b.events.size()) << line;
      for (std::size_t i = 0; i < a.events.size(); ++i) EXPECT_EQ(a.events[i], b.events[i]) << line;
      EXPECT_EQ(a.stats.lines, b.stats.lines) << line;
      EXPECT_EQ(a.stats.records, b.stats.records) << line;
      EXPECT_EQ(a.stats.blank_lines, b.stats.blank_lines) << line;
      EXPECT_EQ(a.stats.bad_lines, b.stats.bad_lines) << line;
    }
  }
}

TEST(JsonlFast, WalkAgreesWithNlohmann) {
  FastLineParser p;
  std::size_t walked = 0;
  for (const auto& line : kLines) {
    std::vector<FlatValue> fast;
    const bool ok = p.walk(line, fast);
    JsonError err;
    const auto j = parse_jsonl_line<OrderedJson>(line, true, TornTail::kError, "x", err);
    if (!ok) continue;
    ++walked;
    ASSERT_TRUE(j.has_value()) << "the walk took a line nlohmann refuses: " << line;
    std::vector<FlatValue> slow;
    flatten(*j, slow);
    EXPECT_EQ(fast, slow) << line << "\n" << describe(fast) << "\n" << describe(slow);
  }
  EXPECT_GE(walked, 3u);  // the ordinary lines do go the fast way
}

// Every record `orbit run` writes carries "temperature":0.0 in its request: plain zeros in any
// spelling take the fast path; a negative zero may go either way ("-0" is the integer 0 to both
// readers, "-0.0" goes to the DOM path); where both read a line they read the same values.
TEST(JsonlFast, PlainZerosTakeTheFastPathAndAgreeWithTheDomPath) {
  const std::string runner_like =
      R"({"attempts":1,"id":"b0001/v00","request":{"max_tokens":1024,"messages":[{"content":"What is )"
      R"(1/2 + 1/4?","role":"user"}],"model":"m","seed":20260725,"temperature":ZERO,"top_k":1,)"
      R"("top_p":1.0},"response":"3/4","timings":{"predicted_ms":0.0},"usage":{"completion_tokens":0}})";
  struct Case {
    const char* zero;
    bool fast;  // the walk must accept it (the negative zeros: it may, when it reads them as nlohmann does)
  };
  for (const Case c : {Case{"0", true}, Case{"0.0", true}, Case{"0e5", true}, Case{"0E-3", true},
                       Case{"0.000e+7", true}, Case{"-0", false}, Case{"-0.0", false}}) {
    std::string line = runner_like;
    line.replace(line.find("ZERO"), 4, c.zero);
    FastLineParser p;
    std::vector<FlatValue> fast;
    const bool walked = p.walk(line, fast);
    if (c.fast) {
      EXPECT_TRUE(walked) << c.zero;
    }
    JsonError err;
    const auto j = parse_jsonl_line<OrderedJson>(line, true, TornTail::kError, "x", err);
    ASSERT_TRUE(j.has_value()) << c.zero;
    if (walked) {
      std::vector<FlatValue> slow;
      flatten(*j, slow);
      EXPECT_EQ(fast, slow) << c.zero << "\n" << describe(fast) << "\n" << describe(slow);
    }
    // And the whole reader gives what read_jsonl gives, whichever path each line took.
    const std::string text = line + "\n";
    const Seen a = read_slow(text, TornTail::kError, true);
    const Seen b = read_fast(text, TornTail::kError, true);
    EXPECT_EQ(a.events, b.events) << c.zero;
    EXPECT_EQ(a.thrown, b.thrown) << c.zero;
    EXPECT_EQ(b.stats.records, 1u) << c.zero;
  }
}

TEST(JsonlFast, TornTailsAndAppendLogsAsReadJsonl) {
  for (const std::string tail : {R"({"a":1})", R"({"a":)", "  ", R"([1])"}) {
    for (const auto torn : {TornTail::kError, TornTail::kAppendLog}) {
      for (const bool collect : {true, false}) {
        const std::string text = std::string(R"({"ok":1})") + "\n" + tail;
        const Seen a = read_slow(text, torn, collect);
        const Seen b = read_fast(text, torn, collect);
        EXPECT_EQ(a.thrown, b.thrown) << tail;
        EXPECT_EQ(a.events, b.events) << tail;
        EXPECT_EQ(a.stats.torn_line, b.stats.torn_line) << tail;
        EXPECT_EQ(a.stats.torn_bytes, b.stats.torn_bytes) << tail;
        EXPECT_EQ(a.stats.records, b.stats.records) << tail;
      }
    }
  }
}

TEST(JsonlFast, AccessorsGiveRecordsErrors) {
  const std::string line =
      R"({"s":"x","n":-3,"u":7,"f":1.5,"b":true,"nul":null,"l":["a","b"],"bad":[1],"o":{"k":"v","i":"no"}})";
  const OrderedJson j = parse_ordered_json(line, "");
  const OrderedRecord a = OrderedRecord::of(j, "f.jsonl:3");
  std::vector<FlatValue> v;
  FastLineParser p;
  ASSERT_TRUE(p.walk(line, v));
  const LineRecord b(v, 0, "f.jsonl:3");
  const auto same_error = [](const auto& fa, const auto& fb) {
    std::string ea, eb;
    try {
      fa();
    } catch (const Error& e) {
      ea = e.what();
    }
    try {
      fb();
    } catch (const Error& e) {
      eb = e.what();
    }
    EXPECT_FALSE(ea.empty());
    EXPECT_EQ(ea, eb);
  };
  EXPECT_EQ(a.string("s"), b.string("s"));
  EXPECT_EQ(a.integer("n"), b.integer("n"));
  EXPECT_EQ(a.integer("u", 0, 10), b.integer("u", 0, 10));
  EXPECT_EQ(a.number("f"), b.number("f"));
  EXPECT_EQ(a.boolean("b"), b.boolean("b"));
  EXPECT_EQ(a.opt_string("nul"), b.opt_string("nul"));
  EXPECT_EQ(a.strings("l"), b.strings("l"));
  EXPECT_EQ(a.object("o").string("k"), b.object("o").string("k"));
  EXPECT_EQ(a.has("nul"), b.has("nul"));
  EXPECT_EQ(a.contains("nul"), b.contains("nul"));
  same_error([&] { (void)a.string("n"); }, [&] { (void)b.string("n"); });
  same_error([&] { (void)a.string("missing"); }, [&] { (void)b.string("missing"); });
  same_error([&] { (void)a.integer("n", 0); }, [&] { (void)b.integer("n", 0); });
  same_error([&] { (void)a.integer("f"); }, [&] { (void)b.integer("f"); });
  same_error([&] { (void)a.integer("u", 0, 5); }, [&] { (void)b.integer("u", 0, 5); });
  same_error([&] { (void)a.opt_string("n"); }, [&] { (void)b.opt_string("n"); });
  same_error([&] { (void)a.boolean("s"); }, [&] { (void)b.boolean("s"); });
  same_error([&] { (void)a.strings("bad"); }, [&] { (void)b.strings("bad"); });
  // string_count: strings' size under strings' check and error.
  EXPECT_EQ(b.string_count("l"), a.strings("l").size());
  same_error([&] { (void)a.strings("bad"); }, [&] { (void)b.string_count("bad"); });
  same_error([&] { (void)a.strings("s"); }, [&] { (void)b.string_count("s"); });
  same_error([&] { (void)a.strings("missing"); }, [&] { (void)b.string_count("missing"); });
  same_error([&] { (void)a.object("s"); }, [&] { (void)b.object("s"); });
  same_error([&] { (void)a.object("o").integer("i"); }, [&] { (void)b.object("o").integer("i"); });
  same_error([&] { (void)a.number("s"); }, [&] { (void)b.number("s"); });
  // Without a place: the bare message, as Record::of(j, "") gives it.
  const OrderedRecord a0 = OrderedRecord::of(j, "");
  same_error([&] { (void)a0.string("missing"); }, [&] { (void)b.with_where("").string("missing"); });
  same_error([&] { (void)a0.integer("s"); }, [&] { (void)b.with_where("").integer("s"); });
}

// find starts after the member it found last and wraps around: whatever the order of the lookups
// (in the line's order, backwards, repeated, interleaved with absent names and nested objects), each
// name gives its own member, as a scan from the first member gives it.
TEST(JsonlFast, FindGivesEachMemberWhateverTheOrderOfLookups) {
  const std::string line =
      R"({"a":1,"bb":[1,2,{"a":9}],"c":{"a":2,"c":3},"dd":"x","e":null,"a2":{"x":[]},"f":true})";
  std::vector<FlatValue> v;
  FastLineParser p;
  ASSERT_TRUE(p.walk(line, v));
  const std::vector<std::string> names{"a", "bb", "c", "dd", "e", "a2", "f", "zz", "", "b"};
  // The member of each name by a plain scan.
  const auto scan = [&v](std::string_view key) -> const FlatValue* {
    for (std::size_t c = 1; c < v[0].end; c = v[c].end) {
      if (v[c].key == key) return &v[c];
    }
    return nullptr;
  };
  Rng rng(44);
  for (int round = 0; round < 200; ++round) {
    const LineRecord r(v, 0, "f:1");
    for (int i = 0; i < 12; ++i) {
      const std::string& k = names[rng.below(names.size())];
      ASSERT_EQ(r.find(k), scan(k)) << "round " << round << " key " << k;
    }
  }
  const LineRecord r(v, 0, "f:1");
  for (auto it = names.rbegin(); it != names.rend(); ++it) EXPECT_EQ(r.find(*it), scan(*it)) << *it;
  const LineRecord c = r.object("c");
  EXPECT_EQ(c.integer("c"), 3);
  EXPECT_EQ(c.integer("a"), 2);
  EXPECT_EQ(c.find("dd"), nullptr);  // a member of the line, not of the object
  EXPECT_EQ(r.integer("a"), 1);
}

// ------------------------------------------------------------------------------ blocks and threads

// A temporary file that goes with the test.
struct TempFile {
  std::filesystem::path path;
  explicit TempFile(std::string_view text) {
    path = std::filesystem::temp_directory_path() /
           fmt::format("numcheck_jsonl_{}_{}.jsonl", ::getpid(), counter()++);
    write_file_atomic(path, text);
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  static int& counter() {
    static int n = 0;
    return n;
  }
};

// Random JSONL texts: the lines above (good, bad, blank) in random order, with "\r\n" endings now
// and then, a long line, and sometimes no final "\n".
std::string random_text(Rng& rng) {
  std::string text;
  const std::size_t n = 1 + rng.below(40);
  for (std::size_t i = 0; i < n; ++i) {
    if (rng.below(10) == 0) {
      text += R"({"long":")" + std::string(200 + rng.below(300), 'x') + "\"}";
    } else {
      text += kLines[rng.below(kLines.size())];
    }
    text += rng.below(8) == 0 ? "\r\n" : "\n";
  }
  if (rng.below(3) == 0) text += kLines[rng.below(kLines.size())];  // unterminated last line
  return text;
}

// for_each_line (now on LineBlockReader) splits a file as the in-memory splitter splits its text,
// for any block size: numbers, "\r" removal, the unterminated last line; and the blocks joined are
// the file (what the parallel reader's on_bytes is given).
TEST(LineBlocks, EveryBlockSizeSplitsTheLinesAlike) {
  Rng rng(20261201);
  for (int round = 0; round < 200; ++round) {
    const std::string text = round == 0 ? std::string() : random_text(rng);
    const TempFile f(text);
    std::vector<std::string> want, got;
    detail::for_each_text_line(text, [&](std::string_view l, std::size_t n, bool t) {
      want.push_back(fmt::format("{} {} {}", n, t, l));
    });
    for_each_line(f.path, [&](const Line& l) {
      got.push_back(fmt::format("{} {} {}", l.number, l.terminated, l.text));
    });
    ASSERT_EQ(want, got) << round;
    for (const std::size_t block :
         {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{64}, std::size_t{1000}}) {
      LineBlockReader r(f.path, block);
      std::string joined;
      LineBlock b;
      while (r.next(b)) {
        ASSERT_FALSE(b.empty());
        joined += b.text();
        if (joined.size() < text.size()) {
          ASSERT_EQ(b.text().back(), '\n') << "a block ends after a newline, but for the file's last";
        }
      }
      EXPECT_EQ(joined, text) << block;
    }
  }
}

// What a reader saw, per line: "rec <line> <where> <values>" or "bad <line> <message>".
Seen read_parallel(const std::filesystem::path& path, TornTail torn, bool collect, std::size_t threads,
                   std::size_t block, std::string* bytes = nullptr) {
  Seen s;
  ParallelJsonl how;
  how.threads = threads;
  how.torn = torn;
  how.block_bytes = block;
  std::vector<std::vector<std::string>> slots(parallel_jsonl_slots(threads));
  how.on_record = [&](std::size_t slot, const LineRecord& r, std::size_t n) {
    slots.at(slot).push_back(fmt::format("rec {} {} {}", n, r.where(), describe(r.values())));
  };
  if (collect) {
    how.on_bad_line = [&](std::size_t slot, const JsonError& e, std::size_t n) {
      slots[slot].push_back(fmt::format("bad {} {}", n, e.what()));
    };
  }
  how.on_block = [&](std::size_t slot) {
    for (auto& e : slots[slot]) s.events.push_back(std::move(e));
    slots[slot].clear();
  };
  if (bytes != nullptr) how.on_bytes = [&](std::string_view b) { bytes->append(b); };
  try {
    s.stats = read_jsonl_fast_parallel(path, how);
  } catch (const Error& e) {
    s.thrown = e.what();
  }
  return s;
}

Seen read_fast_file(const std::filesystem::path& path, TornTail torn, bool collect) {
  return read_fast_with(torn, collect,
                        [&](const auto& fn, const JsonlOptions& o) { return read_jsonl_fast(path, fn, o); });
}

// The parallel reader hands out what the sequential one does, in the same order, for any number of
// threads and any block size: the same records and bad lines, the same stats, and when a bad line
// is an error (no on_bad_line), the same error after exactly the same records; it reads every byte
// once for on_bytes.
TEST(JsonlFastParallel, AnyThreadsAndBlocksGiveWhatTheSequentialReaderGives) {
  Rng rng(7);
  for (int round = 0; round < 40; ++round) {
    const std::string text = random_text(rng);
    const TempFile f(text);
    for (const auto torn : {TornTail::kError, TornTail::kAppendLog}) {
      for (const bool collect : {true, false}) {
        const Seen a = read_fast_file(f.path, torn, collect);
        for (const std::size_t threads : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{8}}) {
          for (const std::size_t block : {std::size_t{1}, std::size_t{50}, std::size_t{4096}}) {
            std::string bytes;
            const Seen b = read_parallel(f.path, torn, collect, threads, block, &bytes);
            const std::string ctx =
                fmt::format("round {} threads {} block {} collect {}", round, threads, block, collect);
            EXPECT_EQ(a.thrown, b.thrown) << ctx;
            ASSERT_EQ(a.events, b.events) << ctx;
            EXPECT_EQ(a.stats.lines, b.stats.lines) << ctx;
            EXPECT_EQ(a.stats.records, b.stats.records) << ctx;
            EXPECT_EQ(a.stats.blank_lines, b.stats.blank_lines) << ctx;
            EXPECT_EQ(a.stats.bad_lines, b.stats.bad_lines) << ctx;
            EXPECT_EQ(a.stats.torn_line, b.stats.torn_line) << ctx;
            EXPECT_EQ(a.stats.torn_bytes, b.stats.torn_bytes) << ctx;
            if (b.thrown.empty()) {
              EXPECT_EQ(bytes, text) << ctx;
            }
          }
        }
      }
    }
  }
}

// 3,000 records {"n":1} .. {"n":3000}, and how to read them in blocks of 100 bytes.
std::string numbered_records() {
  std::string text;
  for (int i = 1; i <= 3000; ++i) text += fmt::format("{{\"n\":{}}}\n", i);
  return text;
}
ParallelJsonl in_small_blocks(std::size_t threads) {
  ParallelJsonl how;
  how.threads = threads;
  how.block_bytes = 100;
  return how;
}

// An exception from a record's callback is the first in file order, after the records before it.
TEST(JsonlFastParallel, TheFirstFailingRecordInFileOrderIsTheError) {
  const TempFile f(numbered_records());
  for (const std::size_t threads : {std::size_t{1}, std::size_t{2}, std::size_t{4}}) {
    ParallelJsonl how = in_small_blocks(threads);
    std::vector<std::vector<std::int64_t>> slots(parallel_jsonl_slots(threads));
    std::vector<std::int64_t> seen;
    how.on_record = [&](std::size_t slot, const LineRecord& r, std::size_t) {
      const std::int64_t n = r.integer("n");
      if (n % 1000 == 777) fail("record {} refused", n);
      slots[slot].push_back(n);
    };
    how.on_block = [&](std::size_t slot) {
      seen.insert(seen.end(), slots[slot].begin(), slots[slot].end());
      slots[slot].clear();
    };
    try {
      (void)read_jsonl_fast_parallel(f.path, how);
      FAIL() << "expected an Error";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), "record 777 refused");
    }
    ASSERT_EQ(seen.size(), 776u) << threads;
    for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], static_cast<std::int64_t>(i + 1));
  }
  EXPECT_THROW((void)read_jsonl_fast_parallel("/nonexistent/x.jsonl", ParallelJsonl{}), Error);
}

// on_bytes runs on a thread of its own when there are workers: what it throws is the read's error
// (no hang, whichever thread is waiting), and the bytes it got before are the file's first bytes.
TEST(JsonlFastParallel, AnErrorOfOnBytesIsTheReadsError) {
  const std::string text = numbered_records();
  const TempFile f(text);
  for (const std::size_t threads : {std::size_t{1}, std::size_t{2}, std::size_t{4}}) {
    ParallelJsonl how = in_small_blocks(threads);
    std::string seen;
    how.on_record = [](std::size_t, const LineRecord&, std::size_t) {};
    how.on_bytes = [&](std::string_view b) {
      if (seen.size() > 20000) fail("hash refused at byte {}", seen.size());
      seen.append(b);
    };
    try {
      (void)read_jsonl_fast_parallel(f.path, how);
      FAIL() << "expected an Error, threads " << threads;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("hash refused at byte ", 0), 0u) << e.what();
    }
    EXPECT_GT(seen.size(), 20000u);
    EXPECT_EQ(seen, text.substr(0, seen.size())) << threads;
  }
}

}  // namespace
}  // namespace numcheck::io
