#include "stats/selective.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/error.hpp"
#include "core/prng.hpp"

namespace numcheck::stats {
namespace {

// A small exact fraction for the oracle (values in these tests stay far below overflow).
struct Frac {
  long long p = 0, q = 1;
  Frac() = default;
  Frac(long long v) : p(v), q(1) {}  // NOLINT(google-explicit-constructor)
  Frac(long long a, long long b) : p(a), q(b) { norm(); }
  void norm() {
    if (q < 0) p = -p, q = -q;
    const long long g = std::gcd(p < 0 ? -p : p, q);
    if (g > 1) p /= g, q /= g;
  }
  friend Frac operator+(Frac a, Frac b) { return Frac(a.p * b.q + b.p * a.q, a.q * b.q); }
  friend Frac operator*(Frac a, Frac b) { return Frac(a.p * b.p, a.q * b.q); }
  friend Frac operator/(Frac a, Frac b) { return Frac(a.p * b.q, a.q * b.p); }
  Frac& operator+=(Frac b) { return *this = *this + b; }
  friend bool operator==(Frac a, Frac b) { return a.p == b.p && a.q == b.q; }
  [[nodiscard]] double d() const { return static_cast<double>(p) / static_cast<double>(q); }
};

std::ostream& operator<<(std::ostream& os, Frac f) { return os << f.p << "/" << f.q; }

struct Item {
  std::int64_t score;
  bool wrong;
};

// The oracle: enumerate every permutation of the (distinct) items, keep those consistent with
// descending scores, compute (1/n) sum_k L_k/k for each and average. Each consistent ordering is
// one choice of order within every tie group, so this is the uniform average over tie orderings.
Frac brute_force_aurc(std::vector<Item> items) {
  const std::size_t n = items.size();
  if (n == 0) return Frac(0);
  std::vector<std::size_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  Frac total(0);
  long long count = 0;
  do {
    bool consistent = true;
    for (std::size_t i = 1; i < n && consistent; ++i) {
      consistent = items[idx[i - 1]].score >= items[idx[i]].score;
    }
    if (!consistent) continue;
    Frac a(0);
    long long errors = 0;
    for (std::size_t k = 1; k <= n; ++k) {
      errors += items[idx[k - 1]].wrong ? 1 : 0;
      a += Frac(errors, static_cast<long long>(k));
    }
    total += a / Frac(static_cast<long long>(n));
    ++count;
  } while (std::next_permutation(idx.begin(), idx.end()));
  return total / Frac(count);
}

std::vector<TieGroup> groups_of(const std::vector<Item>& items) {
  std::vector<std::int64_t> s;
  std::vector<std::uint8_t> w;
  for (const auto& it : items) {
    s.push_back(it.score);
    w.push_back(it.wrong ? 1 : 0);
  }
  return tie_groups(s, w);
}

TEST(Aurc, HandComputedValues) {
  // No ties: order fixed. Losses 0,1: (0/1 + 1/2) / 2 = 1/4.
  auto g = groups_of({{3, false}, {2, true}});
  EXPECT_EQ(aurc_tie_averaged<Frac>(g), Frac(1, 4));
  // Reversed: (1/1 + 1/2) / 2 = 3/4.
  g = groups_of({{3, true}, {2, false}});
  EXPECT_EQ(aurc_tie_averaged<Frac>(g), Frac(3, 4));
  // One tie of two with one error: E[L_1] = 1/2, L_2 = 1: (1/2 + 1/2) / 2 = 1/2, the mean of 1/4, 3/4.
  g = groups_of({{1, true}, {1, false}});
  EXPECT_EQ(aurc_tie_averaged<Frac>(g), Frac(1, 2));
  EXPECT_DOUBLE_EQ(aurc(g), 0.5);
  // All correct: zero; all wrong: one.
  g = groups_of({{2, false}, {1, false}, {1, false}});
  EXPECT_EQ(aurc_tie_averaged<Frac>(g), Frac(0));
  EXPECT_EQ(aurc(g), 0.0);
  g = groups_of({{2, true}, {1, true}, {1, true}});
  EXPECT_EQ(aurc_tie_averaged<Frac>(g), Frac(1));
}

TEST(Aurc, EmptyIsZero) {
  std::vector<TieGroup> none;
  EXPECT_EQ(aurc_tie_averaged<Frac>(none), Frac(0));
  EXPECT_EQ(aurc(none), 0.0);
  EXPECT_TRUE(risk_coverage_curve(none).empty());
}

TEST(Aurc, SeedMistralCellOneLastErrorOf120) {
  // The seed's Mistral stochastic representation cell: AURC .000069 = 1/120^2, one wrong base alone
  // in the lowest agreement level of 120 bases.
  std::vector<TieGroup> g = {{3, 100, 0}, {2, 19, 0}, {1, 1, 1}};
  EXPECT_EQ(aurc_tie_averaged<Frac>(g), Frac(1, 14400));
  EXPECT_NEAR(aurc(g), 1.0 / 14400.0, 1e-18);
}

TEST(Aurc, MatchesBruteForceOverAllOrderings) {
  Rng rng(20260725, "selective_test");
  int cases = 0;
  for (int round = 0; round < 400; ++round) {
    const auto n = static_cast<std::size_t>(rng.between(1, 7));
    const auto levels = rng.between(1, 4);  // few levels: many ties
    std::vector<Item> items;
    for (std::size_t i = 0; i < n; ++i) {
      items.push_back({rng.between(0, levels - 1), rng.below(3) == 0});
    }
    const auto g = groups_of(items);
    const Frac exact = aurc_tie_averaged<Frac>(g);
    const Frac oracle = brute_force_aurc(items);
    ASSERT_EQ(exact, oracle) << "case " << round << " n=" << n;
    ASSERT_NEAR(aurc(g), oracle.d(), 1e-12);
    ++cases;
  }
  EXPECT_EQ(cases, 400);
}

TEST(Aurc, WeightsEqualRepeatedItems) {
  Rng rng(7, "weights");
  for (int round = 0; round < 200; ++round) {
    const auto n = static_cast<std::size_t>(rng.between(1, 4));
    std::vector<std::int64_t> s;
    std::vector<std::uint8_t> w;
    std::vector<std::uint64_t> weight;
    std::vector<Item> expanded;
    for (std::size_t i = 0; i < n; ++i) {
      s.push_back(rng.between(0, 2));
      w.push_back(rng.below(2) == 0 ? 1 : 0);
      weight.push_back(rng.below(3));  // 0, 1 or 2 copies
      for (std::uint64_t c = 0; c < weight.back(); ++c) expanded.push_back({s.back(), w.back() != 0});
    }
    const auto g = tie_groups(s, w, weight);
    EXPECT_EQ(total_items(g), expanded.size());
    ASSERT_EQ(aurc_tie_averaged<Frac>(g), brute_force_aurc(expanded)) << "case " << round;
  }
}

TEST(Aurc, GroupsAreDescendingAndSkipZeroWeights) {
  std::vector<std::int64_t> s = {1, 3, 2, 3, 0};
  std::vector<std::uint8_t> w = {1, 0, 1, 1, 1};
  std::vector<std::uint64_t> weight = {1, 1, 2, 1, 0};
  const auto g = tie_groups(s, w, weight);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0].score, 3);
  EXPECT_EQ(g[0].size, 2u);
  EXPECT_EQ(g[0].errors, 1u);
  EXPECT_EQ(g[1].score, 2);
  EXPECT_EQ(g[1].size, 2u);
  EXPECT_EQ(g[1].errors, 2u);
  EXPECT_EQ(g[2].score, 1);
  EXPECT_EQ(g[2].size, 1u);
}

