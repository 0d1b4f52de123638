#include "core/prng.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace numcheck {
namespace {

TEST(SplitMix64, MatchesReferenceOutputs) {
  // Reference values of SplitMix64 from state 0 (Vigna's splitmix64.c).
  std::uint64_t s = 0;
  EXPECT_EQ(splitmix64(s), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(splitmix64(s), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(splitmix64(s), 0x06c45d188009454fULL);
}

TEST(Rng, SameSeedSameStream) {
  Rng a(20260725, "CV"), b(20260725, "CV"), c(20260725, "DD");
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next();
    EXPECT_EQ(x, b.next());
    differs |= x != c.next();
  }
  EXPECT_TRUE(differs);
}

TEST(Rng, PinnedOutputsNeverChange) {
  // Pins the generator: if this changes, every generated benchmark changes. Update only together
  // with the generator version.
  Rng r(20260725);
  const std::uint64_t first = r.next();
  Rng again(20260725);
  EXPECT_EQ(first, again.next());
  std::uint64_t sm = 20260725;
  std::uint64_t s0 = splitmix64(sm), s1 = splitmix64(sm);
  (void)s0;
  // xoshiro256** first output is rotl(s1 * 5, 7) * 9.
  const std::uint64_t x = s1 * 5;
  EXPECT_EQ(first, ((x << 7) | (x >> 57)) * 9);
}

TEST(Rng, BelowStaysInRangeAndIsUniform) {
  Rng r(1);
  std::map<std::uint64_t, int> counts;
  const int n = 60000;
  for (int i = 0; i < n; ++i) {
    const auto v = r.below(6);
    ASSERT_LT(v, 6u);
    ++counts[v];
  }
  for (const auto& [v, c] : counts) {
    EXPECT_NEAR(c, n / 6, 400) << "value " << v;  // ~5 standard deviations
  }
  EXPECT_EQ(r.below(1), 0u);
}

TEST(Rng, BetweenIsInclusive) {
  Rng r(2);
  std::set<std::int64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    const auto v = r.between(-2, 2);
    ASSERT_GE(v, -2);
    ASSERT_LE(v, 2);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 5u);
}

TEST(Rng, ShuffleIsAPermutation) {
  Rng r(3);
  std::vector<int> v(100);
  for (int i = 0; i < 100; ++i) v[i] = i;
  r.shuffle(v);
  std::set<int> s(v.begin(), v.end());
  EXPECT_EQ(s.size(), 100u);
  bool moved = false;
  for (int i = 0; i < 100; ++i) moved |= v[i] != i;
  EXPECT_TRUE(moved);
}

TEST(Rng, SplitStreamsDiffer) {
  Rng r(4);
  Rng a = r.split(0), b = r.split(1);
  EXPECT_NE(a.next(), b.next());
}

}  // namespace
}  // namespace numcheck
