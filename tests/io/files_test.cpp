#include "io/files.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "core/prng.hpp"
#include "io/json.hpp"
#include "io/sha256.hpp"
#include "temp_dir.hpp"

namespace numcheck::io {
namespace {
namespace fs = std::filesystem;

fs::path temp_dir(const char* name) {
  fs::path d = fs::temp_directory_path() / fmt::format("numcheck_io_{}_{}", name, ::getpid());
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// The spool reads back what was appended, buffered or flushed, in any order; it never shows up in
// its folder (unlinked at once), and folders it had to create go when it goes, if still empty.
// A UniqueFd closes what it holds once: when it goes, when it is reset, or when another is moved
// into it; a moved-from or released one closes nothing.
TEST(Files, AUniqueFdClosesWhatItHoldsOnce) {
  const auto open_null = [] { return ::open("/dev/null", O_RDONLY | O_CLOEXEC); };
  const auto is_open = [](int fd) { return ::fcntl(fd, F_GETFD) != -1; };
  int a = -1, b = -1;
  {
    io::UniqueFd x(open_null());
    a = x.get();
    ASSERT_TRUE(is_open(a));
    io::UniqueFd y(std::move(x));
    EXPECT_EQ(x.get(), -1);  // NOLINT(bugprone-use-after-move): the moved-from state is the point
    EXPECT_EQ(y.get(), a);
    io::UniqueFd z(open_null());
    b = z.get();
    z = std::move(y);  // z's own descriptor is closed, a is z's now
    EXPECT_FALSE(is_open(b));
    EXPECT_TRUE(is_open(a));
    EXPECT_EQ(z.get(), a);
  }
  EXPECT_FALSE(is_open(a));
  io::UniqueFd r(open_null());
  const int c = r.release();
  r.reset();
  EXPECT_TRUE(is_open(c));  // released: not closed by the reset
  r.reset(c);
  r.reset();
  EXPECT_FALSE(is_open(c));
}

TEST(Files, SpoolFileReadsBackAndLeavesNothing) {
  const fs::path d = temp_dir("spool");
  {
    SpoolFile s(d / "a" / "b" / "scores.jsonl");
    EXPECT_TRUE(fs::is_directory(d / "a" / "b"));
    EXPECT_TRUE(fs::is_empty(d / "a" / "b"));
    std::vector<std::pair<std::uint64_t, std::string>> pieces;
    for (int i = 0; i < 40000; ++i) {
      std::string text =
          fmt::format("{{\"record\":{}}}\n", i) + std::string(static_cast<std::size_t>(i % 50), 'x');
      pieces.emplace_back(s.append(text), std::move(text));
    }
    std::string out = "head:";
    s.read(pieces.back().first, pieces.back().second.size(), out);  // still in the buffer
    EXPECT_EQ(out, "head:" + pieces.back().second);
    for (std::size_t i = pieces.size(); i-- > 0;) {
      std::string got;
      s.read(pieces[i].first, pieces[i].second.size(), got);
      ASSERT_EQ(got, pieces[i].second) << i;
    }
    std::string got;
    EXPECT_THROW(s.read(s.size() - 1, 2, got), Error);
  }
  EXPECT_FALSE(fs::exists(d / "a"));
  {
    SpoolFile s(d / "scores.jsonl");
    (void)s.append("x");
    write_file_atomic(d / "scores.jsonl", "kept");
  }
  EXPECT_TRUE(fs::exists(d / "scores.jsonl"));
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(d)) n += e.path().filename() == "scores.jsonl" ? 0 : 1;
  EXPECT_EQ(n, 0u);
  fs::remove_all(d);
}

TEST(Files, AtomicWriteThenReadAndHash) {
  const fs::path d = temp_dir("atomic");
  const testing::ScopedTempDir cleanup(d);
  write_file_atomic(d / "sub" / "a.txt", "abc");
  EXPECT_EQ(read_file(d / "sub" / "a.txt"), "abc");
  EXPECT_EQ(sha256_file(d / "sub" / "a.txt"), sha256_hex("abc"));
  EXPECT_THROW((void)read_file(d / "missing"), Error);
  EXPECT_THROW((void)read_file(d / "sub" / "a.txt", 2), Error);
}

// A write that fails midway (a full disk; here the file size limit RLIMIT_FSIZE makes write(2)
// fail with EFBIG) is an Error naming the file and leaves no "<file>.tmp.<pid>" behind; the old
// file stays as it was, also for a file written in many pieces.
TEST(Files, AFailedAtomicWriteLeavesNoTemporaryFile) {
  const fs::path d = temp_dir("full");
  write_file_atomic(d / "run.json", "old");
  struct rlimit old_limit {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old_limit;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string message;
  try {
    write_file_atomic(d / "run.json", std::string(100000, 'x'));
  } catch (const Error& e) {
    message = e.what();
  }
  bool streamed_threw = false;
  try {
    AtomicFile f(d / "bases.jsonl");
    f.write(std::string(3000, 'y'));
    f.write(std::string(3000, 'y'));
    f.commit();
  } catch (const Error&) {
    streamed_threw = true;
  }
  std::string direct_message;
  try {
    write_file_atomic(d / "scores.jsonl", "old scores");
    AtomicFile f(d / "scores.jsonl");
    for (int i = 0; i < 5; ++i) f.write(std::string(std::size_t{3} << 20, 'y'));
    f.commit();
  } catch (const Error& e) {
    direct_message = e.what();
  }
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &old_limit), 0);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_NE(message.find("run.json"), std::string::npos) << message;
  EXPECT_TRUE(streamed_threw);
  EXPECT_NE(direct_message.find("scores.jsonl"), std::string::npos) << direct_message;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(d)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"run.json", "scores.jsonl"}));
  EXPECT_EQ(read_file(d / "run.json"), "old");
  EXPECT_EQ(read_file(d / "scores.jsonl"), "old scores");
  fs::remove_all(d);
}

