#pragma once
// Hash tables of strings for hot per-record loops: open addressing with linear probing over a
// power-of-two table kept at most half full, each slot holding the key's hash, so an insert or a
// lookup allocates nothing (std::unordered_set allocates a node per key).
// - StringViewSet stores views: the caller keeps the viewed bytes alive and unchanged while the set
//   is used.
// - StringPositions indexes the strings of a vector by position: it holds positions, not views,
//   so the vector and its index can be copied or moved together and stay valid.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
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
    slots_.assign(detail::table_capacity(keys.size()), Slot{});
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const std::size_t h = std::hash<std::string_view>{}(keys[i]);
      std::size_t j = h & mask;
      while (slots_[j].pos != 0 && !(slots_[j].hash == h && keys[slots_[j].pos - 1] == keys[i]))
        j = (j + 1) & mask;
      if (slots_[j].pos == 0) slots_[j] = {h, i + 1};
    }
  }

  // 1 + the position of s in keys (the vector given to build), or 0 when it is not there.
  [[nodiscard]] std::size_t find(const std::vector<std::string>& keys, std::string_view s) const {
    if (slots_.empty()) return 0;
    const std::size_t mask = slots_.size() - 1;
    const std::size_t h = std::hash<std::string_view>{}(s);
    for (std::size_t j = h & mask; slots_[j].pos != 0; j = (j + 1) & mask)
      if (slots_[j].hash == h && keys[slots_[j].pos - 1] == s) return slots_[j].pos;
    return 0;
  }

 private:
  struct Slot {
    std::size_t hash = 0;
    std::size_t pos = 0;  // 1 + position in keys; 0: empty
  };
  std::vector<Slot> slots_;
};

}  // namespace numcheck
