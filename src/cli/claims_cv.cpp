// numcheck claims cv: grouped, stratified, repeated k-fold cross-validation of the trained
// verifier on labelled claims, beside a majority-class and a claim-only baseline on the same folds,
// with feature-group ablations.
#include <unordered_map>

#include <fmt/core.h>

#include "claims/evidence.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "verify/cv.hpp"

namespace numcheck::cli {
namespace {

struct Args {
  std::string evidence, features, numbers, learner, json_out;
  verify::CvOptions opt;
  bool no_ablation = false;
};

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--evidence", a->evidence, "Labelled evidence file (from `claims evidence`)")->required();
  app.add_option("--features", a->features,
                 "Feature definitions and learner settings (default data/verify/features.json)");
  app.add_option(
         "--learner", a->learner,
         "linear: liblinear over all groups; xgboost: XGBoost trees over the dense groups (alignment, "
         "category, cues); stacked: trees over the dense groups and the linear model's out-of-fold "
         "probabilities. Overrides the features file")
      ->check(CLI::IsMember({"linear", "xgboost", "stacked"}));
  app.add_option("--numbers", a->numbers, "canonical | surface number tokens (overrides the features file)")
      ->check(CLI::IsMember({"canonical", "surface"}));
  app.add_option("--folds", a->opt.folds, "Folds")->capture_default_str();
  app.add_option("--seeds", a->opt.seeds, "Repetitions with seeds seed, seed+1, ...")->capture_default_str();
  app.add_option("--seed", a->opt.seed, "First fold seed (also the bootstrap seed)")->capture_default_str();
  app.add_option("--draws", a->opt.draws, "Bootstrap resamples for the intervals (0: none)")
      ->capture_default_str();
  app.add_option("--threads", a->opt.threads, "Threads (feature extraction, bootstrap)")
      ->capture_default_str();
  app.add_flag("--no-ablation", a->no_ablation,
               "Skip the feature-group ablations and the number-token variant");
  app.add_option("--json", a->json_out, "Also write the results as JSON to this file");
  app.footer("Markdown on stdout. Never run this on test claims you report on. See docs/claims.md.");
  app.callback([a] {
    auto settings =
        a->features.empty() ? verify::FeatureSettings::builtin() : verify::FeatureSettings::load(a->features);
    if (!a->numbers.empty()) settings.numbers = verify::number_mode_from_name(a->numbers);
    if (!a->learner.empty()) settings.learner.kind = a->learner;
    a->opt.ablations = !a->no_ablation;
    const auto recs = claims::read_evidence(a->evidence);
    const auto rep = verify::cross_validate(recs, settings, a->opt);
    fmt::print("{}", verify::cv_markdown(rep));
    if (!a->json_out.empty()) io::write_file_atomic(a->json_out, io::to_pretty(verify::cv_json(rep)));
  });
}

const CommandRegistration reg(
    {"claims", "cv",
     "Grouped stratified k-fold CV of the trained verifier beside majority and claim-only "
     "baselines, with ablations",
     setup});

}  // namespace
}  // namespace numcheck::cli
