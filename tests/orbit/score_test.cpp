// Scoring a responses file: every record graded once, every problem reported with its line, the
// records in benchmark order, and the sidecar manifest (docs/grading.md, "orbit score").
#include "orbit/score.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/prng.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "io/sha256.hpp"
#include "orbit/generate.hpp"

namespace numcheck::orbit {
namespace {

namespace fs = std::filesystem;

// A four-prompt benchmark written by hand (two bases), with a manifest that records the hashes.
class ScoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("numcheck_score_{}_{}", ::getpid(), ::testing::UnitTest::GetInstance()->random_seed());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "bench");
    fs::create_directories(dir_ / "run");
    write_bench();
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write_bench(const std::string& unit = "L") {
    const std::string bases =
        R"({"base_id":"CV-0001","template":"CV","dimension":"volume","canonical_unit":")" + unit +
        R"(","params":{"a":"3/2","b":"5/4"},"answer":"11/4","views":["canonical","fraction","unit"]})"
        "\n"
        R"({"base_id":"LV-0001","template":"LV","dimension":"volume","canonical_unit":"L","params":{"a":"14000","b":"940"},"answer":"14940","views":["canonical","scientific"]})"
        "\n";
    const std::string views =
        R"({"prompt_id":"CV-0001:canonical","base_id":"CV-0001","template":"CV","view":"canonical","family":null,"prompt":"p","expected":"11/4","answer_unit":")" +
        unit +
        R"("})"
        "\n"
        R"({"prompt_id":"CV-0001:unit","base_id":"CV-0001","template":"CV","view":"unit","family":"unit","prompt":"p","expected":"11/4","answer_unit":")" +
        unit +
        R"("})"
        "\n"
        R"({"prompt_id":"LV-0001:canonical","base_id":"LV-0001","template":"LV","view":"canonical","family":null,"prompt":"p","expected":"14940","answer_unit":"L"})"
        "\n"
        R"({"prompt_id":"LV-0001:scientific","base_id":"LV-0001","template":"LV","view":"scientific","family":"scientific","prompt":"p","expected":"14940","answer_unit":"L"})"
        "\n";
    io::write_file_atomic(dir_ / "bench" / "bases.jsonl", bases);
    io::write_file_atomic(dir_ / "bench" / "views.jsonl", views);
    io::OrderedJson m;
    m["format"] = "numcheck-orbit-benchmark";
    m["generator_version"] = "test";
    m["seed"] = 1;
    m["files"] = {{"bases.jsonl", {{"sha256", io::sha256_hex(bases)}}},
                  {"views.jsonl", {{"sha256", io::sha256_hex(views)}}}};
    io::write_file_atomic(dir_ / "bench" / "manifest.json", io::to_pretty(m));
  }

  fs::path responses(const std::string& text) {
    const fs::path p = dir_ / "run" / "responses.jsonl";
    io::write_file_atomic(p, text);
    return p;
  }

  fs::path dir_;
};

constexpr const char* kAllFour =
    R"({"prompt_id":"LV-0001:scientific","response":"FINAL: 1.494 x 10^4 L","finish_reason":"stop","usage":{"completion_tokens":31}})"
    "\n"
    R"({"prompt_id":"CV-0001:canonical","response":"FINAL: 2.75 L","finish_reason":"stop","completion_tokens":12})"
    "\n"
    R"({"prompt_id":"CV-0001:unit","response":"FINAL: 275 L","finish_reason":"stop"})"
    "\n"
    R"({"prompt_id":"LV-0001:canonical","response":"FINAL: 14940 L","finish_reason":"length","usage":{"completion_tokens":null},"completion_tokens":7})"
    "\n";

