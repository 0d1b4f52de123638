// The categorizer's rules (QuanTemp's category definitions, docs/claims-reference.md), the held-out split and
// its evaluation (accuracy, macro-F1, intervals) checked against direct computations.
#include "claims/category.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "stats/bootstrap.hpp"
#include "stats/tests.hpp"

namespace numcheck::claims {
namespace {

struct CategoryCase {
  const char* text;
  Category want;
};

TEST(Categorizer, RulesFromTheDefinitions) {
  const std::vector<CategoryCase> cases = {
      // comparison: a multiplier or a cue outside segments
      {"vaccinated people are 13 times more likely to catch it", Category::kComparison},
      {"unemployment doubled under his watch", Category::kComparison},
      {"Mean sea level was six centimetres lower in 2019 than in 1919", Category::kComparison},
      // "N times" counting events is not a comparison
      {"He voted 10 times against the bill", Category::kStatistical},
      // interval: stated ranges, year ranges, bounds on ages
      {"UK to stop vaccinating children aged five to 11", Category::kInterval},
      {"27 species went extinct between 1790 and 2010", Category::kInterval},
      {"Trudeau banned voting rights for seniors over 85", Category::kInterval},
      {"the average homeowner pays about $1,300 to $1,400 for recapture", Category::kInterval},
      // a vague quantity is not a stated range
      {"Shoprite promoting thousands of casual jobs for December 2021", Category::kTemporal},
      // temporal: time is the only quantity
      {"Stonehenge was built in 1954", Category::kTemporal},
      {"match time extended by 10 minutes", Category::kTemporal},
      {"Walmart to require proof of vaccination starting November 1, 2021", Category::kTemporal},
      // a statistic at a time is statistical (the old rules called any claim with a year temporal)
      {"Moderna produced 100,000 Covid-19 vaccines in 2019", Category::kStatistical},
      {"In 1994, 39% of South Africans had access to electricity", Category::kStatistical},
      {"PCR tests cost $100 apiece", Category::kStatistical},
      {"ObamaCare will cost more than 800,000 jobs", Category::kStatistical},
      {"no numbers here", Category::kStatistical},
  };
  for (const auto& c : cases)
    EXPECT_EQ(category_name(categorize(c.text).category), category_name(c.want)) << c.text;
  EXPECT_EQ(categorize("no numbers here").rule, "fallback:no segment");
  EXPECT_EQ(categorize("Moderna produced 100,000 vaccines in 2019").rule, "statistical:quantity at a time");
}

TEST(Categorizer, HeldOutSplitIsPerTextAndSeeded) {
  // Same text, same part, whatever else is in the file; about half of many texts are held out.
  std::size_t held = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::string t = "claim number " + std::to_string(i);
    EXPECT_EQ(category_heldout(t), category_heldout(t));
    held += category_heldout(t) ? 1 : 0;
  }
  EXPECT_GT(held, 900u);
  EXPECT_LT(held, 1100u);
  // Another seed gives another split.
  std::size_t differ = 0;
  for (int i = 0; i < 200; ++i) {
    const std::string t = "claim number " + std::to_string(i);
    differ += category_heldout(t, 1) != category_heldout(t, 2) ? 1 : 0;
  }
  EXPECT_GT(differ, 50u);
}

TEST(Categorizer, EvaluationEqualsADirectComputation) {
  const std::vector<std::string> texts = {"Stonehenge was built in 1954", "Stonehenge was built in 1954",
                                          "PCR tests cost $100 apiece",   "13 times more likely",
                                          "children aged five to 11",     "PCR tests cost $100 apiece"};
  const std::vector<Category> gold = {Category::kTemporal,   Category::kStatistical, Category::kStatistical,
                                      Category::kComparison, Category::kInterval,    Category::kTemporal};
  const auto ev = evaluate_categorizer(texts, gold, 500, 7);
  EXPECT_EQ(ev.report.n, 6u);
  EXPECT_EQ(ev.report.correct, 4u);
  EXPECT_EQ(ev.distinct_texts, 4u);
  const auto w = stats::wilson(4, 6);
  EXPECT_DOUBLE_EQ(ev.accuracy_ci.lo, w.lo);
  EXPECT_DOUBLE_EQ(ev.accuracy_ci.hi, w.hi);
  // Macro-F1 by hand: statistical tp 1 fp 1 fn 1 -> 1/2; temporal tp 1 fp 1 fn 1 -> 1/2;
  // interval 1; comparison 1.
  EXPECT_NEAR(ev.report.macro_f1, (0.5 + 0.5 + 1.0 + 1.0) / 4.0, 1e-12);
  // The interval is the percentile interval of macro-F1 over resampled distinct texts.
  const std::vector<std::vector<std::pair<int, int>>> clusters = {
      {{1, 1}, {0, 1}}, {{0, 0}, {1, 0}}, {{3, 3}}, {{2, 2}}};
  const auto reps = stats::bootstrap_counts(4, 500, 7, [&](const stats::ClusterCounts& k) {
    stats::ConfusionMatrix m(4);
    for (std::size_t c = 0; c < clusters.size(); ++c)
      for (const auto& [g, p] : clusters[c])
        m.add(static_cast<std::size_t>(g), static_cast<std::size_t>(p), k[c]);
    return stats::macro_f1(m);
  });
  const auto iv = stats::percentile_interval(reps);
  EXPECT_DOUBLE_EQ(ev.macro_f1_ci.lo, iv.lo);
  EXPECT_DOUBLE_EQ(ev.macro_f1_ci.hi, iv.hi);
}

}  // namespace
}  // namespace numcheck::claims
