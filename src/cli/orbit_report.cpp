// numcheck orbit report: metrics, statistics and the report (docs/report.md).
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cli/cli_util.hpp"
#include "cli/command.hpp"
#include "consensus/study.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"
#include "report/orbit_report.hpp"
#include "verify/section.hpp"

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
};

void setup(CLI::App& app) {
  auto a = std::make_shared<ReportArgs>();
  app.add_option("--bench", a->bench, "Benchmark directory (bases.jsonl, views.jsonl, manifest.json)")
      ->required();
  app.add_option("--scores", a->scores,
                 "Scores JSONL of one system (from `orbit score`); repeat for several systems")
      ->required()
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
  app.add_option("--threads", a->threads, "Threads for the bootstrap (0 = all cores)")->capture_default_str();
  app.add_option("--level", a->level, "Interval level (bootstrap percentile and Wilson)")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 0.9999));
  app.add_option("--examples", a->examples, "Residual-failure example responses per system and view")
      ->capture_default_str();
  app.add_option("--claims", a->claims,
                 "Section file of `claims section` (claim verification results): adds the claims section");
  app.add_option("--consensus", a->consensus,
                 "Output folder of `orbit consensus analyze` (its consensus.json): adds the consensus "
                 "study section, with its risk-coverage figures, to the report");
  app.footer(
      "Writes metrics.json, report.md, report.html, report.tex and figures/*.svg into --out. Exit codes: 0 "
      "written; 1 unreadable or inconsistent inputs; 2 usage. See docs/report.md.");
  app.callback([a] {
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
    if (!a->consensus.empty()) {
      // Composed here: the report library does not link the consensus library (it is the other
      // way round), so the CLI reads consensus.json and hands the report its blocks.
      const std::filesystem::path file = std::filesystem::path(a->consensus) / "consensus.json";
      if (!std::filesystem::is_regular_file(file)) {
        fail(ErrorCode::kUsage,
             "--consensus {}: no consensus.json there (run `orbit consensus analyze --out {}`)", a->consensus,
             a->consensus);
      }
      const std::string text = io::read_file(file, std::size_t{1} << 30);
      const auto analysis = consensus::analysis_from_json(text, file.string());
      in.extra_sections.push_back(consensus::report_section(analysis));
      const auto h3 = consensus::h3_verdict(analysis);
      in.hypothesis_notes.push_back(h3.text + " (Details: the consensus study section.)");
      io::OrderedJson src = io::OrderedJson::object();
      src["section"] = "consensus";
      src["file"] = file.string();
      src["sha256"] = io::sha256_hex(text);
      src["h3"] = h3.json;
      in.extra_sources.push_back(std::move(src));
    }
    if (!a->claims.empty()) {
      // Composed here like the consensus section: the claim results come as one section file.
      const std::string text = io::read_file(a->claims, std::size_t{1} << 30);
      const auto section = verify::section_from_file_json(
          io::parse_json(text, a->claims), std::filesystem::path(a->claims).filename().string());
      in.extra_sections.push_back(verify::section_document(section));
      io::OrderedJson src = io::OrderedJson::object();
      src["section"] = "claims";
      src["file"] = a->claims;
      src["sha256"] = io::sha256_hex(text);
      src["metrics"] = verify::section_json(section);
      in.extra_sources.push_back(std::move(src));
    }
    const auto out = report::run_orbit_report(in);
    for (const auto& name : out.metrics["system_order"]) {
      const auto& s = out.metrics["systems"][name.get<std::string>()];
      fmt::print("{}{}: strict orbit {:.3f}, audit orbit {:.3f}\n", name.get<std::string>(),
                 s["simulated"].get<bool>() ? " (simulated)" : "",
                 s["strict"]["orbit"]["rate"].is_number() ? s["strict"]["orbit"]["rate"].get<double>() : 0.0,
                 s["audit"]["orbit"]["rate"].is_number() ? s["audit"]["orbit"]["rate"].get<double>() : 0.0);
    }
    std::size_t figures = 0;
    for (const auto& f : out.files) {
      if (f.extension() == ".svg") {
        ++figures;
      } else {
        fmt::print("wrote {}\n", f.string());
      }
    }
    fmt::print("wrote {} figures to {}\n", figures, (std::filesystem::path(a->out) / "figures").string());
  });
}

const CommandRegistration kRegistration{
    {"orbit", "report",
     "Metrics, statistics and the report (metrics.json, Markdown, HTML, LaTeX) for scored systems", setup}};

}  // namespace
}  // namespace numcheck::cli
