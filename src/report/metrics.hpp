#pragma once
// The orbit benchmark's metrics (seed section 3.5; docs/report.md): per scoring layer (strict,
// audit) and system, per-view correctness with Wilson intervals, orbit correctness, invariance
// and consistent-wrong, the orbit gap with a base-clustered bootstrap interval, paired family
// tests (gap, discordance, exact McNemar, Holm), H1/H2, template strata, magnitude drops,
// failure counts, audit recovery, completion tokens, and paired cross-system differences.
//
// Definitions (pinned by tests/report/metrics_test.cpp):
// - A base's orbit is its eligible views among "canonical" and the five families.
// - Orbit correct: every view of the orbit is correct.
// - Invariant: every view of the orbit parsed (correct or value_error) and all the parsed values,
//   canonicalized to the question's unit, are equal as exact rationals. A base with only its
//   canonical view is invariant when that view parses.
// - Consistent-wrong: invariant and not correct (the common value differs from the answer).
// - A prompt without a score record is a failure ("missing") and never parses.
#include <cstdint>
#include <vector>

#include "io/json.hpp"
#include "orbit/benchmark.hpp"
#include "report/metrics_model.hpp"
#include "report/scores.hpp"

namespace numcheck::report {

struct ReportOptions {
  std::size_t bootstrap_draws = 10000;
  std::uint64_t seed = 20260725;
  unsigned threads = 0;  // 0 = all cores
  double level = 0.95;   // interval level (bootstrap percentile and Wilson)
};

// Per-base outcome flags of one system under one layer (exposed for tests).
struct BaseFlags {
  bool canonical_correct = false;
  bool orbit_correct = false;
  bool invariant = false;
  bool consistent_wrong = false;
};

// Index of the benchmark by base: its orbit views (indices into Benchmark::views).
struct OrbitLayout {
  struct BaseViews {
    std::size_t base = 0;              // index into Benchmark::bases
    std::size_t canonical = SIZE_MAX;  // view index
    std::size_t family[5] = {SIZE_MAX, SIZE_MAX, SIZE_MAX, SIZE_MAX, SIZE_MAX};
    std::vector<std::size_t> orbit;  // canonical first, then families in kFamilies order
  };
  std::vector<BaseViews> bases;                        // every base, in file order
  std::vector<std::vector<std::size_t>> family_bases;  // per family: positions in `bases`
  std::vector<std::string> templates;                  // in order of first appearance
  std::vector<std::string> views;                      // "canonical" and the families that occur
};
[[nodiscard]] OrbitLayout make_layout(const orbit::Benchmark& bench);

[[nodiscard]] BaseFlags base_flags(const OrbitLayout::BaseViews& b, const SystemScores& s, Layer layer);

// Computes the metrics (report/metrics_model.hpp; metrics.json is to_json of it, its shape is
// documented in docs/report.md).
[[nodiscard]] MetricsModel compute_metrics(const orbit::Benchmark& bench,
                                           const std::vector<SystemScores>& systems,
                                           const ReportOptions& options);

}  // namespace numcheck::report
