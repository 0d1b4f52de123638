#pragma once
// Hash tables of strings for hot per-record loops: open addressing with linear probing over a
// power-of-two table kept at most half full, each slot holding the key's hash, so an insert or a
// lookup allocates nothing (std::unordered_set allocates a node per key).
// - StringViewSet stores views: the caller keeps the viewed bytes alive and unchanged while the set
//   is used.
// - position_insert / position_find index keys that live elsewhere (records, a text buffer) by
//   position; StringPositions is such a table over a vector of strings. They hold positions, not
//   views, so the keys and their index can be copied or moved together and stay valid.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace numcheck {

namespace detail {
// The smallest power-of-two table (at least 16 slots) that keeps `expected` keys at most half full.
inline std::size_t table_capacity(std::size_t expected) {
  std::size_t c = 16;
  while (c < 2 * expected) c *= 2;
  return c;
}
}  // namespace detail

// A 64-bit hash of a short string (words, ids): 8 bytes at a time, multiply-xorshift mixing. Fast
// for short keys; a poor spread only costs time, never correctness. Used by the retrieval
// index's term tables and the orbit benchmark index (whose cache file stores tables built with it:
// changing it changes that file's format, see orbit/index_cache.cpp).
inline std::uint64_t short_string_hash(std::string_view t) noexcept {
  std::uint64_t h = 0x9E3779B97F4A7C15ull ^ (t.size() * 0xFF51AFD7ED558CCDull);
  std::size_t i = 0;
  for (; i + 8 <= t.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, t.data() + i, 8);
    h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  }
  if (i < t.size()) {
    std::uint64_t w = 0;
    std::memcpy(&w, t.data() + i, t.size() - i);
    h = (h ^ w) * 0x94D049BB133111EBull;
    h ^= h >> 29;
  }
  return h * 0xBF58476D1CE4E5B9ull ^ (h >> 32);
}

// A transparent hash for std::unordered_map<std::string, T, StringHash, std::equal_to<>>: find
// and count take a std::string_view (or a literal) without building a std::string.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

// Open addressing over positions, for keys that live elsewhere (a vector of records, a text
// buffer): a table of slots, each 0 (empty) or 1 + the position of a key, a power of two in size and
// at most half full. `key_of(i)` gives key i's text. `Slots` is a vector (std::vector,
// core::LargeVector) of
// - std::uint32_t: the position alone; a probe compares the text it lands on. The orbit benchmark
//   index (orbit/index.hpp) stores such tables in its cache file, so their placement rule is that
//   file's format.
// - std::uint64_t: the hash's upper 32 bits beside the position, so that a probe compares text only
//   when they match (a key's text is often a cache miss away: orbit/benchmark.hpp's indexes).
template <typename Slots, typename KeyOf>
[[nodiscard]] std::optional<std::size_t> position_find(const Slots& slots, std::string_view key,
                                                       std::uint64_t hash, const KeyOf& key_of) {
  using Slot = std::remove_cvref_t<decltype(slots[0])>;
  static_assert(std::is_same_v<Slot, std::uint32_t> || std::is_same_v<Slot, std::uint64_t>);
  if (slots.empty()) return std::nullopt;
  const std::size_t mask = slots.size() - 1;
  for (std::size_t h = hash & mask; slots[h] != 0; h = (h + 1) & mask) {
    if constexpr (std::is_same_v<Slot, std::uint64_t>) {
      if ((slots[h] >> 32) != (hash >> 32)) continue;
      const std::size_t pos = static_cast<std::uint32_t>(slots[h]) - 1;
      if (key_of(pos) == key) return pos;
    } else {
      if (key_of(slots[h] - 1) == key) return slots[h] - 1;
    }
  }
  return std::nullopt;
}

namespace detail {
// The slot for position `pos` of a key hashed `hash`.
template <typename Slot>
Slot position_slot(std::size_t pos, std::uint64_t hash) {
  if constexpr (std::is_same_v<Slot, std::uint64_t>) return (hash >> 32 << 32) | (pos + 1);
  return static_cast<Slot>(pos + 1);
}
}  // namespace detail