TEST_F(ScoreTest, GradesEveryRecordInBenchmarkOrder) {
  const Benchmark b = load_benchmark(dir_ / "bench");
  const Scores s = score_responses(b, responses(kAllFour));
  EXPECT_TRUE(s.issues.empty());
  ASSERT_EQ(s.records.size(), 4u);
  EXPECT_EQ(s.lines, 4u);
  std::vector<std::string> ids;
  for (const auto& r : s.records) ids.push_back(b.views[r.view_index].prompt_id);
  EXPECT_EQ(ids, (std::vector<std::string>{"CV-0001:canonical", "CV-0001:unit", "LV-0001:canonical",
                                           "LV-0001:scientific"}));

  const io::OrderedJson r0 = score_record(b, s.records[0]);
  EXPECT_EQ(
      io::to_line(r0),
      R"({"prompt_id":"CV-0001:canonical","base_id":"CV-0001","view":"canonical","family":null,)"
      R"("template":"CV","expected":"11/4","answer_unit":"L","finish_reason":"stop","completion_tokens":12,)"
      R"("line":2,"strict":{"outcome":"correct","value":"11/4","multiple_final":false},)"
      R"("audit":{"outcome":"correct","value":"11/4","recovered":false,"rules":[],"magnitude_k":null}})");
  const io::OrderedJson r1 = score_record(b, s.records[1]);
  EXPECT_EQ(r1["family"], "unit");
  EXPECT_FALSE(r1.contains("completion_tokens"));  // none in the record
  EXPECT_EQ(r1["audit"]["magnitude_k"], -2);
  const io::OrderedJson r2 = score_record(b, s.records[2]);
  EXPECT_EQ(r2["strict"]["outcome"], "truncation_error");
  EXPECT_EQ(r2["finish_reason"], "length");
  EXPECT_EQ(r2["completion_tokens"], 7);  // usage.completion_tokens is null: the top-level count
  const io::OrderedJson r3 = score_record(b, s.records[3]);
  EXPECT_EQ(r3["strict"]["outcome"], "parse_error");
  EXPECT_EQ(r3["audit"]["outcome"], "correct");
  EXPECT_EQ(r3["audit"]["recovered"], true);
  EXPECT_EQ(r3["completion_tokens"], 31);
  EXPECT_NO_THROW(check_complete(s, dir_ / "run" / "responses.jsonl"));
}

// Score lines are written without a DOM (append_score_line); the bytes are the DOM's, for every
// outcome, audit rules, magnitude drops, absent and present token counts and strings that need
// escaping or are non-ASCII.
TEST_F(ScoreTest, DirectScoreLinesEqualTheDomLines) {
  const Benchmark b = load_benchmark(dir_ / "bench");
  const BenchmarkIndex index = BenchmarkIndex::of(b);
  std::string tricky = kAllFour;
  const std::string unit_line =
      R"({"prompt_id":"CV-0001:unit","response":"FINAL: 275 L","finish_reason":"stop"})";
  tricky.replace(
      tricky.find(unit_line), unit_line.size(),
      R"({"prompt_id":"CV-0001:unit","response":"**FINAL:** `2750 mL`.","finish_reason":"st\"op\n\u00e9\u0001 \u00d7","completion_tokens":9223372036854775807})");
  std::size_t with_rules = 0;
  for (const std::string& text : {std::string(kAllFour), tricky}) {
    const Scores s = score_responses(b, responses(text));
    ASSERT_EQ(s.records.size(), 4u);
    for (const auto& p : s.records) {
      std::string line;
      append_score_line(line, index, p);
      EXPECT_EQ(line, io::to_line(score_record(b, p)) + "\n");
      with_rules += p.grade.audit.rules.empty() ? 0 : 1;
    }
  }
  EXPECT_GT(with_rules, 0u);
}

