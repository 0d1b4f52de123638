#pragma once
// Scoring verdict predictions against gold labels the way the QuanTemp paper does (accuracy,
// macro/weighted F1, per-class precision/recall/F1, confusion matrix, per-category tables as in
// its Table 2), and paired comparisons of several systems on the same claims: exact McNemar on
// per-claim correctness, a paired bootstrap on macro-F1, and a 10-fold paired t-test on per-fold
// scores (the procedure of the QuanTemp code, on numcheck's own fold draw: its folds are not the
// ones numpy's RandomState(42) gives, so its t and p differ from that code's). Metric definitions:
// stats/classification.hpp (scikit-learn's), over the three verdicts.
//
// Unparseable predictions: a prediction record that joins a gold claim but whose label does not
// map to a verdict (loaded with LoadOptions::keep_unknown_labels) is scored as wrong: it counts in
// n and in its gold class's recall, never in any class's precision, and has its own column.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "claims/claim.hpp"
#include "claims/load.hpp"
#include "io/json.hpp"
#include "stats/classification.hpp"

namespace numcheck::claims {

// How predictions were matched to gold claims.
struct JoinReport {
  std::size_t by_id = 0, by_text = 0;
  std::size_t gold_without_prediction = 0;
  std::size_t unused_predictions = 0;
  std::vector<std::string> examples;   // a few unmatched items, for the report
  std::vector<std::string> conflicts;  // same key, different verdicts
};

// pred_for_gold[i] is the verdict joined to gold[i], if any. Rules: a gold claim with an id joins a
// prediction with the same id; otherwise (or when no prediction has that id) it joins by exact
// claim text, else by the same claims::normalize_claim key (other quotes, dashes, case or
// spacing; counted in by_text). When a text occurs k times in gold, its j-th occurrence takes the
// j-th prediction with that text (the last one when there are fewer).
// When `unparseable` is given, (*unparseable)[i] tells that gold[i] joined a prediction record
// whose label did not map (pred_for_gold[i] is then empty).
[[nodiscard]] std::vector<std::optional<Verdict>> join_predictions(const std::vector<Claim>& gold,
                                                                   const std::vector<Claim>& preds,
                                                                   JoinReport& report,
                                                                   std::vector<bool>* unparseable = nullptr);

// Predicted-class index of an unparseable prediction in the scores' confusion matrices.
inline constexpr int kUnparseable = kVerdictCount;

struct Scores {
  std::size_t n = 0;
  std::size_t unparseable = 0;
  stats::ConfusionMatrix confusion{kVerdictCount + 1};  // last column: unparseable
  stats::ClassificationReport report;                   // over the three verdicts
  // 95% percentile intervals of a bootstrap over claims (EvaluateOptions draws and seed); equal to
  // the point value when there are no draws.
  double macro_lo = 0, macro_hi = 0, weighted_lo = 0, weighted_hi = 0;
};
// pred values are verdict indices or kUnparseable.
[[nodiscard]] Scores score(const std::vector<int>& gold, const std::vector<int>& pred);
// The report over the three verdicts of a confusion matrix with an unparseable column: per-class
// figures of the verdicts, macro over the verdicts present in gold or predictions, weighted by gold
// support, accuracy = correct / all.
[[nodiscard]] stats::ClassificationReport verdict_report(const stats::ConfusionMatrix& m);

struct SystemResult {
  std::string name;  // prediction file name without extension
  std::string path;
  JoinReport join;
  std::vector<LoadIssue> issues;
  Scores all;
  std::map<Category, Scores> by_category;
  std::vector<std::optional<Verdict>> pred;  // per gold claim
  std::vector<bool> unparseable;             // per gold claim (empty = none)
};

struct Comparison {
  std::string a, b;
  std::size_t n = 0;  // gold claims both systems predicted
  double accuracy_a = 0, accuracy_b = 0, macro_f1_a = 0, macro_f1_b = 0;
  std::uint64_t a_only_correct = 0, b_only_correct = 0;
  double mcnemar_p = 1;
  double boot_diff = 0, boot_lo = 0, boot_hi = 0, boot_p = 1;
  std::size_t draws = 0;
  std::uint64_t seed = 0;
  bool ttest_ran = false;
  std::uint64_t ttest_seed = 42;
  stats::KFoldTTest ttest;
  // The t-test's macro-F1 p under fold_orders orders of the claims (the first as given, the others
  // shuffled with numcheck::Rng(fold_seed, "claim-order-<r>")), each cut with the same fold scheme:
  // how much p moves with the fold assignment alone.
  std::vector<double> ttest_p_orders;
};

struct EvaluateOptions {
  bool by_category = false;
  std::size_t bootstrap_draws = 10000;
  std::uint64_t seed = 20240714;  // bootstrap seed
  std::size_t folds = 10;
  std::uint64_t fold_seed = 42;  // numcheck::Rng seed of the t-test's folds (the QuanTemp code's
                                 // random_state value, but not its numpy fold draw)
  std::size_t fold_orders = 20;  // claim orders for the spread of the t-test's p (Comparison)
};

struct Evaluation {
  std::string gold_path;
  std::size_t gold_n = 0;
  std::vector<LoadIssue> gold_issues;
  std::map<std::string, std::size_t> category_source;  // "gold taxonomy" / "rule-based" -> claims
  std::vector<SystemResult> systems;
  std::vector<Comparison> comparisons;
};

[[nodiscard]] Evaluation evaluate(const std::vector<Claim>& gold, std::vector<SystemResult> systems,
                                  const EvaluateOptions& opt);

[[nodiscard]] io::OrderedJson evaluation_json(const Evaluation& e);
[[nodiscard]] std::string evaluation_markdown(const Evaluation& e, bool by_category);

}  // namespace numcheck::claims
