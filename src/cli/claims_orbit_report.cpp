// numcheck claims orbit report: verdict invariance of one or more verifiers over claim orbits, from
// their predictions (CSV variant_id,verdict; a claim's original is keyed by its claim id).
#include <filesystem>

#include <fmt/core.h>

#include "claimorbit/analyze.hpp"
#include "claimorbit/render.hpp"
#include "claims/evidence.hpp"
#include "claims/load.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"
#include "doc/document.hpp"
#include "io/files.hpp"

namespace numcheck::cli {
namespace {

struct Args {
  std::string orbits, gold, out;
  std::vector<std::string> predictions;
  std::size_t draws = 10000, examples = 10;
  std::uint64_t seed = 20240714;
};

void run(const Args& a) {
  std::filesystem::path orbits_path = a.orbits;
  if (std::filesystem::is_directory(orbits_path)) orbits_path /= "claims.jsonl";
  const auto orbits = claimorbit::read_orbits(orbits_path);
  std::map<std::string, claims::Verdict> gold;
  std::map<std::string, claims::Category> cats;
  if (!a.gold.empty()) {
    const auto r = claims::load_claims(a.gold);
    for (const auto& is : r.issues) fmt::print(stderr, "numcheck: warning: {}\n", is.str());
    for (const auto& c : r.claims) {
      const std::string id = claims::claim_id(c);
      if (c.label) gold[id] = *c.label;
      if (c.category) cats[id] = *c.category;
    }
  }
  claimorbit::AnalyzeOptions opt;
  opt.draws = a.draws;
  opt.seed = a.seed;
  opt.max_examples = a.examples;
  std::vector<claimorbit::OrbitAnalysis> systems;
  for (const auto& p : a.predictions) {
    const auto verdicts = claimorbit::read_verdicts(p);
    systems.push_back(
        claimorbit::analyze(orbits, verdicts, gold, cats, opt, std::filesystem::path(p).stem().string()));
  }
  doc::Document doc;
  claimorbit::add_section(doc, systems);
  const std::string md = doc.to_markdown();
  fmt::print("{}", md);
  if (!a.out.empty()) {
    std::filesystem::create_directories(a.out);
    io::OrderedJson j;
    j["orbits"] = orbits_path.string();
    j["gold"] = a.gold.empty() ? io::OrderedJson(nullptr) : io::OrderedJson(a.gold);
    j["systems"] = io::OrderedJson::array();
    for (const auto& s : systems) j["systems"].push_back(claimorbit::analysis_json(s));
    const std::filesystem::path out = a.out;
    io::write_file_atomic(out / "metrics.json", io::to_pretty(j) + "\n");
    io::write_file_atomic(out / "report.md", md);
    io::write_file_atomic(out / "report.html", doc.to_html("numcheck claim orbits"));
  }
}

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--orbits", a->orbits, "claims.jsonl written by `claims orbit generate` (or its directory)")
      ->required();
  app.add_option("--predictions", a->predictions,
                 "CSV variant_id,verdict of one verifier, or a `claims verify` predictions.jsonl (repeat for "
                 "several, shown side by side; each named by its file stem); the original claim's verdict is "
                 "keyed by its claim id")
      ->required();
  app.add_option(
      "--gold", a->gold,
      "Claims file with gold labels (and taxonomy labels) joined by claim id, for the accuracy columns");
  app.add_option("--out", a->out, "Also write metrics.json, report.md and report.html into this directory");
  app.add_option("--draws", a->draws, "Bootstrap draws (claims resampled)")->capture_default_str();
  app.add_option("--seed", a->seed, "Bootstrap seed")->capture_default_str();
  app.add_option("--examples", a->examples, "Example flips per system")->capture_default_str();
  app.callback([a] { run(*a); });
}

const CommandRegistration reg(
    {"claims orbit",
     "report",
     "Verdict invariance over claim orbits: per form, per category, orbit-level",
     setup,
     "numcheck claims orbit report --orbits orbits --predictions run_c/predictions.csv --out orbit-report",
     {"written"}});

}  // namespace
}  // namespace numcheck::cli
