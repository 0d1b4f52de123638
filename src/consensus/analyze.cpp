#include "consensus/analyze.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "stats/bootstrap.hpp"

namespace numcheck::consensus {

Decision decide(std::span<const std::optional<num::Rational>> values, const num::Rational& expected,
                std::span<const std::size_t> priority) {
  Decision d;
  // Agreement: the largest multiplicity among parsed values (exact equality); the modal value is
  // unique whenever that multiplicity is at least 2 of 3.
  const num::Rational* modal = nullptr;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!values[i]) continue;
    int count = 0;
    for (std::size_t j = 0; j < values.size(); ++j) {
      if (values[j] && *values[j] == *values[i]) ++count;
    }
    if (count > d.agreement) {
      d.agreement = count;
      modal = &*values[i];
    }
  }
  if (d.agreement >= 2) {
    d.predicted = *modal;
    d.fallback = *modal;
  } else {
    for (std::size_t p : priority) {
      if (p < values.size() && values[p]) {
        d.fallback = *values[p];
        break;
      }
    }
  }
  d.fallback_correct = d.fallback.has_value() && *d.fallback == expected;
  return d;
}

namespace {

std::vector<stats::TieGroup> groups_for(const std::vector<std::int64_t>& agreement,
                                        const std::vector<std::uint8_t>& wrong) {
  return stats::tie_groups(agreement, wrong);
}

// One base's decision under priority order oi, counted into the arm's result (the prediction and
// the agreement do not depend on the order: they are counted once, under order 0).
void count_decision(ArmResult& r, std::size_t oi, std::size_t b, const Decision& d,
                    const num::Rational& expected, std::vector<std::vector<std::uint8_t>>& wrong_by_order) {
  OrderResult& orr = r.orders[oi];
  const bool unanimous = d.agreement == static_cast<int>(kCalls);
  if (d.fallback_correct) {
    ++orr.fallback_correct;
  } else {
    ++orr.fallback_wrong;
  }
  if (!unanimous) {
    if (d.fallback_correct) {
      ++orr.false_alarms;
    } else {
      ++orr.useful_flags;
    }
  }
  wrong_by_order[oi][b] = d.fallback_correct ? 0 : 1;
  if (oi != 0) return;
  // Order-independent counts (the prediction never depends on the priority order).
  r.base_agreement[b] = d.agreement;
  r.base_wrong[b] = d.fallback_correct ? 0 : 1;
  ++r.agreement[static_cast<std::size_t>(d.agreement)];
  if (d.predicted) {
    ++r.predictions;
    if (*d.predicted == expected) {
      ++r.prediction_correct;
    } else {
      ++r.prediction_wrong;
    }
  } else {
    ++r.abstentions;
  }
  if (unanimous) {
    if (d.fallback_correct) {
      ++r.unanimous_correct;
    } else {
      ++r.unanimous_wrong;
    }
  } else {
    ++r.non_unanimous;
  }
}

}  // namespace

SystemResult analyze_system(const Plan& plan, std::string name, std::span<const CallResult> calls) {
  if (calls.size() != plan.requests.size()) {
    fail("consensus analysis: {} call results for {} planned requests", calls.size(), plan.requests.size());
  }
  SystemResult sys;
  sys.name = std::move(name);
  // Plan order of bases, to index per-base vectors the same way in every arm (paired bootstrap).
  std::map<std::string, std::size_t> base_pos;
  for (std::size_t i = 0; i < plan.bases.size(); ++i) base_pos[plan.bases[i]] = i;

  for (const auto& tier : plan.options.tiers) {
    for (const auto& arm : tier_arms(tier)) {
      ArmResult r;
      r.tier = tier;
      r.arm = arm;
      r.n_bases = plan.bases.size();
      r.base_agreement.assign(plan.bases.size(), 0);
      r.base_wrong.assign(plan.bases.size(), 1);
      std::vector<std::vector<std::uint8_t>> wrong_by_order(kCyclicOrders.size(),
                                                            std::vector<std::uint8_t>(plan.bases.size(), 1));
      for (const auto& o : kCyclicOrders) {
        OrderResult orr;
        orr.order = o;
        r.orders.push_back(orr);
      }
      std::vector<bool> seen(plan.bases.size(), false);
      for (const ArmCalls& a : plan.arms) {
        if (a.tier != tier || a.arm != arm) continue;
        const std::size_t b = base_pos.at(a.base_id);
        seen[b] = true;
        const num::Rational& expected = plan.expected.at(a.base_id);
        std::array<std::optional<num::Rational>, kCalls> values;
        for (std::size_t c = 0; c < kCalls; ++c) {
          const CallResult& cr = calls[a.requests[c]];
          if (!cr.answered) {
            ++r.missing_calls;
            continue;
          }
          ++r.answered[c];
          if (cr.value) ++r.parsed[c];
          if (cr.correct) ++r.correct[c];
          values[c] = cr.value;
        }
        for (std::size_t oi = 0; oi < kCyclicOrders.size(); ++oi) {
          const Decision d = decide(values, expected, kCyclicOrders[oi]);
          count_decision(r, oi, b, d, expected, wrong_by_order);
        }
      }
      for (std::size_t b = 0; b < seen.size(); ++b) {
        if (!seen[b])
          fail("consensus analysis: tier {} arm {} has no calls for base {}", tier, arm, plan.bases[b]);
      }
      for (std::size_t oi = 0; oi < kCyclicOrders.size(); ++oi) {
        const auto g = groups_for(r.base_agreement, wrong_by_order[oi]);
        r.orders[oi].aurc_exact = stats::aurc_tie_averaged<num::Rational>(g);
        r.orders[oi].aurc = r.orders[oi].aurc_exact.to_double();
      }
      const auto g = groups_for(r.base_agreement, r.base_wrong);
      for (std::int64_t t = static_cast<std::int64_t>(kCalls); t >= 0; --t) {
        r.operating_points.push_back(stats::operating_point(g, t));
      }
      r.curve = stats::risk_coverage_curve(g);
      sys.tiers[tier][arm] = std::move(r);
    }
  }
  return sys;
}

