#pragma once
// `numcheck orbit report`: loads a benchmark and one scores file per system, computes the metrics
// (report/metrics.hpp) and writes metrics.json, report.md, report.html (self-contained, inline
// SVG, no scripts), report.tex (LaTeX tables) and every figure as figures/NN-<id>.svg (linked from
// report.md). See docs/report.md.
#include <filesystem>
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

struct ReportInputs {
  std::filesystem::path bench_dir;
  std::vector<std::filesystem::path> scores;     // one per system
  std::vector<std::string> names;                // optional; i-th names the i-th scores file
  std::vector<std::filesystem::path> responses;  // optional; i-th for the i-th scores file
  std::filesystem::path out_dir;
  ReportOptions options;
  std::size_t examples_per_view = 3;  // residual-failure examples per system and view
  // Extra sections composed by the caller (e.g. the consensus study, which the report library does
  // not link): inserted before "Definitions and methods", in all three formats.
  std::vector<doc::Document> extra_sections;
  // Recorded in metrics.json under "extra_sections" (e.g. the consensus.json path and sha256).
  io::OrderedJson extra_sources = io::OrderedJson::array();
  // Lines added to the "Operational hypotheses" section (e.g. the H3 verdict of the consensus
  // study). Without any, the section says that H3 was not assessed.
  std::vector<std::string> hypothesis_notes;
};

struct ReportOutput {
  MetricsModel model;
  io::OrderedJson metrics;                   // to_json(model): metrics.json's content
  std::vector<std::filesystem::path> files;  // written, in order
};

// Loads, checks, computes and writes. Throws Error (kUsage for inconsistent arguments).
ReportOutput run_orbit_report(const ReportInputs& in);

// The report's content from computed metrics (and the loaded scores, for examples).
[[nodiscard]] doc::Document build_document(const MetricsModel& metrics, const orbit::Benchmark& bench,
                                           const std::vector<SystemScores>& systems,
                                           std::size_t examples_per_view);

}  // namespace numcheck::report
