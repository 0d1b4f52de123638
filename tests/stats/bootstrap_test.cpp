// Clustered bootstrap: reproducibility across thread counts, resample counts, percentile
// intervals, and coverage by simulation on a case with a known answer.
#include "stats/bootstrap.hpp"

#include <bit>
#include <cmath>
#include <limits>
#include <numeric>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/prng.hpp"

namespace numcheck::stats {
namespace {

TEST(Bootstrap, CountsSumToClusterCountAndAreReproducible) {
  ClusterCounts a, b;
  draw_counts(1000, 7, 3, a);
  draw_counts(1000, 7, 3, b);
  EXPECT_EQ(a, b);
  EXPECT_EQ(std::accumulate(a.begin(), a.end(), std::uint64_t{0}), 1000u);
  draw_counts(1000, 7, 4, b);
  EXPECT_NE(a, b);
  // About 1 - 1/e of the clusters appear in a resample of size n.
  const auto present = std::count_if(a.begin(), a.end(), [](auto c) { return c > 0; });
  EXPECT_GT(present, 580);
  EXPECT_LT(present, 680);
  draw_counts(0, 7, 0, a);
  EXPECT_TRUE(a.empty());
}

TEST(Bootstrap, IdenticalWhateverTheThreadCount) {
  std::vector<double> x(300);
  Rng rng(11);
  for (auto& v : x) v = rng.unit();
  auto mean = [&](const ClusterCounts& c) {
    double s = 0;
    for (std::size_t i = 0; i < c.size(); ++i) s += c[i] * x[i];
    return s / static_cast<double>(c.size());
  };
  const auto one = bootstrap_counts(x.size(), 257, 99, mean, 1);
  for (unsigned t : {2u, 3u, 7u, 0u}) {
    EXPECT_EQ(bootstrap_counts(x.size(), 257, 99, mean, t), one) << t << " threads";
  }
  // for_each_draw: every draw once, with draw_counts' counts, whatever the thread count.
  for (unsigned t : {1u, 2u, 5u}) {
    std::vector<int> seen(257, 0);
    std::vector<ClusterCounts> got(257);
    for_each_draw(
        x.size(), 257, 99,
        [&](std::size_t d, const ClusterCounts& c) {
          ++seen[d];
          got[d] = c;
        },
        t);
    for (std::size_t d = 0; d < 257; ++d) {
      ASSERT_EQ(seen[d], 1) << d;
      ClusterCounts want;
      draw_counts(x.size(), 99, d, want);
      ASSERT_EQ(got[d], want) << d << " with " << t << " threads";
    }
  }
  const auto multi = bootstrap_counts_multi(
      x.size(), 257, 99, 2,
      [&](const ClusterCounts& c, std::span<double> out) {
        out[0] = mean(c);
        out[1] = -mean(c);
      },
      3);
  ASSERT_EQ(multi.size(), 2u);
  EXPECT_EQ(multi[0], one);
  for (std::size_t d = 0; d < one.size(); ++d) EXPECT_EQ(multi[1][d], -one[d]);
  EXPECT_NE(bootstrap_counts(x.size(), 257, 100, mean, 1), one) << "the seed matters";
}

// The sparse integer sum equals the plain sum over every cluster (or a subset), for 0/1 values
// (one shared deviation), values with several deviations, a constant vector (nothing listed) and
// the empty frame, on many draws.
TEST(Bootstrap, CountSumEqualsThePlainSum) {
  Rng rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = trial == 0 ? 0 : 1 + rng.below(400);
    std::vector<int> x(n);
    std::vector<std::uint8_t> flags(n);
    const int kind = trial % 4;  // 0/1 mostly ones, 0/1 mostly zeros, small ints, constant
    for (std::size_t i = 0; i < n; ++i) {
      if (kind == 0) x[i] = rng.below(10) < 7 ? 1 : 0;
      if (kind == 1) x[i] = rng.below(10) < 2 ? 1 : 0;
      if (kind == 2) x[i] = static_cast<int>(rng.below(7)) - 3;
      if (kind == 3) x[i] = 4;
      flags[i] = static_cast<std::uint8_t>(rng.below(3));
    }
    std::vector<std::uint32_t> subset;
    for (std::size_t i = 0; i < n; ++i) {
      if (rng.below(2) == 0) subset.push_back(static_cast<std::uint32_t>(i));
    }
    const CountSum all = CountSum::over(x);
    const CountSum part = CountSum::over(flags, subset);
    ClusterCounts c;
    for (std::uint64_t d = 0; d < 5; ++d) {
      draw_counts(n, 17 + trial, d, c);
      std::int64_t want_all = 0, want_part = 0, subset_total = 0;
      for (std::size_t i = 0; i < n; ++i) want_all += std::int64_t{x[i]} * c[i];
      for (auto i : subset) {
        want_part += std::int64_t{flags[i]} * c[i];
        subset_total += c[i];
      }
      ASSERT_EQ(all.eval(c, static_cast<std::int64_t>(n)), want_all) << "trial " << trial;
      ASSERT_EQ(part.eval(c, subset_total), want_part) << "trial " << trial;
    }
  }
}

TEST(Bootstrap, ExceptionsFromTheStatisticPropagate) {
  EXPECT_THROW((void)bootstrap_counts(
                   10, 100, 1, [](const ClusterCounts&) -> double { fail("boom"); }, 2),
               Error);
}

TEST(Bootstrap, PercentileInterval) {
  std::vector<double> v(101);
  std::iota(v.begin(), v.end(), 0.0);  // 0..100
  const auto i95 = percentile_interval(v, 0.95);
  EXPECT_NEAR(i95.lo, 2.5, 1e-12);
  EXPECT_NEAR(i95.hi, 97.5, 1e-12);
  const auto i90 = percentile_interval(v, 0.90);
  EXPECT_NEAR(i90.lo, 5.0, 1e-12);
  EXPECT_NEAR(i90.hi, 95.0, 1e-12);
  EXPECT_THROW((void)percentile_interval({}, 0.95), Error);
  EXPECT_THROW((void)percentile_interval({1.0}, 1.0), Error);
}

// Counting gives the interval selection gives, bit for bit, on integer totals of any spread
// (ties, negatives, one value, a range too wide to count), at any level; non-integers, NaN and
// infinities take the selection path with its results and errors.
TEST(Bootstrap, IntervalOfTotalsIsTheSelectionIntervalBitForBit) {
  Rng rng(11);
  const auto same = [](const Interval& a, const Interval& b) {
    return std::bit_cast<std::uint64_t>(a.lo) == std::bit_cast<std::uint64_t>(b.lo) &&
           std::bit_cast<std::uint64_t>(a.hi) == std::bit_cast<std::uint64_t>(b.hi);
  };
  for (int round = 0; round < 300; ++round) {
    const std::size_t draws = 1 + rng.below(round % 3 == 0 ? 40 : 3000);
    const std::uint64_t width = std::uint64_t{1} << rng.below(round % 10 == 0 ? 40 : 12);
    const auto shift = static_cast<std::int64_t>(rng.below(2 * width + 1)) - static_cast<std::int64_t>(width);
    std::vector<double> totals(draws);
    for (auto& t : totals) t = static_cast<double>(static_cast<std::int64_t>(rng.below(width)) + shift);
    const double n = static_cast<double>(1 + rng.below(5000));
    for (const double level : {0.95, 0.9, 0.5, 0.999}) {
      std::vector<double> scaled(totals.size());
      for (std::size_t d = 0; d < totals.size(); ++d) scaled[d] = totals[d] / n;
      const Interval want = percentile_interval(scaled, level);
      const Interval got = percentile_interval_of_totals(totals, n, level);
      EXPECT_TRUE(same(want, got)) << "round " << round << " level " << level << ": " << want.lo << ","
                                   << want.hi << " vs " << got.lo << "," << got.hi;
    }
  }
  const std::vector<double> halves{0.5, 1.5, -2.5, 3.0};
  std::vector<double> scaled{0.25, 0.75, -1.25, 1.5};
  EXPECT_TRUE(same(percentile_interval_of_totals(halves, 2.0), percentile_interval(scaled)));
  const std::vector<double> inf{1.0, std::numeric_limits<double>::infinity(), 2.0};
  EXPECT_EQ(percentile_interval_of_totals(inf, 1.0, 0.5).hi, percentile_interval(inf, 0.5).hi);
  EXPECT_THROW((void)percentile_interval_of_totals(std::vector<double>{1.0, std::nan("")}, 1.0), Error);
  EXPECT_THROW((void)percentile_interval_of_totals({}, 1.0), Error);
  EXPECT_THROW((void)percentile_interval_of_totals(std::vector<double>{1.0}, 0.0), Error);
  EXPECT_THROW((void)percentile_interval_of_totals(std::vector<double>{1.0}, 1.0, 1.0), Error);
}

// Coverage by simulation. Population: clusters of 4 binary items sharing a cluster-level success
// probability of 0.1 or 0.5 (each with probability 1/2), so items within a cluster are correlated
// and the population mean is exactly 0.3. For 200 simulated data sets of 150 clusters (fixed
// seed), the 95% percentile interval of the clustered bootstrap (400 draws) must cover 0.3 in
// about 95% of them; with 200 data sets the binomial standard error is 1.5 points, so we accept
// [0.89, 0.99]. An item-level bootstrap that ignores the clustering is checked to under-cover,
// which shows the simulation can tell the two apart.
TEST(Bootstrap, ClusteredPercentileIntervalCoversTheKnownMean) {
  constexpr double kTrue = 0.3;
  constexpr std::size_t kClusters = 150, kItems = 4, kDataSets = 200, kDraws = 400;
  Rng world(20260725, "bootstrap-coverage");
  int covered = 0, naive_covered = 0;
  for (std::size_t ds = 0; ds < kDataSets; ++ds) {
    std::vector<double> successes(kClusters);
    std::vector<double> items;
    for (std::size_t i = 0; i < kClusters; ++i) {
      const double p = world.below(2) == 0 ? 0.1 : 0.5;
      for (std::size_t j = 0; j < kItems; ++j) {
        const double y = world.unit() < p ? 1.0 : 0.0;
        successes[i] += y;
        items.push_back(y);
      }
    }
    const auto reps = bootstrap_counts(
        kClusters, kDraws, 1000 + ds,
        [&](const ClusterCounts& c) {
          double s = 0;
          for (std::size_t i = 0; i < c.size(); ++i) s += c[i] * successes[i];
          return s / static_cast<double>(kClusters * kItems);
        },
        2);
    const auto ci = percentile_interval(reps);
    covered += (ci.lo <= kTrue && kTrue <= ci.hi) ? 1 : 0;
    // Each item its own cluster: wrong for these data (intervals too narrow).
    const auto naive = bootstrap_counts(
        items.size(), kDraws, 5000 + ds,
        [&](const ClusterCounts& c) {
          double s = 0;
          for (std::size_t i = 0; i < c.size(); ++i) s += c[i] * items[i];
          return s / static_cast<double>(items.size());
        },
        2);
    const auto nci = percentile_interval(naive);
    naive_covered += (nci.lo <= kTrue && kTrue <= nci.hi) ? 1 : 0;
  }
  const double coverage = covered / static_cast<double>(kDataSets);
  const double naive_coverage = naive_covered / static_cast<double>(kDataSets);
  EXPECT_GE(coverage, 0.89);
  EXPECT_LE(coverage, 0.99);
  EXPECT_LT(naive_coverage, coverage - 0.04) << "item-level bootstrap should under-cover";
}

}  // namespace
}  // namespace numcheck::stats
