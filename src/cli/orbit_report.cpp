// numcheck orbit report: metrics, statistics and the report (docs/report.md).
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cli/cli_util.hpp"
#include "cli/command.hpp"
#include "cli/orbit_steps.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"
#include "report/orbit_report.hpp"
#include "report/supplement.hpp"

namespace numcheck::cli {
namespace {

struct ReportArgs {
  std::string bench;
  std::vector<std::string> scores;
  std::vector<std::string> names;
  std::vector<std::string> responses;
  std::string out;
  std::size_t bootstrap = 10000;
  std::uint64_t seed = 20260725;
  unsigned threads = 0;
  double level = 0.95;
  std::size_t examples = 3;
  std::string consensus;
  std::string claims;
  std::vector<std::string> claim_orbits;
  std::string shown_out;  // the folder named in messages, when the report is built elsewhere first
  std::string supplement;
  io::OrderedJson study;  // `orbit study`'s section record, from a supplement (null: none)
};

void run_report(const ReportArgs& args);

// `--from-supplement`: extracts the archive into a fresh temporary folder, rebuilds the report there
// at the recorded place among the members (so every relative path, and so every byte, is the
// original's), copies it to `out` and compares metrics.json and report.md with the originals
// packed in the archive.
void report_from_supplement(const std::string& file, const std::string& out, unsigned threads) {
  namespace fs = std::filesystem;
  require_output_dir(out);
  const std::string bytes = io::read_file(file, std::size_t{1} << 34);
  const report::Supplement sup = report::read_supplement(bytes, file);
  const fs::path work = fs::temp_directory_path() / fmt::format("numcheck-supplement-{}-{}", ::getpid(),
                                                                io::sha256_hex(bytes).substr(0, 12));
  const io::OrderedJson& ra = sup.info["report_args"];
  ReportArgs a;
  try {
    auto member = [&](const io::OrderedJson& j) { return (work / j.get<std::string>()).string(); };
    a.bench = member(ra.at("bench"));
    for (const auto& s : ra.at("scores")) a.scores.push_back(member(s));
    for (const auto& n : ra.at("names")) a.names.push_back(n.get<std::string>());
    if (ra.contains("responses"))
      for (const auto& r : ra["responses"]) a.responses.push_back(member(r));
    a.bootstrap = ra.at("bootstrap").get<std::size_t>();
    a.seed = ra.at("seed").get<std::uint64_t>();
    a.level = ra.at("level").get<double>();
    a.examples = ra.at("examples").get<std::size_t>();
    if (ra.at("consensus").is_string()) a.consensus = member(ra["consensus"]);
    if (ra.at("claims").is_string()) a.claims = member(ra["claims"]);
    if (ra.contains("claim_orbits"))
      for (const auto& d : ra["claim_orbits"]) a.claim_orbits.push_back(member(d));
    if (ra.contains("study") && ra["study"].is_object()) a.study = ra["study"];
    a.out = (work / ra.at("report_dir").get<std::string>()).string();
    a.shown_out = out;
  } catch (const io::OrderedJson::exception& e) {
    fail("{}: supplement.json report_args: {}", file, e.what());
  }
  a.threads = threads;
  fs::remove_all(work);
  try {
    report::extract_supplement(sup, work);
    if (fs::exists(a.out)) fail("{}: the report folder '{}' is also a member", file, a.out);
    run_report(a);
    fs::create_directories(out);
    fs::copy(a.out, out, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(work);
    fail("{}: rebuilding the report in {}: {}", file, work.string(), e.what());
  } catch (...) {
    fs::remove_all(work);
    throw;
  }
  fs::remove_all(work);
  bool same = true;
  for (const char* f : {"metrics.json", "report.md"}) {
    const std::string member = fmt::format("{}/{}", report::kOriginalReportDir, f);
    for (const auto& m : sup.members) {
      if (m.path != member) continue;
      const bool eq = io::read_file(fs::path(out) / f, std::size_t{1} << 34) == m.bytes;
      same = same && eq;
      if (!eq)
        fmt::print(stderr, "numcheck: warning: the rebuilt {} differs from the one in the supplement\n", f);
    }
  }
  if (same)
    fmt::print("the rebuilt metrics.json and report.md are byte-identical to the supplement's originals\n");
}

void setup(CLI::App& app) {
  auto a = std::make_shared<ReportArgs>();
  app.add_option("--bench", a->bench,
                 "Benchmark directory (bases.jsonl, views.jsonl, manifest.json); required unless "
                 "--from-supplement");
  app.add_option("--scores", a->scores,
                 "Scores JSONL of one system (from `orbit score`); repeat for several systems; required "
                 "unless --from-supplement")
      ->take_all();
  app.add_option("--name", a->names,
                 "Display name of the i-th scores file's system (default: its manifest's system "
                 "name, else the file stem); repeat in --scores order");
  app.add_option("--responses", a->responses,
                 "Responses JSONL of the i-th system, for example responses in the report "
                 "(default: the one recorded in the scores manifest, when present and unchanged)");
  app.add_option("--out", a->out, "Output directory (metrics.json, report.md, report.html, report.tex)")
      ->required();
  app.add_option("--bootstrap", a->bootstrap, "Base-clustered bootstrap draws for gap intervals")
      ->capture_default_str();
  app.add_option("--seed", a->seed, "Seed of the bootstrap streams")->capture_default_str();
  app.add_option("--threads", a->threads,
                 "Threads that load the score files and run the bootstrap (0 = all cores)")
      ->capture_default_str();
  app.add_option("--level", a->level, "Interval level (bootstrap percentile and Wilson)")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 0.9999));
  app.add_option("--examples", a->examples, "Residual-failure example responses per system and view")
      ->capture_default_str();
  app.add_option("--claims", a->claims,
                 "Section file of `claims section` (claim verification results): adds the claims section");
  app.add_option("--claim-orbits", a->claim_orbits,
                 "Output folder of `claims orbit report --out` (its metrics.json): adds the claim-orbit "
                 "section (verdict invariance of claim verifiers); repeat to show several folders' systems "
                 "in one section (name the systems by their data)");
  app.add_option("--consensus", a->consensus,
                 "Output folder of `orbit consensus analyze` (its consensus.json): adds the consensus "
                 "study section, with its risk-coverage figures, to the report");
  app.add_option("--from-supplement", a->supplement,
                 "Rebuild the report from a supplement archive of `orbit supplement` (its frozen inputs and "
                 "settings) instead of --bench/--scores");
  app.footer(
      "Writes metrics.json, report.md, report.html, report.tex and figures/*.svg into --out. See "
      "docs/report.md.");
  app.callback([a] {
    if (!a->supplement.empty()) {
      if (!a->bench.empty() || !a->scores.empty() || !a->consensus.empty() || !a->claims.empty()) {
        fail(ErrorCode::kUsage,
             "--from-supplement takes the inputs from the archive: give no --bench, --scores, --consensus "
             "or --claims");
      }
      report_from_supplement(a->supplement, a->out, a->threads);
      return;
    }
    if (a->bench.empty() || a->scores.empty()) {
      fail(ErrorCode::kUsage, "--bench and --scores are required (or --from-supplement FILE.tar)");
    }
    run_report(*a);
  });
}

void run_report(const ReportArgs& args) {
  const ReportArgs* a = &args;
  {
    require_output_dir(a->out);
    report::ReportInputs in;
    in.bench_dir = a->bench;
    for (const auto& s : a->scores) in.scores.emplace_back(s);
    in.names = a->names;
    for (const auto& r : a->responses) in.responses.emplace_back(r);
    in.out_dir = a->out;
    in.options.bootstrap_draws = a->bootstrap;
    in.options.seed = a->seed;
    in.options.threads = a->threads;
    in.options.level = a->level;
    in.examples_per_view = a->examples;
    if (a->bootstrap == 0) fail(ErrorCode::kUsage, "--bootstrap must be at least 1");
    if (a->study.is_object()) add_study_section(a->study, in);
    if (!a->consensus.empty()) add_consensus_section(a->consensus, in);
    if (!a->claims.empty()) add_claims_section(a->claims, in);
    if (!a->claim_orbits.empty()) add_claim_orbits_section(a->claim_orbits, in);
    const auto out = report::run_orbit_report(in);
    auto shown = [&](const std::filesystem::path& p) {
      if (a->shown_out.empty()) return p.string();
      return (std::filesystem::path(a->shown_out) / p.lexically_relative(a->out)).string();
    };
    std::size_t figures = 0;
    for (const auto& f : out.files) {
      if (f.extension() == ".svg") {
        ++figures;
      } else {
        fmt::print("wrote {}\n", shown(f));
      }
    }
    fmt::print("wrote {} figures to {}\n", figures, shown(std::filesystem::path(a->out) / "figures"));
    print_results_table(out.model);
    fmt::print("report: {}\n", shown(std::filesystem::path(a->out) / "report.html"));
  }
}

const CommandRegistration reg{
    {"orbit",
     "report",
     "Metrics, statistics and the report (metrics.json, Markdown, HTML, LaTeX) for scored systems",
     setup,
     "numcheck orbit report --bench out/bench --scores out/run/scores.jsonl --out out/report",
     {"written"}}};

}  // namespace
}  // namespace numcheck::cli
