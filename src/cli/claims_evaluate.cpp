// numcheck claims evaluate: scores verdict predictions against gold labels (accuracy, macro/
// weighted F1, per-class P/R/F1, confusion, per-category tables) and compares systems pairwise.
#include <algorithm>
#include <filesystem>

#include <fmt/core.h>

#include "claims/evaluate.hpp"
#include "claims/load.hpp"
#include "cli/cli_util.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "io/json.hpp"

namespace numcheck::cli {
namespace {

struct Args {
  std::string gold;
  std::vector<std::string> preds;
  bool by_category = false;
  std::string json_out;
  std::size_t draws = 10000;
  std::uint64_t seed = 20240714;
  bool strict = false;
};

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--gold", a->gold,
                 "Gold claims with labels (QuanTemp JSON, CheckThat mapping JSON, JSONL or CSV)")
      ->required();
  app.add_option("--pred", a->preds,
                 "Predictions: JSONL {\"claim\" or \"id\", \"label\"} or the QuanTemp code's CSV "
                 "(claim,verdict); repeat "
                 "for several systems")
      ->required();
  app.add_flag("--by-category", a->by_category,
               "Per-category tables (gold taxonomy_label, else the rule-based categorizer)");
  app.add_option("--json", a->json_out, "Also write the results as JSON to this file");
  app.add_option("--draws", a->draws, "Paired bootstrap resamples for macro-F1 differences")
      ->capture_default_str();
  app.add_option("--seed", a->seed, "Bootstrap seed")->capture_default_str();
  app.add_flag("--strict", a->strict,
               "Fail (exit 1) when any record is malformed or any prediction does not join");
  app.footer(
      "Markdown on stdout; malformed records and join problems on stderr. See docs/claims-reference.md.");
  app.callback([a] {
    claims::LoadOptions gopt;
    gopt.labels = claims::LabelPolicy::kRequired;
    const auto gold = claims::load_claims(a->gold, gopt);
    report_issues(gold.issues);
    if (gold.claims.empty()) fail("{}: no labelled claims", a->gold);
    std::vector<claims::SystemResult> systems;
    for (const auto& p : a->preds) {
      claims::LoadOptions popt;
      popt.labels = claims::LabelPolicy::kRequired;
      popt.require_text = false;
      popt.keep_unknown_labels = true;
      const auto pr = claims::load_claims(p, popt);
      report_issues(pr.issues);
      claims::SystemResult s;
      s.path = p;
      s.name = std::filesystem::path(p).stem().string();
      for (int k = 2;
           std::any_of(systems.begin(), systems.end(), [&](const auto& o) { return o.name == s.name; }); ++k)
        s.name = std::filesystem::path(p).stem().string() + fmt::format("#{}", k);
      s.issues = pr.issues;
      s.pred = claims::join_predictions(gold.claims, pr.claims, s.join, &s.unparseable);
      for (const auto& ex : s.join.examples) fmt::print(stderr, "numcheck: warning: {}: {}\n", s.name, ex);
      for (const auto& c : s.join.conflicts) fmt::print(stderr, "numcheck: warning: {}: {}\n", s.name, c);
      if (s.join.gold_without_prediction + s.join.unused_predictions > 0)
        fmt::print(stderr,
                   "numcheck: warning: {}: {} gold claims without a prediction, {} predictions joined no "
                   "gold claim\n",
                   s.name, s.join.gold_without_prediction, s.join.unused_predictions);
      if (s.join.by_id + s.join.by_text == 0) {
        fail(
            "{}: none of its {} predictions matches a gold claim of {} (by id or by exact claim text); "
            "nothing to evaluate",
            p, pr.claims.size(), a->gold);
      }
      // An unparseable label is an outcome (scored as wrong), not a malformed record.
      const bool malformed = std::any_of(pr.issues.begin(), pr.issues.end(),
                                         [](const claims::LoadIssue& is) { return is.skipped; });
      if (a->strict && (malformed || s.join.gold_without_prediction + s.join.unused_predictions > 0))
        fail("{}: malformed records or unjoined predictions (--strict)", p);
      systems.push_back(std::move(s));
    }
    if (a->strict && !gold.issues.empty())
      fail("{}: {} malformed records (--strict)", a->gold, gold.issues.size());
    claims::EvaluateOptions opt;
    opt.by_category = a->by_category;
    opt.bootstrap_draws = a->draws;
    opt.seed = a->seed;
    auto e = claims::evaluate(gold.claims, std::move(systems), opt);
    e.gold_path = a->gold;
    e.gold_issues = gold.issues;
    fmt::print("{}", claims::evaluation_markdown(e, a->by_category));
    if (!a->json_out.empty()) io::write_file_atomic(a->json_out, io::to_pretty(claims::evaluation_json(e)));
  });
}

const CommandRegistration reg(
    {"claims",
     "evaluate",
     "Score verdict predictions against gold claim labels",
     setup,
     "numcheck claims evaluate --gold val.jsonl --pred verify/predictions.jsonl --by-category",
     {"scored"}});

}  // namespace
}  // namespace numcheck::cli
