// Classification metrics against values computed by hand from scikit-learn's definitions, and the
// Student t distribution against closed forms and published critical values.
#include "stats/classification.hpp"

#include <cmath>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace numcheck::stats {
namespace {

constexpr int T = 0, F = 1, C = 2;

TEST(Classification, ClassNeverPredictedHasZeroPrecisionAndF1) {
  // gold T T F F F C, pred T F F F T F: Conflicting is never predicted.
  const std::vector<int> gold = {T, T, F, F, F, C}, pred = {T, F, F, F, T, F};
  const auto m = ConfusionMatrix::from_labels(gold, pred, 3);
  EXPECT_EQ(m.at(T, T), 1u);
  EXPECT_EQ(m.at(T, F), 1u);
  EXPECT_EQ(m.at(F, T), 1u);
  EXPECT_EQ(m.at(F, F), 2u);
  EXPECT_EQ(m.at(C, F), 1u);
  EXPECT_EQ(m.at(C, C), 0u);
  const auto r = classification_report(m);
  EXPECT_EQ(r.n, 6u);
  EXPECT_EQ(r.correct, 3u);
  EXPECT_DOUBLE_EQ(r.accuracy, 0.5);
  EXPECT_DOUBLE_EQ(r.per_class[T].precision, 0.5);
  EXPECT_DOUBLE_EQ(r.per_class[T].recall, 0.5);
  EXPECT_DOUBLE_EQ(r.per_class[T].f1, 0.5);
  EXPECT_DOUBLE_EQ(r.per_class[F].precision, 0.5);
  EXPECT_DOUBLE_EQ(r.per_class[F].recall, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(r.per_class[F].f1, 4.0 / 7.0);
  EXPECT_EQ(r.per_class[C].predicted, 0u);
  EXPECT_EQ(r.per_class[C].support, 1u);
  EXPECT_TRUE(r.per_class[C].present);
  EXPECT_DOUBLE_EQ(r.per_class[C].precision, 0.0);  // zero_division = 0
  EXPECT_DOUBLE_EQ(r.per_class[C].recall, 0.0);
  EXPECT_DOUBLE_EQ(r.per_class[C].f1, 0.0);
  EXPECT_DOUBLE_EQ(r.macro_f1, 5.0 / 14.0);      // (1/2 + 4/7 + 0) / 3
  EXPECT_DOUBLE_EQ(r.weighted_f1, 19.0 / 42.0);  // (2/2 + 3*4/7 + 0) / 6
  EXPECT_DOUBLE_EQ(r.macro_precision, 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(r.macro_recall, 7.0 / 18.0);
}

TEST(Classification, MacroAveragesOnlyLabelsThatOccur) {
  // Class 2 is neither in gold nor predicted: sklearn's labels=None leaves it out of the mean.
  const std::vector<int> gold = {0, 0, 1}, pred = {0, 1, 1};
  const auto r = classification_report(ConfusionMatrix::from_labels(gold, pred, 3));
  EXPECT_FALSE(r.per_class[2].present);
  EXPECT_DOUBLE_EQ(r.per_class[0].f1, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(r.per_class[1].f1, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(r.macro_f1, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(r.weighted_f1, 2.0 / 3.0);
}

TEST(Classification, ClassPredictedButNeverGoldHasZeroRecall) {
  const std::vector<int> gold = {0, 0, 0, 1}, pred = {0, 2, 0, 1};
  const auto r = classification_report(ConfusionMatrix::from_labels(gold, pred, 3));
  EXPECT_TRUE(r.per_class[2].present);
  EXPECT_DOUBLE_EQ(r.per_class[2].precision, 0.0);
  EXPECT_DOUBLE_EQ(r.per_class[2].recall, 0.0);
  EXPECT_DOUBLE_EQ(r.per_class[0].f1, 0.8);  // P 1, R 2/3
  EXPECT_DOUBLE_EQ(r.macro_f1, (0.8 + 1.0 + 0.0) / 3.0);
  EXPECT_DOUBLE_EQ(r.weighted_f1, (3 * 0.8 + 1.0) / 4.0);
}

TEST(Classification, PerfectAndEmpty) {
  const std::vector<int> g = {0, 1, 2, 2};
  const auto r = classification_report(ConfusionMatrix::from_labels(g, g, 3));
  EXPECT_DOUBLE_EQ(r.macro_f1, 1.0);
  EXPECT_DOUBLE_EQ(r.accuracy, 1.0);
  const auto e = classification_report(ConfusionMatrix(3));
  EXPECT_EQ(e.n, 0u);
  EXPECT_DOUBLE_EQ(e.macro_f1, 0.0);
  EXPECT_DOUBLE_EQ(e.weighted_f1, 0.0);
}

TEST(Classification, WeightedCountsEqualRepeatedItems) {
  ConfusionMatrix w(3);
  w.add(0, 0, 3);
  w.add(1, 0, 2);
  w.add(2, 2, 1);
  const std::vector<int> gold = {0, 0, 0, 1, 1, 2}, pred = {0, 0, 0, 0, 0, 2};
  EXPECT_DOUBLE_EQ(macro_f1(w), macro_f1(ConfusionMatrix::from_labels(gold, pred, 3)));
}

TEST(Classification, RejectsBadInput) {
  const std::vector<int> a = {0, 1}, b = {0}, c = {0, 3};
  EXPECT_THROW((void)ConfusionMatrix::from_labels(a, b, 3), Error);
  EXPECT_THROW((void)ConfusionMatrix::from_labels(a, c, 3), Error);
}

TEST(StudentT, ClosedFormsAndCriticalValues) {
  EXPECT_NEAR(student_t_two_sided_p(1.0, 1.0), 0.5, 1e-12);  // Cauchy
  // df = 2: two-sided p = 1 - |t| / sqrt(2 + t^2)
  EXPECT_NEAR(student_t_two_sided_p(2.0, 2.0), 1.0 - 2.0 / std::sqrt(6.0), 1e-12);
  EXPECT_NEAR(student_t_two_sided_p(-2.0, 2.0), 1.0 - 2.0 / std::sqrt(6.0), 1e-12);
  // 97.5% quantiles of t (tables): df 4 -> 2.776445105, df 9 -> 2.262157163
  EXPECT_NEAR(student_t_two_sided_p(2.776445105, 4.0), 0.05, 1e-8);
  EXPECT_NEAR(student_t_two_sided_p(2.262157163, 9.0), 0.05, 1e-8);
  EXPECT_NEAR(student_t_two_sided_p(0.0, 9.0), 1.0, 1e-12);
  EXPECT_EQ(student_t_two_sided_p(INFINITY, 9.0), 0.0);
}

TEST(PairedTTest, MatchesHandComputation) {
  // d = a - b = -1 0 1 2 3: mean 1, sd sqrt(2.5), t = 1 / (sqrt(2.5)/sqrt(5)) = sqrt(2)
  const std::vector<double> a = {1, 2, 3, 4, 5}, b = {2, 2, 2, 2, 2};
  const auto r = paired_t_test(a, b);
  EXPECT_EQ(r.n, 5u);
  EXPECT_DOUBLE_EQ(r.mean_diff, 1.0);
  EXPECT_NEAR(r.t, std::sqrt(2.0), 1e-12);
  // df 4, t = sqrt 2: I_{4/6}(2, 1/2) = 1 - (1 + x/2) sqrt(1-x)... via closed form for df = 4:
  // two-sided p = 1 - t (6 + t^2) / (4 + t^2)^(3/2) ... = 1 - sqrt2 * 8 / 6^(3/2)
  EXPECT_NEAR(r.p, 1.0 - std::sqrt(2.0) * 8.0 / std::pow(6.0, 1.5), 1e-12);
  const auto z = paired_t_test(a, a);
  EXPECT_EQ(z.p, 1.0);
  const std::vector<double> c = {2, 3, 4, 5, 6};
  EXPECT_EQ(paired_t_test(c, a).p, 0.0);  // constant non-zero difference
  const std::vector<double> one = {1};
  EXPECT_THROW((void)paired_t_test(one, one), Error);
}

TEST(KFold, CoversEveryItemOnceWithKFoldSizes) {
  const auto folds = kfold_indices(249, 10, 42);
  ASSERT_EQ(folds.size(), 10u);
  std::set<std::size_t> seen;
  for (std::size_t f = 0; f < folds.size(); ++f) {
    EXPECT_EQ(folds[f].size(), f < 9 ? 25u : 24u);
    for (auto i : folds[f]) EXPECT_TRUE(seen.insert(i).second);
  }
  EXPECT_EQ(seen.size(), 249u);
  EXPECT_EQ(kfold_indices(249, 10, 42), folds);  // deterministic
  EXPECT_NE(kfold_indices(249, 10, 43), folds);  // the seed matters
  EXPECT_THROW((void)kfold_indices(5, 10, 1), Error);
}

TEST(KFold, PairedTestOnFoldScores) {
  std::vector<int> gold, a, b;
  for (int i = 0; i < 100; ++i) {
    gold.push_back(i % 3);
    a.push_back(i % 3);                             // perfect
    b.push_back(i % 5 == 0 ? (i + 1) % 3 : i % 3);  // 20% wrong
  }
  const auto r = kfold_paired_t_test(gold, a, b, 3, 10, 7);
  ASSERT_EQ(r.macro_a.size(), 10u);
  for (double v : r.macro_a) EXPECT_DOUBLE_EQ(v, 1.0);
  EXPECT_GT(r.macro.mean_diff, 0.0);
  EXPECT_LT(r.macro.p, 0.01);
  // Recompute fold 0 of system b by hand from the fold indices.
  const auto folds = kfold_indices(100, 10, 7);
  ConfusionMatrix m(3);
  for (auto i : folds[0]) m.add(static_cast<std::size_t>(gold[i]), static_cast<std::size_t>(b[i]));
  EXPECT_DOUBLE_EQ(r.macro_b[0], macro_f1(m));
  EXPECT_DOUBLE_EQ(r.weighted_b[0], weighted_f1(m));
}

}  // namespace
}  // namespace numcheck::stats
