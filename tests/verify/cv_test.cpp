// Grouped stratified folds, the claim-only naive Bayes baseline and the CV study on a toy set.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.hpp"
#include "verify/cv.hpp"
#include "verify/model.hpp"

namespace numcheck::verify {
namespace {

claims::EvidenceRecord rec(std::string text, claims::Verdict v) {
  claims::EvidenceRecord r;
  r.id = text;
  r.claim = std::move(text);
  r.label = v;
  r.selection = "lexical";
  return r;
}

// `noisy`: every fourth claim's word says another verdict than its label, so scores depend on the
// folds (and differ between seeds).
std::vector<claims::EvidenceRecord> toy(std::size_t n, bool noisy = false) {
  std::vector<claims::EvidenceRecord> v;
  const char* w[] = {"rose", "fell", "stayed"};
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<claims::Verdict>(i % 3 == 2 ? 2 : i % 5 == 0 ? 0 : 1);
    const int word = noisy && i % 4 == 1 ? (static_cast<int>(c) + 1) % 3 : static_cast<int>(c);
    // Distinct words per claim, so that no two claims are near-duplicates (claim_groups).
    const std::string n = std::to_string(i);
    v.push_back(rec(std::string("prices ") + w[word] + " by " + n + " percent in town" + n + " district" + n +
                        " year" + n,
                    c));
  }
  return v;
}

TEST(Folds, DuplicatesShareAFoldAndStrataAreBalanced) {
  auto recs = toy(100);
  recs.push_back(recs[3]);
  recs.push_back(recs[7]);
  recs.push_back(recs[3]);
  const auto f = grouped_stratified_folds(recs, 5, 1);
  EXPECT_EQ(f[3], f[100]);
  EXPECT_EQ(f[3], f[102]);
  EXPECT_EQ(f[7], f[101]);
  std::map<std::pair<int, int>, int> per;  // (fold, label) -> records
  for (std::size_t i = 0; i < recs.size(); ++i) ++per[{f[i], static_cast<int>(*recs[i].label)}];
  for (int lab = 0; lab < 3; ++lab) {
    int lo = 1 << 30, hi = 0;
    for (int k = 0; k < 5; ++k) {
      lo = std::min(lo, per[{k, lab}]);
      hi = std::max(hi, per[{k, lab}]);
    }
    EXPECT_LE(hi - lo, 2) << "label " << lab;  // a duplicate group may add one or two
  }
  EXPECT_EQ(f, grouped_stratified_folds(recs, 5, 1));  // seeded
  EXPECT_NE(f, grouped_stratified_folds(recs, 5, 2));
  EXPECT_THROW((void)grouped_stratified_folds(recs, 1, 1), Error);
}

TEST(Folds, NearDuplicateClaimsShareAFold) {
  auto recs = toy(60);
  const std::size_t n = recs.size();
  recs.push_back(
      rec("\u201CPRICES  " + recs[4].claim.substr(7) + "\u201D", *recs[4].label));  // quotes, case, spaces
  recs.push_back(
      rec("Al Gore predicted that Earth's \"ice caps\" would melt away by 2014.", claims::Verdict::kFalse));
  recs.push_back(
      rec("Al Gore said that the ice caps would melt by 2014.", claims::Verdict::kFalse));  // Jaccard 0.6
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const auto f = grouped_stratified_folds(recs, 5, seed);
    EXPECT_EQ(f[4], f[n]) << seed;
    EXPECT_EQ(f[n + 1], f[n + 2]) << seed;
  }
  std::vector<const claims::EvidenceRecord*> p;
  for (const auto& r : recs) p.push_back(&r);
  const auto g = claim_groups(p);
  EXPECT_EQ(g[4], g[n]);
  EXPECT_EQ(g[n + 1], g[n + 2]);
  EXPECT_NE(g[3], g[4]);
  EXPECT_EQ(*std::max_element(g.begin(), g.end()) + 1, n + 1);
}

TEST(NaiveBayes, LearnsWordEvidence) {
  const auto recs = toy(60);
  std::vector<const claims::EvidenceRecord*> p;
  for (const auto& r : recs) p.push_back(&r);
  ClaimOnlyNaiveBayes nb;
  nb.fit(p);
  EXPECT_EQ(nb.predict(rec("prices fell a lot", claims::Verdict::kTrue)), claims::Verdict::kFalse);
  EXPECT_EQ(nb.predict(rec("prices stayed", claims::Verdict::kTrue)), claims::Verdict::kConflicting);
}

TEST(CrossValidate, BaselinesOnTheSameFoldsAndAblations) {
  CvOptions opt;
  opt.seeds = 2;
  opt.draws = 50;
  opt.threads = 1;
  const auto r = cross_validate(toy(90), FeatureSettings::builtin(), opt);
  EXPECT_EQ(r.records, 90u);
  ASSERT_GE(r.systems.size(), 4u);
  EXPECT_EQ(r.systems[0].name, "trained");
  EXPECT_EQ(r.systems[1].name, "majority");
  EXPECT_EQ(r.systems[2].name, "claim-only TF-IDF LR");
  EXPECT_EQ(r.systems[3].name, "claim-only NB");
  EXPECT_EQ(r.systems[0].macro_f1_per_seed.size(), 2u);
  EXPECT_GT(r.systems[0].macro_f1, 0.9);   // the verdict word decides
  EXPECT_LT(r.systems[1].macro_f1, 0.35);  // majority: one class of three
  EXPECT_LE(r.systems[0].macro_lo, r.systems[0].macro_hi);
  bool ablation = false;
  for (const auto& s : r.systems) ablation |= s.name == "trained -cues";
  EXPECT_TRUE(ablation);
  EXPECT_NE(cv_markdown(r).find("| claim-only NB | baseline |"), std::string::npos);
  EXPECT_EQ(cv_json(r)["systems"].size(), r.systems.size());
}

