#include "stats/descriptive.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace numcheck::stats {

double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) fail("quantile of an empty sample");
  if (!(q >= 0.0 && q <= 1.0)) fail("quantile level {} is outside [0, 1]", q);
  return quantile_of_order_stats(sorted.size(), q, [&](std::size_t k) { return sorted[k]; });
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
  // The first order statistic asked for by selection; the second (the next one) is then the
  // minimum of what nth_element left after it, since those are all >= it.
  bool first = true;
  return quantile_of_order_stats(v.size(), q, [&](std::size_t k) {
    if (first) {
      first = false;
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
      return v[k];
    }
    return *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  });
}

double median(std::vector<double> v) { return quantile_inclusive(std::move(v), 0.5); }
double q1(std::vector<double> v) { return quantile_inclusive(std::move(v), 0.25); }
double q3(std::vector<double> v) { return quantile_inclusive(std::move(v), 0.75); }

Quartiles quartiles_inclusive(std::vector<double> v) {
  sort_checked(v);
  return {quantile_sorted(v, 0.25), quantile_sorted(v, 0.5), quantile_sorted(v, 0.75)};
}

}  // namespace numcheck::stats
