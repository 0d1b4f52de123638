#pragma once
// The orbit paper's remaining analyses ("Same Quantity, Different Answer", sections 3.3 and 5.2)
// and one beyond it, added to metrics.json by compute_metrics and to the report by
// build_document (docs/report.md, "Allocation, sensitivity and the H2 baseline"):
//
// - allocation: per template its name and program (from the benchmark's manifest, when it
//   records the spec), canonical unit, bases and eligible views per family (the paper's Table 2),
//   and one example orbit (the first base with the most views);
// - length_excluded (per system and layer): per view, correctness over the responses that did not
//   stop at the generation cap (finish reason "length"): a descriptive sensitivity analysis
//   (section 5.2: ".998 (985/987)"), not an estimate of what a larger cap would give;
// - views_by_template (per system and layer): per view and template, correctness, value errors and
//   exact power-of-ten drops by k (the paper's Table 7, unit view by template);
// - h2_independence (per system and layer): the orbit gap expected if the views of a base failed
//   independently at their observed per-view rates, and if every view failed at the canonical
//   rate (no representation effect), each beside the observed gap as an excess gap with a
//   base-clustered bootstrap interval. Point values are exact rationals (written "p/q" beside the
//   decimal); only the bootstrap replicates use floating point.
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "doc/document.hpp"
#include "io/json.hpp"
#include "orbit/benchmark.hpp"
#include "report/layout.hpp"
#include "report/metrics_model.hpp"
#include "report/scores.hpp"
#include "stats/bootstrap.hpp"

namespace numcheck::report {

// The H2 independence baselines: their inputs per system and layer and their bootstrap statistic
// (4 values per system: per layer the excess gap under the observed-rates baseline and under the
// canonical rate). compute_metrics evaluates the statistic on the orbit frame's draws in the same
// pass as the orbit gap (the same resampled bases, and one set of draws instead of two) and hands
// the replicates over with set_replicates.
class BaselineBootstrap {
 public:
  BaselineBootstrap(const OrbitLayout& layout, const std::vector<SystemScores>& systems);
  ~BaselineBootstrap();
  BaselineBootstrap(const BaselineBootstrap&) = delete;
  BaselineBootstrap& operator=(const BaselineBootstrap&) = delete;

  // Values per draw (0 when there are no bases).
  [[nodiscard]] std::size_t n_stats() const;
  // The statistic on one draw's counts over the layout's bases; called from several threads.
  // `frame_totals`: the orbit frame's totals on the same draw, per system s and layer l at
  // (s * 2 + l) * 3: canonical correct, then orbit correct (the frame's quantity order), which
  // are the baselines' canonical and observed totals.
  void eval(const stats::ClusterCounts& counts, std::span<const std::int64_t> frame_totals,
            std::span<double> out) const;
  // The replicates, [stat][draw] (none: the bootstrap was skipped).
  void set_replicates(std::vector<std::vector<double>> reps);

  struct State;
  [[nodiscard]] const State& state() const { return *s_; }

 private:
  std::unique_ptr<State> s_;
};

// Fills the allocation and the example orbit, and per system and layer the length sensitivity,
// the views by template and the H2 independence baselines, and per system the repeat check.
void add_paper_analyses(MetricsModel& metrics, const orbit::Benchmark& bench, const OrbitLayout& layout,
                        const std::vector<SystemScores>& systems, const ReportOptions& options,
                        const BaselineBootstrap& baselines);

// The report sections of these analyses, inserted into `d` at their places: the allocation and
// example orbit before "Systems", the H2 baseline after the orbit metrics, the length sensitivity
// after audit recovery, the power-of-ten table after the magnitude drops.
void add_paper_sections(doc::Document& d, const MetricsModel& metrics, const orbit::Benchmark& bench);

// An interval of a difference in signed percentage points, one decimal ("[-1.2, +3.4]"), or "n/a":
// how every report table writes a gap's interval.
[[nodiscard]] std::string pts_interval(const std::optional<Interval>& i);

}  // namespace numcheck::report
