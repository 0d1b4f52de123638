#pragma once
// Descriptive statistics: inclusive-method quantiles (medians and quartiles of completion
// lengths, percentile bootstrap intervals).
#include <cmath>
#include <cstddef>
#include <vector>

namespace numcheck::stats {

// Sample quantile by the inclusive method: Hyndman & Fan (Am. Statist. 50:361-365, 1996) type 7,
// i.e. numpy.quantile(method="linear"), R quantile(type = 7), Excel QUARTILE.INC/PERCENTILE.INC:
// with the sorted values x_0 <= ... <= x_{n-1}, h = (n - 1) q, the result is
// x_floor(h) + (h - floor(h)) (x_floor(h)+1 - x_floor(h)). q must be in [0, 1]; throws Error for
// an empty vector, a NaN value or q outside [0, 1].
[[nodiscard]] double quantile_inclusive(std::vector<double> v, double q);
[[nodiscard]] double median(std::vector<double> v);
[[nodiscard]] double q1(std::vector<double> v);  // quantile_inclusive(v, 0.25)
[[nodiscard]] double q3(std::vector<double> v);  // quantile_inclusive(v, 0.75)

// The inclusive quantile from the order statistics: `order_stat(k)` gives x_k of the n sorted
// values; it is called for k = floor(h) and then, only when the result interpolates, floor(h) + 1
// (in that order, so a selection can place x_k first). n >= 1 and q in [0, 1] are the caller's.
template <class OrderStat>
[[nodiscard]] double quantile_of_order_stats(std::size_t n, double q, OrderStat&& order_stat) {
  const double h = static_cast<double>(n - 1) * q;
  const double fl = std::floor(h);
  const auto i = static_cast<std::size_t>(fl);
  const double a = order_stat(i);
  const double frac = h - fl;
  // a + frac (b - a), written so that equal neighbours give exactly a.
  if (i + 1 >= n || frac == 0.0) return a;
  const double b = order_stat(i + 1);
  return a + frac * (b - a);
}

// The same on an already sorted vector (no copy); the caller guarantees ascending order.
[[nodiscard]] double quantile_sorted(const std::vector<double>& sorted, double q);

// The same by selection (std::nth_element, linear time): reorders `v`, result identical to
// quantile_inclusive. For the two ends of a bootstrap interval on 10,000 replicates.
[[nodiscard]] double quantile_select(std::vector<double>& v, double q);

// The three quartiles at once (one sort).
struct Quartiles {
  double q1 = 0.0;
  double median = 0.0;
  double q3 = 0.0;
};
[[nodiscard]] Quartiles quartiles_inclusive(std::vector<double> v);

}  // namespace numcheck::stats
