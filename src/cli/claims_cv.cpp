// numcheck claims cv: grouped, stratified, repeated k-fold cross-validation of the trained
// verifier on labelled claims, beside a majority-class and a claim-only baseline on the same folds,
// with feature-group ablations.
#include <unordered_map>

#include <fmt/core.h>

#include "claims/evidence.hpp"
#include "cli/command.hpp"
#include "cli/verifier_flags.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "verify/cv.hpp"

namespace numcheck::cli {
namespace {

struct Args {
  std::string evidence, json_out;
  VerifierFlags verifier;
  verify::CvOptions opt;
  bool no_ablation = false, no_variants = false;
};

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--evidence", a->evidence, "Labelled evidence file (from `claims evidence`)")->required();
  add_verifier_flags(app, a->verifier);
  app.add_option("--folds", a->opt.folds, "Folds")->capture_default_str();
  app.add_option("--seeds", a->opt.seeds, "Repetitions with seeds seed, seed+1, ...")->capture_default_str();
  app.add_option("--seed", a->opt.seed, "First fold seed (also the bootstrap seed)")->capture_default_str();
  app.add_option("--draws", a->opt.draws, "Bootstrap resamples for the intervals (0: none)")
      ->capture_default_str();
  app.add_option("--threads", a->opt.threads, "Threads (feature extraction, bootstrap)")
      ->capture_default_str();
  app.add_flag("--no-ablation", a->no_ablation,
               "Skip the feature-group ablations and the number-token variant");
  app.add_flag("--no-variants", a->no_variants, "Skip the other learners (xgboost, stacked, linear)");
  app.add_option("--json", a->json_out, "Also write the results as JSON to this file");
  app.footer(
      "Markdown on stdout. Never run this on test claims you report on. See docs/claims-reference.md.");
  app.callback([a] {
    const auto settings = verifier_settings(a->verifier);
    a->opt.ablations = !a->no_ablation;
    a->opt.variants = !a->no_variants;
    const auto recs = claims::read_evidence(a->evidence);
    const auto rep = verify::cross_validate(recs, settings, a->opt);
    fmt::print("{}", verify::cv_markdown(rep));
    if (!a->json_out.empty()) io::write_file_atomic(a->json_out, io::to_pretty(verify::cv_json(rep)));
  });
}

const CommandRegistration reg(
    {"claims",
     "cv",
     "Grouped stratified k-fold CV of the trained verifier beside majority and claim-only "
     "baselines, with ablations",
     setup,
     "numcheck claims cv --evidence val.jsonl --json cv.json > cv.md",
     {"written"}});

}  // namespace
}  // namespace numcheck::cli
