#include "stats/descriptive.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace numcheck::stats {

double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) fail("quantile of an empty sample");
  if (!(q >= 0.0 && q <= 1.0)) fail("quantile level {} is outside [0, 1]", q);
  const double h = static_cast<double>(sorted.size() - 1) * q;
  const double fl = std::floor(h);
  const auto i = static_cast<std::size_t>(fl);
  if (i + 1 >= sorted.size()) return sorted.back();
  const double frac = h - fl;
  const double a = sorted[i];
  const double b = sorted[i + 1];
  // a + frac (b - a), written so that equal neighbours give exactly a.
  return frac == 0.0 ? a : a + frac * (b - a);
}

namespace {
void sort_checked(std::vector<double>& v) {
  for (double x : v) {
    if (std::isnan(x)) fail("quantile of a sample containing NaN");
  }
  std::sort(v.begin(), v.end());
}
}  // namespace

double quantile_inclusive(std::vector<double> v, double q) {
  sort_checked(v);
  return quantile_sorted(v, q);
}

double quantile_select(std::vector<double>& v, double q) {
  if (v.empty()) fail("quantile of an empty sample");
  if (!(q >= 0.0 && q <= 1.0)) fail("quantile level {} is outside [0, 1]", q);
  for (double x : v) {
    if (std::isnan(x)) fail("quantile of a sample containing NaN");
  }
  const double h = static_cast<double>(v.size() - 1) * q;
  const double fl = std::floor(h);
  const auto i = static_cast<std::size_t>(fl);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
  const double a = v[i];
  if (i + 1 >= v.size()) return a;
  const double frac = h - fl;
  if (frac == 0.0) return a;
  // After nth_element every element past i is >= v[i]; the next order statistic is their minimum.
  const double b = *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(i) + 1, v.end());
  return a + frac * (b - a);
}

double median(std::vector<double> v) { return quantile_inclusive(std::move(v), 0.5); }
double q1(std::vector<double> v) { return quantile_inclusive(std::move(v), 0.25); }
double q3(std::vector<double> v) { return quantile_inclusive(std::move(v), 0.75); }

Quartiles quartiles_inclusive(std::vector<double> v) {
  sort_checked(v);
  return {quantile_sorted(v, 0.25), quantile_sorted(v, 0.5), quantile_sorted(v, 0.75)};
}

}  // namespace numcheck::stats
