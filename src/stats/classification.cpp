#include "stats/classification.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.hpp"
#include "core/prng.hpp"

namespace numcheck::stats {

ConfusionMatrix ConfusionMatrix::from_labels(std::span<const int> gold, std::span<const int> pred,
                                             std::size_t k) {
  if (gold.size() != pred.size())
    fail("confusion matrix: {} gold labels but {} predictions", gold.size(), pred.size());
  ConfusionMatrix m(k);
  for (std::size_t i = 0; i < gold.size(); ++i) {
    if (gold[i] < 0 || static_cast<std::size_t>(gold[i]) >= k || pred[i] < 0 ||
        static_cast<std::size_t>(pred[i]) >= k)
      fail("confusion matrix: item {} has a class outside [0, {})", i, k);
    m.add(static_cast<std::size_t>(gold[i]), static_cast<std::size_t>(pred[i]));
  }
  return m;
}

std::uint64_t ConfusionMatrix::total() const {
  return std::accumulate(cells_.begin(), cells_.end(), std::uint64_t{0});
}
std::uint64_t ConfusionMatrix::correct() const {
  std::uint64_t s = 0;
  for (std::size_t c = 0; c < k_; ++c) s += at(c, c);
  return s;
}
std::uint64_t ConfusionMatrix::support(std::size_t c) const {
  std::uint64_t s = 0;
  for (std::size_t p = 0; p < k_; ++p) s += at(c, p);
  return s;
}
std::uint64_t ConfusionMatrix::predicted(std::size_t c) const {
  std::uint64_t s = 0;
  for (std::size_t g = 0; g < k_; ++g) s += at(g, c);
  return s;
}

namespace {
double ratio(std::uint64_t num, std::uint64_t den) {
  return den == 0 ? 0.0 : static_cast<double>(num) / static_cast<double>(den);
}
}  // namespace

ClassificationReport classification_report(const ConfusionMatrix& m) {
  ClassificationReport r;
  const std::size_t k = m.classes();
  r.n = m.total();
  r.correct = m.correct();
  r.accuracy = ratio(r.correct, r.n);
  r.per_class.resize(k);
  std::size_t present = 0;
  for (std::size_t c = 0; c < k; ++c) {
    ClassScores& s = r.per_class[c];
    s.tp = m.at(c, c);
    s.support = m.support(c);
    s.predicted = m.predicted(c);
    s.present = s.support > 0 || s.predicted > 0;
    s.precision = ratio(s.tp, s.predicted);
    s.recall = ratio(s.tp, s.support);
    // 2tp / (2tp + fp + fn) with fp = predicted - tp, fn = support - tp.
    s.f1 = ratio(2 * s.tp, s.predicted + s.support);
    if (s.present) {
      ++present;
      r.macro_precision += s.precision;
      r.macro_recall += s.recall;
      r.macro_f1 += s.f1;
    }
    r.weighted_precision += s.precision * static_cast<double>(s.support);
    r.weighted_recall += s.recall * static_cast<double>(s.support);
    r.weighted_f1 += s.f1 * static_cast<double>(s.support);
  }
  if (present > 0) {
    r.macro_precision /= static_cast<double>(present);
    r.macro_recall /= static_cast<double>(present);
    r.macro_f1 /= static_cast<double>(present);
  }
  if (r.n > 0) {
    r.weighted_precision /= static_cast<double>(r.n);
    r.weighted_recall /= static_cast<double>(r.n);
    r.weighted_f1 /= static_cast<double>(r.n);
  }
  return r;
}

double macro_f1(const ConfusionMatrix& m) { return classification_report(m).macro_f1; }
double weighted_f1(const ConfusionMatrix& m) { return classification_report(m).weighted_f1; }

namespace {

// Continued fraction for the incomplete beta function (modified Lentz's method).
double beta_cf(double a, double b, double x) {
  constexpr int kMaxIter = 10000;
  constexpr double kEps = 1e-15;
  constexpr double kTiny = 1e-300;
  const double qab = a + b, qap = a + 1.0, qam = a - 1.0;
  double c = 1.0, d = 1.0 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= kMaxIter; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1.0 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1.0 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1.0) < kEps) break;
  }
  return h;
}

}  // namespace

