// Inclusive-method quantiles against numpy / Excel values.
#include "stats/descriptive.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/prng.hpp"

namespace numcheck::stats {
namespace {

TEST(Quantile, MatchesNumpyLinearAndExcelInc) {
  // numpy.percentile([1,2,3,4], [25,50,75]) = 1.75, 2.5, 3.25
  EXPECT_DOUBLE_EQ(q1({4, 1, 3, 2}), 1.75);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(q3({4, 1, 3, 2}), 3.25);
  // Excel QUARTILE.INC({1..10}, 1) = 3.25, (…, 3) = 7.75
  std::vector<double> ten{10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
  EXPECT_DOUBLE_EQ(q1(ten), 3.25);
  EXPECT_DOUBLE_EQ(median(ten), 5.5);
  EXPECT_DOUBLE_EQ(q3(ten), 7.75);
  // numpy.quantile([7, 15, 36, 39, 40, 41], 0.25) = 20.25 (Hyndman & Fan type 7)
  EXPECT_DOUBLE_EQ(q1({7, 15, 36, 39, 40, 41}), 20.25);
  EXPECT_DOUBLE_EQ(q3({7, 15, 36, 39, 40, 41}), 39.75);
  EXPECT_DOUBLE_EQ(quantile_inclusive({7, 15, 36, 39, 40, 41}, 0.9), 40.5);
  EXPECT_DOUBLE_EQ(quantile_inclusive({3, 1, 2}, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile_inclusive({3, 1, 2}, 1.0), 3.0);
  EXPECT_DOUBLE_EQ(median({42}), 42.0);
  const auto q = quartiles_inclusive({7, 15, 36, 39, 40, 41});
  EXPECT_DOUBLE_EQ(q.q1, 20.25);
  EXPECT_DOUBLE_EQ(q.median, 37.5);
  EXPECT_DOUBLE_EQ(q.q3, 39.75);
}

TEST(Quantile, SelectionAgreesWithSorting) {
  Rng rng(3);
  for (std::size_t n : {1u, 2u, 3u, 10u, 101u, 1000u}) {
    std::vector<double> v(n);
    for (auto& x : v) x = static_cast<double>(rng.below(50));  // many ties
    for (double q : {0.0, 0.025, 0.25, 0.5, 0.75, 0.975, 1.0}) {
      auto copy = v;
      EXPECT_EQ(quantile_select(copy, q), quantile_inclusive(v, q)) << n << " " << q;
    }
  }
}

TEST(Quantile, RejectsBadInput) {
  EXPECT_THROW((void)median({}), Error);
  EXPECT_THROW((void)quantile_inclusive({1, 2}, 1.5), Error);
  EXPECT_THROW((void)quantile_inclusive({1, 2}, -0.1), Error);
  EXPECT_THROW((void)median({1, std::nan("")}), Error);
}

}  // namespace
}  // namespace numcheck::stats
