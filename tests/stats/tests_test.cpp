// Known-answer tests for the exact McNemar test, Holm's adjustment and the Wilson interval.
#include "stats/tests.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace numcheck::stats {
namespace {

// Reference values: 2 * sum_{i<=min(c,t)} C(c+t, i) / 2^(c+t), computed exactly with Python's
// fractions and math.comb and rounded to double (the same as R's binom.test(min(c,t), c+t)).
struct McNemarCase {
  std::uint64_t c, t;
  double p;
};

TEST(McNemar, KnownAnswers) {
  const McNemarCase cases[] = {
      {10, 2, 0.03857421875},  // 158 / 4096, the usual textbook example
      {0, 5, 0.0625},
      {12, 21, 0.16275565745308995},
      {60, 40, 0.05688793364098079},
      {30, 0, 1.862645149230957e-09},  // 2 / 2^30
      {1000, 1100, 0.030720707864242296},
      {2500, 2400, 0.15727096976576943},
      {4000, 4300, 0.001029736761268161},
  };
  for (const auto& k : cases) {
    const double p = mcnemar_exact_p(k.c, k.t);
    EXPECT_NEAR(p / k.p, 1.0, 1e-9) << k.c << "/" << k.t << ": " << p;
    EXPECT_EQ(mcnemar_exact_p(k.t, k.c), p) << "symmetric in c and t";
  }
}

TEST(McNemar, CappedAtOneAndDegenerate) {
  EXPECT_EQ(mcnemar_exact_p(0, 0), 1.0);
  EXPECT_EQ(mcnemar_exact_p(5, 5), 1.0);
  EXPECT_EQ(mcnemar_exact_p(4, 5), 1.0);  // 2 * 256/512 = 1 exactly
  EXPECT_EQ(mcnemar_exact_p(1, 1), 1.0);
  EXPECT_DOUBLE_EQ(mcnemar_exact_p(0, 1), 1.0);  // 2 * 1/2
  EXPECT_DOUBLE_EQ(mcnemar_exact_p(1, 0), 1.0);
  EXPECT_DOUBLE_EQ(mcnemar_exact_p(0, 2), 0.5);
}

TEST(McNemar, LargeCountsNeitherOverflowNorGoNegative) {
  EXPECT_EQ(mcnemar_exact_p(0, 1100), 0.0);  // 2^-1099 underflows; never NaN
  const double p = mcnemar_exact_p(500000, 501000);
  EXPECT_TRUE(std::isfinite(p));
  EXPECT_GT(p, 0.0);
  EXPECT_LE(p, 1.0);
  // Normal approximation with continuity correction as a sanity bound at this size.
  const double z = (1000.0 - 1.0) / std::sqrt(1001000.0);
  const double approx = std::erfc(z / std::sqrt(2.0));
  EXPECT_NEAR(p, approx, 0.01);
}

TEST(McNemar, MonotoneInImbalance) {
  // With n = c + t fixed at 100, p grows as the split becomes more even.
  double prev = 0.0;
  for (std::uint64_t c = 0; c <= 50; ++c) {
    const double p = mcnemar_exact_p(c, 100 - c);
    EXPECT_GE(p, prev) << c;
    prev = p;
  }
  EXPECT_EQ(prev, 1.0);
}

TEST(Holm, WorkedExample) {
  // Holm (1979) / the Wikipedia worked example: p = (0.01, 0.04, 0.03, 0.005). Sorted
  // 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04, then the running maximum
  // gives 0.02, 0.03, 0.06, 0.06 (R: p.adjust(c(.01,.04,.03,.005), "holm") = .03 .06 .06 .02).
  const auto adj = holm({0.01, 0.04, 0.03, 0.005});
  ASSERT_EQ(adj.size(), 4u);
  EXPECT_DOUBLE_EQ(adj[0], 0.03);
  EXPECT_DOUBLE_EQ(adj[1], 0.06);
  EXPECT_DOUBLE_EQ(adj[2], 0.06);
  EXPECT_DOUBLE_EQ(adj[3], 0.02);
}

TEST(Holm, FiveFamiliesCappedAndMonotone) {
  // R: p.adjust(c(0.3, 0.001, 0.02, 0.5, 0.012), "holm") = 0.6 0.005 0.06 0.6 0.048
  const auto adj = holm({0.3, 0.001, 0.02, 0.5, 0.012});
  const double expected[] = {0.6, 0.005, 0.06, 0.6, 0.048};
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(adj[i], expected[i], 1e-15) << i;
  const auto capped = holm({0.5, 0.6, 0.9});
  for (double v : capped) EXPECT_EQ(v, 1.0);
  EXPECT_TRUE(holm({}).empty());
  EXPECT_EQ(holm({0.2}), std::vector<double>{0.2});
  // Ties: equal p-values get equal adjusted values.
  const auto tied = holm({0.01, 0.01, 0.01});
  EXPECT_DOUBLE_EQ(tied[0], 0.03);
  EXPECT_DOUBLE_EQ(tied[1], 0.03);
  EXPECT_DOUBLE_EQ(tied[2], 0.03);
}

TEST(Holm, RejectsInvalidPValues) {
  EXPECT_THROW((void)holm({0.1, std::nan("")}), Error);
  EXPECT_THROW((void)holm({-0.1}), Error);
  EXPECT_THROW((void)holm({1.5}), Error);
}

TEST(Wilson, EightOfTen) {
  const auto w = wilson(8, 10);
  EXPECT_NEAR(w.lo, 0.4902, 5e-5);
  EXPECT_NEAR(w.hi, 0.9433, 5e-5);
}

TEST(Wilson, NewcombeTableExamples) {
  // Newcombe, Stat. Med. 17:857-872 (1998), Table I, method 3 (score interval without continuity
  // correction).
  struct Case {
    std::uint64_t k, n;
    double lo, hi;
  } const cases[] = {
      {81, 263, 0.2553, 0.3662}, {15, 148, 0.0624, 0.1605}, {0, 20, 0.0, 0.1611}, {1, 29, 0.0061, 0.1718}};
  for (const auto& c : cases) {
    const auto w = wilson(c.k, c.n);
    EXPECT_NEAR(w.lo, c.lo, 5e-5) << c.k << "/" << c.n;
    EXPECT_NEAR(w.hi, c.hi, 5e-5) << c.k << "/" << c.n;
  }
}

TEST(Wilson, Edges) {
  const auto zero = wilson(0, 1000);
  EXPECT_EQ(zero.lo, 0.0);
  const auto all = wilson(1000, 1000);
  EXPECT_EQ(all.hi, 1.0);
  EXPECT_LT(all.lo, 1.0);
  const auto none = wilson(0, 0);
  EXPECT_EQ(none.lo, 0.0);
  EXPECT_EQ(none.hi, 1.0);
  EXPECT_THROW((void)wilson(3, 2), Error);
  // Symmetry: the interval for k/n mirrors the one for (n-k)/n.
  const auto a = wilson(3, 17);
  const auto b = wilson(14, 17);
  EXPECT_NEAR(a.lo, 1.0 - b.hi, 1e-12);
  EXPECT_NEAR(a.hi, 1.0 - b.lo, 1e-12);
  // A 99% interval is wider.
  const auto w99 = wilson(8, 10, 2.5758293035489);
  EXPECT_LT(w99.lo, wilson(8, 10).lo);
}

}  // namespace
}  // namespace numcheck::stats
