// StringViewSet: first insert of a key true, later ones false; lookups agree with std::set
// through many growths, with keys that share prefixes and the empty key.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "core/string_set.hpp"

namespace numcheck {
namespace {

TEST(StringViewSet, AgreesWithStdSetThroughGrowth) {
  std::vector<std::string> keys;
  for (int i = 0; i < 3000; ++i) keys.push_back("k" + std::to_string(i % 1000) + std::string(i % 3, 'x'));
  keys.emplace_back("");
  StringViewSet s;  // default room: grows many times
  std::set<std::string> ref;
  for (const auto& k : keys) EXPECT_EQ(s.insert(k), ref.insert(k).second) << k;
  EXPECT_EQ(s.size(), ref.size());
  for (const auto& k : keys) EXPECT_TRUE(s.contains(k)) << k;
  for (const char* k : {"k1000", "k1x", "k2xx", "x", "k"}) EXPECT_EQ(s.contains(k), ref.count(k) > 0) << k;
  EXPECT_FALSE(s.insert(""));
  StringViewSet presized(keys.size());
  for (const auto& k : keys) presized.insert(k);
  EXPECT_EQ(presized.size(), ref.size());
}

// StringPositions: every key found at 1 + its position (a repeated key at its first), absent keys
// at 0, through growth; a copy of the vector with a copy of the index still agrees (positions, not
// views).
TEST(StringPositions, FindsFirstPositionsAndSurvivesCopies) {
  std::vector<std::string> keys;
  for (int i = 0; i < 3000; ++i) keys.push_back("k" + std::to_string(i % 2500));  // 500 repeats
  keys.emplace_back("");
  StringPositions ix;
  ix.build(keys);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::size_t first =
        static_cast<std::size_t>(std::find(keys.begin(), keys.end(), keys[i]) - keys.begin());
    ASSERT_EQ(ix.find(keys, keys[i]), first + 1) << keys[i];
  }
  EXPECT_EQ(ix.find(keys, "k2500"), 0U);
  EXPECT_EQ(ix.find(keys, "k"), 0U);
  const std::vector<std::string> keys2 = keys;
  const StringPositions ix2 = ix;
  keys.clear();
  EXPECT_EQ(ix2.find(keys2, "k7"), 8U);
  EXPECT_EQ(ix2.find(keys2, ""), 3001U);
  StringPositions empty;
  EXPECT_EQ(empty.find(keys2, "k7"), 0U);
}

}  // namespace
}  // namespace numcheck
