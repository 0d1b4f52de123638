// `numcheck claims evaluate`, `claims quantities` and `claims stats` through the real CLI.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../support/quantemp_data.hpp"
#include "cli_support.hpp"

namespace numcheck::testing {
namespace {

const std::string kFix = std::string(NUMCHECK_SOURCE_DIR) + "/tests/claims/fixtures/";

TEST(ClaimsCli, EvaluateSmallFixtureWithJson) {
  const auto dir = fresh_dir("claims_eval");
  const std::string out = (dir / "r.json").string();
  const auto r =
      run_cli("claims evaluate --gold '" + kFix + "gold_small.jsonl' --pred '" + kFix +
              "pred_a.jsonl' --pred '" + kFix + "pred_b.csv' --by-category --draws 100 --json '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("unknown label 'Nope'"), std::string::npos)
      << r.err;  // malformed gold record reported
  EXPECT_NE(r.err.find("joins no gold claim"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find(R"(| pred\_a | 3 | 66.67 |)"), std::string::npos) << r.out;
  std::ifstream f(out);
  std::stringstream ss;
  ss << f.rdbuf();
  const auto j = nlohmann::json::parse(ss.str());
  ASSERT_TRUE(j.contains("systems") && j.contains("comparisons"));
  const auto& a = j["systems"]["pred_a"];
  EXPECT_EQ(a["n"], 3);
  EXPECT_DOUBLE_EQ(a["accuracy"].get<double>(), 2.0 / 3.0);
  // gold T C F, pred T F F: T f1 1, F f1 2/3, C f1 0 -> macro 5/9
  EXPECT_DOUBLE_EQ(a["macro_f1"].get<double>(), 5.0 / 9.0);
  EXPECT_EQ(a["per_class"]["Conflicting"]["support"], 1);
  EXPECT_EQ(a["confusion"]["Conflicting"]["False"], 1);
  EXPECT_TRUE(a["categories"].contains("temporal"));
  EXPECT_TRUE(j["systems"].contains("pred_b"));
  ASSERT_EQ(j["comparisons"].size(), 1u);
  EXPECT_EQ(j["comparisons"][0]["a"], "pred_a");
  std::filesystem::remove_all(dir);
}

TEST(ClaimsCli, EvaluateStrictAndUsageErrors) {
  const auto r = run_cli("claims evaluate --gold '" + kFix + "gold_small.jsonl' --pred '" + kFix +
                         "pred_a.jsonl' --strict");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--strict"), std::string::npos) << r.err;
  EXPECT_EQ(run_cli("claims evaluate --gold x").exit_code, 2);
  EXPECT_EQ(run_cli("claims evaluate --gold /no/such --pred /no/such").exit_code, 1);
}

TEST(ClaimsCli, PredictionsMatchingNoGoldClaimAreAnError) {
  const auto dir = fresh_dir("claims_nomatch");
  const auto pred = dir / "none.jsonl";
  {
    std::ofstream f(pred);
    f << "{\"id\": \"no-such-claim-1\", \"claim\": \"Nothing like any gold claim.\", \"label\": \"True\"}\n";
  }
  const auto r =
      run_cli("claims evaluate --gold '" + kFix + "gold_small.jsonl' --pred '" + pred.string() + "'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("none of its 1 predictions matches a gold claim"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("0.00"), std::string::npos) << r.out;
  std::filesystem::remove_all(dir);
}

TEST(ClaimsCli, QuantitiesAndStats) {
  const auto q = run_cli("claims quantities --text 'More than 800,000 jobs lost in 2020'");
  ASSERT_EQ(q.exit_code, 0) << q.err;
  EXPECT_NE(q.out.find("`More than 800,000` quantity 800000 (800000, inf)"), std::string::npos) << q.out;
  EXPECT_NE(q.out.find("2020-01-01/2020-12-31"), std::string::npos) << q.out;
  const auto j = run_cli("claims quantities --json '" + kFix + "gold_small.jsonl'");
  ASSERT_EQ(j.exit_code, 0);
  EXPECT_NE(j.out.find("\"numerical\":true"), std::string::npos) << j.out;
  const auto s = run_cli("claims stats --labels '" + kFix + "gold_small.jsonl'");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_NE(s.out.find("two pinocchios"), std::string::npos);
  EXPECT_NE(s.out.find("numerical-claim filter: 3 of 3 pass"), std::string::npos) << s.out;
}

TEST(ClaimsCli, RealDataWhenPresent) {
  const std::string d = (numcheck::testing::quantemp_dir() / "").string();
  if (!std::filesystem::exists(d + "model_gpt4o_test_results.csv"))
    GTEST_SKIP() << "QuanTemp data not found at " << d;
  const auto r = run_cli("claims evaluate --gold '" + d + "model_gpt4o_test_results.csv' --pred '" + d +
                         "predictions/finqa_roberta_claimdecomp_test.csv' --draws 200");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // macro-F1 on the 249 labelled test claims, hand-checked: 0.5605 (T 0.4833, F 0.7709, C 0.4272)
  EXPECT_NE(
      r.out.find(
          R"(| finqa\_roberta\_claimdecomp\_test | 249 | 63.05 | 56.05 | 65.04 | 48.33 | 77.09 | 42.72 |)"),
      std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace numcheck::testing
