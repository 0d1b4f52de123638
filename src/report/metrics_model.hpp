#pragma once
// The orbit metrics as typed values: what compute_metrics (report/metrics.hpp) fills, what the
// report's renderers (build_document, report/analyses.hpp) read, and what metrics.json is written
// from (to_json, the one serializer) and read back into (metrics_from_json, the one reader).
//
// The model holds the measured values only: counts, intervals, p-values, exact rationals and the
// provenance copied from the inputs. Everything metrics.json derives from them (rates, gaps,
// "material", H1/H2, totals, the settings' fixed descriptions) is derived by the accessors below and
// by the serializer, and the reader ignores those derived fields. docs/report.md documents every
// field of metrics.json.
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/json.hpp"
#include "num/rational.hpp"
#include "report/scores.hpp"
#include "stats/descriptive.hpp"
#include "stats/interval.hpp"

namespace numcheck::report {

// The practical-effect threshold (3 points) and the significance level of the family tests.
inline constexpr int kMaterialPoints = 3;
inline constexpr double kAlpha = 0.05;

// An ordered list of named entries, in the order metrics.json writes them (views in benchmark
// order, families in kFamilies order, templates in order of first appearance).
template <typename T>
using Keyed = std::vector<std::pair<std::string, T>>;

// The entry named `key`, or nullptr.
template <typename T>
[[nodiscard]] const T* find_key(const Keyed<T>& list, std::string_view key) {
  for (const auto& [k, v] : list) {
    if (k == key) return &v;
  }
  return nullptr;
}

// k/n, NaN when n is 0 (metrics.json writes null).
[[nodiscard]] inline double ratio(std::uint64_t k, std::uint64_t n) {
  return n == 0 ? std::nan("") : static_cast<double>(k) / static_cast<double>(n);
}

using Interval = stats::Interval;
using ByK = std::map<int, std::uint64_t>;  // power-of-ten exponent k -> count

// Correct responses of one view (or one view within a template) with a Wilson interval.
struct ViewMetrics {
  std::uint64_t n = 0, correct = 0;
  std::optional<Interval> wilson;  // none when n is 0
  [[nodiscard]] double rate() const { return ratio(correct, n); }
};

// The orbit metrics of a set of bases.
struct OrbitMetrics {
  std::uint64_t n = 0, canonical_correct = 0, correct = 0, invariant = 0, consistent_wrong = 0;
  std::optional<Interval> wilson, invariant_wilson, consistent_wrong_wilson;
  [[nodiscard]] double rate() const { return ratio(correct, n); }
  [[nodiscard]] double invariant_rate() const { return ratio(invariant, n); }
  [[nodiscard]] double consistent_wrong_rate() const { return ratio(consistent_wrong, n); }
  [[nodiscard]] double canonical_rate() const { return ratio(canonical_correct, n); }
  // Canonical minus orbit correctness (NaN when n is 0).
  [[nodiscard]] double gap() const { return ratio(canonical_correct - correct, n); }
  // The orbit gap is at least 3 points, decided on exact counts.
  [[nodiscard]] bool gap_material() const {
    return n > 0 && 100 * (canonical_correct - correct) >= static_cast<std::uint64_t>(kMaterialPoints) * n;
  }
};

// One family's paired test on the bases eligible for it.
struct FamilyTest {
  std::uint64_t n = 0, canonical_correct = 0, transformed_correct = 0;
  std::uint64_t c = 0, t = 0;  // discordant pairs: canonical-only and transformed-only correct
  std::optional<Interval> ci;  // of the gap (base-clustered bootstrap)
  double p = 0, p_holm = 0;
  [[nodiscard]] double canonical_rate() const { return ratio(canonical_correct, n); }
  [[nodiscard]] double transformed_rate() const { return ratio(transformed_correct, n); }
  [[nodiscard]] double gap() const {
    return (static_cast<double>(canonical_correct) - static_cast<double>(transformed_correct)) /
           static_cast<double>(n);
  }
  // Gap >= 3 points (exact: 100 (C - T) >= 3 n) and Holm-adjusted p < alpha.
  [[nodiscard]] bool material() const {
    return canonical_correct >= transformed_correct &&
           100 * (canonical_correct - transformed_correct) >=
               static_cast<std::uint64_t>(kMaterialPoints) * n &&
           p_holm < kAlpha;
  }
};

struct TemplateStratum {
  Keyed<ViewMetrics> views;  // the views the template has
  OrbitMetrics orbit;        // orbit.n is the template's bases
};

struct ViewDrops {
  ByK by_k;
  Keyed<std::uint64_t> by_template;  // templates with a drop in this view
};
struct MagnitudeDrops {
  std::uint64_t value_errors = 0;
  ByK by_k;
  Keyed<ViewDrops> by_view;  // views with a drop
  Keyed<ByK> by_template;    // templates with a drop
};
[[nodiscard]] std::uint64_t total(const ByK& by_k);

using OutcomeCounts = std::array<std::uint64_t, kOutcomeCount>;  // indexed by Outcome

struct Recovery {
  std::uint64_t n = 0, strict_correct = 0, audit_correct = 0, recovered = 0, multiple_final = 0,
                length_finishes = 0;
  std::map<std::string, std::uint64_t> rules;  // rules that fired in recovered responses
  [[nodiscard]] std::uint64_t residual_failures() const { return n - audit_correct; }
};

struct TokenSummary {
  std::uint64_t count = 0, records = 0, length_finishes = 0;
  std::optional<stats::Quartiles> quartiles;  // none without any count
};

struct LengthExcluded {
  std::uint64_t n = 0, correct = 0, excluded_length_finishes = 0, correct_among_excluded = 0;
};

struct TemplateViewCell {
  std::uint64_t n = 0, correct = 0, value_errors = 0, power_of_ten = 0;
  ByK by_k;
};

struct H2Baseline {
  std::string assumption;
  num::Rational expected_orbit, expected_gap, excess_gap;
  std::optional<Interval> ci;
};
struct H2Independence {
  std::uint64_t n = 0;
  std::optional<num::Rational> observed_gap;                    // none without bases
  std::optional<H2Baseline> independent_views, canonical_rate;  // none without bases
};

// One system under one scoring layer (0 strict, 1 audit).
struct LayerMetrics {
  Keyed<ViewMetrics> views;
  OrbitMetrics orbit;
  std::optional<Interval> orbit_gap_ci;
  Keyed<FamilyTest> families;  // families with eligible bases
  Keyed<TemplateStratum> templates;
  MagnitudeDrops magnitude_drops;
  Keyed<OutcomeCounts> failures;
  std::optional<Keyed<Recovery>> recovery;    // audit layer only
  std::optional<Keyed<TokenSummary>> tokens;  // when some record has a token count
  Keyed<LengthExcluded> length_excluded;
  Keyed<Keyed<TemplateViewCell>> views_by_template;  // view -> template -> cell
  H2Independence h2_independence;
  // H1: the families whose test is material.
  [[nodiscard]] std::vector<std::string> h1_families() const;
};

// The repeat check (`orbit repeat`) found beside a system's responses.
struct RepeatCheck {
  std::string file, sha256;
  io::OrderedJson model, seed, n_requested;  // as repeat.json records them (null when absent)
  std::uint64_t asked = 0, answered = 0, byte_identical = 0, answer_identical = 0, request_identical = 0;
  std::string warning;
};

// What was run, from the run.json beside the scored responses (docs/report.md "Systems and
// provenance"). The values copied from run.json are kept as they were recorded (null when absent).
struct Provenance {
  std::optional<std::string> run_manifest;  // relative to the report folder
  io::OrderedJson model_served, model_requested, backend, api;
  std::vector<std::string> endpoint_hosts;
  io::OrderedJson server_build;
  std::vector<std::string> system_fingerprints;
  io::OrderedJson sampling, max_tokens, extra_body, system_prompt, inject, model_file, benchmark,
      numcheck_version, started_at, ended_at;
};

struct SystemMetrics {
  std::string name;
  bool simulated = false;
  std::string scores_file;
  std::optional<std::string> manifest;
  std::uint64_t records = 0, scored_prompts = 0, missing = 0, ignored_records = 0;
  std::array<LayerMetrics, 2> layers;
  std::optional<RepeatCheck> repeat;
  std::optional<Provenance> provenance;  // added by run_orbit_report
  [[nodiscard]] std::string label() const { return simulated ? name + " (simulated)" : name; }
};

struct Difference {
  std::optional<double> difference;  // A - B
  std::optional<Interval> ci;        // paired bootstrap
  // The interval excludes 0.
  [[nodiscard]] bool excludes_zero() const { return ci && (ci->lo > 0.0 || ci->hi < 0.0); }
};
struct FamilyDifference {
  Difference transformed_correct, gap;
};
struct ComparisonLayer {
  std::optional<Difference> canonical_correct, orbit_correct, orbit_gap;  // none without bases
  Keyed<FamilyDifference> families;
};
struct Comparison {
  std::string a, b;
  std::array<ComparisonLayer, 2> layers;
};

struct AllocationRow {
  std::string template_id;
  std::optional<std::string> name, program;  // from the benchmark's manifest, when it records them
  std::string canonical_unit;
  std::uint64_t bases = 0;
  Keyed<std::uint64_t> views;
};
struct Allocation {
  std::vector<AllocationRow> templates;
  std::uint64_t total_bases = 0;
  Keyed<std::uint64_t> total_views;
};
struct ExampleOrbit {
  std::string base_id, template_id, answer, canonical_unit;
  std::vector<std::string> prompts;
};

struct BenchmarkInfo {
  std::string dir;
  std::uint64_t bases = 0, prompts = 0;
  Keyed<std::uint64_t> views;  // eligible bases per view
  std::vector<std::string> templates;
  Keyed<std::string> file_sha256;
  io::OrderedJson selection;                              // null: the whole benchmark
  io::OrderedJson generator = io::OrderedJson::object();  // the manifest's generator fields
};

struct MetricsSettings {
  std::uint64_t bootstrap_draws = 0, seed = 0;
  double level = 0.95;
};

struct MetricsModel {
  std::string numcheck_version;
  BenchmarkInfo benchmark;
  MetricsSettings settings;
  std::vector<SystemMetrics> systems;   // in system order
  std::vector<Comparison> comparisons;  // pairs (a, b), a before b in system order
  Allocation allocation;
  std::optional<ExampleOrbit> example_orbit;
  io::OrderedJson extra_sections;  // the caller's section sources (null or empty: none)

  // The system named `name`; Error when there is none.
  [[nodiscard]] const SystemMetrics& system(std::string_view name) const;
  // "CV (Combined Volume)" when the allocation knows the template's name, else "CV".
  [[nodiscard]] std::string template_label(const std::string& template_id) const;
};

// metrics.json's content (written with io::to_pretty).
[[nodiscard]] io::OrderedJson to_json(const MetricsModel& m);

// Reads metrics.json's content back. Throws Error naming `where` and the missing or malformed field.
[[nodiscard]] MetricsModel metrics_from_json(const io::OrderedJson& j, const std::string& where);

}  // namespace numcheck::report