std::vector<Comparison> bootstrap_system(SystemResult& sys, const AnalysisOptions& options) {
  std::vector<Comparison> out;
  static constexpr std::pair<const char*, const char*> kPairs[] = {{"representation", "paraphrase"},
                                                                   {"representation", "self_consistency"},
                                                                   {"paraphrase", "self_consistency"}};
  for (auto& [tier, arms] : sys.tiers) {
    std::vector<ArmResult*> list;
    for (const char* name : kArms) {
      auto it = arms.find(name);
      if (it != arms.end()) list.push_back(&it->second);
    }
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    auto index_of = [&](std::string_view a) -> std::optional<std::size_t> {
      for (std::size_t i = 0; i < list.size(); ++i) {
        if (list[i]->arm == a) return i;
      }
      return std::nullopt;
    };
    for (const auto& [a, b] : kPairs) {
      const auto ia = index_of(a), ib = index_of(b);
      if (ia && ib) pairs.emplace_back(*ia, *ib);
    }
    const std::size_t n = list.empty() ? 0 : list.front()->base_agreement.size();
    std::vector<stats::Interval> arm_ci(list.size());
    std::vector<stats::Interval> pair_ci(pairs.size());
    if (options.bootstrap > 0 && n > 0) {
      const std::size_t n_stats = list.size() + pairs.size();
      auto reps = stats::bootstrap_counts_multi(
          n, options.bootstrap, options.seed, n_stats,
          [&](const stats::ClusterCounts& counts, std::span<double> outv) {
            std::vector<double> arm_aurc(list.size());
            for (std::size_t a = 0; a < list.size(); ++a) {
              // Agreement levels are 0..3: accumulate the four tie groups directly from the counts.
              std::array<stats::TieGroup, 4> groups{};
              for (std::size_t lvl = 0; lvl < 4; ++lvl)
                groups[lvl].score = static_cast<std::int64_t>(3 - lvl);
              const ArmResult& r = *list[a];
              for (std::size_t b = 0; b < n; ++b) {
                auto& gr = groups[3 - static_cast<std::size_t>(r.base_agreement[b])];
                gr.size += counts[b];
                if (r.base_wrong[b] != 0) gr.errors += counts[b];
              }
              std::vector<stats::TieGroup> nonempty;
              for (const auto& gr : groups) {
                if (gr.size > 0) nonempty.push_back(gr);
              }
              arm_aurc[a] = stats::aurc(nonempty);
              outv[a] = arm_aurc[a];
            }
            for (std::size_t p = 0; p < pairs.size(); ++p) {
              outv[list.size() + p] = arm_aurc[pairs[p].first] - arm_aurc[pairs[p].second];
            }
          },
          options.threads);
      for (std::size_t a = 0; a < list.size(); ++a) {
        arm_ci[a] = stats::percentile_interval(std::move(reps[a]), options.level);
        list[a]->aurc_ci = arm_ci[a];
      }
      for (std::size_t p = 0; p < pairs.size(); ++p) {
        pair_ci[p] = stats::percentile_interval(std::move(reps[list.size() + p]), options.level);
      }
    }
    for (std::size_t p = 0; p < pairs.size(); ++p) {
      const ArmResult& a = *list[pairs[p].first];
      const ArmResult& b = *list[pairs[p].second];
      Comparison c;
      c.system = sys.name;
      c.tier = tier;
      c.arm = a.arm;
      c.baseline = b.arm;
      c.difference_exact = a.orders[0].aurc_exact - b.orders[0].aurc_exact;
      c.difference = c.difference_exact.to_double();
      if (options.bootstrap > 0 && n > 0) c.ci = pair_ci[p];
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace numcheck::consensus
