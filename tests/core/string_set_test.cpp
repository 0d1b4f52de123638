// StringViewSet: first insert of a key true, later ones false; lookups agree with std::set
// through many growths, with keys that share prefixes and the empty key.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/string_set.hpp"

namespace numcheck {
namespace {

TEST(StringViewSet, AgreesWithStdSetThroughGrowth) {
  std::vector<std::string> keys;
  keys.reserve(3000 + 1);
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
  keys.reserve(3000 + 1);
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

// position_insert / position_find, with 32-bit slots (position only) and 64-bit slots (a hash tag
// beside it): a table of positions into a vector of keys agrees with a map of first positions
// through many growths (a repeated key is refused and the table unchanged), and a table sized up
// front for every key finds the same positions without growing.
template <typename Slot>
void position_table_agrees_with_a_map() {
  std::vector<std::string> keys;
  keys.reserve(5000 + 1);
  for (int i = 0; i < 5000; ++i) keys.push_back("CV-" + std::to_string(i % 4000) + ":unit");
  keys.emplace_back("");
  const auto hash = [](std::string_view s) { return short_string_hash(s); };
  std::vector<std::string> stored;  // the keys the table holds, by position
  const auto key_of = [&stored](std::size_t i) -> std::string_view { return stored[i]; };
  std::vector<Slot> grown;
  std::map<std::string, std::size_t> first;
  for (const auto& k : keys) {
    const bool fresh = first.emplace(k, stored.size()).second;
    ASSERT_EQ(position_insert(grown, stored.size(), k, hash(k), key_of, hash), fresh) << k;
    if (fresh) stored.push_back(k);
  }
  ASSERT_EQ(stored.size(), first.size());
  EXPECT_EQ(grown.size(), detail::table_capacity(stored.size()));
  std::vector<Slot> presized(detail::table_capacity(stored.size()), 0);
  for (std::size_t i = 0; i < stored.size(); ++i)
    ASSERT_TRUE(position_insert(presized, i, stored[i], hash(stored[i]), key_of, hash));
  EXPECT_EQ(presized.size(), grown.size());  // never grew
  for (const auto& [k, pos] : first) {
    EXPECT_EQ(position_find(grown, k, hash(k), key_of), pos) << k;
    EXPECT_EQ(position_find(presized, k, hash(k), key_of), pos) << k;
  }
  for (const char* k : {"CV-4000:unit", "CV-1", "CV-1:uni", "x"}) {
    EXPECT_EQ(position_find(grown, k, hash(k), key_of), std::nullopt) << k;
  }
  // A key whose hash is another's is still told apart by its text.
  const auto same_hash = [](std::string_view) { return std::uint64_t{0x1234567800000003}; };
  std::vector<Slot> colliding;
  ASSERT_TRUE(position_insert(colliding, 0, stored[0], same_hash(stored[0]), key_of, same_hash));
  ASSERT_TRUE(position_insert(colliding, 1, stored[1], same_hash(stored[1]), key_of, same_hash));
  EXPECT_EQ(position_find(colliding, stored[1], same_hash(stored[1]), key_of), 1U);
  EXPECT_EQ(position_find(colliding, "x", same_hash("x"), key_of), std::nullopt);
  const std::vector<Slot> empty;
  EXPECT_EQ(position_find(empty, "CV-1:unit", hash("CV-1:unit"), key_of), std::nullopt);
}

TEST(PositionTable, AgreesWithAMapOfFirstPositionsThroughGrowth) {
  position_table_agrees_with_a_map<std::uint32_t>();
  position_table_agrees_with_a_map<std::uint64_t>();
}

}  // namespace
}  // namespace numcheck
