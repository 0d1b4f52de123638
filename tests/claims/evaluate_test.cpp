// Joining predictions to gold claims and scoring them, against hand-computed values.
#include "claims/evaluate.hpp"
#include "claims/load.hpp"

#include <gtest/gtest.h>

namespace numcheck::claims {
namespace {

Claim gold(std::string text, Verdict v, std::string id = "") {
  Claim c;
  c.text = std::move(text);
  c.label = v;
  c.id = std::move(id);
  return c;
}

TEST(Evaluate, JoinByIdThenExactTextWithDuplicates) {
  const std::vector<Claim> g = {gold("a", Verdict::kTrue, "1"), gold("b", Verdict::kFalse),
                                gold("b", Verdict::kFalse), gold("c", Verdict::kConflicting)};
  std::vector<Claim> p = {gold("", Verdict::kTrue, "1"), gold("b", Verdict::kFalse),
                          gold("b", Verdict::kTrue), gold("zzz", Verdict::kTrue), gold("B", Verdict::kTrue)};
  JoinReport rep;
  const auto j = join_predictions(g, p, rep);
  EXPECT_EQ(j[0], Verdict::kTrue);
  EXPECT_EQ(j[1], Verdict::kFalse);  // first occurrence -> first prediction with that text
  EXPECT_EQ(j[2], Verdict::kTrue);   // second -> second
  EXPECT_FALSE(j[3].has_value());    // exact text only: "c" has no prediction
  EXPECT_EQ(rep.by_id, 1u);
  EXPECT_EQ(rep.by_text, 2u);
  EXPECT_EQ(rep.gold_without_prediction, 1u);
  EXPECT_EQ(rep.unused_predictions, 2u);  // "zzz" and "B" (case differs)
  EXPECT_EQ(rep.conflicts.size(), 1u);    // "b" predicted False and True
}

TEST(Evaluate, JoinByNormalizedTextWhenNoExactTextMatches) {
  // The gold claim in curly quotes, the prediction in straight quotes with other spacing and case.
  const std::vector<Claim> g = {gold("\xE2\x80\x9CTaxes rose 3%\xE2\x80\x9D", Verdict::kTrue),
                                gold("Crime fell", Verdict::kFalse)};
  const std::vector<Claim> p = {gold("\"taxes  rose 3%\"", Verdict::kTrue),
                                gold("Crime fell", Verdict::kFalse)};
  JoinReport rep;
  const auto j = join_predictions(g, p, rep);
  EXPECT_EQ(j[0], Verdict::kTrue);
  EXPECT_EQ(j[1], Verdict::kFalse);
  EXPECT_EQ(rep.by_text, 2u);
  EXPECT_EQ(rep.unused_predictions, 0u);
}

TEST(Evaluate, ScoresPairsAndCategories) {
  // gold T T F F F C; system A predicts T F F F T F (Conflicting never predicted), B is perfect.
  std::vector<Claim> g;
  const Verdict gv[] = {Verdict::kTrue,  Verdict::kTrue,  Verdict::kFalse,
                        Verdict::kFalse, Verdict::kFalse, Verdict::kConflicting};
  const Verdict av[] = {Verdict::kTrue,  Verdict::kFalse, Verdict::kFalse,
                        Verdict::kFalse, Verdict::kTrue,  Verdict::kFalse};
  std::vector<SystemResult> systems(2);
  systems[0].name = "a";
  systems[1].name = "b";
  for (int i = 0; i < 6; ++i) {
    g.push_back(gold("claim " + std::to_string(i), gv[i]));
    g.back().category = i < 3 ? Category::kTemporal : Category::kStatistical;
    systems[0].pred.push_back(av[i]);
    systems[1].pred.push_back(gv[i]);
  }
  EvaluateOptions opt;
  opt.by_category = true;
  opt.bootstrap_draws = 200;
  opt.folds = 3;
  const auto e = evaluate(g, systems, opt);
  const auto& a = e.systems[0].all.report;
  EXPECT_DOUBLE_EQ(a.macro_f1, 5.0 / 14.0);
  EXPECT_DOUBLE_EQ(a.weighted_f1, 19.0 / 42.0);
  EXPECT_DOUBLE_EQ(a.per_class[2].precision, 0.0);
  EXPECT_EQ(e.systems[0].by_category.at(Category::kTemporal).n, 3u);
  ASSERT_EQ(e.comparisons.size(), 1u);
  const auto& c = e.comparisons[0];
  EXPECT_EQ(c.a_only_correct, 0u);
  EXPECT_EQ(c.b_only_correct, 3u);
  EXPECT_DOUBLE_EQ(c.mcnemar_p, 0.25);  // 2 * (1/2)^3
  EXPECT_DOUBLE_EQ(c.boot_diff, 5.0 / 14.0 - 1.0);
  EXPECT_LE(c.boot_lo, c.boot_hi);
  EXPECT_TRUE(c.ttest_ran);
  const auto j = evaluation_json(e);
  EXPECT_DOUBLE_EQ(j["systems"]["a"]["per_class"]["False"]["f1"].get<double>(), 4.0 / 7.0);
  EXPECT_EQ(j["systems"]["a"]["confusion"]["Conflicting"]["False"].get<int>(), 1);
  EXPECT_EQ(j["systems"]["a"]["per_class"]["True"]["support"].get<int>(), 2);
  EXPECT_TRUE(j["systems"]["a"]["categories"].contains("temporal"));
  EXPECT_EQ(j["comparisons"][0]["mcnemar"]["b_only_correct"].get<int>(), 3);
  EXPECT_NE(evaluation_markdown(e, true).find("| a | 6 | 50.00 | 35.71 |"), std::string::npos);
  // System names come from file names: a hostile one cannot break a table row or inject markup.
  auto hostile = e;
  hostile.systems[0].name = "x|y <b>*z*</b>";
  const std::string md = evaluation_markdown(hostile, true);
  EXPECT_NE(md.find(R"(| x\|y &lt;b&gt;\*z\*&lt;/b&gt; | 6 | 50.00 |)"), std::string::npos) << md;
  EXPECT_EQ(md.find("<b>"), std::string::npos);
}

TEST(Evaluate, UnparseablePredictionsCountAsWrongNotDropped) {
  // gold T F C; predictions: T correct, F "maybe" (unparseable), C correct.
  const auto g = parse_claims(
      "{\"claim\":\"a\",\"label\":\"True\"}\n{\"claim\":\"b\",\"label\":\"False\"}\n"
      "{\"claim\":\"c\",\"label\":\"Conflicting\"}\n",
      "gold.jsonl");
  LoadOptions popt;
  popt.labels = LabelPolicy::kRequired;
  popt.keep_unknown_labels = true;
  const auto p = parse_claims(
      "{\"claim\":\"a\",\"label\":\"True\"}\n{\"claim\":\"b\",\"label\":\"maybe\"}\n"
      "{\"claim\":\"c\",\"label\":\"Conflicting\"}\n",
      "pred.jsonl", popt);
  ASSERT_EQ(p.claims.size(), 3u);
  ASSERT_EQ(p.issues.size(), 1u);
  EXPECT_FALSE(p.issues[0].skipped);
  std::vector<SystemResult> systems(1);
  systems[0].name = "s";
  systems[0].pred = join_predictions(g.claims, p.claims, systems[0].join, &systems[0].unparseable);
  EXPECT_TRUE(systems[0].unparseable[1]);
  EXPECT_EQ(systems[0].join.gold_without_prediction, 0u);
  EvaluateOptions opt;
  opt.bootstrap_draws = 0;
  const auto e = evaluate(g.claims, systems, opt);
  const auto& s = e.systems[0].all;
  EXPECT_EQ(s.n, 3u);  // the denominator keeps the unparseable claim
  EXPECT_EQ(s.unparseable, 1u);
  EXPECT_DOUBLE_EQ(s.report.accuracy, 2.0 / 3.0);
  // True and Conflicting F1 1; False: tp 0 -> F1 0 (recall 0, never predicted); macro over 3 verdicts.
  EXPECT_DOUBLE_EQ(s.report.macro_f1, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(s.report.per_class[1].recall, 0.0);
  EXPECT_EQ(s.report.per_class.size(), 3u);
  const auto j = evaluation_json(e);
  EXPECT_EQ(j["systems"]["s"]["unparseable"], 1);
  EXPECT_EQ(j["systems"]["s"]["confusion"]["False"]["unparseable"], 1);
  // Without keep_unknown_labels the record is skipped (the old behaviour the flag replaces).
  LoadOptions strict;
  strict.labels = LabelPolicy::kRequired;
  EXPECT_EQ(parse_claims("{\"claim\":\"b\",\"label\":\"maybe\"}\n", "p.jsonl", strict).claims.size(), 0u);
}

}  // namespace
}  // namespace numcheck::claims

namespace numcheck::claims {
namespace {

// The 10-fold t-test's p under several orders of the claims, each cut with the same fold scheme:
// the first order is the claims as given (its p is the reported one), the spread is in the JSON.
TEST(Evaluate, TTestPOverClaimOrders) {
  std::vector<Claim> g;
  std::vector<SystemResult> systems(2);
  systems[0].name = "a";
  systems[1].name = "b";
  for (int i = 0; i < 60; ++i) {
    const auto v = static_cast<Verdict>(i % 3);
    g.push_back(gold("claim " + std::to_string(i), v));
    systems[0].pred.push_back(i % 4 == 0 ? static_cast<Verdict>((i + 1) % 3) : v);
    systems[1].pred.push_back(i % 5 == 0 ? static_cast<Verdict>((i + 2) % 3) : v);
  }
  EvaluateOptions opt;
  opt.bootstrap_draws = 0;
  opt.fold_orders = 8;
  const auto e = evaluate(g, systems, opt);
  const auto& c = e.comparisons[0];
  ASSERT_EQ(c.ttest_p_orders.size(), 8u);
  EXPECT_DOUBLE_EQ(c.ttest_p_orders[0], c.ttest.macro.p);
  bool moves = false;
  for (const double p : c.ttest_p_orders) moves = moves || p != c.ttest_p_orders[0];
  EXPECT_TRUE(moves) << "the fold assignment alone must move p on these predictions";
  const auto j = evaluation_json(e)["comparisons"][0]["ttest_kfold"]["macro_f1_p_over_claim_orders"];
  EXPECT_EQ(j["orders"].get<int>(), 8);
  EXPECT_LE(j["min"].get<double>(), j["median"].get<double>());
  EXPECT_LE(j["median"].get<double>(), j["max"].get<double>());
  opt.fold_orders = 0;
  EXPECT_TRUE(evaluate(g, systems, opt).comparisons[0].ttest_p_orders.empty());
}

}  // namespace
}  // namespace numcheck::claims