double incomplete_beta(double a, double b, double x) {
  if (!(a > 0) || !(b > 0) || !(x >= 0) || !(x <= 1))
    fail("incomplete_beta: bad arguments a={} b={} x={}", a, b, x);
  if (x == 0 || x == 1) return x;
  const double lbt =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  const double bt = std::exp(lbt);
  if (x < (a + 1.0) / (a + b + 2.0)) return bt * beta_cf(a, b, x) / a;
  return 1.0 - bt * beta_cf(b, a, 1.0 - x) / b;
}

double student_t_two_sided_p(double t, double df) {
  if (!(df > 0)) fail("student_t_two_sided_p: df must be positive, got {}", df);
  if (std::isnan(t)) return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(t)) return 0.0;
  const double x = df / (df + t * t);
  return std::clamp(incomplete_beta(df / 2.0, 0.5, x), 0.0, 1.0);
}

PairedTTest paired_t_test(std::span<const double> a, std::span<const double> b) {
  if (a.size() != b.size()) fail("paired t-test: {} and {} values", a.size(), b.size());
  if (a.size() < 2) fail("paired t-test: needs at least 2 pairs, got {}", a.size());
  PairedTTest r;
  r.n = a.size();
  const double n = static_cast<double>(r.n);
  double mean = 0;
  for (std::size_t i = 0; i < r.n; ++i) mean += a[i] - b[i];
  mean /= n;
  double ss = 0;
  for (std::size_t i = 0; i < r.n; ++i) {
    const double d = a[i] - b[i] - mean;
    ss += d * d;
  }
  r.mean_diff = mean;
  const double sd = std::sqrt(ss / (n - 1));
  if (sd == 0) {
    if (mean == 0) {
      r.t = 0;
      r.p = 1;
    } else {
      r.t = mean > 0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
      r.p = 0;
    }
    return r;
  }
  r.t = mean / (sd / std::sqrt(n));
  r.p = student_t_two_sided_p(r.t, n - 1);
  return r;
}

std::vector<std::vector<std::size_t>> kfold_indices(std::size_t n, std::size_t k, std::uint64_t seed) {
  if (k < 2 || k > n) fail("k-fold split: {} folds need 2 <= k <= n = {}", k, n);
  std::vector<std::size_t> perm(n);
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  Rng rng(seed, "kfold");
  rng.shuffle(perm);
  std::vector<std::vector<std::size_t>> folds(k);
  std::size_t pos = 0;
  for (std::size_t f = 0; f < k; ++f) {
    const std::size_t size = n / k + (f < n % k ? 1 : 0);
    folds[f].assign(perm.begin() + static_cast<std::ptrdiff_t>(pos),
                    perm.begin() + static_cast<std::ptrdiff_t>(pos + size));
    std::sort(folds[f].begin(), folds[f].end());
    pos += size;
  }
  return folds;
}

KFoldTTest kfold_paired_t_test(std::span<const int> gold, std::span<const int> pred_a,
                               std::span<const int> pred_b, std::size_t k_classes, std::size_t folds,
                               std::uint64_t seed) {
  if (gold.size() != pred_a.size() || gold.size() != pred_b.size())
    fail("k-fold t-test: {} gold labels, {} and {} predictions", gold.size(), pred_a.size(), pred_b.size());
  KFoldTTest r;
  r.folds = folds;
  for (const auto& fold : kfold_indices(gold.size(), folds, seed)) {
    ConfusionMatrix ma(k_classes), mb(k_classes);
    for (std::size_t i : fold) {
      auto check = [&](int v) {
        if (v < 0 || static_cast<std::size_t>(v) >= k_classes)
          fail("k-fold t-test: item {} has a class outside [0, {})", i, k_classes);
        return static_cast<std::size_t>(v);
      };
      ma.add(check(gold[i]), check(pred_a[i]));
      mb.add(check(gold[i]), check(pred_b[i]));
    }
    const auto ra = classification_report(ma), rb = classification_report(mb);
    r.macro_a.push_back(ra.macro_f1);
    r.macro_b.push_back(rb.macro_f1);
    r.weighted_a.push_back(ra.weighted_f1);
    r.weighted_b.push_back(rb.weighted_f1);
  }
  r.macro = paired_t_test(r.macro_a, r.macro_b);
  r.weighted = paired_t_test(r.weighted_a, r.weighted_b);
  return r;
}

}  // namespace numcheck::stats
