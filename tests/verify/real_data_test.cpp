// On the real QuanTemp val split (skipped when the data folder, NUMCHECK_QUANTEMP, is absent): grouped 5-fold
// CV of the trained verifier beats the claim-only naive Bayes baseline on the same folds.
// Figures recorded when written (seed 20260725, 1 seed): trained 49.8 macro-F1, claim-only NB 42.4;
// with evidence cues and the learner variants (session 3): trained 48.8, NB 42.4, claim-only linear
// 47.8, xgboost 48.7, stacked 49.4.
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>

#include "../support/quantemp_data.hpp"
#include "claims/evidence.hpp"
#include "claims/load.hpp"
#include "verify/cv.hpp"

namespace numcheck::verify {
namespace {

TEST(RealData, GroupedCvBeatsClaimOnlyBaseline) {
  const auto p = numcheck::testing::quantemp_dir() / "val_claimonly_evidence_question_mapping.json";
  if (!std::filesystem::exists(p)) GTEST_SKIP() << "QuanTemp data not found at " << p.string();
  std::vector<claims::EvidenceRecord> recs;
  for (const auto& c : claims::load_claims(p).claims) recs.push_back(claims::evidence_from_claim(c));
  ASSERT_EQ(recs.size(), 3084u);
  CvOptions opt;
  opt.seeds = 1;
  opt.draws = 0;
  opt.ablations = false;
  opt.threads = 2;
  const auto r = cross_validate(recs, FeatureSettings::builtin(), opt);
  const auto row = [&](const std::string& name) -> const CvSystem& {
    for (const auto& s : r.systems)
      if (s.name == name) return s;
    throw std::runtime_error("no cv row " + name);
  };
  EXPECT_GT(r.systems[0].macro_f1, row("claim-only NB").macro_f1 + 0.02) << cv_markdown(r);
  // The reference claim-only TF-IDF + logistic regression on this fold draw when written: 46.89, the
  // trained verifier 49.30 (+2.41; paired bootstrap p 0.016 with 1,000 draws).
  EXPECT_GT(r.systems[0].macro_f1, row(std::string(kTfidfBaseline)).macro_f1 + 0.01) << cv_markdown(r);
  EXPECT_GT(r.systems[0].macro_f1, 0.45) << cv_markdown(r);
  EXPECT_LT(row("majority").macro_f1, 0.30);
}

}  // namespace
}  // namespace numcheck::verify
