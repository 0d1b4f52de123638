#pragma once
// The consensus study's analysis (orbit seed, section 6 and Appendix B; docs/consensus.md).
//
// Per system, tier, arm and base, the three calls give canonicalized values (the strict parser's
// value converted to the canonical unit; nullopt when the call did not parse). Then:
//   - agreement level: the largest number of calls with equal values (exact Rational equality),
//     0 when no call parsed;
//   - prediction: the agreed value when the level is >= 2, else abstain;
//   - no-abstention fallback: the modal value (level >= 2), else the first parsed call in the
//     call-priority order, else (no parse) wrong;
//   - risk-coverage: bases ranked by agreement level (3, 2, 1, 0), loss = fallback wrong, AURC
//     averaged uniformly over orderings within equal-agreement ties (stats/selective.hpp, exact);
//   - operating points at levels 3 (unanimous, "3-of-3"), 2 (the 2-of-3 predictor), 1 and 0
//     (full coverage with the fallback);
//   - non-unanimous decisions (level < 3) split into useful flags (fallback wrong) and false
//     alarms (fallback correct), under each of the three cyclic call-priority orders;
//   - paired base bootstrap intervals for each arm's AURC and the AURC differences between arms.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "consensus/plan.hpp"
#include "io/json.hpp"
#include "num/rational.hpp"
#include "stats/interval.hpp"
#include "stats/selective.hpp"

namespace numcheck::consensus {

// The graded result of one planned request for one system.
struct CallResult {
  bool answered = false;               // the run holds a response for this request
  std::optional<num::Rational> value;  // canonicalized value under the chosen layer (nullopt: no parse)
  bool correct = false;                // the call's own grade under the chosen layer
  std::string outcome;                 // grade outcome name ("missing" when not answered)
};

// The decision for one base and arm under one priority order.
struct Decision {
  int agreement = 0;                       // 0..3
  std::optional<num::Rational> predicted;  // level >= 2
  std::optional<num::Rational> fallback;   // no-abstention fallback value (nullopt: no parse)
  bool fallback_correct = false;
};

// The three cyclic call-priority orders: (1,2,3), (2,3,1), (3,1,2) as 0-based positions.
inline constexpr std::array<std::array<std::size_t, 3>, 3> kCyclicOrders = {
    {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}}};

[[nodiscard]] Decision decide(std::span<const std::optional<num::Rational>> values,
                              const num::Rational& expected, std::span<const std::size_t> priority);

struct OrderResult {
  std::array<std::size_t, 3> order{};
  std::uint64_t fallback_correct = 0;
  std::uint64_t fallback_wrong = 0;
  std::uint64_t useful_flags = 0;  // non-unanimous and fallback wrong
  std::uint64_t false_alarms = 0;  // non-unanimous and fallback correct
  double aurc = 0;
  num::Rational aurc_exact;
};

struct ArmResult {
  std::string tier, arm;
  std::uint64_t n_bases = 0;
  std::array<std::uint64_t, 4> agreement{};  // bases per agreement level 0..3
  std::uint64_t predictions = 0, abstentions = 0, prediction_correct = 0, prediction_wrong = 0;
  std::uint64_t unanimous_correct = 0, unanimous_wrong = 0;
  std::uint64_t non_unanimous = 0;
  std::vector<OrderResult> orders;                      // the three cyclic orders; [0] is the default (1,2,3)
  std::vector<stats::OperatingPoint> operating_points;  // thresholds 3, 2, 1, 0
  std::vector<stats::CurvePoint> curve;                 // default order
  std::array<std::uint64_t, 3> answered{}, parsed{}, correct{};  // per call position
  std::uint64_t missing_calls = 0;
  std::optional<stats::Interval> aurc_ci;  // paired base bootstrap
  // Per base (plan order), for the bootstrap: agreement level and default-order fallback loss.
  std::vector<std::int64_t> base_agreement;
  std::vector<std::uint8_t> base_wrong;
};

struct Comparison {
  std::string system, tier, arm, baseline;  // difference = AURC(arm) - AURC(baseline)
  double difference = 0;
  num::Rational difference_exact;
  std::optional<stats::Interval> ci;  // nullopt when the bootstrap was skipped
};

struct SystemResult {
  std::string name;
  std::map<std::string, std::map<std::string, ArmResult>> tiers;  // tier -> arm -> result
};

struct AnalysisOptions {
  std::size_t bootstrap = 10000;  // draws; 0 skips the intervals
  std::uint64_t seed = 20260725;
  double level = 0.95;
  unsigned threads = 0;  // 0 = all cores
};

// Analyses one system's graded calls (indexed like plan.requests).
[[nodiscard]] SystemResult analyze_system(const Plan& plan, std::string name,
                                          std::span<const CallResult> calls);

// Paired base bootstrap over the plan's bases: fills each arm's aurc_ci and returns the AURC
// differences (representation - paraphrase, representation - self_consistency,
// paraphrase - self_consistency, where both arms are in the tier) with percentile intervals.
[[nodiscard]] std::vector<Comparison> bootstrap_system(SystemResult& sys, const AnalysisOptions& options);

}  // namespace numcheck::consensus
