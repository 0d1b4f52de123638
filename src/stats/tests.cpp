#include "stats/tests.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"

namespace numcheck::stats {

namespace {

// log C(n, k) via lgamma; used once per call, for the largest term of the tail.
double log_choose(std::uint64_t n, std::uint64_t k) {
  const double dn = static_cast<double>(n);
  const double dk = static_cast<double>(k);
  return std::lgamma(dn + 1.0) - std::lgamma(dk + 1.0) - std::lgamma(dn - dk + 1.0);
}

}  // namespace

double log_binom_half_cdf(std::uint64_t k, std::uint64_t n) {
  if (k >= n) return 0.0;
  // Terms C(n, i) for i = k, k-1, ..., 0, relative to C(n, k): the ratio C(n, i-1) / C(n, i) is
  // i / (n - i + 1). For k < n/2 the ratios are < 1 and the sum converges fast; stop when a term
  // no longer changes the sum.
  double sum = 1.0;
  double term = 1.0;
  for (std::uint64_t i = k; i > 0; --i) {
    term *= static_cast<double>(i) / static_cast<double>(n - i + 1);
    const double before = sum;
    sum += term;
    if (sum == before) break;
  }
  return log_choose(n, k) + std::log(sum) - static_cast<double>(n) * std::log(2.0);
}

double mcnemar_exact_p(std::uint64_t c, std::uint64_t t) {
  const std::uint64_t n = c + t;
  if (n == 0) return 1.0;
  const std::uint64_t k = std::min(c, t);
  if (2 * k >= n) return 1.0;  // c == t: the doubled tail exceeds 1
  const double p = 2.0 * std::exp(log_binom_half_cdf(k, n));
  return std::min(1.0, p);
}

std::vector<double> holm(const std::vector<double>& p) {
  const std::size_t m = p.size();
  for (std::size_t i = 0; i < m; ++i) {
    if (!(p[i] >= 0.0 && p[i] <= 1.0)) {
      fail("holm: p-value {} is {} (must be in [0, 1])", i, p[i]);
    }
  }
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  std::vector<double> adjusted(m);
  double running = 0.0;
  for (std::size_t j = 0; j < m; ++j) {
    const double factor = static_cast<double>(m - j);
    const double v = std::min(1.0, factor * p[order[j]]);
    running = std::max(running, v);
    adjusted[order[j]] = running;
  }
  return adjusted;
}

Interval wilson(std::uint64_t k, std::uint64_t n, double z) {
  if (k > n) fail("wilson: {} successes out of {} trials", k, n);
  if (n == 0) return {0.0, 1.0};
  const double dn = static_cast<double>(n);
  const double dk = static_cast<double>(k);
  const double z2 = z * z;
  const double denom = dn + z2;
  const double center = (dk + z2 / 2.0) / denom;
  const double half = z / denom * std::sqrt(dk * (dn - dk) / dn + z2 / 4.0);
  Interval r{std::max(0.0, center - half), std::min(1.0, center + half)};
  if (k == 0) r.lo = 0.0;
  if (k == n) r.hi = 1.0;
  return r;
}

}  // namespace numcheck::stats