TEST_F(ScoreTest, EveryProblemIsReportedWithItsLine) {
  const Benchmark b = load_benchmark(dir_ / "bench");
  const std::string text =
      R"({"prompt_id":"CV-0001:canonical","response":"FINAL: 2.75 L","finish_reason":"stop"})"
      "\n"           // 1 ok
      "{not json\n"  // 2 malformed
      "\n"           // 3 blank
      R"({"prompt_id":"XX-0001:canonical","response":"FINAL: 1 L","finish_reason":"stop"})"
      "\n"  // 4 unknown
      R"({"prompt_id":"CV-0001:canonical","response":"FINAL: 3 L","finish_reason":"stop"})"
      "\n"       // 5 duplicate
      "[1,2]\n"  // 6 not an object
      R"({"response":"FINAL: 1 L","finish_reason":"stop"})"
      "\n"  // 7 no prompt_id
      R"({"prompt_id":"CV-0001:unit","response":5,"finish_reason":"stop"})"
      "\n"  // 8 bad response
      R"({"prompt_id":"CV-0001:unit","response":"x"})"
      "\n"  // 9 no finish_reason
      R"({"prompt_id":"CV-0001:unit","response":"x","finish_reason":"stop","usage":{"completion_tokens":-1}})"
      "\n"                                                                         // 10 bad tokens
      R"({"prompt_id":"LV-0001:canonical","response":null,"finish_reason":null})"  // 11 ok
      "\n"
      R"({"prompt_id":"LV-0001:scientific","resp)";  // 12 torn last line
  const fs::path p = responses(text);
  const Scores s = score_responses(b, p);
  ASSERT_EQ(s.issues.size(), 11u);
  const auto expect_issue = [&](std::size_t i, ScoreIssueKind kind, std::size_t line,
                                std::string_view needle) {
    SCOPED_TRACE(i);
    EXPECT_EQ(issue_kind_name(s.issues[i].kind), issue_kind_name(kind));
    EXPECT_EQ(s.issues[i].line, line);
    EXPECT_NE(s.issues[i].message.find(needle), std::string::npos) << s.issues[i].message;
  };
  expect_issue(0, ScoreIssueKind::kMalformed, 2, "not valid JSON");
  expect_issue(1, ScoreIssueKind::kUnknownPrompt, 4, "'XX-0001:canonical' is not in the benchmark");
  expect_issue(2, ScoreIssueKind::kDuplicate, 5, "first record at line 1");
  expect_issue(3, ScoreIssueKind::kMalformed, 6, "not a JSON object");
  expect_issue(4, ScoreIssueKind::kMalformed, 7, "missing field 'prompt_id'");
  expect_issue(5, ScoreIssueKind::kMalformed, 8, "'response' must be a string or null");
  expect_issue(6, ScoreIssueKind::kMalformed, 9, "missing field 'finish_reason'");
  expect_issue(7, ScoreIssueKind::kMalformed, 10, "'usage.completion_tokens' must be a non-negative integer");
  expect_issue(8, ScoreIssueKind::kMalformed, 12, "not terminated");
  expect_issue(9, ScoreIssueKind::kMissing, 0, "'CV-0001:unit' has no response record");
  EXPECT_EQ(s.issues[9].prompt_id, "CV-0001:unit");  // its records were all malformed
  expect_issue(10, ScoreIssueKind::kMissing, 0, "'LV-0001:scientific' has no response record");  // torn line
  EXPECT_EQ(s.blank_lines, 1u);
  EXPECT_EQ(s.lines, 12u);
  EXPECT_EQ(format_issue(s.issues[2], p),
            p.string() + ":5: duplicate prompt_id 'CV-0001:canonical' (first record at line 1)");
  EXPECT_EQ(format_issue(s.issues[9], p), p.string() + ": prompt 'CV-0001:unit' has no response record");

  // The first record of a duplicated prompt is the one scored; a null response is an empty one and
  // a null finish reason is not "stop".
  ASSERT_EQ(s.records.size(), 2u);
  EXPECT_EQ(s.records[0].line, 1u);
  EXPECT_EQ(s.records[0].grade.strict.outcome, grade::Outcome::kCorrect);
  EXPECT_EQ(s.records[1].line, 11u);
  EXPECT_EQ(s.records[1].grade.strict.outcome, grade::Outcome::kTruncationError);

  try {
    check_complete(s, p);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidInput);
    const std::string m = e.what();
    EXPECT_NE(m.find("7 malformed, 1 unknown prompt_id, 1 duplicate, 2 missing"), std::string::npos) << m;
    EXPECT_NE(m.find(":2: not valid JSON"), std::string::npos) << m;
  }
}

