#pragma once
// Selective prediction: risk-coverage curves, the area under them (AURC) and selective risk at
// operating points, for a confidence score with ties.
//
// Setting (Geifman & El-Yaniv, "Selective classification for deep neural networks", NeurIPS 2017;
// AURC as in Geifman, Uziel & El-Yaniv, "Bias-reduced uncertainty estimation for deep neural
// classifiers", ICLR 2019): n items, each with a confidence score and a 0/1 loss (1 = the
// prediction is wrong). Ordering the items by descending confidence, accepting the first k gives
// coverage k/n and selective risk L_k / k, where L_k counts the errors among the first k.
//   AURC = (1/n) * sum_{k=1..n} L_k / k.
// When several items share a confidence score the order among them is arbitrary; following the
// orbit seed (section 6, "AURC averages uniformly over orderings within equal-agreement ties") we
// report the expectation of AURC over all orderings that are consistent with the scores, each
// equally likely. By linearity of expectation only E[L_k] is needed, and inside a tie group of
// size m with e errors that starts after position a (with E errors before it) a uniformly random
// order puts, for k = a + j (1 <= j <= m), j*e/m errors of the group among the first k in
// expectation (each of the group's positions is wrong with probability e/m). Hence the closed form
//   AURC = (1/n) * sum_groups sum_{j=1..m} (E + j*e/m) / (a + j)
//        = (1/n) * sum_groups sum_{j=1..m} (E*m + j*e) / (m * (a + j)),
// evaluated exactly (no sampling of orderings). The template below evaluates it in any number type
// that has +, *, / and construction from an integer: double for speed (bootstrap), an exact
// rational (num::Rational, in src/consensus) where the value is reported.
//
// Items can carry integer weights (multiplicities): an item of weight w counts as w identical
// items (same score, same loss), which is how a clustered bootstrap resample is evaluated.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace numcheck::stats {

// Items sharing one confidence score: how many (with weights) and how many of them are wrong.
struct TieGroup {
  std::int64_t score = 0;    // the shared confidence score (larger = more confident)
  std::uint64_t size = 0;    // number of items (sum of weights)
  std::uint64_t errors = 0;  // wrong items among them (sum of weights of wrong items)
};

// Groups items by score, in descending score order, dropping groups of size zero (items of weight
// 0). scores and wrong must have equal length; weights is empty (every weight 1) or of that
// length. Throws numcheck::Error on mismatched lengths.
[[nodiscard]] std::vector<TieGroup> tie_groups(std::span<const std::int64_t> scores,
                                               std::span<const std::uint8_t> wrong,
                                               std::span<const std::uint64_t> weights = {});

// Total number of items of the groups.
[[nodiscard]] std::uint64_t total_items(std::span<const TieGroup> groups) noexcept;

// Expected AURC over uniformly random orderings within ties (closed form above). Groups must be
// in strictly descending score order (as tie_groups returns them). Zero items gives zero.
// T needs T(std::int64_t-convertible integer), +=, *, / (e.g. double, num::Rational).
template <typename T>
[[nodiscard]] T aurc_tie_averaged(std::span<const TieGroup> groups) {
  T sum(0);
  std::uint64_t before = 0;         // a: items before the group
  std::uint64_t errors_before = 0;  // E: errors before the group
  std::uint64_t n = 0;
  for (const TieGroup& g : groups) {
    n += g.size;
    const auto m = static_cast<long long>(g.size);
    for (std::uint64_t j = 1; j <= g.size; ++j) {
      const auto num = static_cast<long long>(errors_before) * m +
                       static_cast<long long>(j) * static_cast<long long>(g.errors);
      const auto k = static_cast<long long>(before) + static_cast<long long>(j);
      if (num != 0) sum += T(num) / (T(m) * T(k));
    }
    before += g.size;
    errors_before += g.errors;
  }
  if (n == 0) return T(0);
  return sum / T(static_cast<long long>(n));
}

// The double-precision evaluation of the same closed form (for bootstrap replicates).
[[nodiscard]] double aurc(std::span<const TieGroup> groups);

// The tie-averaged risk-coverage curve: for every k = 1..n, coverage k/n and expected selective
// risk E[L_k]/k (linear interpolation inside each tie group, exact at group boundaries).
struct CurvePoint {
  std::uint64_t k = 0;
  double coverage = 0;
  double risk = 0;
};
[[nodiscard]] std::vector<CurvePoint> risk_coverage_curve(std::span<const TieGroup> groups);

// An operating point: accept every item whose score is >= threshold (a group boundary, so the
// point does not depend on the order within ties).
struct OperatingPoint {
  std::int64_t threshold = 0;
  std::uint64_t accepted = 0;  // items with score >= threshold
  std::uint64_t errors = 0;    // wrong items among them
  std::uint64_t n = 0;         // all items
  [[nodiscard]] double coverage() const noexcept {
    return n == 0 ? 0.0 : static_cast<double>(accepted) / static_cast<double>(n);
  }
  // Selective risk errors/accepted; nullopt when nothing is accepted.
  [[nodiscard]] std::optional<double> risk() const noexcept {
    if (accepted == 0) return std::nullopt;
    return static_cast<double>(errors) / static_cast<double>(accepted);
  }
};
[[nodiscard]] OperatingPoint operating_point(std::span<const TieGroup> groups, std::int64_t threshold);
// One operating point per distinct score (descending), i.e. every group boundary.
[[nodiscard]] std::vector<OperatingPoint> operating_points(std::span<const TieGroup> groups);

}  // namespace numcheck::stats
