// Pins the paper's remaining analyses and the H2 independence baseline (report/analyses.hpp) on a
// hand-built benchmark whose every number is counted by hand in the comments.
#include "report/analyses.hpp"

#include <gtest/gtest.h>

#include "fixture.hpp"
#include "orbit/benchmark.hpp"
#include "report/orbit_report.hpp"
#include "report/scores.hpp"

namespace numcheck::report {
namespace {

using namespace numcheck::report::testing;

ReportOptions analyses_options(std::size_t draws = 300) {
  ReportOptions o;
  o.bootstrap_draws = draws;
  o.seed = 11;
  o.threads = 2;
  return o;
}

class Analyses : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_dir("analyses");
    write_bench(dir_ / "bench", {
                                    {"CV-0001", "CV", "1", {"canonical", "fraction"}},
                                    {"CV-0002", "CV", "1", {"canonical", "fraction"}},
                                    {"CV-0003", "CV", "1", {"canonical", "fraction"}},
                                    {"CV-0004", "CV", "1", {"canonical", "fraction"}},
                                    {"LV-0001", "LV", "7", {"canonical"}},
                                    {"LV-0002", "LV", "7", {"canonical"}},
                                });
    FxScore cut = both("CV-0004:fraction", "truncation_error", std::nullopt);
    cut.finish_reason = "length";
    write_scores(dir_ / "s.jsonl", {
                                       both("CV-0001:canonical", "correct", "1"),
                                       both("CV-0001:fraction", "correct", "1"),
                                       both("CV-0002:canonical", "correct", "1"),
                                       both("CV-0002:fraction", "value_error", "10"),  // 10 x 10^-1 = 1
                                       both("CV-0003:canonical", "value_error", "5"),
                                       both("CV-0003:fraction", "correct", "1"),
                                       both("CV-0004:canonical", "correct", "1"),
                                       cut,
                                       both("LV-0001:canonical", "correct", "7"),
                                       both("LV-0002:canonical", "correct", "7"),
                                   });
    bench_ = orbit::load_benchmark(dir_ / "bench");
    sys_ = load_scores(dir_ / "s.jsonl", bench_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
  orbit::Benchmark bench_;
  SystemScores sys_;
};

TEST_F(Analyses, AllocationAndExampleOrbit) {
  const auto m = to_json(compute_metrics(bench_, {sys_}, analyses_options()));
  const auto& a = m["allocation"];
  ASSERT_EQ(a["templates"].size(), 2u);
  EXPECT_EQ(a["templates"][0]["template"], "CV");
  EXPECT_EQ(a["templates"][0]["bases"], 4);
  EXPECT_EQ(a["templates"][0]["views"]["fraction"], 4);
  EXPECT_EQ(a["templates"][1]["views"]["fraction"], 0);
  EXPECT_TRUE(a["templates"][0]["name"].is_null());  // the fixture's manifest records no spec
  EXPECT_EQ(a["total"]["bases"], 6);
  EXPECT_EQ(a["total"]["views"]["canonical"], 6);
  EXPECT_EQ(m["example_orbit"]["base_id"], "CV-0001");  // first base with the most views
  EXPECT_EQ(m["example_orbit"]["prompts"].size(), 2u);
  EXPECT_EQ(compute_metrics(bench_, {sys_}, analyses_options()).template_label("CV"), "CV");
}

TEST_F(Analyses, LengthFinishedResponsesExcluded) {
  const auto m = to_json(compute_metrics(bench_, {sys_}, analyses_options()));
  const auto& f = m["systems"]["s"]["audit"]["length_excluded"]["fraction"];
  EXPECT_EQ(f["n"], 3);  // CV-0004's length finish is left out
  EXPECT_EQ(f["correct"], 2);
  EXPECT_EQ(f["excluded_length_finishes"], 1);
  EXPECT_EQ(f["correct_among_excluded"], 0);
  EXPECT_EQ(m["systems"]["s"]["audit"]["views"]["fraction"]["n"], 4);  // the main metric keeps it
  const auto& c = m["systems"]["s"]["strict"]["length_excluded"]["canonical"];
  EXPECT_EQ(c["n"], 6);
  EXPECT_EQ(c["excluded_length_finishes"], 0);
}

TEST_F(Analyses, PowerOfTenByTemplate) {
  const auto m = to_json(compute_metrics(bench_, {sys_}, analyses_options()));
  const auto& cv = m["systems"]["s"]["audit"]["views_by_template"]["fraction"]["CV"];
  EXPECT_EQ(cv["n"], 4);
  EXPECT_EQ(cv["correct"], 2);
  EXPECT_EQ(cv["residual_failures"], 2);
  EXPECT_EQ(cv["value_errors"], 1);
  EXPECT_EQ(cv["power_of_ten"], 1);
  EXPECT_EQ(cv["by_k"]["-1"], 1);
  EXPECT_FALSE(m["systems"]["s"]["audit"]["views_by_template"]["fraction"].contains("LV"));
  const auto& lv = m["systems"]["s"]["audit"]["views_by_template"]["canonical"]["LV"];
  EXPECT_EQ(lv["n"], 2);
  EXPECT_EQ(lv["power_of_ten"], 0);
}

TEST_F(Analyses, IndependenceBaselineIsExact) {
  const auto m = to_json(compute_metrics(bench_, {sys_}, analyses_options()));
  const auto& h = m["systems"]["s"]["strict"]["h2_independence"];
  // Canonical 5/6, fraction 2/4, observed orbit 3/6 (CV-0001, LV-0001, LV-0002): gap 1/3.
  EXPECT_EQ(h["observed_gap"]["exact"], "1/3");
  // (a) expected orbit = (4 * 5/6 * 1/2 + 2 * 5/6) / 6 = 5/9; gap 5/6 - 5/9 = 5/18; excess gap =
  // observed gap - expected gap = 1/3 - 5/18 = 1/18.
  EXPECT_EQ(h["independent_views"]["expected_orbit"]["exact"], "5/9");
  EXPECT_EQ(h["independent_views"]["expected_gap"]["exact"], "5/18");
  EXPECT_EQ(h["independent_views"]["excess_gap"]["exact"], "1/18");
  // (b) every view at 5/6: (4 * 25/36 + 2 * 5/6) / 6 = 20/27; gap 5/6 - 20/27 = 5/54; excess 1/3 - 5/54.
  EXPECT_EQ(h["canonical_rate"]["expected_orbit"]["exact"], "20/27");
  EXPECT_EQ(h["canonical_rate"]["expected_gap"]["exact"], "5/54");
  EXPECT_EQ(h["canonical_rate"]["excess_gap"]["exact"], "13/54");
  const auto& ci = h["independent_views"]["ci"];
  ASSERT_TRUE(ci.is_array());
  EXPECT_LE(ci[0].get<double>(), ci[1].get<double>());
}

TEST_F(Analyses, NoFailuresGiveAZeroExcessWithAZeroInterval) {
  std::vector<FxScore> all;
  for (const auto& v : bench_.views) all.push_back(both(v.prompt_id, "correct", v.expected.str()));
  write_scores(dir_ / "p.jsonl", all);
  const auto m =
      to_json(compute_metrics(bench_, {load_scores(dir_ / "p.jsonl", bench_)}, analyses_options()));
  const auto& h = m["systems"]["p"]["audit"]["h2_independence"]["independent_views"];
  EXPECT_EQ(h["excess_gap"]["exact"], "0");
  EXPECT_EQ(h["ci"][0].get<double>(), 0.0);
  EXPECT_EQ(h["ci"][1].get<double>(), 0.0);
}

TEST_F(Analyses, ExcessIsTheObservedMinusTheExpectedGapAndTheIntervalIsReproducible) {
  const auto m1 = to_json(compute_metrics(bench_, {sys_}, analyses_options()));
  auto opt = analyses_options();
  opt.threads = 1;
  const auto m2 = to_json(compute_metrics(bench_, {sys_}, opt));
  EXPECT_EQ(m1["systems"]["s"]["audit"]["h2_independence"], m2["systems"]["s"]["audit"]["h2_independence"]);
}

TEST_F(Analyses, ReportHasTheSectionsInPlace) {
  const auto m = compute_metrics(bench_, {sys_}, analyses_options());
  const std::string md = build_document(m, bench_, {sys_}, 0).to_markdown();
  const auto pos = [&](const char* s) { return md.find(s); };
  ASSERT_NE(pos("## Benchmark: templates and allocation"), std::string::npos);
  ASSERT_NE(pos("## H2 against an independence baseline"), std::string::npos);
  ASSERT_NE(pos("## Sensitivity: excluding length-finished responses"), std::string::npos);
  ASSERT_NE(pos("## Power-of-ten factors by template"), std::string::npos);
  EXPECT_LT(pos("## Benchmark: templates and allocation"), pos("## Systems"));
  EXPECT_LT(pos("## Orbit metrics"), pos("## H2 against an independence baseline"));
  EXPECT_LT(pos("## H2 against an independence baseline"), pos("## Paired family tests"));
  EXPECT_LT(pos("## Sensitivity: excluding"), pos("## Magnitude drops"));
  EXPECT_LT(pos("## Magnitude drops"), pos("## Power-of-ten factors"));
  EXPECT_NE(pos("0.667 (2/3)"), std::string::npos);  // fraction, audit, length finish excluded
  EXPECT_NE(pos("0.500 (2/4)"), std::string::npos);  // fraction, audit, all responses
  EXPECT_NE(pos("+33.3"), std::string::npos);        // observed gap 1/3
  EXPECT_NE(pos("+27.8"), std::string::npos);        // (a) expected gap 5/18
  EXPECT_NE(pos("+5.6"), std::string::npos);         // (a) excess 1/18
  EXPECT_NE(pos("k=-1: 1"), std::string::npos);
}

}  // namespace
}  // namespace numcheck::report