TEST_F(ScoreTest, OnlyMissingPromptsIsIncomplete) {
  const Benchmark b = load_benchmark(dir_ / "bench");
  const fs::path p =
      responses(R"({"prompt_id":"CV-0001:canonical","response":"FINAL: 2.75 L","finish_reason":"stop"})"
                "\n");
  const Scores s = score_responses(b, p);
  EXPECT_EQ(s.count(ScoreIssueKind::kMissing), 3u);
  EXPECT_EQ(s.records.size(), 1u);
  try {
    check_complete(s, p);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIncomplete);
    EXPECT_EQ(e.exit_code(), 3);
    EXPECT_NE(std::string(e.what()).find("3 of the benchmark's prompts have no response record"),
              std::string::npos);
  }
}

TEST_F(ScoreTest, WritesScoresAndManifest) {
  const Benchmark b = load_benchmark(dir_ / "bench");
  const fs::path p = responses(kAllFour);
  io::write_file_atomic(dir_ / "run" / "run.json", R"({"model":"qwen-test","simulated":true,"other":1})");
  const Scores s = score_responses(b, p);
  const fs::path out = dir_ / "scores.jsonl";
  write_scores(b, s, p, out, false);
  const std::string body = io::read_file(out);
  std::size_t lines = 0;
  io::for_each_line(out, [&](const io::Line& l) {
    ++lines;
    const io::Json j = io::parse_json(l.text, "scores");
    EXPECT_TRUE(j.contains("strict") && j.contains("audit") && j.contains("prompt_id"));
  });
  EXPECT_EQ(lines, 4u);
  const io::Json m = io::read_json_file(score_manifest_path(out));
  EXPECT_EQ(score_manifest_path(out).filename(), "scores.jsonl.manifest.json");
  EXPECT_EQ(m["system"]["name"], "qwen-test");
  EXPECT_EQ(m["system"]["simulated"], true);
  EXPECT_EQ(m["system"]["source"], "run.json");
  EXPECT_EQ(m["responses"]["sha256"], io::sha256_file(p));
  EXPECT_EQ(m["scores"]["sha256"], io::sha256_hex(body));
  EXPECT_EQ(m["scores"]["records"], 4);
  EXPECT_EQ(m["benchmark"]["files"]["views.jsonl"], io::sha256_file(dir_ / "bench" / "views.jsonl"));
  EXPECT_EQ(m["benchmark"]["manifest_sha256"], io::sha256_file(dir_ / "bench" / "manifest.json"));
  EXPECT_EQ(m["benchmark"]["generator_version"], "test");
  EXPECT_FALSE(m["numcheck_version"].get<std::string>().empty());
  EXPECT_EQ(m["counts"]["strict"]["correct"], 1);
  EXPECT_EQ(m["counts"]["strict"]["truncation_error"], 1);
  EXPECT_EQ(m["counts"]["strict"]["value_error"], 1);
  EXPECT_EQ(m["counts"]["strict"]["parse_error"], 1);
  EXPECT_EQ(m["counts"]["audit"]["correct"], 2);
  EXPECT_EQ(m["counts"]["recovered"], 1);
  EXPECT_EQ(m["counts"]["magnitude_drops"]["-2"], 1);
  EXPECT_EQ(m["partial"], false);
  EXPECT_TRUE(m["issues"]["missing"].empty());
}

TEST_F(ScoreTest, SystemNameFallsBackToTheFileStem) {
  const fs::path p = dir_ / "run" / "mistral-small.jsonl";
  io::write_file_atomic(p, "");
  const SystemInfo info = read_system_info(p);
  EXPECT_EQ(info.name, "mistral-small");
  EXPECT_FALSE(info.simulated);
  EXPECT_EQ(info.source, "file_name");
  io::write_file_atomic(dir_ / "run" / "run.json", R"({"model": 3})");
  EXPECT_THROW((void)read_system_info(p), Error);
  io::write_file_atomic(dir_ / "run" / "run.json", R"({"simulated": "yes"})");
  EXPECT_THROW((void)read_system_info(p), Error);
  io::write_file_atomic(dir_ / "run" / "run.json", R"({"simulated": false})");
  EXPECT_EQ(read_system_info(p).name, "mistral-small");
}

