#pragma once
// Scoring verdict predictions against gold labels the way the QuanTemp paper does (accuracy,
// macro/weighted F1, per-class precision/recall/F1, confusion matrix, per-category tables as in
// its Table 2), and paired comparisons of several systems on the same claims: exact McNemar on
// per-claim correctness, a paired bootstrap on macro-F1, and the 10-fold paired t-test of the
// QuanTemp code. Metric definitions: stats/classification.hpp (scikit-learn's).
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
// claim text. When a text occurs k times in gold, its j-th occurrence takes the j-th prediction
// with that text (the last one when there are fewer).
[[nodiscard]] std::vector<std::optional<Verdict>> join_predictions(const std::vector<Claim>& gold,
                                                                   const std::vector<Claim>& preds,
                                                                   JoinReport& report);

struct Scores {
  std::size_t n = 0;
  stats::ConfusionMatrix confusion{kVerdictCount};
  stats::ClassificationReport report;
};
[[nodiscard]] Scores score(const std::vector<int>& gold, const std::vector<int>& pred);

struct SystemResult {
  std::string name;  // prediction file name without extension
  std::string path;
  JoinReport join;
  std::vector<LoadIssue> issues;
  Scores all;
  std::map<Category, Scores> by_category;
  std::vector<std::optional<Verdict>> pred;  // per gold claim
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
  stats::KFoldTTest ttest;
};

struct EvaluateOptions {
  bool by_category = false;
  std::size_t bootstrap_draws = 10000;
  std::uint64_t seed = 20240714;  // bootstrap seed
  std::size_t folds = 10;
  std::uint64_t fold_seed = 42;  // the QuanTemp code's KFold random_state
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
