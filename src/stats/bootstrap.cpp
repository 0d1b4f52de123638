#include "stats/bootstrap.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <exception>
#include <map>
#include <mutex>

#include "core/error.hpp"
#include "core/ordered_parallel.hpp"
#include "core/prng.hpp"
#include "stats/descriptive.hpp"

namespace numcheck::stats {

void draw_counts(std::size_t n_clusters, std::uint64_t seed, std::uint64_t draw, ClusterCounts& counts) {
  counts.assign(n_clusters, 0);
  if (n_clusters == 0) return;
  Rng rng = Rng(seed).split(draw);
  const auto n = static_cast<std::uint64_t>(n_clusters);
  for (std::size_t i = 0; i < n_clusters; ++i) ++counts[rng.below(n)];
}

void CountSum::add(std::uint32_t cluster, std::int64_t deviation) {
  if (idx_.empty()) {
    weight_ = deviation;
  } else if (weight_ != deviation && weight_ != 0) {
    w_.assign(idx_.size(), weight_);
    weight_ = 0;
  }
  idx_.push_back(cluster);
  if (weight_ == 0) w_.push_back(deviation);
}

CountSum CountSum::over(std::span<const int> x) {
  CountSum s;
  // The most common value (the smallest on a tie).
  std::map<int, std::size_t> freq;
  for (int v : x) ++freq[v];
  std::size_t best = 0;
  for (const auto& [v, n] : freq) {
    if (n > best) {
      best = n;
      s.mode_ = v;
    }
  }
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i] != s.mode_) s.add(static_cast<std::uint32_t>(i), static_cast<std::int64_t>(x[i]) - s.mode_);
  }
  return s;
}

CountSum CountSum::over(std::span<const std::uint8_t> x, std::span<const std::uint32_t> subset) {
  CountSum s;
  std::array<std::size_t, 256> freq{};
  for (auto i : subset) ++freq[x[i]];
  std::size_t best = 0;
  for (std::size_t v = 0; v < freq.size(); ++v) {
    if (freq[v] > best) {
      best = freq[v];
      s.mode_ = static_cast<std::int64_t>(v);
    }
  }
  for (auto i : subset) {
    if (x[i] != s.mode_) s.add(i, static_cast<std::int64_t>(x[i]) - s.mode_);
  }
  return s;
}

namespace {

unsigned resolve_threads(unsigned threads, std::size_t draws) {
  threads = static_cast<unsigned>(core::thread_count(threads));
  if (draws < threads) threads = static_cast<unsigned>(std::max<std::size_t>(1, draws));
  return threads;
}

// Runs body(first_draw, last_draw) on contiguous blocks of draws, one block per thread
// (core::parallel_for).
void parallel_blocks(std::size_t draws, unsigned threads,
                     const std::function<void(std::size_t, std::size_t)>& body) {
  if (threads <= 1) {
    body(0, draws);
    return;
  }
  core::parallel_for(threads, threads,
                     [&](std::size_t t) { body(draws * t / threads, draws * (t + 1) / threads); });
}

}  // namespace

void for_each_draw(std::size_t n_clusters, std::size_t draws, std::uint64_t seed,
                   const std::function<void(std::size_t draw, const ClusterCounts& counts)>& body,
                   unsigned threads) {
  parallel_blocks(draws, resolve_threads(threads, draws), [&](std::size_t first, std::size_t last) {
    ClusterCounts counts;
    for (std::size_t d = first; d < last; ++d) {
      draw_counts(n_clusters, seed, d, counts);
      body(d, counts);
    }
  });
}

std::vector<std::vector<double>> bootstrap_counts_multi(
    std::size_t n_clusters, std::size_t draws, std::uint64_t seed, std::size_t n_stats,
    const std::function<void(const ClusterCounts& counts, std::span<double> out)>& stat, unsigned threads) {
  std::vector<std::vector<double>> result;
  result.reserve(n_stats);
  for (std::size_t s = 0; s < n_stats; ++s) result.emplace_back(draws, 0.0);
  for_each_draw(
      n_clusters, draws, seed,
      [&](std::size_t d, const ClusterCounts& counts) {
        thread_local std::vector<double> out;  // the thread's scratch, reused from draw to draw
        out.assign(n_stats, 0.0);
        stat(counts, std::span<double>(out));
        for (std::size_t s = 0; s < n_stats; ++s) result[s][d] = out[s];
      },
      threads);
  return result;
}

std::vector<double> bootstrap_counts(std::size_t n_clusters, std::size_t draws, std::uint64_t seed,
                                     const std::function<double(const ClusterCounts& counts)>& stat,
                                     unsigned threads) {
  std::vector<double> result(draws, 0.0);
  for_each_draw(
      n_clusters, draws, seed, [&](std::size_t d, const ClusterCounts& counts) { result[d] = stat(counts); },
      threads);
  return result;
}

Interval percentile_interval(std::vector<double> values, double level) {
  if (values.empty()) fail("percentile interval of no bootstrap replicates");
  if (!(level > 0.0 && level < 1.0)) fail("interval level {} is outside (0, 1)", level);
  const double alpha = (1.0 - level) / 2.0;
  for (double x : values) {
    if (std::isnan(x)) fail("percentile interval: a bootstrap replicate is NaN");
  }
  return {quantile_select(values, alpha), quantile_select(values, 1.0 - alpha)};
}

Interval percentile_interval_of_totals(std::span<const double> totals, double n, double level) {
  if (totals.empty()) fail("percentile interval of no bootstrap replicates");
  if (!(level > 0.0 && level < 1.0)) fail("interval level {} is outside (0, 1)", level);
  if (!(n > 0.0)) fail("percentile interval: the totals' divisor {} is not positive", n);
  const auto scaled = [&] {
    std::vector<double> v(totals.size());
    for (std::size_t d = 0; d < v.size(); ++d) v[d] = totals[d] / n;
    return percentile_interval(std::move(v), level);
  };
  // Integers of at most 2^52 in magnitude (exact in a double and in an int64).
  constexpr double kLimit = 4503599627370496.0;
  double lo = totals[0], hi = totals[0];
  for (const double x : totals) {
    if (!(std::abs(x) <= kLimit) || std::floor(x) != x) return scaled();  // NaN fails the first test
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  const double span = hi - lo + 1.0;
  if (span > 4.0 * static_cast<double>(totals.size()) + 1024.0) return scaled();
  const auto base = static_cast<std::int64_t>(lo);
  std::vector<std::uint32_t> count(static_cast<std::size_t>(span), 0);
  for (const double x : totals) ++count[static_cast<std::size_t>(static_cast<std::int64_t>(x) - base)];
  // The k-th smallest total (0-based), by walking the counts from the smallest.
  const auto order_stat = [&](std::size_t k) {
    std::size_t seen = 0;
    for (std::size_t v = 0; v < count.size(); ++v) {
      seen += count[v];
      if (seen > k) return static_cast<double>(base + static_cast<std::int64_t>(v));
    }
    return hi;
  };
  // The inclusive quantile (stats/descriptive.hpp) of totals / n.
  const auto quantile = [&](double q) {
    return quantile_of_order_stats(totals.size(), q, [&](std::size_t k) { return order_stat(k) / n; });
  };
  const double alpha = (1.0 - level) / 2.0;
  return {quantile(alpha), quantile(1.0 - alpha)};
}

}  // namespace numcheck::stats
