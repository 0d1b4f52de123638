#pragma once
// Multi-class classification metrics with scikit-learn's definitions, and the paired tests used to
// compare two classifiers on the same items.
//
// Definitions (scikit-learn 1.x, sklearn.metrics.precision_recall_fscore_support, zero_division=0):
//   precision_c = tp_c / (tp_c + fp_c), recall_c = tp_c / (tp_c + fn_c),
//   f1_c = 2 tp_c / (2 tp_c + fp_c + fn_c)  (= 2PR/(P+R)); any 0/0 is 0 (a class never predicted
//   has precision 0, a class never in the gold labels has recall 0).
//   macro = unweighted mean over the labels that occur in the gold or the predicted labels (the
//   default labels=None of f1_score); weighted = mean weighted by gold support; accuracy =
//   correct / n. Cells of the confusion matrix are rows = gold, columns = predicted, like
//   sklearn.metrics.confusion_matrix.
// Classes are indices 0..k-1. Counts may be weighted (bootstrap resampling counts).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace numcheck::stats {

class ConfusionMatrix {
 public:
  ConfusionMatrix() = default;
  explicit ConfusionMatrix(std::size_t k) : k_(k), cells_(k * k, 0) {}
  // Throws Error when gold and pred differ in length or hold a class outside [0, k).
  [[nodiscard]] static ConfusionMatrix from_labels(std::span<const int> gold, std::span<const int> pred,
                                                   std::size_t k);

  void add(std::size_t gold, std::size_t pred, std::uint64_t weight = 1) {
    cells_[gold * k_ + pred] += weight;
  }
  [[nodiscard]] std::uint64_t at(std::size_t gold, std::size_t pred) const {
    return cells_[gold * k_ + pred];
  }
  [[nodiscard]] std::size_t classes() const noexcept { return k_; }
  [[nodiscard]] std::uint64_t total() const;
  [[nodiscard]] std::uint64_t correct() const;
  [[nodiscard]] std::uint64_t support(std::size_t c) const;    // row sum
  [[nodiscard]] std::uint64_t predicted(std::size_t c) const;  // column sum

 private:
  std::size_t k_ = 0;
  std::vector<std::uint64_t> cells_;
};

struct ClassScores {
  double precision = 0, recall = 0, f1 = 0;
  std::uint64_t support = 0, predicted = 0, tp = 0;
  bool present = false;  // occurs in gold or predictions (takes part in the macro average)
};

struct ClassificationReport {
  std::uint64_t n = 0, correct = 0;
  double accuracy = 0;
  std::vector<ClassScores> per_class;
  double macro_precision = 0, macro_recall = 0, macro_f1 = 0;
  double weighted_precision = 0, weighted_recall = 0, weighted_f1 = 0;
};

[[nodiscard]] ClassificationReport classification_report(const ConfusionMatrix& m);
[[nodiscard]] double macro_f1(const ConfusionMatrix& m);
[[nodiscard]] double weighted_f1(const ConfusionMatrix& m);

// Two-sided p-value of Student's t statistic with df degrees of freedom (via the regularized
// incomplete beta function, Numerical Recipes 3rd ed. sec. 6.4 and 6.14). df > 0.
[[nodiscard]] double student_t_two_sided_p(double t, double df);
// Regularized incomplete beta I_x(a, b), a, b > 0, 0 <= x <= 1 (continued fraction, modified Lentz).
[[nodiscard]] double incomplete_beta(double a, double b, double x);

struct PairedTTest {
  std::size_t n = 0;
  double mean_diff = 0;  // mean of a - b
  double t = 0;          // +-inf when every difference is the same non-zero value; 0 when all are 0
  double p = 1;          // two-sided; 1 when all differences are 0, 0 when t is infinite
};
// scipy.stats.ttest_rel(a, b): t = mean(d) / (sd(d) / sqrt(n)), sd with n - 1, df = n - 1.
// Throws Error when the lengths differ or n < 2.
[[nodiscard]] PairedTTest paired_t_test(std::span<const double> a, std::span<const double> b);

// K shuffled folds like sklearn.model_selection.KFold(n_splits=k, shuffle=True): the items are
// permuted (here with numcheck::Rng(seed), Fisher-Yates) and cut into k consecutive folds, the
// first n % k of size n / k + 1 and the rest n / k. Each fold lists item indices in ascending
// order. Throws Error when k < 2 or k > n.
[[nodiscard]] std::vector<std::vector<std::size_t>> kfold_indices(std::size_t n, std::size_t k,
                                                                  std::uint64_t seed);

// The QuanTemp code's significance test (code/evaluation/statistical_tests.py): split the items
// into 10 shuffled folds, compute each system's macro-F1 and weighted-F1 on every fold, and run a
// paired t-test over the fold scores.
struct KFoldTTest {
  std::size_t folds = 0;
  std::vector<double> macro_a, macro_b, weighted_a, weighted_b;
  PairedTTest macro, weighted;
};
[[nodiscard]] KFoldTTest kfold_paired_t_test(std::span<const int> gold, std::span<const int> pred_a,
                                             std::span<const int> pred_b, std::size_t k_classes,
                                             std::size_t folds = 10, std::uint64_t seed = 42);

}  // namespace numcheck::stats