// Whatever the sizes of the pieces (empty, one byte, a few MB), the committed file holds exactly
// the bytes written, read_back sees any range of them, and reset() starts over.
TEST(Files, AnAtomicFileHoldsExactlyTheBytesWrittenAtEverySize) {
  constexpr std::size_t kBlock = std::size_t{2} << 20;
  const std::vector<fs::path> dirs{temp_dir("pieces")};
  Rng rng(20261202);
  const auto next = [&] { return rng.next(); };
  for (const fs::path& d : dirs) {
    for (const std::size_t total : {std::size_t{0}, std::size_t{1}, std::size_t{4095}, std::size_t{4096},
                                    std::size_t{4097}, kBlock - 1, kBlock, kBlock + 1, 3 * kBlock + 12345}) {
      SCOPED_TRACE(fmt::format("{} {}", d.string(), total));
      std::string want(total, '\0');
      for (auto& c : want) c = static_cast<char>('a' + next() % 26);
      const fs::path file = d / "scores.jsonl";
      fs::remove(file);
      {
        AtomicFile f(file);
        f.write("something to forget");
        f.reset();
        std::size_t at = 0;
        while (at < total) {
          const std::size_t piece =
              std::min<std::size_t>(total - at, next() % 3 == 0 ? next() % 16 : next() % 3000000);
          f.write(std::string_view(want).substr(at, piece));
          at += piece;
          if (at > 0 && next() % 4 == 0) {  // any range of what was written so far
            const std::uint64_t from = next() % at;
            const std::size_t length = static_cast<std::size_t>(next() % (at - from + 1));
            std::string got = "x";
            f.read_back(from, length, got);
            ASSERT_EQ(got, "x" + want.substr(static_cast<std::size_t>(from), length));
          }
        }
        f.write("");
        std::string got;
        EXPECT_THROW(f.read_back(0, total + 1, got), Error);  // past the end: an error, and the file is gone
      }
      EXPECT_FALSE(fs::exists(file));
      {
        AtomicFile f(file);
        for (std::size_t at = 0; at < total; at += 1000003)
          f.write(std::string_view(want).substr(at, std::min<std::size_t>(1000003, total - at)));
        f.commit();
      }
      EXPECT_EQ(fs::file_size(file), total);
      ASSERT_EQ(read_file(file), want);
      std::size_t others = 0;
      for (const auto& e : fs::directory_iterator(d)) others += e.path() == file ? 0 : 1;
      EXPECT_EQ(others, 0u);
    }
    fs::remove_all(d);
  }
}

// A block grown for a long line (a 50 MB response in a responses file) holds it whole; the next,
// shorter block gives that memory back instead of keeping it for the rest of the file.
TEST(LineBlockReader, ABufferGrownForALongLineIsGivenBackAfterIt) {
  const fs::path d = temp_dir("long_line");
  const fs::path f = d / "r.jsonl";
  constexpr std::size_t kBlock = std::size_t{64} << 10;
  const std::string long_line(std::size_t{8} << 20, 'x');
  {
    std::ofstream out(f, std::ios::binary);
    out << "first\n" << long_line << "\n";
    for (int i = 0; i < 20000; ++i) out << "short line " << i << "\n";
  }
  LineBlockReader reader(f, kBlock);
  LineBlock block;
  std::size_t blocks = 0;
  bool saw_long = false;
  std::size_t after_long = 0;  // largest capacity of a block read after the long line's
  while (reader.next(block)) {
    ++blocks;
    if (block.text().find(long_line) != std::string_view::npos) {
      saw_long = true;
      EXPECT_GE(block.capacity(), long_line.size());
    } else if (saw_long) {
      after_long = std::max(after_long, block.capacity());
    }
  }
  ASSERT_TRUE(saw_long);
  EXPECT_GT(blocks, 3u);
  EXPECT_LE(after_long, 4 * kBlock);
  fs::remove_all(d);
}

TEST(Files, AnAtomicFileNotCommittedLeavesNothing) {
  const fs::path d = temp_dir("uncommitted");
  {
    AtomicFile f(d / "a.txt");
    f.write("partial");
    EXPECT_TRUE(fs::exists(f.temp_path()));
  }
  EXPECT_TRUE(fs::is_empty(d));
  fs::remove_all(d);
}

