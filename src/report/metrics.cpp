#include "report/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <utility>

#include "core/error.hpp"
#include "core/large_array.hpp"
#include "core/ordered_parallel.hpp"
#include "core/prng.hpp"
#include "core/version.hpp"
#include "grade/grade.hpp"
#include "report/analyses.hpp"
#include "stats/bootstrap.hpp"
#include "stats/descriptive.hpp"
#include "stats/tests.hpp"

namespace numcheck::report {

namespace {

using OJ = io::OrderedJson;

int family_index(std::string_view view) {
  for (std::size_t f = 0; f < kFamilyCount; ++f) {
    if (view == orbit::kFamilies[f]) return static_cast<int>(f);
  }
  return -1;
}

std::optional<Interval> wilson_or_none(std::uint64_t k, std::uint64_t n, double z) {
  if (n == 0) return std::nullopt;
  return stats::wilson(k, n, z);
}

// The normal quantile for a two-sided interval at `level` (Wilson's z). Exact for 0.95 (the
// default); otherwise by bisection on erfc, which is accurate to ~1e-15.
double z_for_level(double level) {
  if (level == 0.95) return stats::kZ95;
  const double target = 1.0 - level;  // two-sided tail mass
  double lo = 0.0, hi = 40.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    if (std::erfc(mid / std::sqrt(2.0)) > target) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return (lo + hi) / 2;
}

// One resampling frame (all bases, or one family's paired bases) and the quantities evaluated on
// each of its draws.
struct Frame {
  std::string name;  // "orbit" or the family name
  std::size_t n = 0;
  // Per quantity: its count-weighted sum over the frame's clusters, or (when `difference` is set)
  // the difference of the two quantities before it (the gap), from their exact integer totals.
  struct Quantity {
    stats::CountSum sum;
    bool difference = false;
  };
  std::vector<Quantity> quantities;
  // The bootstrap's integer totals, per quantity its `draws` values in the stage's store (nullptr
  // for a difference, computed from the two it is made of when needed). 32 bits: a total of 0/1
  // values is at most n.
  std::vector<std::int32_t*> totals;
  std::size_t draws = 0;
  [[nodiscard]] std::size_t stored() const {
    return static_cast<std::size_t>(
        std::count_if(quantities.begin(), quantities.end(), [](const Quantity& q) { return !q.difference; }));
  }
};

// Runs a frame's draws. `extra` (the orbit frame's H2 baselines) is evaluated on the same draws
// in the same pass, from the draw's counts and the frame's totals, and receives its replicates.
void run_frame(Frame& fr, const ReportOptions& opt, std::uint64_t frame_seed, std::int32_t* store,
               BaselineBootstrap* extra = nullptr) {
  if (fr.n == 0 || opt.bootstrap_draws == 0) return;
  if (fr.n > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    fail("the {} bootstrap frame has {} bases, more than the report's {}", fr.name, fr.n,
         std::numeric_limits<std::int32_t>::max());
  }
  const std::size_t draws = opt.bootstrap_draws;
  const std::size_t nq = fr.quantities.size();
  fr.draws = draws;
  fr.totals.assign(nq, nullptr);
  for (std::size_t q = 0; q < nq; ++q) {
    if (fr.quantities[q].difference) continue;
    fr.totals[q] = store;
    store += draws;
  }
  const std::size_t n_extra = extra != nullptr ? extra->n_stats() : 0;
  std::vector<std::vector<double>> extra_reps;
  extra_reps.reserve(n_extra);
  for (std::size_t e = 0; e < n_extra; ++e) extra_reps.emplace_back(draws, 0.0);
  const auto n = static_cast<std::int64_t>(fr.n);
  stats::for_each_draw(
      fr.n, draws, frame_seed,
      [&](std::size_t d, const stats::ClusterCounts& c) {
        std::vector<std::int64_t> t(nq, 0);
        for (std::size_t q = 0; q < nq; ++q) {
          if (!fr.quantities[q].difference) {
            t[q] = fr.quantities[q].sum.eval(c, n);
            fr.totals[q][d] = static_cast<std::int32_t>(t[q]);
          }
        }
        if (n_extra > 0) {
          std::vector<double> out(n_extra, 0.0);
          extra->eval(c, t, out);
          for (std::size_t e = 0; e < n_extra; ++e) extra_reps[e][d] = out[e];
        }
      },
      opt.threads);
  if (n_extra > 0) extra->set_replicates(std::move(extra_reps));
}

// Quantity q's replicates: its totals, or for a difference the exact difference of the two
// quantities before it.
std::vector<double> replicates(const Frame& fr, std::size_t q) {
  std::vector<double> v(fr.draws);
  if (fr.quantities[q].difference) {
    const std::int32_t* a = fr.totals[q - 2];
    const std::int32_t* b = fr.totals[q - 1];
    for (std::size_t d = 0; d < v.size(); ++d) {
      v[d] = static_cast<double>(static_cast<std::int64_t>(a[d]) - static_cast<std::int64_t>(b[d]));
    }
  } else {
    const std::int32_t* a = fr.totals[q];
    for (std::size_t d = 0; d < v.size(); ++d) v[d] = static_cast<double>(a[d]);
  }
  return v;
}

// The seed of a frame's bootstrap streams: independent per frame, so adding a system or a family
// never changes another frame's draws, and the same for every system (paired comparisons).
std::uint64_t frame_seed(std::uint64_t seed, std::string_view frame) {
  return Rng(seed, fmt::format("report-bootstrap:{}", frame)).next();
}

std::optional<Interval> ci_from(const Frame& fr, std::size_t q, double level) {
  if (fr.draws == 0 || fr.n == 0) return std::nullopt;
  return stats::percentile_interval_of_totals(replicates(fr, q), static_cast<double>(fr.n), level);
}

std::optional<Interval> diff_ci(const Frame& fr, std::size_t qa, std::size_t qb, double level) {
  if (fr.draws == 0 || fr.n == 0) return std::nullopt;
  std::vector<double> v = replicates(fr, qa);
  const std::vector<double> b = replicates(fr, qb);
  for (std::size_t d = 0; d < v.size(); ++d) v[d] -= b[d];
  return stats::percentile_interval_of_totals(v, static_cast<double>(fr.n), level);
}

}  // namespace

OrbitLayout make_layout(const orbit::Benchmark& bench) {
  OrbitLayout layout;
  layout.bases.resize(bench.bases.size());
  layout.family_bases.resize(kFamilyCount);
  std::map<std::string, bool> seen_template;
  for (std::size_t b = 0; b < bench.bases.size(); ++b) {
    layout.bases[b].base = b;
    const auto& t = bench.bases[b].template_id;
    if (!seen_template[t]) {
      seen_template[t] = true;
      layout.templates.push_back(t);
    }
  }
  bool have_view[kFamilyCount] = {false, false, false, false, false};
  for (std::size_t v = 0; v < bench.views.size(); ++v) {
    const auto& view = bench.views[v];
    if (!is_orbit_view(view.view)) continue;
    const auto b = bench.base_position(view.base_id);
    if (!b) fail("view {} names an unknown base", view.prompt_id);
    auto& bv = layout.bases[*b];
    if (view.view == "canonical") {
      bv.canonical = v;
    } else {
      const int f = family_index(view.view);
      bv.family[f] = v;
      have_view[f] = true;
    }
  }
  for (std::size_t b = 0; b < layout.bases.size(); ++b) {
    auto& bv = layout.bases[b];
    if (bv.canonical == kNone) {
      fail("{}: base {} has no canonical view in views.jsonl", bench.dir.string(), bench.bases[b].base_id);
    }
    bv.orbit.push_back(bv.canonical);
    for (std::size_t f = 0; f < kFamilyCount; ++f) {
      if (bv.family[f] != kNone) {
        bv.orbit.push_back(bv.family[f]);
        layout.family_bases[f].push_back(b);
      }
    }
  }
  layout.views.emplace_back("canonical");
  for (std::size_t f = 0; f < kFamilyCount; ++f) {
    if (have_view[f]) layout.views.emplace_back(orbit::kFamilies[f]);
  }
  return layout;
}

BaseFlags base_flags(const OrbitLayout::BaseViews& b, const SystemScores& s, Layer layer) {
  const auto li = static_cast<std::size_t>(layer);
  BaseFlags f;
  f.canonical_correct = s.by_view[b.canonical].layer[li].outcome == Outcome::kCorrect;
  bool all_correct = true;
  bool all_parsed = true;
  for (std::size_t v : b.orbit) {
    const auto& ls = s.by_view[v].layer[li];
    all_correct = all_correct && ls.outcome == Outcome::kCorrect;
    all_parsed = all_parsed && ls.parsed();
  }
  f.orbit_correct = all_correct;
  if (all_parsed) {
    const num::Rational& first = *s.by_view[b.orbit.front()].layer[li].value;
    f.invariant = std::all_of(b.orbit.begin() + 1, b.orbit.end(),
                              [&](std::size_t v) { return *s.by_view[v].layer[li].value == first; });
  }
  f.consistent_wrong = f.invariant && !f.orbit_correct;
  return f;
}

// ---- compute_metrics, in stages ------------------------------------------------------------------

namespace {

// Counts behind the orbit metrics of a set of bases.
struct OrbitCounts {
  std::uint64_t n = 0, canonical = 0, correct = 0, invariant = 0, consistent_wrong = 0;
};

// What every stage needs: the benchmark, its layout, the systems, their base flags per layer, the
// bootstrap frames and the interval settings.
struct Stage {
  const orbit::Benchmark& bench;
  const OrbitLayout& layout;
  const std::vector<SystemScores>& systems;
  const ReportOptions& opt;
  double z = 0;
  std::vector<std::array<std::vector<BaseFlags>, 2>> flags;  // [system][layer][base]
  std::vector<Frame> frames;                                 // orbit, then one per family
  core::HugeVector<std::int32_t> replicate_store;            // the frames' totals
  // Quantity order in every frame: for s, for layer: [canonical, other, gap] where `other` is orbit
  // correctness (orbit frame) or transformed correctness (family frames).
  static std::size_t qi(std::size_t s, std::size_t l, std::size_t k) { return (s * 2 + l) * 3 + k; }
};

void compute_flags(Stage& st) {
  const std::size_t nb = st.layout.bases.size();
  st.flags.resize(st.systems.size());
  for (std::size_t s = 0; s < st.systems.size(); ++s) {
    if (st.systems[s].by_view.size() != st.bench.views.size()) {
      fail("scores of {} were not loaded against this benchmark", st.systems[s].name);
    }
    for (std::size_t l = 0; l < 2; ++l) {
      auto& flags = st.flags[s][l];
      flags.resize(nb);
      for (std::size_t b = 0; b < nb; ++b)
        flags[b] = base_flags(st.layout.bases[b], st.systems[s], static_cast<Layer>(l));
    }
  }
}

// The bootstrap frames: all bases (orbit, with the H2 baselines on its draws) and each family's
// paired bases.
void run_frames(Stage& st, BaselineBootstrap& baselines) {
  const OrbitLayout& layout = st.layout;
  const std::size_t nb = layout.bases.size();
  st.frames.resize(1 + kFamilyCount);
  st.frames[0].name = "orbit";
  st.frames[0].n = nb;
  for (std::size_t f = 0; f < kFamilyCount; ++f) {
    st.frames[1 + f].name = orbit::kFamilies[f];
    st.frames[1 + f].n = layout.family_bases[f].size();
  }
  for (std::size_t s = 0; s < st.systems.size(); ++s) {
    for (std::size_t l = 0; l < 2; ++l) {
      const auto& flags = st.flags[s][l];
      std::vector<int> cc(nb), oc(nb);
      for (std::size_t b = 0; b < nb; ++b) {
        cc[b] = flags[b].canonical_correct ? 1 : 0;
        oc[b] = flags[b].orbit_correct ? 1 : 0;
      }
      st.frames[0].quantities.push_back({stats::CountSum::over(cc), false});
      st.frames[0].quantities.push_back({stats::CountSum::over(oc), false});
      st.frames[0].quantities.push_back({{}, true});
      for (std::size_t f = 0; f < kFamilyCount; ++f) {
        const auto& fb = layout.family_bases[f];
        std::vector<int> fc(fb.size()), ft(fb.size());
        for (std::size_t i = 0; i < fb.size(); ++i) {
          const auto& bv = layout.bases[fb[i]];
          fc[i] = flags[fb[i]].canonical_correct ? 1 : 0;
          ft[i] = st.systems[s].by_view[bv.family[f]].layer[l].outcome == Outcome::kCorrect ? 1 : 0;
        }
        st.frames[1 + f].quantities.push_back({stats::CountSum::over(fc), false});
        st.frames[1 + f].quantities.push_back({stats::CountSum::over(ft), false});
        st.frames[1 + f].quantities.push_back({{}, true});
      }
    }
  }
  // The orbit frame's streams are the H2 baselines' too (so the excess gap and the orbit gap are
  // evaluated on the same resampled bases); the frames' seeds are independent of each other.
  // Every frame's totals in one store (a few megabytes in huge pages, not many small arrays).
  std::size_t values = 0;
  for (const Frame& fr : st.frames) {
    if (fr.n > 0) values += fr.stored() * st.opt.bootstrap_draws;
  }
  st.replicate_store.resize(values);
  std::int32_t* store = st.replicate_store.data();
  for (std::size_t f = 0; f < st.frames.size(); ++f) {
    Frame& fr = st.frames[f];
    run_frame(fr, st.opt, frame_seed(st.opt.seed, fr.name), store, f == 0 ? &baselines : nullptr);
    if (fr.n > 0) store += fr.stored() * st.opt.bootstrap_draws;
  }
}

BenchmarkInfo benchmark_info(const orbit::Benchmark& bench, const OrbitLayout& layout) {
  BenchmarkInfo b;
  b.dir = bench.dir.string();
  b.bases = layout.bases.size();
  b.prompts = bench.views.size();
  for (const auto& v : layout.views) {
    std::uint64_t n = 0;
    for (const auto& bv : layout.bases) {
      if (v == "canonical" || bv.family[family_index(v)] != kNone) ++n;
    }
    b.views.emplace_back(v, n);
  }
  b.templates = layout.templates;
  for (const auto& [file, hex] : bench.file_sha256) b.file_sha256.emplace_back(file, hex);
  b.selection = bench.selection;
  return b;
}

OrbitMetrics orbit_metrics(const OrbitCounts& c, double z) {
  OrbitMetrics o;
  o.n = c.n;
  o.canonical_correct = c.canonical;
  o.correct = c.correct;
  o.invariant = c.invariant;
  o.consistent_wrong = c.consistent_wrong;
  o.wilson = wilson_or_none(c.correct, c.n, z);
  o.invariant_wilson = wilson_or_none(c.invariant, c.n, z);
  o.consistent_wrong_wilson = wilson_or_none(c.consistent_wrong, c.n, z);
  return o;
}

ViewMetrics view_metrics(std::uint64_t correct, std::uint64_t n, double z) {
  return {n, correct, wilson_or_none(correct, n, z)};
}

// Token summaries (layer-free: the same in each layer), or none when no record has a count.
std::optional<Keyed<TokenSummary>> token_summaries(const Stage& st, const SystemScores& sys) {
  bool any_tokens = false;
  for (const auto& sp : sys.by_view) any_tokens = any_tokens || sp.completion_tokens.has_value();
  if (!any_tokens) return std::nullopt;
  Keyed<TokenSummary> out;
  for (const auto& vname : st.layout.views) {
    std::vector<double> t;
    TokenSummary ts;
    for (std::size_t v = 0; v < st.bench.views.size(); ++v) {
      if (st.bench.views[v].view != vname || !sys.by_view[v].present) continue;
      ++ts.records;
      if (sys.by_view[v].completion_tokens)
        t.push_back(static_cast<double>(*sys.by_view[v].completion_tokens));
      if (sys.by_view[v].finish_reason == "length") ++ts.length_finishes;
    }
    ts.count = t.size();
    if (!t.empty()) ts.quartiles = stats::quartiles_inclusive(std::move(t));
    out.emplace_back(vname, ts);
  }
  return out;
}

// Per view: correctness, outcome counts and magnitude drops; the per-template view counts go into
// `lm.templates` (filled by template_strata).
void view_metrics_stage(
    const Stage& st, const SystemScores& sys, std::size_t l, LayerMetrics& lm,
    std::map<std::string, std::map<std::string, std::pair<std::uint64_t, std::uint64_t>>>& tpl_view_counts) {
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> view_counts;  // correct, n
  std::map<std::string, OutcomeCounts> failures;
  std::map<std::string, ByK> mag_view, mag_tpl;
  std::map<std::string, std::map<std::string, std::uint64_t>> mag_view_tpl;
  MagnitudeDrops& md = lm.magnitude_drops;
  for (std::size_t v = 0; v < st.bench.views.size(); ++v) {
    const auto& view = st.bench.views[v];
    if (!is_orbit_view(view.view)) continue;
    const auto& ls = sys.by_view[v].layer[l];
    const bool ok = ls.outcome == Outcome::kCorrect;
    auto& vc = view_counts[view.view];
    vc.first += ok ? 1 : 0;
    vc.second += 1;
    auto& tc = tpl_view_counts[view.template_id][view.view];
    tc.first += ok ? 1 : 0;
    tc.second += 1;
    ++failures[view.view][static_cast<std::size_t>(ls.outcome)];
    if (ls.outcome == Outcome::kValueError) {
      ++md.value_errors;
      if (auto k = grade::magnitude_exponent(*ls.value, view.expected)) {
        ++md.by_k[*k];
        ++mag_view[view.view][*k];
        ++mag_tpl[view.template_id][*k];
        ++mag_view_tpl[view.view][view.template_id];
      }
    }
  }
  for (const auto& vname : st.layout.views) {
    const auto& vc = view_counts[vname];
    lm.views.emplace_back(vname, view_metrics(vc.first, vc.second, st.z));
    lm.failures.emplace_back(vname, failures[vname]);
    auto it = mag_view.find(vname);
    if (it == mag_view.end()) continue;
    ViewDrops d{it->second, {}};
    for (const auto& tp : st.layout.templates) {
      if (auto jt = mag_view_tpl[vname].find(tp); jt != mag_view_tpl[vname].end()) {
        d.by_template.emplace_back(tp, jt->second);
      }
    }
    md.by_view.emplace_back(vname, std::move(d));
  }
  for (const auto& tp : st.layout.templates) {
    if (auto it = mag_tpl.find(tp); it != mag_tpl.end()) md.by_template.emplace_back(tp, it->second);
  }
}

// The paired family tests with the Holm adjustment over the tested families.
Keyed<FamilyTest> family_tests(const Stage& st, std::size_t s, std::size_t l) {
  const auto& flags = st.flags[s][l];
  const SystemScores& sys = st.systems[s];
  Keyed<FamilyTest> out;
  std::vector<double> pvals;
  for (std::size_t f = 0; f < kFamilyCount; ++f) {
    FamilyTest r;
    for (std::size_t b : st.layout.family_bases[f]) {
      const bool can = flags[b].canonical_correct;
      const bool tr = sys.by_view[st.layout.bases[b].family[f]].layer[l].outcome == Outcome::kCorrect;
      ++r.n;
      r.canonical_correct += can;
      r.transformed_correct += tr;
      r.c += can && !tr;
      r.t += tr && !can;
    }
    if (r.n == 0) continue;
    r.p = stats::mcnemar_exact_p(r.c, r.t);
    r.ci = ci_from(st.frames[1 + f], Stage::qi(s, l, 2), st.opt.level);
    pvals.push_back(r.p);
    out.emplace_back(orbit::kFamilies[f], r);
  }
  const std::vector<double> adj = stats::holm(pvals);
  for (std::size_t i = 0; i < out.size(); ++i) out[i].second.p_holm = adj[i];
  return out;
}

// Template strata (exploratory: no intervals for gaps).
Keyed<TemplateStratum> template_strata(
    const Stage& st, const std::vector<BaseFlags>& flags,
    const std::map<std::string, std::map<std::string, std::pair<std::uint64_t, std::uint64_t>>>&
        tpl_view_counts) {
  Keyed<TemplateStratum> out;
  for (const auto& t : st.layout.templates) {
    OrbitCounts c;
    for (std::size_t b = 0; b < st.layout.bases.size(); ++b) {
      if (st.bench.bases[st.layout.bases[b].base].template_id != t) continue;
      ++c.n;
      c.canonical += flags[b].canonical_correct;
      c.correct += flags[b].orbit_correct;
      c.invariant += flags[b].invariant;
      c.consistent_wrong += flags[b].consistent_wrong;
    }
    TemplateStratum ts;
    if (auto tv = tpl_view_counts.find(t); tv != tpl_view_counts.end()) {
      for (const auto& vname : st.layout.views) {
        auto it = tv->second.find(vname);
        if (it != tv->second.end())
          ts.views.emplace_back(vname, view_metrics(it->second.first, it->second.second, st.z));
      }
    }
    ts.orbit = orbit_metrics(c, st.z);
    out.emplace_back(t, std::move(ts));
  }
  return out;
}

// Audit recovery per view (both layers' outcomes of each prompt).
Keyed<Recovery> recovery_stage(const Stage& st, const SystemScores& sys) {
  Keyed<Recovery> out;
  for (const auto& vname : st.layout.views) {
    Recovery r;
    for (std::size_t v = 0; v < st.bench.views.size(); ++v) {
      if (st.bench.views[v].view != vname) continue;
      const auto& sp = sys.by_view[v];
      ++r.n;
      r.strict_correct += sp.layer[0].outcome == Outcome::kCorrect;
      r.audit_correct += sp.layer[1].outcome == Outcome::kCorrect;
      r.multiple_final += sp.multiple_final;
      r.length_finishes += sp.present && sp.finish_reason == "length";
      if (sp.recovered) {
        ++r.recovered;
        for (const auto& rule : sp.rules) ++r.rules[rule];
      }
    }
    out.emplace_back(vname, std::move(r));
  }
  return out;
}

LayerMetrics layer_metrics(const Stage& st, std::size_t s, std::size_t l,
                           const std::optional<Keyed<TokenSummary>>& tokens) {
  const auto& flags = st.flags[s][l];
  const SystemScores& sys = st.systems[s];
  LayerMetrics lm;
  std::map<std::string, std::map<std::string, std::pair<std::uint64_t, std::uint64_t>>> tpl_view_counts;
  view_metrics_stage(st, sys, l, lm, tpl_view_counts);
  OrbitCounts oc;
  for (const auto& f : flags) {
    ++oc.n;
    oc.canonical += f.canonical_correct;
    oc.correct += f.orbit_correct;
    oc.invariant += f.invariant;
    oc.consistent_wrong += f.consistent_wrong;
  }
  lm.orbit = orbit_metrics(oc, st.z);
  lm.orbit_gap_ci = ci_from(st.frames[0], Stage::qi(s, l, 2), st.opt.level);
  lm.families = family_tests(st, s, l);
  lm.templates = template_strata(st, flags, tpl_view_counts);
  if (l == 1) lm.recovery = recovery_stage(st, sys);
  lm.tokens = tokens;
  return lm;
}

SystemMetrics system_metrics(const Stage& st, std::size_t s) {
  const SystemScores& sys = st.systems[s];
  SystemMetrics sm;
  sm.name = sys.name;
  sm.simulated = sys.simulated;
  sm.scores_file = sys.scores_path.string();
  if (sys.manifest_path) sm.manifest = sys.manifest_path->string();
  sm.records = sys.records;
  sm.scored_prompts = sys.scored_orbit_prompts;
  sm.missing = sys.missing;
  sm.ignored_records = sys.ignored;
  const auto tokens = token_summaries(st, sys);
  for (std::size_t l = 0; l < 2; ++l) sm.layers[l] = layer_metrics(st, s, l, tokens);
  return sm;
}

// Paired cross-system differences: the same resampled bases for both systems. Differences come from
// exact counts (no float subtraction of rounded rates).
Comparison comparison(const Stage& st, const MetricsModel& m, std::size_t a, std::size_t b) {
  Comparison c;
  c.a = m.systems[a].name;
  c.b = m.systems[b].name;
  for (std::size_t l = 0; l < 2; ++l) {
    const LayerMetrics& la = m.systems[a].layers[l];
    const LayerMetrics& lb = m.systems[b].layers[l];
    auto diff = [&](double d, const Frame& fr, std::size_t k) {
      return Difference{std::isfinite(d) ? std::optional<double>(d) : std::nullopt,
                        diff_ci(fr, Stage::qi(a, l, k), Stage::qi(b, l, k), st.opt.level)};
    };
    auto count_diff = [](std::uint64_t x, std::uint64_t y, double n) {
      return (static_cast<double>(x) - static_cast<double>(y)) / n;
    };
    ComparisonLayer& cl = c.layers[l];
    const double n0 = static_cast<double>(st.frames[0].n);
    if (st.layout.bases.size() > 0) {
      cl.canonical_correct =
          diff(count_diff(la.orbit.canonical_correct, lb.orbit.canonical_correct, n0), st.frames[0], 0);
      cl.orbit_correct = diff(count_diff(la.orbit.correct, lb.orbit.correct, n0), st.frames[0], 1);
      cl.orbit_gap = diff(la.orbit.gap() - lb.orbit.gap(), st.frames[0], 2);
    }
    for (std::size_t f = 0; f < kFamilyCount; ++f) {
      const char* fam = orbit::kFamilies[f];
      const FamilyTest* fa = find_key(la.families, fam);
      const FamilyTest* fb = find_key(lb.families, fam);
      if (fa == nullptr || fb == nullptr) continue;
      const double n = static_cast<double>(st.frames[1 + f].n);
      const double gap =
          ((static_cast<double>(fa->canonical_correct) - static_cast<double>(fa->transformed_correct)) -
           (static_cast<double>(fb->canonical_correct) - static_cast<double>(fb->transformed_correct))) /
          n;
      cl.families.emplace_back(
          fam, FamilyDifference{
                   diff(count_diff(fa->transformed_correct, fb->transformed_correct, n), st.frames[1 + f], 1),
                   diff(gap, st.frames[1 + f], 2)});
    }
  }
  return c;
}

}  // namespace

MetricsModel compute_metrics(const orbit::Benchmark& bench, const std::vector<SystemScores>& systems,
                             const ReportOptions& opt) {
  if (!(opt.level > 0.0 && opt.level < 1.0)) fail("interval level {} is outside (0, 1)", opt.level);
  const OrbitLayout layout = make_layout(bench);
  Stage st{bench, layout, systems, opt, z_for_level(opt.level), {}, {}, {}};
  compute_flags(st);
  BaselineBootstrap baselines(layout, systems);
  run_frames(st, baselines);

  MetricsModel m;
  m.numcheck_version = kVersion;
  m.benchmark = benchmark_info(bench, layout);
  m.settings = {opt.bootstrap_draws, opt.seed, opt.level};
  // Systems, then pairs of systems, each independent of the others (one thread each at a time).
  const std::size_t threads = core::thread_count(opt.threads);
  m.systems.resize(systems.size());
  core::parallel_for(systems.size(), threads, [&](std::size_t s) { m.systems[s] = system_metrics(st, s); });
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t a = 0; a < systems.size(); ++a) {
    for (std::size_t b = a + 1; b < systems.size(); ++b) pairs.emplace_back(a, b);
  }
  m.comparisons.resize(pairs.size());
  core::parallel_for(pairs.size(), threads, [&](std::size_t i) {
    m.comparisons[i] = comparison(st, m, pairs[i].first, pairs[i].second);
  });
  // The paper's remaining analyses and the H2 independence baseline (report/analyses.hpp).
  add_paper_analyses(m, bench, layout, systems, opt, baselines);
  return m;
}

}  // namespace numcheck::report
