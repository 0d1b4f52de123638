#pragma once
// The consensus study's analysis outputs: running the analysis over one or more run directories
// (one per system) and writing consensus.json plus the consensus section (report_section) as
// consensus.md (with standalone SVG figures) and a self-contained consensus.html. Formats are
// documented in docs/consensus.md.
#include <filesystem>
#include <string>
#include <vector>

#include "consensus/analyze.hpp"
#include "consensus/plan.hpp"
#include "consensus/runs.hpp"
#include "doc/document.hpp"
#include "io/json.hpp"

namespace numcheck::consensus {

struct SystemRun {
  std::string name;
  std::string run_dir;
  std::string model;
  bool simulated = false;
  std::size_t records = 0;
  std::size_t missing_calls = 0;
  bool top_k_sent = true;  // false: its calls carried no top_k (--no-top-k)
};

struct Analysis {
  Plan plan;
  std::string plan_sha256;
  Layer layer = Layer::kStrict;
  AnalysisOptions options;
  std::vector<SystemRun> runs;
  std::vector<SystemResult> systems;  // same order as runs
  std::vector<Comparison> comparisons;
};

struct StudyInputs {
  std::filesystem::path plan_path;
  std::vector<std::filesystem::path> run_dirs;
  std::vector<std::string> names;  // optional, i-th names the i-th run
  Layer layer = Layer::kStrict;
  AnalysisOptions options;
  bool allow_partial = false;  // missing calls count as unparsed instead of failing
};

// Loads the plan and every run, grades, analyses and bootstraps. Throws Error for unreadable or
// foreign inputs, duplicate system names, and (unless allow_partial) runs with missing calls.
[[nodiscard]] Analysis run_study(const StudyInputs& in);

[[nodiscard]] io::OrderedJson analysis_to_json(const Analysis& a);
// The inverse for what the tables and figures need (not the per-base vectors, the plan's requests
// or the exact curve inputs): reads DIR/consensus.json as written by write_outputs. Throws Error
// naming the file and the field for anything else. `where` names the file in messages.
[[nodiscard]] Analysis analysis_from_json(std::string_view text, const std::string& where);
// The consensus section as report blocks: heading id "consensus", the H3 verdict line, the
// simulated-system note, both tiers, every arm, AURC with intervals, operating points, AURC
// differences, sensitivity, calls and one risk-coverage figure per system and tier. The only
// rendering of the study: write_outputs renders it as consensus.md/consensus.html, and
// `numcheck orbit report --consensus DIR` embeds it in report.md/report.html/report.tex.
[[nodiscard]] doc::Document report_section(const Analysis& a);

// Writes DIR/consensus.json, and report_section(a) as DIR/consensus.md, DIR/consensus.html and its
// figures DIR/figures/NN-consensus-rc-<system index>-<tier>.svg (replacing such figures of an
// earlier analysis in DIR); returns the paths written.
std::vector<std::filesystem::path> write_outputs(const Analysis& a, const std::filesystem::path& dir);

[[nodiscard]] std::string arm_label(std::string_view arm);

// The explicit H3 verdict: "representation consensus improves risk-coverage over both equal-call
// controls". A (system, tier) cell supports H3 when every AURC difference representation - control
// available in that tier (self-consistency and paraphrase in the stochastic tier, paraphrase in the
// deterministic tier) has a percentile interval entirely below 0. H3 is "supported" when every cell
// supports it, "unsupported" when none does, "mixed" otherwise, and "undetermined" when an interval
// is missing (analysis run with --bootstrap 0) or there is no comparison.
struct H3Verdict {
  std::string status;  // supported | unsupported | mixed | undetermined
  std::size_t cells = 0, supporting = 0;
  std::string text;      // one line for the report
  io::OrderedJson json;  // status, criterion, cells [{system, tier, supports, comparisons}]
};
[[nodiscard]] H3Verdict h3_verdict(const Analysis& a);

}  // namespace numcheck::consensus
