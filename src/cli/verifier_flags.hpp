#pragma once
// The trained verifier's settings flags, shared by `claims train`, `claims cv` and `claims orbit
// run --folds`: --features FILE (feature definitions and learner settings, default
// data/verify/features.json), --learner linear|xgboost|stacked and --numbers canonical|surface,
// each overriding the file.
#include <string>

#include <CLI/CLI.hpp>

#include "verify/features.hpp"

namespace numcheck::cli {

struct VerifierFlags {
  std::string features, learner, numbers;
};

// Adds the three options; `prefix` goes before each help text (e.g. "trained --folds: ").
void add_verifier_flags(CLI::App& app, VerifierFlags& f, const std::string& prefix = "");

// True when any of the three was given.
[[nodiscard]] bool any_verifier_flag(const VerifierFlags& f);

// The settings: the features file (or the built-in one) with --learner and --numbers applied.
[[nodiscard]] verify::FeatureSettings verifier_settings(const VerifierFlags& f);

}  // namespace numcheck::cli
