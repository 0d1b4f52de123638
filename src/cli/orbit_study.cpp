// numcheck orbit study: several systems from one study file (docs/study.md), each run into its own
// run folder OUT/runs/<name> (resumable), scored, and reported together in OUT/report with the
// cross-system comparisons of `orbit report`.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "cli/cli_util.hpp"
#include "cli/command.hpp"
#include "cli/orbit_steps.hpp"
#include "consensus/study.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "llm/study.hpp"
#include "orbit/benchmark.hpp"
#include "orbit/generate.hpp"
#include "orbit/spec.hpp"
#include "report/orbit_report.hpp"

namespace numcheck::cli {
namespace {

namespace fs = std::filesystem;

struct StudyArgs {
  std::string config;
  std::string out = "out/study";
  std::string bench;
  std::string systems;  // comma-separated names to run now ("" = all)
  std::optional<std::size_t> bases;
  bool resume = false;
  bool dry_run = false;
  bool no_cache = false;
  std::string cache_dir;
  std::string progress = "auto";
  std::size_t bootstrap = 10000;
  unsigned threads = 0;
  std::string consensus;                  // `orbit consensus analyze` output folder for the report
  std::string consensus_plan;             // run this consensus plan for every system too
  std::string claims;                     // `claims section` file for the report
  std::vector<std::string> claim_orbits;  // `claims orbit report --out` folders for the report
};

// The benchmark of the study: --bench as given, else OUT/bench, generated with the study's seed
// when missing. Either way its generation seed must be the study's.
fs::path study_benchmark(const StudyArgs& a, const llm::Study& st) {
  fs::path dir = a.bench.empty() ? fs::path(a.out) / "bench" : fs::path(a.bench);
  if (a.bench.empty() && !fs::exists(dir / "manifest.json")) {
    fmt::print("== generate the benchmark (seed {}) -> {}\n", st.seed, dir.string());
    orbit::GenerateOptions g;
    g.seed = st.seed;
    (void)orbit::generate_to_dir(dir, orbit::load_spec(orbit::default_spec_path()), g);
  }
  const orbit::Benchmark b = orbit::load_benchmark(dir);
  orbit::verify_benchmark(b);
  const io::OrderedJson gen = orbit::generator_provenance(b);
  const io::OrderedRecord g = io::OrderedRecord::of(gen, (dir / "manifest.json").string() + ": generator");
  const std::optional<std::uint64_t> seed =
      g.has("seed") ? std::optional<std::uint64_t>(g.unsigned_integer("seed")) : std::nullopt;
  if (seed != st.seed) {
    fail(ErrorCode::kUsage,
         "{}: the benchmark was generated with seed {}, the study file says {} (set \"seed\")", dir.string(),
         seed ? std::to_string(*seed) : std::string("unknown"), st.seed);
  }
  return dir;
}

// run.json of a finished run folder: complete and every item answered.
bool run_complete(const fs::path& run_dir) {
  const fs::path rj = run_dir / "run.json";
  std::error_code ec;
  if (!fs::is_regular_file(rj, ec)) return false;
  const io::Json j = io::read_json_file(rj);
  return io::Record::of(j, rj.string()).opt_boolean("complete").value_or(false);
}

// Where the systems of a study stand after this session's runs.
struct StudyState {
  std::vector<std::string> unfinished;                           // names (" (consensus)": its run)
  std::vector<std::pair<std::string, fs::path>> scored;          // name, scores file
  std::vector<std::pair<std::string, fs::path>> consensus_runs;  // name, complete consensus run
  bool interrupted = false;                                      // Ctrl-C: start nothing more
};

// The command line's checks against the study file: every --systems name is a system of it, and
// at most one of --consensus and --consensus-plan.
void check_study_args(const StudyArgs& a, const llm::Study& st, const std::vector<std::string>& only) {
  for (const auto& n : only) {
    bool known = false;
    for (const auto& s : st.systems) known = known || s.name == n;
    if (!known) fail(ErrorCode::kUsage, "--systems: '{}' is not a system of {}", n, a.config);
  }
  if (!a.consensus.empty() && !a.consensus_plan.empty())
    fail(ErrorCode::kUsage,
         "--consensus and --consensus-plan: give one (the plan's analysis is the section)");
}

// One system of the study: its run (when run_now), its consensus run (with --consensus-plan), and
// its scores when the run is complete. One system's failure (its server down, a set-up mistake)
// does not stop the others.
void study_system(const StudyArgs& a, const llm::Study& st, const llm::StudySystem& sys,
                  const fs::path& bench, const orbit::SelectionSpec& selection, bool run_now,
                  StudyState& state) {
  const fs::path run_dir = fs::path(a.out) / "runs" / sys.name;
  llm::RunOptions options = sys.options;
  options.resume = a.resume;
  options.no_cache = a.no_cache;
  options.cache_dir = a.cache_dir;
  options.progress = a.progress;
  io::OrderedJson info = io::OrderedJson::object();
  info["system_name"] = sys.name;
  info["study"] = {{"file", fs::path(a.config).filename().string()}, {"sha256", st.sha256}};
  if (run_now) {
    fmt::print("== {}: run -> {}\n", sys.name, run_dir.string());
    OrbitRunRequest req;
    req.bench_dir = bench.string();
    req.selection = selection;
    req.options = options;
    req.out = run_dir.string();
    req.info = info;
    try {
      const llm::RunSummary r = run_orbit(req);
      state.interrupted = r.interrupted;
      finish_run(run_dir.string(), r, "prompts");
    } catch (const Error& e) {
      fmt::print(stderr, "numcheck: {}: {}\n", sys.name, e.what());
    }
  }
  if (!a.consensus_plan.empty()) {
    const fs::path crun = fs::path(a.out) / "consensus" / "runs" / sys.name;
    if (run_now && !state.interrupted) {
      fmt::print("== {}: consensus run -> {}\n", sys.name, crun.string());
      try {
        const llm::RunSummary r = run_consensus(a.consensus_plan, "", options, crun.string(), info);
        state.interrupted = r.interrupted;
        finish_run(crun.string(), r, "calls");
      } catch (const Error& e) {
        fmt::print(stderr, "numcheck: {} (consensus): {}\n", sys.name, e.what());
      }
    }
    if (run_complete(crun)) {
      state.consensus_runs.emplace_back(sys.name, crun);
    } else {
      state.unfinished.push_back(sys.name + " (consensus)");
    }
  }
  if (!run_complete(run_dir)) {
    state.unfinished.push_back(sys.name);
    return;
  }
  // Scored every time from the records (cheap, deterministic): never a stale scores file.
  const fs::path scores = run_dir / "scores.jsonl";
  const OrbitScoreResult s =
      score_orbit(bench.string(), (run_dir / "responses.jsonl").string(), scores.string(), false, false);
  fmt::print("== {}: scored {} of {} prompts{}: {} strict correct, {} audit correct\n", sys.name, s.scored,
             s.prompts, s.scope, s.strict_correct, s.audit_correct);
  state.scored.emplace_back(sys.name, scores);
}

// OUT/report over the scored systems, with the study section, and the consensus analysis of the
// complete consensus runs (--consensus-plan) or the given one (--consensus).
void report_study(const StudyArgs& a, const llm::Study& st, const fs::path& bench, const StudyState& state) {
  const auto& unfinished = state.unfinished;
  const auto& scored = state.scored;
  const auto& consensus_runs = state.consensus_runs;
  report::ReportInputs in;
  in.bench_dir = bench;
  for (const auto& [name, file] : scored) {
    in.names.push_back(name);
    in.scores.push_back(file);
  }
  in.out_dir = fs::path(a.out) / "report";
  in.options.bootstrap_draws = a.bootstrap;
  in.options.threads = a.threads;
  io::OrderedJson src = io::OrderedJson::object();
  src["section"] = "study";
  src["study_file"] = fs::path(a.config).filename().string();
  src["sha256"] = st.sha256;
  src["systems_in_study"] = st.systems.size();
  src["systems"] = in.names;
  src["unfinished"] = unfinished;
  add_study_section(src, in);
  if (!a.consensus.empty()) add_consensus_section(a.consensus, in);
  if (!consensus_runs.empty()) {
    const fs::path analysis = fs::path(a.out) / "consensus" / "analysis";
    fmt::print("== consensus: analyze {} system(s) -> {}\n", consensus_runs.size(), analysis.string());
    consensus::StudyInputs ci;
    ci.plan_path = a.consensus_plan;
    for (const auto& [name, dir] : consensus_runs) {
      ci.names.push_back(name);
      ci.run_dirs.push_back(dir);
    }
    ci.options.threads = a.threads;
    (void)consensus::write_outputs(consensus::run_study(ci), analysis);
    add_consensus_section(analysis.string(), in);
  }
  if (!a.claims.empty()) add_claims_section(a.claims, in);
  if (!a.claim_orbits.empty()) add_claim_orbits_section(a.claim_orbits, in);
  const auto out = report::run_orbit_report(in);
  print_results_table(out.model);
  fmt::print("report: {}\n", (in.out_dir / "report.html").string());
}

// --dry-run: each system's number of prompts (and consensus calls with --consensus-plan), one line
// each ("dry run: NAME: N prompts, M consensus calls"), then a total. Nothing is sent and no run
// folder is made (the benchmark is generated when missing, as for a run).
void print_study_requests(const StudyArgs& a, const llm::Study& st, const fs::path& bench,
                          const orbit::SelectionSpec& selection, const std::vector<std::string>& only) {
  std::size_t calls = 0;
  if (!a.consensus_plan.empty()) {
    const io::Json plan = io::read_json_file(a.consensus_plan);
    calls = io::Record::of(plan, a.consensus_plan).array("requests").size();
  }
  std::size_t total = 0, systems = 0;
  for (const auto& sys : st.systems) {
    if (!only.empty() && std::find(only.begin(), only.end(), sys.name) == only.end()) continue;
    OrbitRunRequest req;
    req.bench_dir = bench.string();
    req.selection = selection;
    req.options = sys.options;
    req.out = (fs::path(a.out) / "runs" / sys.name).string();
    req.dry_run = true;
    const std::size_t prompts = run_orbit(req).total;
    fmt::print("dry run: {}: {} prompts, {} consensus calls\n", sys.name, prompts, calls);
    total += prompts + calls;
    ++systems;
  }
  fmt::print("dry run: {} systems, {} requests in all would be sent; no request sent\n", systems, total);
}

void run_study(const StudyArgs& a) {
  require_output_dir(a.out);
  const llm::Study st = llm::load_study(a.config);
  const std::vector<std::string> only = split_list(a.systems);
  check_study_args(a, st, only);
  const fs::path bench = study_benchmark(a, st);
  orbit::SelectionSpec selection = st.selection;
  if (a.bases) selection.bases = a.bases;
  if (a.dry_run) {
    print_study_requests(a, st, bench, selection, only);
    return;
  }
  StudyState state;
  for (const auto& sys : st.systems) {
    const bool run_now =
        !state.interrupted && (only.empty() || std::find(only.begin(), only.end(), sys.name) != only.end());
    study_system(a, st, sys, bench, selection, run_now, state);
  }
  if (state.scored.empty()) {
    fail(ErrorCode::kIncomplete,
         "no system of {} has a complete run yet (unfinished: {}); run again with --resume", a.config,
         fmt::join(state.unfinished, ", "));
  }
  report_study(a, st, bench, state);
  if (!state.unfinished.empty()) {
    fmt::print("to continue: {}\n", resume_command());
    throw Error(ErrorCode::kIncomplete,
                fmt::format("{} of {} systems unfinished ({}); the report covers the others; run again with "
                            "--resume",
                            state.unfinished.size(), st.systems.size(), fmt::join(state.unfinished, ", ")));
  }
}

void setup(CLI::App& app) {
  auto a = std::make_shared<StudyArgs>();
  app.add_option("--config", a->config, "Study file (JSON, format numcheck-study/1; see docs/study.md)")
      ->required();
  app.add_option("--out", a->out,
                 "Study folder: bench/ (unless --bench), runs/<system>/ (run, scores), report/")
      ->capture_default_str();
  app.add_option(
      "--bench", a->bench,
      "Benchmark directory to use (default: OUT/bench, generated with the study's seed when missing)");
  app.add_option("--systems", a->systems,
                 "Comma-separated system names to run now (default: all); the report covers every system "
                 "whose run is complete");
  app.add_option("--bases", a->bases,
                 "Smoke run: a stratified sample of N whole orbits for every system (overrides the study "
                 "file's selection.bases)");
  app.add_flag("--resume", a->resume, "Continue the systems' run folders (a fresh folder simply starts)");
  app.add_flag("--dry-run", a->dry_run,
               "Print each system's number of prompts (and consensus calls) and the total; send nothing");
  app.add_flag("--no-cache", a->no_cache, "Neither read nor write the response cache");
  app.add_option("--cache-dir", a->cache_dir, "Response cache folder (default as for `orbit run`)");
  app.add_option("--progress", a->progress, "Progress display: auto, live, plain, none")
      ->check(CLI::IsMember({"auto", "live", "plain", "none"}))
      ->capture_default_str();
  app.add_option("--bootstrap", a->bootstrap, "Base-clustered bootstrap draws of the report")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--threads", a->threads, "Threads for the report's bootstrap (0 = all cores)")
      ->capture_default_str();
  app.add_option(
      "--consensus", a->consensus,
      "Output folder of `orbit consensus analyze` (its consensus.json): adds the consensus section");
  app.add_option("--consensus-plan", a->consensus_plan,
                 "Also run this consensus plan (`orbit consensus plan`) for every system, into "
                 "OUT/consensus/runs/<name>, analyse them together into OUT/consensus/analysis and add the "
                 "consensus section");
  app.add_option("--claims", a->claims, "Section file of `claims section`: adds the claims section");
  app.add_option("--claim-orbits", a->claim_orbits,
                 "Output folder of `claims orbit report --out`: adds the claim-orbit section (repeatable)");
  app.footer(
      "Each system runs like `orbit run` (same records and run.json, preflight, Ctrl-C, --resume) into "
      "OUT/runs/<name>, is scored like `orbit score`, and OUT/report is written like `orbit report` with one "
      "column per system.");
  app.callback([a] { run_study(*a); });
}

const CommandRegistration reg{
    {"orbit",
     "study",
     "Run, score and report several systems listed in a study file (one run folder per system, one report)",
     setup,
     "numcheck orbit study --config study.json --out out/study",
     {"every system complete and reported",
      "some system unfinished (the report covers the complete ones; run again with --resume)"}}};

}  // namespace
}  // namespace numcheck::cli