// Every figure of a row has one source: the mean over seeds. The difference against the trained
// verifier is the difference of the means (not the first seed's), its interval is of that mean,
// and it has a paired bootstrap p; McNemar (accuracy, first seed) stays in the JSON, labelled.
TEST(CrossValidate, RowsAreMeansOverSeedsWithIntervalsOfTheMeans) {
  CvOptions opt;
  opt.seeds = 3;
  opt.draws = 200;
  opt.threads = 1;
  opt.ablations = false;
  const auto r = cross_validate(toy(90, true), FeatureSettings::builtin(), opt);
  bool seeds_differ = false;
  for (const auto& s : r.systems) {
    ASSERT_EQ(s.predictions_per_seed.size(), 3u);
    EXPECT_NEAR(s.diff, r.systems[0].macro_f1 - s.macro_f1, 1e-12) << s.name;
    EXPECT_LE(s.diff_lo, s.diff_hi) << s.name;
    EXPECT_GE(s.boot_p, 0.0);
    EXPECT_LE(s.boot_p, 1.0);
    seeds_differ = seeds_differ || s.macro_f1_per_seed[0] != s.macro_f1_per_seed[1] ||
                   s.macro_f1_per_seed[0] != s.macro_f1_per_seed[2];
  }
  EXPECT_TRUE(seeds_differ) << "the toy data must make seeds differ for this test to mean anything";
  const auto j = cv_json(r);
  EXPECT_TRUE(j.contains("figures"));
  EXPECT_TRUE(j["systems"][1]["vs_trained"].contains("bootstrap_p"));
  EXPECT_NE(j["systems"][1]["vs_trained"]["mcnemar_source"].get<std::string>().find("first seed"),
            std::string::npos);
  const std::string md = cv_markdown(r);
  EXPECT_EQ(md.find("McNemar p |"), std::string::npos) << md;  // no accuracy test beside the F1 difference
  EXPECT_NE(md.find("p (M-F1)"), std::string::npos) << md;
}

}  // namespace
}  // namespace numcheck::verify

namespace numcheck::verify {
namespace {

// The reference claim-only baseline: rows are TF-IDF with scikit-learn's smoothed idf, L2-normalized;
// the logistic regression learns the verdict word.
TEST(TfidfLogReg, SmoothedIdfRowsAndLearnsWordEvidence) {
  const auto recs = toy(60);
  std::vector<const claims::EvidenceRecord*> p;
  for (const auto& r : recs) p.push_back(&r);
  ClaimOnlyTfidfLogReg lr;
  lr.fit(p);
  EXPECT_EQ(lr.predict(rec("prices fell a lot", claims::Verdict::kTrue)), claims::Verdict::kFalse);
  EXPECT_EQ(lr.predict(rec("prices stayed", claims::Verdict::kTrue)), claims::Verdict::kConflicting);
  EXPECT_EQ(lr.predict(rec("prices rose", claims::Verdict::kFalse)), claims::Verdict::kTrue);
  // "prices" is in all 60 records (idf 1), "stayed" in the 20 Conflicting ones (idf ln(61/21) + 1),
  // the bigram "prices stayed" likewise; "zzz" is not in the vocabulary.
  const auto x = lr.row(rec("prices stayed zzz", claims::Verdict::kTrue));
  ASSERT_EQ(x.size(), 3u);
  const double rare = std::log(61.0 / 21.0) + 1.0;
  const double norm = std::sqrt(1.0 + 2 * rare * rare);
  std::vector<double> v;
  for (const auto& e : x) v.push_back(e.second);
  std::sort(v.begin(), v.end());
  EXPECT_NEAR(v[0], 1.0 / norm, 1e-12);
  EXPECT_NEAR(v[1], rare / norm, 1e-12);
  EXPECT_NEAR(v[2], rare / norm, 1e-12);
}

// `claims cv` reports the TF-IDF baseline beside the trained verifier on the same folds, with one
// paired p per fold draw, and says the fold scheme.
TEST(CrossValidate, TfidfBaselineWithOnePValuePerFoldDraw) {
  CvOptions opt;
  opt.seeds = 3;
  opt.draws = 100;
  opt.threads = 1;
  opt.ablations = false;
  const auto r = cross_validate(toy(90, true), FeatureSettings::builtin(), opt);
  const CvSystem* t = nullptr;
  for (const auto& s : r.systems)
    if (s.name == kTfidfBaseline) t = &s;
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->kind, "baseline");
  ASSERT_EQ(t->diff_per_seed.size(), 3u);
  ASSERT_EQ(t->boot_p_per_seed.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_NEAR(t->diff_per_seed[k], r.systems[0].macro_f1_per_seed[k] - t->macro_f1_per_seed[k], 1e-12);
    EXPECT_GE(t->boot_p_per_seed[k], 0.0);
    EXPECT_LE(t->boot_p_per_seed[k], 1.0);
  }
  const std::string md = cv_markdown(r);
  EXPECT_NE(md.find("| claim-only TF-IDF LR | baseline |"), std::string::npos) << md;
  EXPECT_NE(
      md.find("Against the claim-only TF-IDF + logistic regression baseline on the same folds (grouped "
              "stratified 5-fold (groups: near-duplicate claims), fold draws seeded 20260725, 20260726, "
              "20260727"),
      std::string::npos)
      << md;
  const auto j = cv_json(r);
  EXPECT_EQ(j["fold_scheme"].get<std::string>().rfind("grouped stratified 5-fold", 0), 0u);
  EXPECT_EQ(j["systems"][1]["vs_trained"]["bootstrap_p_per_seed"].size(), 3u);
}

}  // namespace
}  // namespace numcheck::verify