// Adds key (hash `hash`) as position `count` (the table holds keys 0..count-1) unless it is there;
// returns whether it added. Grows at half full, re-placing keys 0..count-1 in order with their
// `hash_of(key)`. Positions are 32-bit: the caller keeps count below 2^32 - 1.
template <typename Slots, typename KeyOf, typename HashOf>
bool position_insert(Slots& slots, std::size_t count, std::string_view key, std::uint64_t hash,
                     const KeyOf& key_of, const HashOf& hash_of) {
  using Slot = std::remove_cvref_t<decltype(slots[0])>;
  if (position_find(slots, key, hash, key_of)) return false;
  if ((count + 1) * 2 > slots.size()) {
    slots.assign(std::max(detail::table_capacity(count + 1), slots.size() * 2), 0);
    const std::size_t mask = slots.size() - 1;
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint64_t hi = hash_of(key_of(i));
      std::size_t h = hi & mask;
      while (slots[h] != 0) h = (h + 1) & mask;
      slots[h] = detail::position_slot<Slot>(i, hi);
    }
  }
  const std::size_t mask = slots.size() - 1;
  std::size_t h = hash & mask;
  while (slots[h] != 0) h = (h + 1) & mask;
  slots[h] = detail::position_slot<Slot>(count, hash);
  return true;
}

class StringViewSet {
 public:
  // Room for `expected` keys before the first growth.
  explicit StringViewSet(std::size_t expected = 0) { rehash(capacity_for(expected)); }

  // Inserts s; true when it was not in the set.
  bool insert(std::string_view s) {
    if (2 * (size_ + 1) > slots_.size()) rehash(2 * slots_.size());
    const std::size_t h = std::hash<std::string_view>{}(s);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (!slot.used) {
        slot = {h, s, true};
        ++size_;
        return true;
      }
      if (slot.hash == h && slot.key == s) return false;
    }
  }

  [[nodiscard]] bool contains(std::string_view s) const {
    const std::size_t h = std::hash<std::string_view>{}(s);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (!slot.used) return false;
      if (slot.hash == h && slot.key == s) return true;
    }
  }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  struct Slot {
    std::size_t hash = 0;
    std::string_view key;
    bool used = false;
  };
  std::vector<Slot> slots_;
  std::size_t size_ = 0, mask_ = 0;

  static std::size_t capacity_for(std::size_t expected) { return detail::table_capacity(expected); }
  void rehash(std::size_t capacity) {
    std::vector<Slot> old(capacity);
    old.swap(slots_);
    mask_ = capacity - 1;
    for (const Slot& slot : old) {
      if (!slot.used) continue;
      std::size_t i = slot.hash & mask_;
      while (slots_[i].used) i = (i + 1) & mask_;
      slots_[i] = slot;
    }
  }
};

class StringPositions {
 public:
  // Indexes keys; of a repeated key the first position is kept.
  void build(const std::vector<std::string>& keys) {
    // Sized for every key up front, so position_insert never re-places (positions of repeated keys
    // are skipped, which re-placing 0..count-1 would not allow).
    slots_.assign(detail::table_capacity(keys.size()), 0);
    const auto key_of = [&keys](std::size_t i) -> std::string_view { return keys[i]; };
    for (std::size_t i = 0; i < keys.size(); ++i)
      (void)position_insert(slots_, i, keys[i], short_string_hash(keys[i]), key_of, &short_string_hash);
  }

  // 1 + the position of s in keys (the vector given to build), or 0 when it is not there.
  [[nodiscard]] std::size_t find(const std::vector<std::string>& keys, std::string_view s) const {
    const auto at = position_find(slots_, s, short_string_hash(s),
                                  [&keys](std::size_t i) -> std::string_view { return keys[i]; });
    return at ? *at + 1 : 0;
  }

 private:
  std::vector<std::uint64_t> slots_;  // position_insert's slots: a hash's upper half, 1 + position
};

}  // namespace numcheck
