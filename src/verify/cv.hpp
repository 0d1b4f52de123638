#pragma once
// Honest evaluation of the trained verifier: stratified k-fold cross-validation grouped by claim
// text (claims with the same text always share a fold), repeated with several seeds, with
// baselines computed on the very same folds: the majority class of the training folds, claim-only
// text models (TF-IDF + logistic regression over the claim's word unigrams and bigrams, the
// reference; multinomial naive Bayes; the verifier's own claim-side features), plus the trained verifier with
// each feature group removed (ablation), with surface numbers, and with claim-side features only. Figures:
// macro/weighted/per-class F1 of the pooled out-of-fold predictions, averaged over seeds, with 95%
// cluster-bootstrap intervals (clusters = near-duplicate groups) of those means, and paired comparisons
// against the verifier from the same source.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "claims/evidence.hpp"
#include "io/json.hpp"
#include "stats/classification.hpp"
#include "verify/features.hpp"

namespace numcheck::verify {

// fold[i] in [0, k) for record i. Groups (near-duplicate claims, claim_groups) are dealt, in a seeded random
// order within each label stratum (a group's label is its first record's), to the fold holding the fewest
// records of that label so far (ties: fewest records overall, then lowest fold).
[[nodiscard]] std::vector<int> grouped_stratified_folds(const std::vector<claims::EvidenceRecord>& records,
                                                        int k, std::uint64_t seed);

// Multinomial naive Bayes (Laplace smoothing alpha = 1) over claim word n-grams (surface tokens).
class ClaimOnlyNaiveBayes {
 public:
  explicit ClaimOnlyNaiveBayes(int max_n = 2) : max_n_(max_n) {}
  void fit(const std::vector<const claims::EvidenceRecord*>& records);
  [[nodiscard]] claims::Verdict predict(const claims::EvidenceRecord& r) const;

 private:
  int max_n_;
  std::vector<std::string> grams(const claims::EvidenceRecord& r) const;
  std::array<double, claims::kVerdictCount> log_prior_{};
  std::array<double, claims::kVerdictCount> log_unseen_{};
  std::vector<std::pair<std::string, std::array<double, claims::kVerdictCount>>> table_;  // sorted by gram
  std::array<bool, claims::kVerdictCount> present_{};
};

// The reference claim-only baseline: TF-IDF over the claim's word n-grams (surface tokens, 1..max_n
// words, every n-gram of the training records: raw counts times the smoothed idf
// ln((1 + n) / (1 + df)) + 1, each row L2-normalized, as scikit-learn's TfidfVectorizer) and an
// L2-regularized logistic regression (liblinear l2r_lr, one-vs-rest, classes weighted n / (k *
// n_c), bias 1). No evidence. C is chosen among `select_C` by the macro-F1 of out-of-fold
// predictions over 5 grouped stratified inner folds of the training records (ties: the first),
// so the baseline is tuned as much as the verifier. Deterministic (primal solver, sorted
// vocabulary, seeded inner folds).
class ClaimOnlyTfidfLogReg {
 public:
  explicit ClaimOnlyTfidfLogReg(int max_n = 2, std::vector<double> select_C = {0.3, 1, 3, 10, 30})
      : max_n_(max_n), select_C_(std::move(select_C)) {}
  void fit(const std::vector<const claims::EvidenceRecord*>& records);
  [[nodiscard]] double chosen_c() const noexcept { return C_; }
  [[nodiscard]] claims::Verdict predict(const claims::EvidenceRecord& r) const;
  // The L2-normalized TF-IDF row of `r` over the fitted vocabulary: (0-based index, value), ascending.
  [[nodiscard]] std::vector<std::pair<std::size_t, double>> row(const claims::EvidenceRecord& r) const;

 private:
  void fit_with(const std::vector<const claims::EvidenceRecord*>& records, double C);
  int max_n_;
  std::vector<double> select_C_;
  double C_ = 1.0;
  std::vector<std::string> vocab_;  // sorted
  std::vector<double> idf_;
  std::vector<claims::Verdict> classes_;
  std::vector<double> weights_;  // vocab_.size() x classes_.size(), row-major by feature
  std::vector<double> bias_;
};

struct CvOptions {
  int folds = 5;
  int seeds = 3;
  std::uint64_t seed = 20260725;
  std::size_t draws = 1000;  // bootstrap resamples for the intervals
  bool ablations = true;
  bool variants = true;  // the other learners (xgboost, stacked, linear) beside the trained verifier's
  unsigned threads = 2;
};

struct CvSystem {
  std::string name;  // "trained", "majority", "claim-only NB", "trained -alignment", ...
  std::string description;
  std::string kind;  // "model", "baseline", "ablation", "variant"
  std::vector<double> macro_f1_per_seed, weighted_f1_per_seed, accuracy_per_seed;
  double macro_f1 = 0, weighted_f1 = 0, accuracy = 0;    // means over seeds
  std::array<double, claims::kVerdictCount> class_f1{};  // means over seeds, indexed by Verdict
  // 95% cluster-bootstrap intervals of the means over seeds (each draw: every seed's F1 on the
  // resampled claim texts, averaged over seeds).
  double macro_lo = 0, macro_hi = 0;
  double weighted_lo = 0, weighted_hi = 0;
  // Paired against "trained", from the same source: the mean over seeds of the macro-F1 difference
  // (trained - this), its interval and paired bootstrap p (two-sided).
  double diff = 0, diff_lo = 0, diff_hi = 0, boot_p = 1;
  // The same per fold draw (seed): trained minus this on that seed's out-of-fold predictions, and
  // the paired cluster-bootstrap p of that difference (two-sided; same draws as above).
  std::vector<double> diff_per_seed, boot_p_per_seed;
  // Exact McNemar on per-claim correctness (an accuracy test), first seed only (JSON only).
  double mcnemar_p = 1;
  std::uint64_t trained_only_correct = 0, this_only_correct = 0;
  std::vector<int> predictions;  // first seed's out-of-fold predictions (Verdict as int)
  std::vector<std::vector<int>> predictions_per_seed;
};

struct CvReport {
  std::size_t records = 0, groups = 0;
  std::array<std::size_t, claims::kVerdictCount> labels{};
  CvOptions options;
  std::string settings_note;  // numbers mode and learner of the trained verifier
  std::vector<CvSystem> systems;
  double seconds_features = 0, seconds_total = 0;
};

// Runs the whole study. Only labelled records are used (throws Error when fewer than folds * 2).
[[nodiscard]] CvReport cross_validate(const std::vector<claims::EvidenceRecord>& records,
                                      const FeatureSettings& settings, const CvOptions& opt);

// How the folds were drawn, in words: "grouped stratified 5-fold (groups: near-duplicate claims), fold
// draws seeded 20260725, 20260726, 20260727 (numcheck::Rng)".
[[nodiscard]] std::string fold_scheme(const CvOptions& opt);

// The name of the reference claim-only baseline's row.
inline constexpr std::string_view kTfidfBaseline = "claim-only TF-IDF LR";

[[nodiscard]] io::OrderedJson cv_json(const CvReport& r);
[[nodiscard]] std::string cv_markdown(const CvReport& r);

}  // namespace numcheck::verify
