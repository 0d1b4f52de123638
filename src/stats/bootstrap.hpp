#pragma once
// Clustered (cluster-level, here base-level) nonparametric bootstrap with the project's own
// PRNG, spread over cores, and percentile intervals.
//
// One draw resamples n clusters with replacement (n independent uniform picks among the n
// clusters) and hands the statistic counts[i] = how many times cluster i was picked, so a
// statistic is a count-weighted sum over clusters: every observation of a cluster (for a paired
// family test, both members of the pair; for an orbit, all its views) moves together. This is the
// cluster bootstrap of Davison & Hinkley, "Bootstrap Methods and their Application" (CUP 1997),
// sec. 3.8, with Efron & Tibshirani, "An Introduction to the Bootstrap" (1993), ch. 13 percentile
// intervals.
//
// Reproducibility: draw d uses the stream Rng(seed).split(d), whatever the thread count, so the
// results are identical for any `threads` (and across machines).
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "stats/interval.hpp"

namespace numcheck::stats {

using ClusterCounts = std::vector<std::uint32_t>;

// The resample counts of draw `draw`: n uniform picks from Rng(seed).split(draw).below(n).
// Exposed so that tests and differential checks can reproduce a draw.
void draw_counts(std::size_t n_clusters, std::uint64_t seed, std::uint64_t draw, ClusterCounts& counts);

// Every draw d in [0, draws) once: body(d, counts) with draw d's counts (draw_counts), called
// concurrently from `threads` threads (threads = 0: std::thread::hardware_concurrency()), each
// taking a contiguous block of draws in increasing order. The functions below are made of it;
// callers that keep replicates in their own form (the report's integer totals) use it directly.
void for_each_draw(std::size_t n_clusters, std::size_t draws, std::uint64_t seed,
                   const std::function<void(std::size_t draw, const ClusterCounts& counts)>& body,
                   unsigned threads = 0);

// B = draws replicates of a scalar statistic; result[d] is the statistic on draw d. `stat` is
// called concurrently from several threads (it must not mutate shared state). threads = 0 uses
// std::thread::hardware_concurrency(). n_clusters = 0 calls stat with an empty vector.
[[nodiscard]] std::vector<double> bootstrap_counts(
    std::size_t n_clusters, std::size_t draws, std::uint64_t seed,
    const std::function<double(const ClusterCounts& counts)>& stat, unsigned threads = 0);

// Several statistics on the same draws (paired comparisons, all systems and layers at once):
// stat writes n_stats values into `out`; the result is n_stats vectors of length `draws`
// (result[s][d]). Same streams as bootstrap_counts, so bootstrap_counts(..., f) equals
// bootstrap_counts_multi(..., 1, g)[0] when g writes f's value.
[[nodiscard]] std::vector<std::vector<double>> bootstrap_counts_multi(
    std::size_t n_clusters, std::size_t draws, std::uint64_t seed, std::size_t n_stats,
    const std::function<void(const ClusterCounts& counts, std::span<double> out)>& stat,
    unsigned threads = 0);

// A count-weighted integer sum over clusters, the statistic most bootstrap replicates here are
// made of: total = sum over clusters i of x[i] * counts[i], for integer per-cluster values x, over
// all of a draw's clusters or over a subset of them. Stored sparsely: the most common value m is
// folded in as m times the subset's drawn total, so a draw visits only the clusters whose value
// differs from m (Davison & Hinkley's linear statistics, evaluated on resample counts). The sum
// is in 64-bit integers: exact, and free of the floating-point add chain that bounds a double
// accumulation, so a caller converting the total to double gets the same value as an exact sum.
class CountSum {
 public:
  CountSum() = default;
  // x[i] for every cluster i (the frame has x.size() clusters).
  [[nodiscard]] static CountSum over(std::span<const int> x);
  // x[i] for the clusters i in `subset` only (x indexed by cluster; others ignored).
  [[nodiscard]] static CountSum over(std::span<const std::uint8_t> x, std::span<const std::uint32_t> subset);

  // The total on draw counts c; subset_total is the sum of c over the subset (for a sum over
  // every cluster, the number of clusters: a draw always picks that many).
  [[nodiscard]] std::int64_t eval(const ClusterCounts& c, std::int64_t subset_total) const noexcept {
    const std::uint32_t* idx = idx_.data();
    const std::uint32_t* cc = c.data();
    const std::size_t m = idx_.size();
    std::int64_t t = 0;
    if (weight_ != 0) {
      // One weight for every listed cluster (always so for 0/1 values): a plain sum of gathered
      // counts in four independent accumulators.
      std::uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
      std::size_t k = 0;
      for (; k + 4 <= m; k += 4) {
        a0 += cc[idx[k]];
        a1 += cc[idx[k + 1]];
        a2 += cc[idx[k + 2]];
        a3 += cc[idx[k + 3]];
      }
      for (; k < m; ++k) a0 += cc[idx[k]];
      t = weight_ * static_cast<std::int64_t>(a0 + a1 + a2 + a3);
    } else {
      for (std::size_t k = 0; k < m; ++k) t += static_cast<std::int64_t>(w_[k]) * cc[idx[k]];
    }
    return mode_ * subset_total + t;
  }

 private:
  void add(std::uint32_t cluster, std::int64_t deviation);
  std::int64_t mode_ = 0;
  std::int64_t weight_ = 0;  // the deviation shared by every listed cluster; 0 when they differ
  std::vector<std::uint32_t> idx_;
  std::vector<std::int64_t> w_;  // per listed cluster, used when weight_ is 0
};

// Percentile interval at `level` (0.95 gives the 2.5% and 97.5% inclusive quantiles of the
// replicates; Efron & Tibshirani 1993, eq. 13.5). Throws Error for no values or level outside
// (0, 1).
[[nodiscard]] Interval percentile_interval(std::vector<double> values, double level = 0.95);

// percentile_interval of the replicates totals[d] / n (n > 0) when every total is an integer, as
// the report's counts and their differences are: the same interval bit for bit (dividing by n
// keeps the order, so the order statistics are the totals' divided by n), found by counting the
// totals in one pass instead of two selections. Totals that are not all integers, or that span
// more than a few times as many values as there are replicates, take percentile_interval.
[[nodiscard]] Interval percentile_interval_of_totals(std::span<const double> totals, double n,
                                                     double level = 0.95);

}  // namespace numcheck::stats
