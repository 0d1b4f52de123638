// `claims evidence` -> `claims train` -> `claims verify --method trained` -> `claims evaluate`
// through the real CLI on a small mapping file.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "temp_dir.hpp"

namespace numcheck::testing {
namespace {

const std::string kMap = std::string(NUMCHECK_SOURCE_DIR) + "/tests/verify/fixtures/mapping_small.json";

TEST(ClaimsVerifyCli, EvidenceTrainVerifyEvaluate) {
  const auto dir = fresh_dir("claims_verify");
  const std::string ev = (dir / "ev.jsonl").string();
  auto r = run_cli("claims evidence --from '" + kMap + "' --out '" + ev + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("30 claims (30 val-top3), 30 labelled, 60 evidence documents"), std::string::npos)
      << r.out;
  ASSERT_TRUE(std::filesystem::exists(ev + ".manifest.json"));

  const std::string m1 = (dir / "m1.json").string(), m2 = (dir / "m2.json").string();
  r = run_cli("claims train --evidence '" + ev + "' --out '" + m1 + "' --threads 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli("claims train --evidence '" + ev + "' --out '" + m2 + "' --threads 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(slurp(m1), slurp(m2));  // deterministic, whatever the thread count
  const auto model = nlohmann::json::parse(slurp(m1));
  EXPECT_EQ(model["format"], "numcheck-verifier-model");
  EXPECT_EQ(model["settings"]["numbers"], "canonical");
  EXPECT_EQ(model["training"]["records"], 30);

  const std::string m3 = (dir / "m3.json").string();
  r = run_cli("claims train --evidence '" + ev + "' --out '" + m3 + "' --numbers surface");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(m3))["settings"]["numbers"], "surface");

  const std::string out = (dir / "v").string();
  r = run_cli("claims verify --method trained --model '" + m1 + "' --evidence '" + ev + "' --out '" + out +
              "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("30 claims verified"), std::string::npos) << r.out;
  const auto scores = slurp(dir / "v" / "scores.jsonl");
  const auto first = nlohmann::json::parse(scores.substr(0, scores.find('\n')));
  EXPECT_TRUE(first["scores"].contains("Conflicting"));
  r = run_cli("claims evaluate --gold '" + kMap + "' --pred '" + out + "/predictions.jsonl' --draws 10");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| predictions | 30 |"), std::string::npos) << r.out;

  r = run_cli("claims verify --method trained --evidence '" + ev + "' --out '" + out + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;  // --model missing
  r = run_cli("claims verify --method nope --evidence '" + ev + "' --out '" + out + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  std::ofstream(dir / "bad.jsonl")
      << "{\"id\":\"a\",\"claim\":\"c\",\"evidence\":[{\"doc_id\":1}],\"selection\":\"gold\"}\n";
  r = run_cli("claims verify --method trained --model '" + m1 + "' --evidence '" +
              (dir / "bad.jsonl").string() + "' --out '" + out + "'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("bad.jsonl:1: field 'evidence[0].doc_id'"), std::string::npos) << r.err;
  std::filesystem::remove_all(dir);
}

// A claim id on two lines of an evidence file: train, verify and cv refuse it, naming the id and
// both lines, before any work.
TEST(ClaimsVerifyCli, RepeatedClaimIdIsRefusedByTrainVerifyAndCv) {
  const auto dir = fresh_dir("claims_verify_dup");
  const std::string ev = (dir / "ev.jsonl").string();
  auto r = run_cli("claims evidence --from '" + kMap + "' --out '" + ev + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string m = (dir / "m.json").string();
  r = run_cli("claims train --evidence '" + ev + "' --out '" + m + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = slurp(ev);
  const std::string first = text.substr(0, text.find('\n') + 1);
  const std::string id = nlohmann::json::parse(first)["id"];
  const std::string dup = (dir / "dup.jsonl").string();
  std::ofstream(dup, std::ios::binary) << text << first;  // 30 records, then the first one again
  const std::string want = fmt::format("claim id '{}' appears twice (lines 1 and 31)", id);
  for (const std::string& cmd :
       {"claims train --evidence '" + dup + "' --out '" + (dir / "m2.json").string() + "'",
        "claims verify --method trained --model '" + m + "' --evidence '" + dup + "' --out '" +
            (dir / "v").string() + "'",
        "claims cv --evidence '" + dup + "' --folds 2 --seeds 1 --draws 0 --no-ablation"}) {
    r = run_cli(cmd);
    EXPECT_EQ(r.exit_code, 1) << cmd << "\n" << r.err;
    EXPECT_NE(r.err.find(want), std::string::npos) << cmd << "\n" << r.err;
    EXPECT_NE(r.err.find("dup.jsonl"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "m2.json"));
  EXPECT_FALSE(std::filesystem::exists(dir / "v" / "predictions.jsonl"));
  std::filesystem::remove_all(dir);
}

// XGBoost is loaded with dlopen on first use (src/verify/boost.cpp): a linear model (the default
// learner) must not load it, even to name its version in the model file, or a machine without
// libxgboost could not train one. The dynamic loader's LD_DEBUG=files trace (on stderr) names
// every library a process opens; the stacked learner is the control that the trace works.
TEST(ClaimsVerifyCli, OnlyTreeLearnersLoadXgboost) {
  const auto dir = fresh_dir("claims_verify_dlopen");
  const ScopedTempDir cleanup(dir);
  const std::string ev = (dir / "ev.jsonl").string();
  auto r = run_cli("claims evidence --from '" + kMap + "' --out '" + ev + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ::setenv("LD_DEBUG", "files", 1);
  const auto linear =
      run_cli("claims train --evidence '" + ev + "' --out '" + (dir / "lin.json").string() + "'");
  const auto stacked = run_cli("claims train --evidence '" + ev + "' --out '" + (dir / "st.json").string() +
                               "' --learner stacked");
  ::unsetenv("LD_DEBUG");
  ASSERT_EQ(linear.exit_code, 0) << linear.err;
  ASSERT_EQ(stacked.exit_code, 0) << stacked.err;
  EXPECT_EQ(linear.err.find("libxgboost"), std::string::npos) << "the linear learner loaded libxgboost";
  EXPECT_NE(stacked.err.find("libxgboost"), std::string::npos) << "no LD_DEBUG trace of libxgboost";
  EXPECT_EQ(
      nlohmann::json::parse(slurp(dir / "lin.json"))["learner"].get<std::string>().rfind("liblinear ", 0),
      0u);
}

}  // namespace
}  // namespace numcheck::testing
