#pragma once
// The trained claim verifier: a vocabulary over the named features (verify/features.hpp), a linear
// model per verdict (liblinear, one-vs-rest), and everything needed to reproduce it: the feature
// settings, the SHA-256 of the training records and their label counts. Saved as one JSON file
// ("numcheck-verifier-model"); prediction needs no liblinear. Training is deterministic: the
// solvers used are primal (no random coordinate order) and run on one thread, the vocabulary is
// sorted, and the JSON is written with shortest round-trip doubles, so training twice on the same
// records gives the same bytes.
#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "claims/evidence.hpp"
#include "core/string_set.hpp"
#include "io/json.hpp"
#include "verify/features.hpp"

namespace numcheck::verify {

using Scores = std::array<double, claims::kVerdictCount>;  // indexed by Verdict (True, False, Conflicting)

// A sparse feature vector: (1-based feature index, value), indices ascending.
using SparseVector = std::vector<std::pair<int, double>>;

class TrainedModel {
 public:
  FeatureSettings settings;
  // The linear part (learner kinds "linear" and "stacked"; empty for "xgboost").
  std::vector<std::string> names;  // feature i+1's name
  std::vector<claims::Verdict> classes;
  std::vector<double> weights;  // names.size() x classes.size(), row-major by feature
  std::vector<double> bias;     // per class
  std::string data_sha256;
  std::size_t train_records = 0;
  std::map<std::string, std::size_t> train_labels;
  // `claims train --exclude`: the ids of the training claims left out as near-duplicates of the
  // claims to be scored (empty list: none were); unset when no --exclude was given.
  std::optional<std::vector<std::string>> left_out;
  // The tree part (learner kinds "xgboost" and "stacked"): the dense row is, for "stacked", the
  // linear part's probabilities of True, False, Conflicting, then the values of dense_names
  // (features of the alignment, category and cues groups seen in training; 0 when absent).
  std::vector<std::string> dense_names;
  Booster booster;

  void build_index();
  [[nodiscard]] bool uses_trees() const noexcept { return settings.learner.kind != "linear"; }
  [[nodiscard]] SparseVector vectorize(const NamedFeatures& f) const;
  [[nodiscard]] Scores scores(const SparseVector& x) const;   // the linear part's per-class probabilities
  [[nodiscard]] Scores scores(const NamedFeatures& f) const;  // the model's per-class probabilities
  // Appends f's dense row (see dense_names) to `out`.
  void dense_row(const NamedFeatures& f, std::vector<float>& out) const;
  // Per-class probabilities of many feature sets (one tree call for all of them).
  [[nodiscard]] std::vector<Scores> scores_batch(const std::vector<const NamedFeatures*>& f) const;
  [[nodiscard]] static claims::Verdict argmax(const Scores& s);  // ties: True, False, Conflicting

  [[nodiscard]] io::OrderedJson to_json() const;
  [[nodiscard]] static TrainedModel from_json(const io::Json& j, std::string_view where);
  void save(const std::filesystem::path& path) const;
  [[nodiscard]] static TrainedModel load(const std::filesystem::path& path);

 private:
  // names' index (positions, not views: a copied model's index stays valid).
  StringPositions index_;
  [[nodiscard]] int find(std::string_view name) const;  // feature index, 0 when not in names
};

// SHA-256 over the records' JSON lines (what the model was trained on).
[[nodiscard]] std::string training_hash(const std::vector<claims::EvidenceRecord>& records);

// Trains on named features and labels (same length, at least two classes present), with the
// learner settings.learner.kind. `groups` (same length, or empty: every record its own group) keep
// records with the same claim text in one inner fold of the stacked learner.
[[nodiscard]] TrainedModel train_model(const std::vector<const NamedFeatures*>& features,
                                       const std::vector<claims::Verdict>& labels,
                                       const FeatureSettings& settings,
                                       const std::vector<std::size_t>& groups = {});

// The decision offsets train_model chooses when learner.tune_offsets (LearnerSettings), with the
// out-of-fold macro-F1 they reach on the inner folds and the macro-F1 of the plain argmax (all
// offsets 0) on the same decisions; the offset search always includes 0, so macro_f1 >=
// macro_f1_zero, and non-zero offsets are chosen only when they score strictly higher. Uses the
// linear settings as given (train_model tunes after its inner-CV selection of C and class weight).
struct OffsetTuning {
  std::array<double, claims::kVerdictCount> offsets{};  // per verdict: True, False (always 0), Conflicting
  double macro_f1 = 0;
  double macro_f1_zero = 0;
};
[[nodiscard]] OffsetTuning tune_decision_offsets(const std::vector<const NamedFeatures*>& features,
                                                 const std::vector<claims::Verdict>& labels,
                                                 const FeatureSettings& settings,
                                                 const std::vector<std::size_t>& groups = {});

// Group ids of the claims that must stay on one side of every split (inner folds of train_model,
// the folds and bootstrap clusters of `claims cv`): the near-duplicate components of the claim texts
// (claims::near_duplicate_groups: same normalised text, or word overlap at least 3/5), numbered by
// first appearance.
[[nodiscard]] std::vector<std::size_t> claim_groups(
    const std::vector<const claims::EvidenceRecord*>& records);

// Extracts features of many records on `threads` threads (0 = hardware concurrency, at most 2
// used by default callers); results are in record order whatever the thread count.
[[nodiscard]] std::vector<NamedFeatures> extract_all(const std::vector<claims::EvidenceRecord>& records,
                                                     const FeatureSettings& settings, unsigned threads = 0);

// Scores of many records (extract, vectorize, score; nothing kept per record but its scores), on
// `threads` threads; in record order whatever the thread count.
[[nodiscard]] std::vector<Scores> predict_all(const std::vector<claims::EvidenceRecord>& records,
                                              const TrainedModel& model, unsigned threads = 0);

}  // namespace numcheck::verify
