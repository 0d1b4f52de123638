#include "orbit/validate.hpp"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "io/sha256.hpp"
#include "orbit/generate.hpp"

namespace numcheck::orbit {
namespace {

namespace fs = std::filesystem;

// The default spec at a tenth of its size (consensus subsets of 3), so that each mutation test
// validates a few hundred prompts rather than 8,600 (the full benchmark is validated once, below).
OrbitSpec small_spec() {
  auto j = io::parse_ordered_json(default_spec().canonical_json, "spec");
  for (auto& t : j["templates"]) {
    t["bases"] = t["bases"].get<std::size_t>() / 10;
    for (auto& [fam, v] : t["views"].items()) v["quota"] = v["quota"].get<std::size_t>() / 10;
    if (t["consensus"]["bases"].get<std::size_t>() > 0) t["consensus"]["bases"] = 3;
  }
  return parse_spec(j.dump(), "small_spec.json");
}

class ValidateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("numcheck_validate_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    write_benchmark(dir_, generated());
  }
  void TearDown() override { fs::remove_all(dir_); }

  virtual const GeneratedBenchmark& generated() {
    static const GeneratedBenchmark g = generate(small_spec());
    return g;
  }

  // Replaces the first occurrence of `from` in one prompt of views.jsonl; optionally re-hashes so
  // that only the content checks can notice.
  void mutate_prompt(const std::string& prompt_id, const std::string& from, const std::string& to,
                     bool rehash) {
    std::string views = io::read_file(dir_ / "views.jsonl");
    const auto at = views.find("\"prompt_id\":\"" + prompt_id + "\"");
    ASSERT_NE(at, std::string::npos);
    const auto p = views.find(from, views.find("\"prompt\":", at));
    ASSERT_NE(p, std::string::npos);
    ASSERT_LT(p, views.find('\n', at));
    views.replace(p, from.size(), to);
    io::write_file_atomic(dir_ / "views.jsonl", views);
    if (rehash) {
      auto m = io::parse_ordered_json(io::read_file(dir_ / "manifest.json"), "manifest");
      m["files"]["views.jsonl"]["sha256"] = io::sha256_hex(views);
      m["files"]["views.jsonl"]["bytes"] = views.size();
      io::write_file_atomic(dir_ / "manifest.json", io::to_pretty(m));
    }
  }

  static bool has_issue(const ValidationReport& r, const std::string& where, const std::string& check) {
    for (const auto& i : r.issues)
      if (i.where == where && i.check == check) return true;
    return false;
  }

  fs::path dir_;
};

class ValidateDefaultTest : public ValidateTest {
 protected:
  const GeneratedBenchmark& generated() override {
    static const GeneratedBenchmark g = [] {
      GenerateOptions o;
      o.paraphrases = true;
      return generate(default_spec(), o);
    }();
    return g;
  }
};

// The whole default benchmark (with the consensus paraphrases) passes every check: hashes, counts,
// strict-parser round trip, rendering, and the reference solver on all 8,840 prompts.
TEST_F(ValidateDefaultTest, DefaultBenchmarkPassesEveryCheck) {
  const Benchmark b = load_benchmark(dir_);
  std::size_t calls = 0, last = 0;
  const auto r = validate_benchmark(b, [&](std::size_t done, std::size_t total) {
    ++calls;
    EXPECT_GE(done, last);
    EXPECT_EQ(total, 8840u);
    last = done;
  });
  for (const auto& i : r.issues) ADD_FAILURE() << i.where << " [" << i.check << "] " << i.message;
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.bases, 3600u);
  EXPECT_EQ(r.prompts, 8840u);
  EXPECT_EQ(r.solved, 8840u);
  EXPECT_EQ(r.round_trips, 8840u);
  EXPECT_GT(calls, 1u);
  EXPECT_EQ(last, 8840u);
}

TEST_F(ValidateTest, SmallBenchmarkPassesEveryCheck) {
  const auto r = validate_benchmark(load_benchmark(dir_));
  for (const auto& i : r.issues) ADD_FAILURE() << i.where << " [" << i.check << "] " << i.message;
  EXPECT_EQ(r.prompts, 860u);
  EXPECT_EQ(r.solved, 860u);
}

TEST_F(ValidateTest, CatchesAMutatedNumberEvenWithAConsistentManifest) {
  // CV-0001's canonical prompt: change the first digit of its first quantity.
  const Benchmark before = load_benchmark(dir_);
  const std::string prompt = before.find_view("CV-0001:canonical")->prompt;
  const auto pos = prompt.find_first_of("123456789");
  const std::string from = prompt.substr(pos, 1);
  const std::string to = from == "9" ? "8" : std::string(1, static_cast<char>(from[0] + 1));
  mutate_prompt("CV-0001:canonical", "holds " + from, "holds " + to, /*rehash=*/true);
  const auto r = validate_benchmark(load_benchmark(dir_));
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(has_issue(r, "CV-0001:canonical", "solver"));
  EXPECT_TRUE(has_issue(r, "CV-0001:canonical", "render"));
  EXPECT_EQ(r.solved, 859u);
  EXPECT_FALSE(has_issue(r, "views.jsonl", "manifest"));
}

