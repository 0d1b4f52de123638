#pragma once
// Hypothesis tests, multiplicity adjustment and binomial intervals used by the orbit report
// (docs/report.md). Each is the textbook statistic, pinned by known-answer tests
// (tests/stats/tests_test.cpp).
#include <cstdint>
#include <vector>

#include "stats/interval.hpp"

namespace numcheck::stats {

// Exact two-sided McNemar test on the discordant pairs of a paired binary comparison: c pairs
// where only the first member succeeded and t where only the second did. Under H0 the c among the
// n = c + t discordant pairs are Binomial(n, 1/2); the two-sided p-value doubles the smaller tail,
//   p = min(1, 2 * sum_{i=0}^{min(c,t)} C(n, i) / 2^n),
// and is 1 when n = 0. (McNemar, Psychometrika 12:153-157, 1947; exact conditional form as in
// Fagerland, Lydersen & Laake, BMC Med. Res. Methodol. 13:91, 2013, eq. 2; R's
// binom.test(min(c,t), c+t)$p.value.) Computed from the log of the largest term and a
// ratio recurrence, so it neither overflows nor loses relative accuracy for n in the millions;
// p-values below ~1e-308 underflow to 0.
[[nodiscard]] double mcnemar_exact_p(std::uint64_t c, std::uint64_t t);

// log P(X <= k) for X ~ Binomial(n, 1/2), exact up to rounding (k <= n).
[[nodiscard]] double log_binom_half_cdf(std::uint64_t k, std::uint64_t n);

// Holm's step-down adjustment of m p-values (Holm, Scand. J. Statist. 6:65-70, 1979): with
// p_(1) <= ... <= p_(m), adjusted p_(i) = max_{j<=i} min(1, (m - j + 1) p_(j)). Returned in the
// input order; monotone in the sorted order and capped at 1 (identical to R's
// p.adjust(p, "holm")). Ties keep input order. Throws Error if a p-value is NaN or outside [0, 1].
[[nodiscard]] std::vector<double> holm(const std::vector<double>& p);

// Two-sided Wilson score interval for a binomial proportion k/n (Wilson, JASA 22:209-212, 1927;
// Agresti & Coull, Am. Statist. 52:119-126, 1998, eq. 2):
//   (k + z^2/2) / (n + z^2)  -/+  z / (n + z^2) * sqrt(k (n - k) / n + z^2 / 4).
// z defaults to the 97.5% normal quantile (95% interval). k = 0 gives lo = 0 and k = n gives
// hi = 1 exactly; n = 0 gives [0, 1]. Throws Error if k > n.
inline constexpr double kZ95 = 1.959963984540054;
[[nodiscard]] Interval wilson(std::uint64_t k, std::uint64_t n, double z = kZ95);

}  // namespace numcheck::stats
