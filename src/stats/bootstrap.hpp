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

// Percentile interval at `level` (0.95 gives the 2.5% and 97.5% inclusive quantiles of the
// replicates; Efron & Tibshirani 1993, eq. 13.5). Throws Error for no values or level outside
// (0, 1).
[[nodiscard]] Interval percentile_interval(std::vector<double> values, double level = 0.95);

}  // namespace numcheck::stats
