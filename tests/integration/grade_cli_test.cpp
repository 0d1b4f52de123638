// `numcheck orbit grade` and `numcheck orbit score` as scripts see them: the JSON object, exit
// codes, the default benchmark's expected answers round-tripping through the strict parser, and
// every problem in a responses file reported with its line number.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cli_support.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "io/sha256.hpp"
#include "num/rational.hpp"

namespace numcheck::testing {
namespace {

namespace fs = std::filesystem;

TEST(OrbitGradeCli, PrintsTheGradeObject) {
  const auto r = run_cli("orbit grade --expected 14940 --unit L",
                         "Work...\nFINAL: 1.494 x 10\xCB\x86"
                         "4 liters\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            R"({"strict":{"outcome":"parse_error","value":null,"multiple_final":false},)"
            R"("audit":{"outcome":"correct","value":"14940","recovered":true,"rules":["sci_x","sci_caret"],)"
            R"("magnitude_k":null}})"
            "\n");
  const auto ok = run_cli("orbit grade --expected 2.75 --unit L", "FINAL: 2750 mL");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find(R"("strict":{"outcome":"correct","value":"11/4")"), std::string::npos) << ok.out;
  const auto slip = run_cli("orbit grade --expected 11/4 --unit L", "FINAL: 275 L");
  EXPECT_NE(slip.out.find(R"("magnitude_k":-2)"), std::string::npos) << slip.out;
  const auto cut = run_cli("orbit grade --expected 2.75 --unit L --finish-reason length", "FINAL: 2.75 L");
  EXPECT_NE(cut.out.find(R"("strict":{"outcome":"truncation_error","value":null)"), std::string::npos)
      << cut.out;
  const auto pct = run_cli("orbit grade --expected 0.75 --unit ''", "FINAL: 75%");
  EXPECT_NE(pct.out.find(R"("strict":{"outcome":"correct","value":"3/4")"), std::string::npos) << pct.out;
  const auto empty = run_cli("orbit grade --expected 1 --unit L", "");
  EXPECT_NE(empty.out.find(R"("outcome":"format_error")"), std::string::npos) << empty.out;
}

TEST(OrbitGradeCli, UsageErrorsAndOversizedInput) {
  auto r = run_cli("orbit grade --expected abc --unit L", "FINAL: 1 L");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--expected 'abc'"), std::string::npos) << r.err;
  r = run_cli("orbit grade --expected 1 --unit furlongs", "FINAL: 1 L");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--unit 'furlongs'"), std::string::npos) << r.err;
  r = run_cli("orbit grade --unit L", "FINAL: 1 L");
  EXPECT_EQ(r.exit_code, 2);  // --expected is required
  r = run_cli("orbit grade --expected 1 --unit L", std::string((64u << 20) + 1, '1'));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("larger than 64 MiB"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

struct PromptInfo {
  std::string prompt_id;
  num::Rational expected;
  std::string unit;
};

std::vector<PromptInfo> read_views(const fs::path& bench) {
  std::vector<PromptInfo> out;
  io::for_each_line(bench / "views.jsonl", [&](const io::Line& l) {
    const io::Json j = io::parse_json(l.text, "views.jsonl");
    out.push_back({j["prompt_id"].get<std::string>(),
                   num::Rational::parse_exact(j["expected"].get<std::string>(), "expected"),
                   j["answer_unit"].get<std::string>()});
  });
  return out;
}

std::string record(const std::string& id, const std::string& response, const char* finish = "stop") {
  io::Json j;
  j["prompt_id"] = id;
  j["response"] = response;
  j["finish_reason"] = finish;
  return io::to_line(j) + "\n";
}

std::string final_line(const num::Rational& v, const std::string& unit, bool as_fraction) {
  const auto dec = v.to_decimal();
  const std::string number = (as_fraction || !dec) ? v.str() : *dec;
  return "FINAL: " + number + (unit.empty() ? "" : " " + unit);
}

// Generates the default benchmark once for the tests below.
class OrbitScoreCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fresh_dir("orbit_score"));
    const auto g = run_cli("orbit generate --out " + quoted(*dir_ / "bench"));
    ASSERT_EQ(g.exit_code, 0) << g.err;
    views_ = new std::vector<PromptInfo>(read_views(*dir_ / "bench"));
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
    delete views_;
  }
  static fs::path* dir_;
  static std::vector<PromptInfo>* views_;
};
fs::path* OrbitScoreCli::dir_ = nullptr;
std::vector<PromptInfo>* OrbitScoreCli::views_ = nullptr;

TEST_F(OrbitScoreCli, EveryExpectedAnswerRoundTripsAndMagnitudeSlipsAreCounted) {
  ASSERT_EQ(views_->size(), 8600u);
  const fs::path run = *dir_ / "roundtrip";
  fs::create_directories(run);
  std::string text;
  std::size_t slips = 0;
  // Reverse order: scores must come out in benchmark order anyway.
  for (std::size_t n = views_->size(); n-- > 0;) {
    const auto& v = (*views_)[n];
    if (n % 10 == 7 && !v.expected.is_zero()) {
      text +=
          record(v.prompt_id, "Reasoning.\n" + final_line(v.expected * num::Rational(100), v.unit, false));
      ++slips;
    } else {
      text += record(v.prompt_id, "Reasoning.\n" + final_line(v.expected, v.unit, n % 2 == 1));
    }
  }
  io::write_file_atomic(run / "responses.jsonl", text);
  io::write_file_atomic(run / "run.json", R"({"model":"roundtrip-system","simulated":true})");
  const fs::path out = *dir_ / "roundtrip.scores.jsonl";
  const auto r = run_cli("orbit score --bench " + quoted(*dir_ / "bench") + " --responses " +
                         quoted(run / "responses.jsonl") + " --out " + quoted(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");

  std::size_t n = 0;
  io::for_each_line(out, [&](const io::Line& l) {
    const io::Json j = io::parse_json(l.text, "scores");
    const auto& v = (*views_)[n];
    EXPECT_EQ(j["prompt_id"], v.prompt_id);  // benchmark order
    const bool slip = n % 10 == 7 && !v.expected.is_zero();
    EXPECT_EQ(j["strict"]["outcome"], slip ? "value_error" : "correct") << v.prompt_id;
    if (slip) {
      EXPECT_EQ(j["audit"]["magnitude_k"], -2) << v.prompt_id;
    } else {
      EXPECT_EQ(j["strict"]["value"], v.expected.str()) << v.prompt_id;
    }
    ++n;
  });
  EXPECT_EQ(n, 8600u);
  const io::Json m = io::read_json_file(out.string() + ".manifest.json");
  EXPECT_EQ(m["system"]["name"], "roundtrip-system");
  EXPECT_EQ(m["system"]["simulated"], true);
  EXPECT_EQ(m["counts"]["strict"]["correct"], 8600 - slips);
  EXPECT_EQ(m["counts"]["magnitude_drops"]["-2"], slips);
  EXPECT_EQ(m["responses"]["sha256"], io::sha256_file(run / "responses.jsonl"));
  EXPECT_EQ(m["benchmark"]["files"]["views.jsonl"], io::sha256_file(*dir_ / "bench" / "views.jsonl"));
}

// The benchmark index cache (in $NUMCHECK_CACHE_DIR): scoring with it, or reading its index back,
// writes the same bytes as without it, both when the files just changed (hashed again on every
// read) and when they last changed long enough before the cache was made (their settled stamps
// stand for their hashes; that the files are then not read is shown by
// IndexCacheTest.SettledFilesAreNotHashedAgainAndATouchIsSeen); a benchmark changed in place behind
// its back (size, inode and modification time kept) is caught by its change time before anything
// is printed or written: the same error, exit code and (no) output as without the cache.
TEST_F(OrbitScoreCli, IndexCacheWritesTheSameBytesAndCatchesChangedFiles) {
  const fs::path bench = *dir_ / "cached_bench";
  fs::create_directories(bench);
  for (const char* f : {"bases.jsonl", "views.jsonl", "manifest.json"}) {
    fs::copy_file(*dir_ / "bench" / f, bench / f, fs::copy_options::overwrite_existing);
  }
  const fs::path run = *dir_ / "cached";
  fs::create_directories(run);
  std::string text;
  for (const auto& v : *views_)
    text += record(v.prompt_id, "Work.\n" + final_line(v.expected, v.unit, false));
  io::write_file_atomic(run / "responses.jsonl", text);
  const fs::path cache = *dir_ / "index_cache";
  const char* was = std::getenv("NUMCHECK_CACHE_DIR");
  const std::string saved = was != nullptr ? was : "";
  ::setenv("NUMCHECK_CACHE_DIR", cache.c_str(), 1);
  const fs::path out = run / "scores.jsonl";
  const auto score = [&](const std::string& extra) {
    fs::remove(out);
    fs::remove(out.string() + ".manifest.json");
    return run_cli("orbit score --bench " + quoted(bench) + " --responses " +
                   quoted(run / "responses.jsonl") + " --out " + quoted(out) + extra);
  };
  const auto r0 = score(" --no-index-cache");
  ASSERT_EQ(r0.exit_code, 0) << r0.err;
  EXPECT_FALSE(fs::exists(cache));
  const std::string scores = io::read_file(out);
  const std::string manifest = io::read_file(out.string() + ".manifest.json");
  fs::file_time_type written{};
  for (const char* pass : {"builds and writes the cache", "reads the cache", "settled: builds the cache anew",
                           "settled: reads the cache without hashing the files"}) {
    if (std::string_view(pass) == "settled: builds the cache anew") {
      std::this_thread::sleep_for(std::chrono::milliseconds(2100));  // orbit::detail::kSettledNs and more
      fs::remove_all(cache);
    }
    const auto r = score("");
    ASSERT_EQ(r.exit_code, 0) << pass << ": " << r.err;
    EXPECT_EQ(r.out, r0.out) << pass;
    EXPECT_EQ(r.err, "") << pass;
    EXPECT_EQ(io::read_file(out), scores) << pass;
    EXPECT_EQ(io::read_file(out.string() + ".manifest.json"), manifest) << pass;
    ASSERT_TRUE(fs::is_directory(cache / "orbit-index")) << pass;
    // The cache file a build wrote (beside the grading) is whole when the command ends: the next
    // score reads it instead of writing it again.
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(cache / "orbit-index")) files.push_back(e.path());
    ASSERT_EQ(files.size(), 1u) << pass;
    if (std::string_view(pass).find("builds") != std::string_view::npos) {
      written = fs::last_write_time(files[0]);
    } else {
      EXPECT_EQ(fs::last_write_time(files[0]), written) << pass << ": written again";
    }
  }
  // One prompt's text changed in place, its size, inode and times put back.
  const fs::path views = bench / "views.jsonl";
  struct stat before {};
  ASSERT_EQ(::stat(views.c_str(), &before), 0);
  const std::size_t at = io::read_file(views).find("A jug holds");
  ASSERT_NE(at, std::string::npos);
  {
    const int fd = ::open(views.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, "B", 1, static_cast<off_t>(at)), 1);
    ::close(fd);
    const struct timespec times[2] = {before.st_atim, before.st_mtim};
    ASSERT_EQ(::utimensat(AT_FDCWD, views.c_str(), times, 0), 0);
  }
  const auto plain = score(" --no-index-cache");
  EXPECT_EQ(plain.exit_code, 1);
  EXPECT_NE(plain.err.find("views.jsonl"), std::string::npos) << plain.err;
  EXPECT_FALSE(fs::exists(out));
  const auto cached = score("");
  EXPECT_EQ(cached.exit_code, plain.exit_code);
  EXPECT_EQ(cached.err, plain.err);
  EXPECT_EQ(cached.out, plain.out);
  EXPECT_FALSE(fs::exists(out));
  if (was != nullptr) {
    ::setenv("NUMCHECK_CACHE_DIR", saved.c_str(), 1);
  } else {
    ::unsetenv("NUMCHECK_CACHE_DIR");
  }
}

TEST_F(OrbitScoreCli, ProblemsAreReportedWithLineNumbers) {
  const fs::path run = *dir_ / "problems";
  fs::create_directories(run);
  std::string text;
  const auto& v = *views_;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i == 5) continue;  // missing prompt
    text += record(v[i].prompt_id, final_line(v[i].expected, v[i].unit, false));
    if (i == 2) text += "{\"prompt_id\": \"broken\n";               // line 4: malformed
    if (i == 3) text += record("ZZ-9999:canonical", "FINAL: 1 L");  // line 6: unknown
    if (i == 4) text += record(v[0].prompt_id, "FINAL: 1 L");       // line 8: duplicate
  }
  const fs::path responses = run / "responses.jsonl";
  io::write_file_atomic(responses, text);
  const std::string args = "orbit score --bench " + quoted(*dir_ / "bench") + " --responses " +
                           quoted(responses) + " --out " + quoted(run / "s.jsonl");
  const auto r = run_cli(args);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(responses.string() + ":4: not valid JSON"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(responses.string() + ":6: prompt_id 'ZZ-9999:canonical' is not in the benchmark"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(responses.string() + ":8: duplicate prompt_id '" + v[0].prompt_id +
                       "' (first record at line 1)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("prompt '" + v[5].prompt_id + "' has no response record"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 malformed, 1 unknown prompt_id, 1 duplicate, 1 missing"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(run / "s.jsonl"));  // nothing written

  const auto partial = run_cli(args + " --allow-partial");
  EXPECT_EQ(partial.exit_code, 0) << partial.err;
  EXPECT_NE(partial.err.find("warning: " + responses.string() + ":8: duplicate"), std::string::npos)
      << partial.err;
  std::size_t lines = 0;
  io::for_each_line(run / "s.jsonl", [&](const io::Line&) { ++lines; });
  EXPECT_EQ(lines, 8599u);  // every prompt but the missing one, each once
  const io::Json m = io::read_json_file(run / "s.jsonl.manifest.json");
  EXPECT_EQ(m["partial"], true);
  EXPECT_EQ(m["system"]["name"], "responses");
  EXPECT_EQ(m["system"]["simulated"], false);
  EXPECT_EQ(m["issues"]["missing"], (io::Json{v[5].prompt_id}));
  EXPECT_EQ(m["issues"]["duplicate"][0]["line"], 8);
  EXPECT_EQ(m["counts"]["strict"]["correct"], 8599);

  // Only missing prompts: exit 3.
  std::string most;
  for (std::size_t i = 0; i + 1 < v.size(); ++i)
    most += record(v[i].prompt_id, final_line(v[i].expected, v[i].unit, false));
  io::write_file_atomic(responses, most);
  const auto inc = run_cli(args);
  EXPECT_EQ(inc.exit_code, 3) << inc.err;
  EXPECT_NE(inc.err.find("1 of the benchmark's prompts have no response record"), std::string::npos)
      << inc.err;
}

}  // namespace
}  // namespace numcheck::testing
