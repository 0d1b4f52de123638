#pragma once
// The project's own pseudorandom numbers. Everything that must be byte-identical across runs and
// machines (benchmark generation, bootstrap resampling, injected faults) draws from Rng, never from
// std:: distributions, whose outputs the standard leaves to each library.
//
// Generator: xoshiro256** (Blackman & Vigna, "Scrambled linear pseudorandom number generators",
// ACM TOMS 2021), state seeded by SplitMix64 (Steele, Lea & Flood, OOPSLA 2014). Range reduction:
// Lemire's multiply-shift with rejection ("Fast random integer generation in an interval",
// ACM TOMACS 2019), exact and unbiased.
#include <cstdint>
#include <string_view>
#include <vector>

namespace numcheck {

// SplitMix64 step: advances `state` and returns the next output.
[[nodiscard]] std::uint64_t splitmix64(std::uint64_t& state) noexcept;

// FNV-1a 64-bit hash of a byte string (used only to name streams, not for security).
[[nodiscard]] std::uint64_t fnv1a64(std::string_view bytes) noexcept;

class Rng {
 public:
  // A stream from a 64-bit seed.
  explicit Rng(std::uint64_t seed) noexcept;
  // A private stream named by (seed, name): Rng(20260725, "CV") and Rng(20260725, "DD") are
  // independent streams, and neither depends on how much the other was used.
  Rng(std::uint64_t seed, std::string_view stream_name) noexcept;

  // Defined here, inline: the bootstrap draws tens of millions of these per report.
  [[nodiscard]] std::uint64_t next() noexcept {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform integer in [0, bound); bound must be > 0. Lemire's method with rejection (Lemire 2019,
  // Algorithm 5, on 64-bit words with a 128-bit product).
  [[nodiscard]] std::uint64_t below(std::uint64_t bound) noexcept {
    __extension__ typedef unsigned __int128 u128;
    u128 m = static_cast<u128>(next()) * bound;
    auto low = static_cast<std::uint64_t>(m);
    if (low < bound) {
      const std::uint64_t threshold = (0 - bound) % bound;
      while (low < threshold) {
        m = static_cast<u128>(next()) * bound;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }
  // Uniform integer in [lo, hi], inclusive; lo <= hi.
  [[nodiscard]] std::int64_t between(std::int64_t lo, std::int64_t hi) noexcept;
  // Uniform double in [0, 1) with 53 random bits (for sampling decisions only, never labels).
  [[nodiscard]] double unit() noexcept;
  // A fresh independent stream derived from this one (for per-thread or per-task streams).
  [[nodiscard]] Rng split(std::uint64_t index) const noexcept;

  // Fisher-Yates shuffle with below().
  template <typename T>
  void shuffle(std::vector<T>& v) noexcept {
    for (std::size_t i = v.size(); i > 1; --i) {
      std::size_t j = static_cast<std::size_t>(below(i));
      std::swap(v[i - 1], v[j]);
    }
  }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace numcheck
