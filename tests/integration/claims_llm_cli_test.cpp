// `numcheck claims decompose` and `claims questions-quality` end to end against the test server
// (another process, canned claims mode): parse failures recorded and counted, SIGKILL mid-run then
// --resume gives the same decompositions as an uninterrupted run, the released ClaimDecomp
// questions load into the same format without a model, and questions-quality measures them.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "../support/quantemp_data.hpp"
#include "cli_support.hpp"
#include "io/files.hpp"
#include "io/json.hpp"

namespace numcheck {
namespace {

namespace fs = std::filesystem;
using testing::Child;
using testing::count_lines;
using testing::run_cli;

using testing::kServer;

fs::path write_claims(const fs::path& dir, int n) {
  const fs::path f = dir / "claims.jsonl";
  std::ofstream out(f);
  for (int i = 0; i < n; ++i) {
    const char* marker = i % 10 == 3 ? " [malformed]" : (i % 10 == 7 ? " [refuse]" : "");
    out << fmt::format("{{\"claim\": \"Claim {} says prices rose {}%{} in 2019.\"}}\n", i, i + 1, marker);
  }
  return f;
}

TEST(ClaimsLlmCli, DecomposeCountsParseFailuresAndResumesAfterAKill) {
  const fs::path dir = testing::fresh_dir("claims_decompose");
  const fs::path claims = write_claims(dir, 60);
  Child server({kServer, "--claims", "--delay-ms", "15"}, true);
  ASSERT_FALSE(server.first_line.empty());
  const auto args = [&](const fs::path& out) {
    return std::vector<std::string>{
        NUMCHECK_CLI,  "claims",     "decompose",       "--claims", claims.string(), "--method",
        "claimdecomp", "--endpoint", server.first_line, "--model",  "test-model",    "--out",
        out.string(),  "--no-cache", "--progress",      "none",     "--resume"};
  };
  auto join = [](const std::vector<std::string>& a) {
    std::string s;
    for (std::size_t i = 1; i < a.size(); ++i) s += "'" + a[i] + "' ";
    return s;
  };
  auto r = run_cli(join(args(dir / "whole")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("60 claims, 48 ok, 12 parse failures, 0 errors"), std::string::npos) << r.out;

  {
    Child run(args(dir / "cut"), false);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (count_lines(dir / "cut" / "responses.jsonl") < 10 && run.running() &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ASSERT_TRUE(run.running()) << "the run finished before it could be killed";
    run.kill9();
  }
  EXPECT_LT(count_lines(dir / "cut" / "responses.jsonl"), 60u);
  r = run_cli(join(args(dir / "cut")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(io::read_file(dir / "whole" / "decompositions.jsonl"),
            io::read_file(dir / "cut" / "decompositions.jsonl"));
  const io::Json m = io::read_json_file(dir / "cut" / "decompose.json");
  EXPECT_EQ(m["counts"]["parse_failures"], 12);
  const io::Json run = io::read_json_file(dir / "cut" / "run.json");
  EXPECT_EQ(run["binding"]["sampling"]["temperature"], 0.3);
  EXPECT_EQ(run["binding"]["sampling"]["frequency_penalty"], 0.6);
  EXPECT_EQ(run["binding"]["sampling"]["presence_penalty"], 0.8);
  EXPECT_EQ(run["sessions"].size(), 2u);

  // A sampling flag overrides the method's default and is recorded.
  r = run_cli(join(args(dir / "t0")) + "--temperature 0 --limit 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(io::read_json_file(dir / "t0" / "run.json")["binding"]["sampling"]["temperature"], 0.0);

  // A prompt file whose sampling sets top_k has it sent; --no-top-k sends none even then.
  io::Json prompt =
      io::read_json_file(fs::path(NUMCHECK_SOURCE_DIR) / "data/claims/prompts/claimdecomp.json");
  prompt["sampling"]["top_k"] = 5;
  io::write_file_atomic(dir / "topk5.json", prompt.dump());
  r = run_cli(join(args(dir / "k5")) + fmt::format("--prompt '{}' --limit 3", (dir / "topk5.json").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(io::read_json_file(dir / "k5" / "run.json")["binding"]["sampling"]["top_k"], 5);
  r = run_cli(join(args(dir / "k0")) +
              fmt::format("--prompt '{}' --limit 3 --no-top-k", (dir / "topk5.json").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const io::Json k0 = io::read_json_file(dir / "k0" / "run.json")["binding"]["sampling"];
  EXPECT_FALSE(k0.contains("top_k")) << k0.dump();
  EXPECT_EQ(k0["temperature"], 0.3) << k0.dump();

  // Questions quality of the generated set, with relevance through the server's /v1/embeddings.
  r = run_cli(fmt::format("claims questions-quality --questions '{}' --endpoint '{}' --model emb --json '{}'",
                          (dir / "whole" / "decompositions.jsonl").string(), server.first_line,
                          (dir / "q.json").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const io::Json q = io::read_json_file(dir / "q.json");
  EXPECT_EQ(q["scored"], 48);
  EXPECT_EQ(q["not_ok"], 12);
  EXPECT_GT(q["relevance_embedding_cosine"].get<double>(), 0.3);
  EXPECT_GT(q["diversity"].get<double>(), 0.0);
  fs::remove_all(dir);
}

// An evidence file (claims/evidence.hpp) of labelled claims whose markers fix the canned verdicts.
fs::path write_evidence(const fs::path& dir) {
  return testing::write_marked_evidence(dir, {{"[true]", "True"},
                                              {"[false]", "False"},
                                              {"[conflicting]", "Conflicting"},
                                              {"[true]", "True"},
                                              {"[false]", "False"},
                                              {"[malformed]", "False"},
                                              {"[refuse]", "True"},
                                              {"[false]", "False"},
                                              {"[true]", "False"},
                                              {"[conflicting]", "Conflicting"},
                                              {"[false]", "False"},
                                              {"[true]", "True"}});
}

TEST(ClaimsLlmCli, VerifyZeroAndFewShotWithUnparseableAnswersScoredWrong) {
  const fs::path dir = testing::fresh_dir("claims_verify_llm");
  const fs::path ev = write_evidence(dir);
  Child server({kServer, "--claims"}, true);
  ASSERT_FALSE(server.first_line.empty());
  const std::string common = fmt::format(
      "claims verify --method llm --evidence '{}' --endpoint '{}' --model test-model "
      "--no-cache --progress none",
      ev.string(), server.first_line);
  auto r = run_cli(common + fmt::format(" --out '{}'", (dir / "zero").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("12 claims, 10 verdicts, 2 unparseable, 0 errors"), std::string::npos) << r.out;
  r = run_cli(common + fmt::format(" --shots 3 --folds 3 --shot-selection similar --out '{}'",
                                   (dir / "few").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const io::Json m = io::read_json_file(dir / "few" / "manifest.json");
  EXPECT_EQ(m["counts"]["by_label"]["unparseable"], 2);
  EXPECT_EQ(m["counts"]["correct_of_gold"],
            9);  // val:8 ("[true]", gold False) is wrong, and the 2 unparseable
  EXPECT_EQ(m["shots"], 3);
  EXPECT_EQ(io::read_json_file(dir / "few" / "run.json")["binding"]["sampling"]["temperature"], 0.3);
  // Every shot is another claim, from another fold.
  io::for_each_line(dir / "few" / "responses.jsonl", [&](const io::Line& l) {
    const io::Json j = io::Json::parse(l.text);
    ASSERT_EQ(j["shots"].size(), 3u);
    for (const auto& s : j["shots"]) EXPECT_NE(s, j["id"]);
  });
  // predictions.jsonl keeps every claim; an unparseable answer is its own label, never dropped.
  std::size_t lines = 0, unparseable = 0;
  io::for_each_line(dir / "few" / "predictions.jsonl", [&](const io::Line& l) {
    ++lines;
    unparseable += io::Json::parse(l.text)["label"] == "unparseable" ? 1 : 0;
  });
  EXPECT_EQ(lines, 12u);
  EXPECT_EQ(unparseable, 2u);
  // Few-shot without a source of examples is a usage error.
  r = run_cli(common + fmt::format(" --shots 3 --out '{}'", (dir / "bad").string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  fs::remove_all(dir);
}

TEST(ClaimsLlmCli, UsageErrors) {
  auto r = run_cli("claims decompose --out /tmp/x --claims /nonexistent --system reference");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = run_cli("claims decompose --out /tmp/x");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = run_cli("claims questions-quality --questions /tmp/q.jsonl --endpoint http://127.0.0.1:1/v1");
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

TEST(ClaimsLlmCli, ReleasedClaimDecompQuestions) {
  const fs::path data = numcheck::testing::quantemp_dir() / "test_claimdecomp.csv";
  if (!fs::exists(data)) GTEST_SKIP() << "QuanTemp data not found at " << data;
  const fs::path dir = testing::fresh_dir("claims_released");
  auto r = run_cli(
      fmt::format("claims decompose --from-released '{}' --out '{}'", data.string(), (dir / "rel").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2495 claims, 2495 ok"), std::string::npos) << r.out;
  r = run_cli(fmt::format("claims questions-quality --questions '{}' --json '{}'",
                          (dir / "rel" / "decompositions.jsonl").string(), (dir / "q.json").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const io::Json q = io::read_json_file(dir / "q.json");
  EXPECT_EQ(q["scored"], 2495);
  // The CSV read directly gives the same figures.
  r = run_cli(fmt::format("claims questions-quality --questions '{}' --json '{}'", data.string(),
                          (dir / "q2.json").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(io::read_json_file(dir / "q2.json")["diversity"], q["diversity"]);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace numcheck
