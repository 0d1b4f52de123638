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
#include <optional>
#include <string>
#include <vector>

#include "doc/document.hpp"
#include "io/json.hpp"
#include "orbit/benchmark.hpp"
#include "report/metrics.hpp"
#include "report/metrics_model.hpp"
#include "report/scores.hpp"

namespace numcheck::report {

// Fills the allocation and the example orbit, and per system and layer the length sensitivity,
// the views by template and the H2 independence baselines, and per system the repeat check.
void add_paper_analyses(MetricsModel& metrics, const orbit::Benchmark& bench,
                        const std::vector<SystemScores>& systems, const ReportOptions& options);

// The report sections of these analyses, inserted into `d` at their places: the allocation and
// example orbit before "Systems", the H2 baseline after the orbit metrics, the length sensitivity
// after audit recovery, the power-of-ten table after the magnitude drops.
void add_paper_sections(doc::Document& d, const MetricsModel& metrics, const orbit::Benchmark& bench);

// An interval of a difference in signed percentage points, one decimal ("[-1.2, +3.4]"), or "n/a":
// how every report table writes a gap's interval.
[[nodiscard]] std::string pts_interval(const std::optional<Interval>& i);

}  // namespace numcheck::report
