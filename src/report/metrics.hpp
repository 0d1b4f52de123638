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
#include "report/layout.hpp"
#include "report/metrics_model.hpp"
#include "report/scores.hpp"

namespace numcheck::report {

// Per-base outcome flags of one system under one layer (exposed for tests).
struct BaseFlags {
  bool canonical_correct = false;
  bool orbit_correct = false;
  bool invariant = false;
  bool consistent_wrong = false;
};

// The layout (report/layout.hpp) of a benchmark.
[[nodiscard]] OrbitLayout make_layout(const orbit::Benchmark& bench);

[[nodiscard]] BaseFlags base_flags(const OrbitLayout::BaseViews& b, const SystemScores& s, Layer layer);

// Computes the metrics (report/metrics_model.hpp; metrics.json is to_json of it, its shape is
// documented in docs/report.md).
[[nodiscard]] MetricsModel compute_metrics(const orbit::Benchmark& bench,
                                           const std::vector<SystemScores>& systems,
                                           const ReportOptions& options);

}  // namespace numcheck::report
