#pragma once
// The steps of `orbit run` and `orbit score` as functions, so `orbit study` runs exactly what the
// two commands run (same selection, records, run.json, scores and manifest).
#include <cstddef>
#include <string>
#include <vector>

#include "io/json.hpp"
#include "llm/options.hpp"
#include "llm/runner.hpp"
#include "orbit/benchmark.hpp"
#include "orbit/selection.hpp"
#include "report/orbit_report.hpp"

namespace numcheck::cli {

struct OrbitRunRequest {
  std::string bench_dir;
  orbit::SelectionSpec selection;
  llm::RunOptions options;
  std::string out;  // run folder
  // Extra run.json fields (e.g. "system_name" of a study system).
  io::OrderedJson info = io::OrderedJson::object();
  // The benchmark and the work items are left to the process's exit (cli_util.hpp keep_until_exit)
  // instead of being freed on return: for a command whose last step this is, not for a caller that
  // goes on to run more.
  bool keep_until_exit = false;
  // Resolve the selection only: the summary's `total` is the number of prompts the run would ask;
  // no backend is contacted, no cache opened and nothing is written.
  bool dry_run = false;
};

// The fields an orbit prompt's records carry after its prompt_id: base_id, template, view, in that
// order (replacing what `it.fields` held; `orbit run` and `orbit repeat`).
void set_orbit_fields(llm::WorkItem& it, const orbit::View& v);

// The work items of `orbit run` (one per selected prompt, in benchmark order, with
// set_orbit_fields) and the run settings' orbit fields (kind, id field, binding
// "benchmark_sha256", info "benchmark" and "selection"): what `orbit run` sends and what
// `orbit batch` exports and imports. `take_prompts`: the items take the prompts over from `bench`
// instead of copying them. Throws Error (kUsage) for an empty selection.
[[nodiscard]] std::vector<llm::WorkItem> orbit_items(orbit::Benchmark& bench, const std::string& bench_dir,
                                                     const orbit::SelectionSpec& spec, bool take_prompts,
                                                     llm::RunSettings& s);

// Loads and verifies the benchmark, resolves the selection and runs its prompts through one runner
// session (preflight, Ctrl-C handling: cli_util.hpp run_session). Throws Error on set-up mistakes.
[[nodiscard]] llm::RunSummary run_orbit(const OrbitRunRequest& r);

struct OrbitScoreResult {
  std::size_t scored = 0;   // score records written
  std::size_t prompts = 0;  // prompts graded against (the run's selection)
  std::size_t strict_correct = 0;
  std::size_t audit_correct = 0;
  std::size_t problems = 0;
  std::string scope;  // " of the run's selection (k of K bases)" or ""
};

// Grades a responses file against the benchmark (restricted to the run's recorded selection unless
// `whole`), printing problems on stderr, and writes the scores and their manifest. Without
// `allow_partial` a problem is an Error and nothing is written. `threads` read and grade side by
// side (0: one per core); the output does not depend on it. `index_cache`: use the benchmark index
// cache (orbit::IndexCache in the user's cache folder); the output does not depend on it either.
OrbitScoreResult score_orbit(const std::string& bench_dir, const std::string& responses,
                             const std::string& out, bool allow_partial, bool whole, std::size_t threads = 0,
                             bool index_cache = true);

// Runs a consensus plan's calls (what `orbit consensus run` does): sampling fixed per call by the
// plan, the reference system's solver bound to the plan's benchmark (`bench_dir`, default the
// plan's). `info_extra`: extra run.json fields (e.g. a study's "system_name").
[[nodiscard]] llm::RunSummary run_consensus(const std::string& plan_path, const std::string& bench_dir,
                                            const llm::RunOptions& options, const std::string& out,
                                            const io::OrderedJson& info_extra = io::OrderedJson::object());

// Adds the consensus study's section (from `orbit consensus analyze --out DIR`'s consensus.json) or
// the claims section (a `claims section` file) to a report's inputs, recording the source file and
// its sha256 in metrics.json. Composed in the CLI: the report library links neither library.
void add_consensus_section(const std::string& analysis_dir, report::ReportInputs& in);
void add_claims_section(const std::string& section_file, report::ReportInputs& in);
// The claim-orbit section from the metrics.json of one or more `claims orbit report --out` folders
// (their systems side by side; paths recorded relative to in.out_dir).
void add_claim_orbits_section(const std::vector<std::string>& dirs, report::ReportInputs& in);
// The study section of `orbit study` (the study file's name and sha256, its number of systems, the
// systems in the report and those not complete) from its metrics.json record ("section": "study",
// "study_file", "sha256", "systems_in_study", "systems", "unfinished"), which it records as is: the
// study writes it, `orbit report --from-supplement` rebuilds it from the supplement.
void add_study_section(const io::OrderedJson& source, report::ReportInputs& in);

// The short results table `orbit report` and `orbit study` print on stdout (as evaluation harnesses
// do): per system and view the prompts and the strict and audit correctness, then the orbit row
// (every view of a base right) and the canonical-minus-orbit gap with its bootstrap interval.
void print_results_table(const report::MetricsModel& metrics);

}  // namespace numcheck::cli