TEST_F(ScoreTest, PartialScoresListEveryProblemInTheManifest) {
  const Benchmark b = load_benchmark(dir_ / "bench");
  const fs::path p =
      responses(R"({"prompt_id":"CV-0001:canonical","response":"FINAL: 2.75 L","finish_reason":"stop"})"
                "\n{oops\n");
  const Scores s = score_responses(b, p);
  const fs::path out = dir_ / "partial.jsonl";
  write_scores(b, s, p, out, true);
  const io::Json m = io::read_json_file(score_manifest_path(out));
  EXPECT_EQ(m["partial"], true);
  EXPECT_EQ(m["allow_partial"], true);
  EXPECT_EQ(m["system"]["name"], "responses");
  EXPECT_EQ(m["issues"]["malformed"].size(), 1u);
  EXPECT_EQ(m["issues"]["malformed"][0]["line"], 2);
  EXPECT_EQ(m["issues"]["missing"], (io::Json{"CV-0001:unit", "LV-0001:canonical", "LV-0001:scientific"}));
  EXPECT_EQ(m["counts"]["records"], 1);
}

// The streaming scorer `orbit score` uses writes, byte for byte, the scores file and manifest of
// score_responses + write_scores: here with every kind of issue (a malformed line, an unknown
// prompt, a duplicate, a missing prompt), a blank line and --allow-partial, records out of
// benchmark order. Its spool file leaves nothing next to the output.
TEST_F(ScoreTest, StreamingScorerWritesTheSameBytesAsTheInMemoryOne) {
  const Benchmark b = load_benchmark(dir_ / "bench");
  const fs::path p = responses(
      R"({"prompt_id":"LV-0001:scientific","response":"FINAL: 1.494 x 10^4 L","finish_reason":"stop","usage":{"completion_tokens":31}})"
      "\n{oops\n\n"
      R"({"prompt_id":"CV-0001:canonical","response":"FINAL: 2.75 L","finish_reason":"stop","completion_tokens":12})"
      "\n"
      R"({"prompt_id":"XX-0009:canonical","response":"FINAL: 1 L","finish_reason":"stop"})"
      "\n"
      R"({"prompt_id":"CV-0001:unit","response":"FINAL: 275 L","finish_reason":"length"})"
      "\n"
      R"({"prompt_id":"CV-0001:canonical","response":"FINAL: 3 L","finish_reason":"stop"})"
      "\n");
  const Scores s = score_responses(b, p);
  ASSERT_EQ(s.records.size(), 3u);
  ASSERT_EQ(s.issues.size(), 4u);
  write_scores(b, s, p, dir_ / "mem" / "scores.jsonl", true);

  std::size_t reviewed = 0;
  const ScoreTally t = score_to_file(b, p, dir_ / "stream" / "scores.jsonl", true, [&](ScoreTally& x) {
    ++reviewed;
    EXPECT_EQ(x.issues.size(), 4u);
  });
  EXPECT_EQ(reviewed, 1u);
  EXPECT_EQ(t.counts.records, 3u);
  EXPECT_EQ(t.lines, s.lines);
  EXPECT_EQ(t.counts.strict, s.counts.strict);
  EXPECT_EQ(t.counts.audit, s.counts.audit);
  // The manifests name their own scores path: the stream's must equal the in-memory one written
  // to the same path.
  const std::string stream_body = io::read_file(dir_ / "stream" / "scores.jsonl");
  const std::string stream_manifest = io::read_file(score_manifest_path(dir_ / "stream" / "scores.jsonl"));
  EXPECT_EQ(stream_body, io::read_file(dir_ / "mem" / "scores.jsonl"));
  write_scores(b, s, p, dir_ / "stream" / "scores.jsonl", true);
  EXPECT_EQ(io::read_file(dir_ / "stream" / "scores.jsonl"), stream_body);
  EXPECT_EQ(io::read_file(score_manifest_path(dir_ / "stream" / "scores.jsonl")), stream_manifest);
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "stream")) {
    ++files;
    EXPECT_EQ(e.path().string().find(".spool."), std::string::npos) << e.path();
  }
  EXPECT_EQ(files, 2u);
}

