#include "stats/selective.hpp"

#include <algorithm>
#include <map>

#include "core/error.hpp"

namespace numcheck::stats {

std::vector<TieGroup> tie_groups(std::span<const std::int64_t> scores, std::span<const std::uint8_t> wrong,
                                 std::span<const std::uint64_t> weights) {
  if (scores.size() != wrong.size()) {
    fail("tie_groups: {} scores but {} losses", scores.size(), wrong.size());
  }
  if (!weights.empty() && weights.size() != scores.size()) {
    fail("tie_groups: {} scores but {} weights", scores.size(), weights.size());
  }
  std::map<std::int64_t, TieGroup, std::greater<>> by_score;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    const std::uint64_t w = weights.empty() ? 1 : weights[i];
    if (w == 0) continue;
    TieGroup& g = by_score[scores[i]];
    g.score = scores[i];
    g.size += w;
    if (wrong[i] != 0) g.errors += w;
  }
  std::vector<TieGroup> out;
  out.reserve(by_score.size());
  for (const auto& [score, g] : by_score) out.push_back(g);
  return out;
}

std::uint64_t total_items(std::span<const TieGroup> groups) noexcept {
  std::uint64_t n = 0;
  for (const auto& g : groups) n += g.size;
  return n;
}

double aurc(std::span<const TieGroup> groups) {
  // Same closed form as aurc_tie_averaged<double>, written without the per-term integer products so
  // that large weights cannot overflow.
  double sum = 0;
  double before = 0, errors_before = 0, n = 0;
  for (const TieGroup& g : groups) {
    const double m = static_cast<double>(g.size);
    const double e = static_cast<double>(g.errors);
    n += m;
    if (errors_before != 0 || e != 0) {
      for (std::uint64_t j = 1; j <= g.size; ++j) {
        const double jd = static_cast<double>(j);
        sum += (errors_before + jd * e / m) / (before + jd);
      }
    }
    before += m;
    errors_before += e;
  }
  return n == 0 ? 0.0 : sum / n;
}

std::vector<CurvePoint> risk_coverage_curve(std::span<const TieGroup> groups) {
  const std::uint64_t n = total_items(groups);
  std::vector<CurvePoint> out;
  out.reserve(n);
  std::uint64_t before = 0, errors_before = 0;
  for (const TieGroup& g : groups) {
    for (std::uint64_t j = 1; j <= g.size; ++j) {
      const std::uint64_t k = before + j;
      const double expected_errors = static_cast<double>(errors_before) + static_cast<double>(j) *
                                                                              static_cast<double>(g.errors) /
                                                                              static_cast<double>(g.size);
      out.push_back(CurvePoint{k, static_cast<double>(k) / static_cast<double>(n),
                               expected_errors / static_cast<double>(k)});
    }
    before += g.size;
    errors_before += g.errors;
  }
  return out;
}

OperatingPoint operating_point(std::span<const TieGroup> groups, std::int64_t threshold) {
  OperatingPoint p;
  p.threshold = threshold;
  for (const TieGroup& g : groups) {
    p.n += g.size;
    if (g.score >= threshold) {
      p.accepted += g.size;
      p.errors += g.errors;
    }
  }
  return p;
}

std::vector<OperatingPoint> operating_points(std::span<const TieGroup> groups) {
  std::vector<OperatingPoint> out;
  out.reserve(groups.size());
  for (const TieGroup& g : groups) out.push_back(operating_point(groups, g.score));
  return out;
}

}  // namespace numcheck::stats
