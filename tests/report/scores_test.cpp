// Loading score files: names from --name, the sidecar or the stem; the simulated flag; every kind
// of bad record is an error naming the file and line, never a silent drop.
#include "report/scores.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "fixture.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"
#include "orbit/benchmark.hpp"

namespace numcheck::report {
namespace {

using namespace numcheck::report::testing;
using ::testing::HasSubstr;

class Scores : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_dir("scores");
    write_bench(dir_ / "bench", {{"CV-0001", "CV", "5/4", {"canonical", "fraction"}},
                                 {"CV-0002", "CV", "2", {"canonical", "paraphrase1"}}});
    bench_ = orbit::load_benchmark(dir_ / "bench");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string error_of(const std::vector<std::string>& lines) {
    std::string text;
    for (const auto& l : lines) text += l + "\n";
    io::write_file_atomic(dir_ / "bad.jsonl", text);
    try {
      (void)load_scores(dir_ / "bad.jsonl", bench_);
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  }

  std::filesystem::path dir_;
  orbit::Benchmark bench_;
};

TEST_F(Scores, NamesSimulatedFlagAndCounts) {
  const std::vector<FxScore> s = {both("CV-0001:canonical", "correct", "5/4"),
                                  both("CV-0001:fraction", "value_error", "5/2"),
                                  both("CV-0002:paraphrase1", "correct", "2")};
  write_scores(dir_ / "plain.jsonl", s);
  auto sys = load_scores(dir_ / "plain.jsonl", bench_);
  EXPECT_EQ(sys.name, "plain");
  EXPECT_FALSE(sys.simulated);
  EXPECT_EQ(sys.records, 3u);
  EXPECT_EQ(sys.ignored, 1u) << "paraphrase records are not orbit metrics";
  EXPECT_EQ(sys.missing, 1u) << "CV-0002:canonical";
  EXPECT_EQ(sys.by_view[1].layer[0].outcome, Outcome::kValueError);

  // The sidecar as `orbit score` writes it.
  write_scores(dir_ / "ref.jsonl", s,
               R"({"system": {"name": "reference <b>", "simulated": true, "source": "run.json"}})");
  sys = load_scores(dir_ / "ref.jsonl", bench_);
  EXPECT_EQ(sys.name, "reference <b>");
  EXPECT_TRUE(sys.simulated);
  sys = load_scores(dir_ / "ref.jsonl", bench_, std::string("renamed"));
  EXPECT_EQ(sys.name, "renamed");
  EXPECT_TRUE(sys.simulated) << "--name does not hide that a system is simulated";

  // A sidecar for another benchmark is refused.
  write_scores(dir_ / "other.jsonl", s,
               R"({"system": {"name": "x"}, "benchmark": {"files": {"views.jsonl": "00ff"}}})");
  try {
    (void)load_scores(dir_ / "other.jsonl", bench_);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("different views.jsonl"));
  }
}

TEST_F(Scores, ResponsesAttachFromAFile) {
  write_scores(dir_ / "s.jsonl", {both("CV-0001:canonical", "correct", "5/4")});
  io::write_file_atomic(dir_ / "responses.jsonl",
                        "{\"prompt_id\": \"CV-0001:canonical\", \"response\": \"FINAL: 1.25 L\"}\n"
                        "{\"prompt_id\": \"ZZ-0001:canonical\", \"response\": \"x\"}\n");
  const auto sys = load_scores(dir_ / "s.jsonl", bench_, std::nullopt, dir_ / "responses.jsonl");
  ASSERT_TRUE(sys.by_view[0].response.has_value());
  EXPECT_EQ(*sys.by_view[0].response, "FINAL: 1.25 L");
  EXPECT_EQ(sys.responses_attached, 1u);
}

// The responses file the sidecar names is used only when it is the file that was scored (its
// recorded sha256); hash_named_responses computes that hash ahead, and load_scores takes a hash
// given to it instead of hashing the file again.
TEST_F(Scores, SidecarResponsesAreCheckedByTheirHashComputedAheadOrNot) {
  const auto responses = dir_ / "responses.jsonl";
  io::write_file_atomic(responses,
                        "{\"prompt_id\": \"CV-0001:canonical\", \"response\": \"FINAL: 1.25 L\"}\n");
  const std::string right = io::sha256_file(responses);
  const auto sidecar = [&](const std::string& sha) {
    return fmt::format(R"({{"system": {{"name": "s"}}, "responses": {{"path": "{}", "sha256": "{}"}}}})",
                       responses.string(), sha);
  };
  write_scores(dir_ / "ok.jsonl", {both("CV-0001:canonical", "correct", "5/4")}, sidecar(right));
  write_scores(dir_ / "changed.jsonl", {both("CV-0001:canonical", "correct", "5/4")},
               sidecar(std::string(64, '0')));
  write_scores(dir_ / "none.jsonl", {both("CV-0001:canonical", "correct", "5/4")});

  const FileHashes ahead = hash_named_responses(
      {dir_ / "ok.jsonl", dir_ / "changed.jsonl", dir_ / "none.jsonl", dir_ / "missing.jsonl"});
  ASSERT_EQ(ahead.size(), 1u);
  EXPECT_EQ(ahead.at(responses), right);

  for (const FileHashes* hashes : {static_cast<const FileHashes*>(nullptr), &ahead}) {
    const auto ok = load_scores(dir_ / "ok.jsonl", bench_, std::nullopt, std::nullopt, kAllResponses, hashes);
    EXPECT_EQ(ok.responses_attached, 1u);
    ASSERT_TRUE(ok.responses_path.has_value());
    EXPECT_EQ(*ok.responses_path, responses);
    const auto changed =
        load_scores(dir_ / "changed.jsonl", bench_, std::nullopt, std::nullopt, kAllResponses, hashes);
    EXPECT_EQ(changed.responses_attached, 0u) << "not the file that was scored";
    EXPECT_FALSE(changed.responses_path.has_value());
  }
  // A hash given is the one used: the file is not hashed again.
  const FileHashes wrong = {{responses, std::string(64, 'f')}};
  EXPECT_EQ(load_scores(dir_ / "ok.jsonl", bench_, std::nullopt, std::nullopt, kAllResponses, &wrong)
                .responses_attached,
            0u);
}

// With examples_per_view the report keeps only the texts its examples show: per view the first
// k audit failures (benchmark order) with text; the texts it shows are those of the unbounded load.
TEST(ScoresExamples, BoundedTextsAreTheOnesTheExamplesShow) {
  const auto dir = fresh_dir("scores_examples");
  std::vector<FxBase> bases;
  for (int b = 1; b <= 6; ++b)
    bases.push_back({fmt::format("CV-000{}", b), "CV", "5/4", {"canonical", "fraction"}});
  write_bench(dir / "bench", bases);
  const orbit::Benchmark bench = orbit::load_benchmark(dir / "bench");
  std::vector<FxScore> s;
  std::string responses;
  for (int b = 1; b <= 6; ++b) {
    for (const char* v : {"canonical", "fraction"}) {
      const std::string pid = fmt::format("CV-000{}:{}", b, v);
      // Base 2 answers right; the others fail. CV-0001:fraction has no text in the file (null) but
      // its score record carries one; CV-0003:canonical has two records (the last one counts).
      if (b == 2) {
        s.push_back(both(pid, "correct", "5/4"));
      } else {
        s.push_back(both(pid, "value_error", "5/2"));
      }
      if (pid == "CV-0001:fraction") {
        s.back().response = "record text";
        responses.insert(0, fmt::format("{{\"prompt_id\": \"{}\", \"response\": null}}\n", pid));
        continue;
      }
      responses.insert(0, fmt::format("{{\"prompt_id\": \"{}\", \"response\": \"text of {}\"}}\n", pid, pid));
    }
  }
  responses += "{\"prompt_id\": \"CV-0003:canonical\", \"response\": \"second text\"}\n";
  write_scores(dir / "s.jsonl", s);
  io::write_file_atomic(dir / "responses.jsonl", responses);
  const auto all = load_scores(dir / "s.jsonl", bench, std::nullopt, dir / "responses.jsonl");
  for (const std::size_t k : {0u, 1u, 2u, 3u, 10u}) {
    const auto some = load_scores(dir / "s.jsonl", bench, std::nullopt, dir / "responses.jsonl", k);
    EXPECT_EQ(some.responses_attached, all.responses_attached);
    EXPECT_EQ(some.fingerprints, all.fingerprints);
    // What the report shows: per view, the first k audit failures with text.
    for (const char* v : {"canonical", "fraction"}) {
      std::vector<std::string> shown_all, shown_some;
      for (std::size_t i = 0; i < bench.views.size(); ++i) {
        if (bench.views[i].view != v) continue;
        for (auto* p : {&all, &some}) {
          const auto& sp = p->by_view[i];
          auto& shown = p == &all ? shown_all : shown_some;
          if (sp.present && sp.response && sp.layer[1].outcome != Outcome::kCorrect && shown.size() < k) {
            shown.push_back(bench.views[i].prompt_id + "=" + *sp.response);
          }
        }
      }
      EXPECT_EQ(shown_some, shown_all) << k << " " << v;
      EXPECT_EQ(shown_all.size(), std::min<std::size_t>(k, 5)) << k << " " << v;
    }
  }
  ASSERT_TRUE(all.by_view[*bench.view_position("CV-0003:canonical")].response);
  EXPECT_EQ(*all.by_view[*bench.view_position("CV-0003:canonical")].response, "second text");
  EXPECT_EQ(*all.by_view[*bench.view_position("CV-0001:fraction")].response, "record text");
  std::filesystem::remove_all(dir);
}

TEST_F(Scores, BadRecordsAreErrorsNamingTheLine) {
  const std::string ok = score_line(both("CV-0001:canonical", "correct", "5/4"));
  const std::string ok_line = ok.substr(0, ok.size() - 1);
  EXPECT_THAT(error_of({ok_line, "{not json"}), HasSubstr("bad.jsonl:2"));
  EXPECT_THAT(error_of({ok_line, ok_line}), HasSubstr("duplicate record"));
  EXPECT_THAT(error_of({score_line(both("XX-0009:canonical", "correct", "1")).substr(0, 10) + "\"}"}),
              HasSubstr("bad.jsonl:1"));
  auto unknown = score_line(both("XX-0009:canonical", "correct", "1"));
  unknown.pop_back();
  EXPECT_THAT(error_of({unknown}), HasSubstr("not in the benchmark"));
  auto wrong = score_line(both("CV-0001:canonical", "correct", "5/2"));
  wrong.pop_back();
  EXPECT_THAT(error_of({wrong}), HasSubstr("differs from the benchmark's expected 5/4"));
  auto not_wrong = score_line(both("CV-0001:canonical", "value_error", "10/8"));
  not_wrong.pop_back();
  EXPECT_THAT(error_of({not_wrong}), HasSubstr("equals the expected answer"));
  auto bad_outcome = score_line(both("CV-0001:canonical", "sort_of_right", "5/4"));
  bad_outcome.pop_back();
  EXPECT_THAT(error_of({bad_outcome}), HasSubstr("is not one of"));
  auto bad_value = score_line(both("CV-0001:canonical", "value_error", "1.5"));
  bad_value.pop_back();
  EXPECT_THAT(error_of({bad_value}), HasSubstr("not an exact 'p/q'"));
  auto zero_den = score_line(both("CV-0001:canonical", "value_error", "1/0"));
  zero_den.pop_back();
  EXPECT_THAT(error_of({zero_den}), HasSubstr("not an exact 'p/q'"));
  EXPECT_THAT(
      error_of(
          {R"({"prompt_id": "CV-0001:canonical", "view": "fraction", "strict": {"outcome": "correct", "value": "5/4"}, "audit": {"outcome": "correct", "value": "5/4"}})"}),
      HasSubstr("view 'fraction' does not match"));
  EXPECT_THAT(
      error_of({R"({"prompt_id": "CV-0001:canonical", "strict": {"outcome": "correct", "value": "5/4"}})"}),
      HasSubstr("missing object 'audit'"));
  EXPECT_THAT(error_of({R"([1, 2])"}), HasSubstr("bad.jsonl:1: not a JSON object"));
  EXPECT_THAT(
      error_of(
          {R"({"prompt_id": "CV-0001:canonical", "completion_tokens": -3, "strict": {"outcome": "correct", "value": "5/4"}, "audit": {"outcome": "correct", "value": "5/4"}})"}),
      HasSubstr("completion_tokens"));
  // Blank lines are skipped (io's JSONL rule), never records.
  EXPECT_EQ(error_of({ok_line, "", "  "}), "(no error)");
  // A torn last line (no newline) is an error, not a silent drop.
  io::write_file_atomic(dir_ / "torn.jsonl", ok + ok_line.substr(0, 20));
  try {
    (void)load_scores(dir_ / "torn.jsonl", bench_);
    ADD_FAILURE() << "a torn last line was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("torn.jsonl:2: last line is not terminated"));
  }
  EXPECT_THROW((void)load_scores(dir_ / "absent.jsonl", bench_), Error);
}

}  // namespace
}  // namespace numcheck::report
