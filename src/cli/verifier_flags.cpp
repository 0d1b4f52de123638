#include "cli/verifier_flags.hpp"

namespace numcheck::cli {

void add_verifier_flags(CLI::App& app, VerifierFlags& f, const std::string& prefix) {
  app.add_option("--features", f.features,
                 prefix + "feature definitions and learner settings (default data/verify/features.json)");
  app.add_option(
         "--learner", f.learner,
         prefix +
             "linear: liblinear over all groups; xgboost: XGBoost trees over the dense groups "
             "(alignment, category, cues); stacked: trees over the dense groups and the linear model's "
             "out-of-fold probabilities. Overrides the features file")
      ->check(CLI::IsMember({"linear", "xgboost", "stacked"}));
  app.add_option(
         "--numbers", f.numbers,
         prefix +
             "canonical: number tokens through the quantity layer; surface: numbers as written (plain "
             "bag of words). Overrides the features file")
      ->check(CLI::IsMember({"canonical", "surface"}));
}

bool any_verifier_flag(const VerifierFlags& f) {
  return !f.features.empty() || !f.learner.empty() || !f.numbers.empty();
}

verify::FeatureSettings verifier_settings(const VerifierFlags& f) {
  auto s =
      f.features.empty() ? verify::FeatureSettings::builtin() : verify::FeatureSettings::load(f.features);
  if (!f.numbers.empty()) s.numbers = verify::number_mode_from_name(f.numbers);
  if (!f.learner.empty()) s.learner.kind = f.learner;
  return s;
}

}  // namespace numcheck::cli