TEST(Files, TornTailIsRepairedAndLinesAreNumbered) {
  const fs::path d = temp_dir("torn");
  const testing::ScopedTempDir cleanup(d);
  const fs::path f = d / "r.jsonl";
  {
    AppendFile a(f, false);
    a.append_line("{\"a\":1}");
    a.append_line("{\"a\":2}");
  }
  {
    std::FILE* raw = std::fopen(f.c_str(), "ab");
    std::fputs("{\"a\":3, \"par", raw);
    std::fclose(raw);
  }
  std::vector<std::pair<std::size_t, bool>> seen;
  for_each_line(f, [&](const Line& l) { seen.emplace_back(l.number, l.terminated); });
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_FALSE(seen[2].second);
  EXPECT_EQ(repair_torn_tail(f), 12u);
  EXPECT_EQ(repair_torn_tail(f), 0u);
  EXPECT_EQ(read_file(f), "{\"a\":1}\n{\"a\":2}\n");
}

// Several answers that arrived together are appended in one write: each batch lands whole, in its
// order, and never between another thread's lines; a last line without its "\n" gets one, and an
// empty batch writes nothing.
TEST(AppendFile, BatchesOfLinesLandWholeAndNeverInterleave) {
  const fs::path d = temp_dir("batches");
  const testing::ScopedTempDir cleanup(d);
  const fs::path f = d / "r.jsonl";
  constexpr int kThreads = 4, kBatches = 300;
  {
    AppendFile a(f, false);
    std::vector<std::thread> threads;
    threads.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&a, t] {
        std::string lines;
        for (int b = 0; b < kBatches; ++b) {
          lines.clear();
          const int n = 1 + (b * 7 + t) % 9;  // 1 to 9 lines, some long enough to span pages
          for (int i = 0; i < n; ++i) {
            lines += fmt::format(R"({{"t":{},"b":{},"i":{},"n":{},"pad":"{}"}})", t, b, i, n,
                                 std::string(static_cast<std::size_t>((b % 5) * 900), 'x'));
            lines.push_back('\n');
          }
          a.append_lines(lines);
        }
      });
    }
    for (auto& th : threads) th.join();
    a.append_lines("");
    a.append_lines(R"({"t":9,"b":0,"i":0,"n":1,"pad":""})");  // no "\n": one is added
    a.append_line(R"({"t":9,"b":1,"i":0,"n":1,"pad":""})");
  }
  std::vector<int> next_batch(kThreads + 1, 0);
  int t = -1, b = -1, expect_i = 0, n = 0;
  std::size_t lines = 0;
  for_each_line(f, [&](const Line& l) {
    ASSERT_TRUE(l.terminated) << l.number;
    const Json j = Json::parse(l.text);
    ++lines;
    if (expect_i == n) {  // a batch starts: its thread's next one
      t = j["t"].get<int>();
      b = j["b"].get<int>();
      n = j["n"].get<int>();
      expect_i = 0;
      const int slot = t == 9 ? kThreads : t;
      EXPECT_EQ(b, next_batch[static_cast<std::size_t>(slot)]) << "line " << l.number;
      ++next_batch[static_cast<std::size_t>(slot)];
    }
    EXPECT_EQ(j["t"].get<int>(), t) << "line " << l.number << ": another thread's line inside a batch";
    EXPECT_EQ(j["b"].get<int>(), b) << "line " << l.number;
    EXPECT_EQ(j["i"].get<int>(), expect_i) << "line " << l.number;
    ++expect_i;
  });
  EXPECT_EQ(expect_i, n);
  for (int i = 0; i < kThreads; ++i) EXPECT_EQ(next_batch[static_cast<std::size_t>(i)], kBatches) << i;
  EXPECT_EQ(next_batch[kThreads], 2);
  std::size_t want = 2;
  for (int th = 0; th < kThreads; ++th)
    for (int bb = 0; bb < kBatches; ++bb) want += static_cast<std::size_t>(1 + (bb * 7 + th) % 9);
  EXPECT_EQ(lines, want);
}

TEST(Json, ErrorsNameTheLine) {
  try {
    (void)parse_json("{\n\"a\": 1,\n}", "x.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x.json: invalid JSON at line 3"), std::string::npos) << e.what();
  }
  const Json j = parse_json("{\"k\": \"v\"}", "t");
  EXPECT_EQ(require_string(j, "k", "t"), "v");
  EXPECT_THROW((void)require_string(j, "missing", "t"), Error);
  // Invalid UTF-8 never throws on output.
  Json bad = std::string("\xff\xfe");
  EXPECT_NO_THROW((void)to_line(bad));
}

}  // namespace
}  // namespace numcheck::io

namespace numcheck::io {
namespace {

// Found by fuzz_claims_loaders: nlohmann throws out_of_range (not parse_error) for numbers beyond
// double range. It must surface as numcheck::Error like any other malformed input.
TEST(Json, HugeNumberIsAnErrorNotACrash) {
  EXPECT_THROW((void)parse_json("[1e999]", "t"), Error);
  EXPECT_THROW((void)parse_ordered_json("{\"a\": -1e99999}", "t"), Error);
}

}  // namespace
}  // namespace numcheck::io