TEST_F(ValidateTest, CatchesAMutatedWordsNumber) {
  const Benchmark before = load_benchmark(dir_);
  const std::string prompt = before.find_view("RL-0001:words")->prompt;
  // Replace the number word with a different count spelled out.
  const auto start = prompt.find("cuts ") + 5;
  const auto end = prompt.find(" pieces");
  const std::string words = prompt.substr(start, end - start);
  mutate_prompt("RL-0001:words", "cuts " + words, words == "one hundred" ? "cuts ninety" : "cuts one hundred",
                true);
  const auto r = validate_benchmark(load_benchmark(dir_));
  EXPECT_TRUE(has_issue(r, "RL-0001:words", "solver"));
}

TEST_F(ValidateTest, CatchesAChangedFileThroughItsHash) {
  mutate_prompt("DD-0003:unit", "hiker", "walker", /*rehash=*/false);
  const auto r = validate_benchmark(load_benchmark(dir_));
  EXPECT_TRUE(has_issue(r, "views.jsonl", "manifest"));
  EXPECT_TRUE(has_issue(r, "DD-0003:unit", "render"));
  EXPECT_FALSE(has_issue(r, "DD-0003:unit", "solver"));  // the numbers still determine the label
}

TEST_F(ValidateTest, CatchesAWrongExpectedAnswer) {
  std::string views = io::read_file(dir_ / "views.jsonl");
  const auto at = views.find("\"prompt_id\":\"FC-0002:percent\"");
  const auto e = views.find("\"expected\":\"", at) + 12;
  views.insert(e, "1");
  io::write_file_atomic(dir_ / "views.jsonl", views);
  const auto r = validate_benchmark(load_benchmark(dir_));
  EXPECT_TRUE(has_issue(r, "FC-0002:percent", "view"));
  EXPECT_TRUE(has_issue(r, "FC-0002:percent", "solver"));
}

TEST_F(ValidateTest, CatchesMissingPromptsThroughCounts) {
  std::string views = io::read_file(dir_ / "views.jsonl");
  const auto at = views.find("{\"prompt_id\":\"LV-0005:scientific\"");
  views.erase(at, views.find('\n', at) + 1 - at);
  io::write_file_atomic(dir_ / "views.jsonl", views);
  const auto r = validate_benchmark(load_benchmark(dir_));
  EXPECT_TRUE(has_issue(r, "manifest.json", "counts"));
  EXPECT_TRUE(has_issue(r, "LV-0005", "base"));
}

TEST_F(ValidateTest, LoadErrorsNameFileAndLine) {
  std::string views = io::read_file(dir_ / "views.jsonl");
  const auto second = views.find('\n') + 1;
  views.insert(second, "{not json}\n");
  io::write_file_atomic(dir_ / "views.jsonl", views);
  try {
    (void)load_benchmark(dir_);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("views.jsonl:2"), std::string::npos) << e.what();
  }
  io::write_file_atomic(dir_ / "views.jsonl", views.substr(0, 40));
  EXPECT_THROW((void)load_benchmark(dir_), Error);
  fs::remove(dir_ / "manifest.json");
  try {
    (void)load_benchmark(dir_);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
  }
}

TEST_F(ValidateTest, LoadedBenchmarkIndexesEveryRecord) {
  const Benchmark b = load_benchmark(dir_);
  ASSERT_EQ(b.bases.size(), 360u);
  ASSERT_EQ(b.views.size(), 860u);
  const Base* base = b.find_base("RL-0042");
  ASSERT_NE(base, nullptr);
  EXPECT_EQ(base->template_id, "RL");
  EXPECT_EQ(base->canonical_unit, "m");
  ASSERT_EQ(base->params.size(), 2u);
  EXPECT_EQ(base->params[0].first, "n");
  EXPECT_EQ(base->params[1].first, "a");
  EXPECT_EQ(base->answer, base->params[0].second * base->params[1].second);
  const View* v = b.find_view("RL-0042:words");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->family, std::optional<std::string>("words"));
  EXPECT_EQ(v->expected, base->answer);
  EXPECT_EQ(b.find_view("RL-0042:scientific"), nullptr);
  EXPECT_EQ(b.file_sha256.at("views.jsonl"), io::sha256_hex(generated().views_jsonl));
}

// The benchmark's two indexes: every base and view found at its position (what a scan finds), a
// copy's index valid with the original gone (positions, not pointers), reindex refusing a
// repeated id by name and index_view refusing to add one.
TEST_F(ValidateTest, BenchmarkIndexesFindEveryIdAtItsPositionAndSurviveCopies) {
  auto original = std::make_unique<Benchmark>(load_benchmark(dir_));
  const Benchmark b = *original;
  original.reset();
  for (std::size_t i = 0; i < b.bases.size(); ++i) ASSERT_EQ(b.base_position(b.bases[i].base_id), i);
  for (std::size_t i = 0; i < b.views.size(); ++i) ASSERT_EQ(b.view_position(b.views[i].prompt_id), i);
  EXPECT_EQ(b.view_position("RL-0042:scientific"), std::nullopt);
  EXPECT_EQ(b.base_position("RL-0042:words"), std::nullopt);
  EXPECT_EQ(b.base_position(""), std::nullopt);

  Benchmark edited = b;
  edited.views.push_back(edited.views[7]);
  EXPECT_FALSE(edited.index_view(edited.views.size() - 1));
  try {
    edited.reindex();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "duplicate prompt_id '" + b.views[7].prompt_id + "'");
  }
  edited.views.back().prompt_id = "ZZ-1:canonical";
  edited.reindex();
  EXPECT_EQ(edited.view_position("ZZ-1:canonical"), b.views.size());
  EXPECT_EQ(edited.view_position(b.views[7].prompt_id), 7u);
}

}  // namespace
}  // namespace numcheck::orbit