// Records are graded on several threads, block by block (about 1 MiB of the file each); what is
// written does not depend on the number of threads: a file of several blocks with the first record
// of a prompt far down, duplicates in other blocks, malformed, unknown and blank lines scores to
// the same bytes (scores and manifest) and the same issues, in file order, for 1 to 5 threads.
TEST_F(ScoreTest, AnyNumberOfThreadsWritesTheSameBytes) {
  const BenchmarkIndex b = BenchmarkIndex::of(load_benchmark(dir_ / "bench"));
  const std::vector<std::string> kinds = {
      R"({"prompt_id":"LV-0001:scientific","response":"FINAL: 1.494 x 10^4 L","finish_reason":"stop","usage":{"completion_tokens":31}})",
      R"({"prompt_id":"CV-0001:canonical","response":"FINAL: 2.75 L","finish_reason":"stop","completion_tokens":12})",
      R"({"prompt_id":"LV-0001:canonical","response":"FINAL: 14940 L","finish_reason":"length"})",
      R"({"prompt_id":"XX-0009:canonical","response":"FINAL: 1 L","finish_reason":"stop"})",
      "{oops",
      "",
      R"({"prompt_id":"CV-0001:canonical","response":null})",
  };
  std::string text;
  for (int i = 0; i < 40000; ++i) {
    if (i == 31000)
      text += R"({"prompt_id":"CV-0001:unit","response":"FINAL: 2750 mL","finish_reason":"stop"})"
              "\n";
    text += kinds[(static_cast<std::size_t>(i) * 7919U) % kinds.size()] + "\n";
  }
  const fs::path p = responses(text);
  ASSERT_GT(text.size(), std::size_t{2} << 20);  // blocks of 256 KiB: about ten
  std::string body, manifest;
  std::vector<std::string> issues;
  for (const std::size_t threads : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{5}}) {
    const fs::path out = dir_ / fmt::format("t{}", threads) / "scores.jsonl";
    std::vector<std::string> seen;
    const ScoreTally t = score_to_file(
        b, p, out, true,
        [&](ScoreTally& x) {
          for (const auto& i : x.issues) seen.push_back(format_issue(i, p));
        },
        num::UnitRegistry::builtin(), threads);
    EXPECT_EQ(t.counts.records, 4u);
    EXPECT_EQ(t.lines, 40001u);
    EXPECT_EQ(t.responses_sha256, io::sha256_hex(text));
    std::string m = io::read_file(score_manifest_path(out));
    const auto at = m.find(out.string());
    ASSERT_NE(at, std::string::npos);
    m.erase(at, out.string().size());  // the manifest names its own path
    if (threads == 1) {
      body = io::read_file(out);
      manifest = m;
      issues = seen;
      EXPECT_GT(issues.size(), 30000u);
      EXPECT_NE(body.find(R"("line":31001)"), std::string::npos);
      continue;
    }
    EXPECT_EQ(io::read_file(out), body) << threads;
    EXPECT_EQ(m, manifest) << threads;
    EXPECT_EQ(seen, issues) << threads;
  }
  // The in-memory scorer on any number of threads: the same records and issues.
  const Scores one = score_responses(b, p, num::UnitRegistry::builtin(), 1);
  const Scores three = score_responses(b, p, num::UnitRegistry::builtin(), 3);
  ASSERT_EQ(one.records.size(), three.records.size());
  for (std::size_t i = 0; i < one.records.size(); ++i) {
    EXPECT_EQ(one.records[i].line, three.records[i].line);
    EXPECT_EQ(one.records[i].view_index, three.records[i].view_index);
  }
  ASSERT_EQ(one.issues.size(), three.issues.size());
  for (std::size_t i = 0; i < one.issues.size(); ++i) {
    EXPECT_EQ(format_issue(one.issues[i], p), format_issue(three.issues[i], p));
  }
}

