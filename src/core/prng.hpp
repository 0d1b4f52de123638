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

  [[nodiscard]] std::uint64_t next() noexcept;
  // Uniform integer in [0, bound); bound must be > 0. Lemire's method with rejection.
  [[nodiscard]] std::uint64_t below(std::uint64_t bound) noexcept;
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
  std::uint64_t s_[4];
};

}  // namespace numcheck