TEST(Aurc, MismatchedLengthsThrow) {
  std::vector<std::int64_t> s = {1, 2};
  std::vector<std::uint8_t> w = {1};
  EXPECT_THROW((void)tie_groups(s, w), Error);
  std::vector<std::uint8_t> w2 = {1, 0};
  std::vector<std::uint64_t> weight = {1};
  EXPECT_THROW((void)tie_groups(s, w2, weight), Error);
}

TEST(RiskCoverage, CurveInterpolatesInsideTiesAndAveragesToAurc) {
  // Scores 2,1,1,1 with errors on one of the three tied items.
  std::vector<TieGroup> g = {{2, 1, 0}, {1, 3, 1}};
  const auto c = risk_coverage_curve(g);
  ASSERT_EQ(c.size(), 4u);
  EXPECT_DOUBLE_EQ(c[0].risk, 0.0);
  EXPECT_DOUBLE_EQ(c[1].risk, (1.0 / 3.0) / 2.0);
  EXPECT_DOUBLE_EQ(c[2].risk, (2.0 / 3.0) / 3.0);
  EXPECT_DOUBLE_EQ(c[3].risk, 1.0 / 4.0);
  EXPECT_DOUBLE_EQ(c[3].coverage, 1.0);
  double mean = 0;
  for (const auto& p : c) mean += p.risk;
  EXPECT_NEAR(mean / 4.0, aurc(g), 1e-15);
}

TEST(RiskCoverage, OperatingPointsAtGroupBoundaries) {
  std::vector<TieGroup> g = {{3, 5, 0}, {2, 3, 1}, {0, 2, 2}};
  const auto pts = operating_points(g);
  ASSERT_EQ(pts.size(), 3u);
  EXPECT_EQ(pts[0].threshold, 3);
  EXPECT_EQ(pts[0].accepted, 5u);
  EXPECT_EQ(pts[0].errors, 0u);
  EXPECT_DOUBLE_EQ(*pts[0].risk(), 0.0);
  EXPECT_DOUBLE_EQ(pts[1].coverage(), 0.8);
  EXPECT_DOUBLE_EQ(*pts[1].risk(), 1.0 / 8.0);
  EXPECT_EQ(pts[2].accepted, 10u);
  EXPECT_DOUBLE_EQ(*pts[2].risk(), 0.3);
  const auto none = operating_point(g, 4);
  EXPECT_EQ(none.accepted, 0u);
  EXPECT_FALSE(none.risk().has_value());
  EXPECT_EQ(none.n, 10u);
}

}  // namespace
}  // namespace numcheck::stats