// While records come in benchmark order (give or take the reorder window) their score lines go
// straight to the output; the first one that belongs before a line already written moves them
// (here about 3 MB, several chunks) into the spool. Whatever the window, the bytes are the
// in-memory scorer's: a file wholly in order, one whose first prompt comes last (spooled unless
// the window holds the whole file), one whose order breaks in the middle (spooled only without a
// window), one shuffled within runs of 300 prompts, as a run with many requests in flight writes.
TEST_F(ScoreTest, InOrderAndLateOutOfOrderRecordsWriteTheSameBytes) {
  write_benchmark(dir_ / "big", generate(default_spec()));
  const Benchmark b = load_benchmark(dir_ / "big");
  const BenchmarkIndex x = BenchmarkIndex::of(b);
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < x.size(); ++i) {
    lines.push_back(
        fmt::format(R"({{"prompt_id":"{}","response":"Work.\nFINAL: {} {}","finish_reason":"stop"}})",
                    x.prompt_id(i), x.expected(i), x.answer_unit(i)));
  }
  std::vector<std::vector<std::string>> orders(4, lines);
  std::rotate(orders[1].begin(), orders[1].begin() + 1, orders[1].end());
  std::swap(orders[2][4000], orders[2][4001]);
  Rng rng(5);
  for (std::size_t at = 0; at < orders[3].size(); at += 300) {
    std::vector<std::string> run(
        orders[3].begin() + static_cast<std::ptrdiff_t>(at),
        orders[3].begin() + static_cast<std::ptrdiff_t>(std::min(at + 300, orders[3].size())));
    rng.shuffle(run);
    std::copy(run.begin(), run.end(), orders[3].begin() + static_cast<std::ptrdiff_t>(at));
  }
  const fs::path out = dir_ / "mem" / "scores.jsonl";
  for (std::size_t k = 0; k < orders.size(); ++k) {
    std::string text;
    for (const auto& l : orders[k]) text += l + "\n";
    const fs::path p = responses(text);
    const Scores s = score_responses(x, p);
    ASSERT_EQ(s.records.size(), x.size());
    write_scores(x, s, p, out, false);
    const std::string want = io::read_file(out);
    const std::string want_manifest = io::read_file(score_manifest_path(out));
    ASSERT_GT(want.size(), std::size_t{2} << 20);  // more than two chunks moved
    for (const std::size_t window : {std::size_t{0}, std::size_t{64} << 10, kScoreReorderWindow}) {
      fs::remove(out);
      (void)score_to_file(
          x, p, out, false, [&](ScoreTally& t) { check_complete(t, p); }, num::UnitRegistry::builtin(), 0,
          window);
      EXPECT_EQ(io::read_file(out), want) << k << " window " << window;
      EXPECT_EQ(io::read_file(score_manifest_path(out)), want_manifest) << k << " window " << window;
    }
  }
}

// A refused run (review throws, as check_complete does without --allow-partial) writes nothing:
// no scores, no manifest, no spool, not even the output folder it had to create.
TEST_F(ScoreTest, ARefusedStreamingRunWritesNothing) {
  const Benchmark b = load_benchmark(dir_ / "bench");
  const fs::path p = responses("{oops\n");
  const fs::path out = dir_ / "new" / "deeper" / "scores.jsonl";
  try {
    (void)score_to_file(b, p, out, false, [&](ScoreTally& t) { check_complete(t, p); });
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidInput);
  }
  EXPECT_FALSE(fs::exists(dir_ / "new"));
  // Into an existing folder: nothing is left there either.
  try {
    (void)score_to_file(b, p, dir_ / "run" / "scores.jsonl", false,
                        [&](ScoreTally& t) { check_complete(t, p); });
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidInput);
  }
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "run"))
    files += e.path().filename() == "responses.jsonl" ? 0 : 1;
  EXPECT_EQ(files, 0u);
}

TEST_F(ScoreTest, RefusesAChangedBenchmarkAndUnknownUnits) {
  {
    std::string views = io::read_file(dir_ / "bench" / "views.jsonl");
    views.replace(views.find("\"11/4\""), 6, "\"11/5\"");
    io::write_file_atomic(dir_ / "bench" / "views.jsonl", views);
    const Benchmark b = load_benchmark(dir_ / "bench");
    try {
      (void)score_responses(b, responses(kAllFour));
      FAIL() << "expected an Error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("does not match the manifest"), std::string::npos) << e.what();
    }
  }
  write_bench("zorkmid");
  const Benchmark b = load_benchmark(dir_ / "bench");
  try {
    (void)score_responses(b, responses(kAllFour));
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unit 'zorkmid'"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)score_responses(load_benchmark(dir_ / "bench"), dir_ / "nope.jsonl"), Error);
}

}  // namespace
}  // namespace numcheck::orbit
