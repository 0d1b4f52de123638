#include "report/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <span>

#include "core/error.hpp"
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
constexpr std::size_t kNone = SIZE_MAX;
constexpr std::size_t kFamilyCount = 5;

int family_index(std::string_view view) {
  for (std::size_t f = 0; f < kFamilyCount; ++f) {
    if (view == orbit::kFamilies[f]) return static_cast<int>(f);
  }
  return -1;
}

OJ rate_or_null(std::uint64_t k, std::uint64_t n) {
  if (n == 0) return nullptr;
  return static_cast<double>(k) / static_cast<double>(n);
}

OJ interval_json(const stats::Interval& i) { return OJ::array({i.lo, i.hi}); }

OJ wilson_json(std::uint64_t k, std::uint64_t n, double z) {
  if (n == 0) return nullptr;
  return interval_json(stats::wilson(k, n, z));
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

// A count-weighted integer sum over clusters, stored sparsely: total = base + sum w_i counts[idx_i]
// (exact in double for any realistic size). Built from per-cluster integer values x with the
// most common value m folded into `base` (sum of counts is always n), so only the clusters that
// differ from m are visited per draw.
struct SparseSum {
  // A difference of the two quantities before it (gap = canonical - other): evaluated from their
  // exact integer totals instead of a third pass over the clusters.
  bool difference_of_previous_two = false;
  double base = 0;
  std::vector<std::uint32_t> idx;
  std::vector<double> w;

  static SparseSum from(const std::vector<int>& x) {
    SparseSum s;
    std::map<int, std::size_t> freq;
    for (int v : x) ++freq[v];
    int mode = 0;
    std::size_t best = 0;
    for (const auto& [v, c] : freq) {
      if (c > best) {
        best = c;
        mode = v;
      }
    }
    s.base = static_cast<double>(mode) * static_cast<double>(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (x[i] != mode) {
        s.idx.push_back(static_cast<std::uint32_t>(i));
        s.w.push_back(static_cast<double>(x[i] - mode));
      }
    }
    return s;
  }
  [[nodiscard]] double eval(const stats::ClusterCounts& c) const {
    double t = base;
    for (std::size_t k = 0; k < idx.size(); ++k) t += w[k] * c[idx[k]];
    return t;
  }
};

// One resampling frame (all bases, or one family's paired bases) and the quantities evaluated on
// each of its draws.
struct Frame {
  std::string name;  // "orbit" or the family name
  std::size_t n = 0;
  std::vector<SparseSum> quantities;
  std::vector<std::vector<double>> replicates;  // [quantity][draw], integer totals
};

void run_frame(Frame& fr, const ReportOptions& opt, std::uint64_t frame_seed) {
  if (fr.n == 0 || opt.bootstrap_draws == 0) return;
  fr.replicates = stats::bootstrap_counts_multi(
      fr.n, opt.bootstrap_draws, frame_seed, fr.quantities.size(),
      [&fr](const stats::ClusterCounts& c, std::span<double> out) {
        for (std::size_t q = 0; q < fr.quantities.size(); ++q) {
          out[q] = fr.quantities[q].difference_of_previous_two ? out[q - 2] - out[q - 1]
                                                               : fr.quantities[q].eval(c);
        }
      },
      opt.threads);
}

// The seed of a frame's bootstrap streams: independent per frame, so adding a system or a family
// never changes another frame's draws, and the same for every system (paired comparisons).
std::uint64_t frame_seed(std::uint64_t seed, std::string_view frame) {
  return Rng(seed, fmt::format("report-bootstrap:{}", frame)).next();
}

OJ ci_from(const Frame& fr, std::size_t q, double level) {
  if (fr.replicates.empty() || fr.n == 0) return nullptr;
  std::vector<double> v(fr.replicates[q].size());
  const double n = static_cast<double>(fr.n);
  for (std::size_t d = 0; d < v.size(); ++d) v[d] = fr.replicates[q][d] / n;
  return interval_json(stats::percentile_interval(std::move(v), level));
}

OJ diff_ci(const Frame& fr, std::size_t qa, std::size_t qb, double level) {
  if (fr.replicates.empty() || fr.n == 0) return nullptr;
  std::vector<double> v(fr.replicates[qa].size());
  const double n = static_cast<double>(fr.n);
  for (std::size_t d = 0; d < v.size(); ++d) {
    v[d] = (fr.replicates[qa][d] - fr.replicates[qb][d]) / n;
  }
  return interval_json(stats::percentile_interval(std::move(v), level));
}

// Counts behind the orbit metrics of a set of bases.
struct OrbitCounts {
  std::uint64_t n = 0, canonical = 0, correct = 0, invariant = 0, consistent_wrong = 0;
};

OJ orbit_json(const OrbitCounts& c, double z) {
  OJ o = OJ::object();
  o["n"] = c.n;
  o["correct"] = c.correct;
  o["invariant"] = c.invariant;
  o["consistent_wrong"] = c.consistent_wrong;
  o["rate"] = rate_or_null(c.correct, c.n);
  o["invariant_rate"] = rate_or_null(c.invariant, c.n);
  o["consistent_wrong_rate"] = rate_or_null(c.consistent_wrong, c.n);
  o["wilson"] = wilson_json(c.correct, c.n, z);
  o["invariant_wilson"] = wilson_json(c.invariant, c.n, z);
  o["consistent_wrong_wilson"] = wilson_json(c.consistent_wrong, c.n, z);
  o["canonical_correct"] = c.canonical;
  o["canonical_rate"] = rate_or_null(c.canonical, c.n);
  return o;
}

OJ view_json(std::uint64_t correct, std::uint64_t n, double z) {
  OJ v = OJ::object();
  v["n"] = n;
  v["correct"] = correct;
  v["rate"] = rate_or_null(correct, n);
  v["wilson"] = wilson_json(correct, n, z);
  return v;
}

OJ by_k_json(const std::map<int, std::uint64_t>& m) {
  OJ o = OJ::object();
  for (const auto& [k, c] : m) o[std::to_string(k)] = c;
  return o;
}

struct LayerWork {
  // Per base (position in layout.bases).
  std::vector<BaseFlags> flags;
};

}  // namespace

OrbitLayout make_layout(const orbit::Benchmark& bench) {
  OrbitLayout L;
  L.bases.resize(bench.bases.size());
  L.family_bases.resize(kFamilyCount);
  std::map<std::string, bool> seen_template;
  for (std::size_t b = 0; b < bench.bases.size(); ++b) {
    L.bases[b].base = b;
    const auto& t = bench.bases[b].template_id;
    if (!seen_template[t]) {
      seen_template[t] = true;
      L.templates.push_back(t);
    }
  }
  bool have_view[kFamilyCount] = {false, false, false, false, false};
  for (std::size_t v = 0; v < bench.views.size(); ++v) {
    const auto& view = bench.views[v];
    if (!is_orbit_view(view.view)) continue;
    auto it = bench.base_index.find(view.base_id);
    if (it == bench.base_index.end()) fail("view {} names an unknown base", view.prompt_id);
    auto& bv = L.bases[it->second];
    if (view.view == "canonical") {
      bv.canonical = v;
    } else {
      const int f = family_index(view.view);
      bv.family[f] = v;
      have_view[f] = true;
    }
  }
  for (std::size_t b = 0; b < L.bases.size(); ++b) {
    auto& bv = L.bases[b];
    if (bv.canonical == kNone) {
      fail("{}: base {} has no canonical view in views.jsonl", bench.dir.string(), bench.bases[b].base_id);
    }
    bv.orbit.push_back(bv.canonical);
    for (std::size_t f = 0; f < kFamilyCount; ++f) {
      if (bv.family[f] != kNone) {
        bv.orbit.push_back(bv.family[f]);
        L.family_bases[f].push_back(b);
      }
    }
  }
  L.views.emplace_back("canonical");
  for (std::size_t f = 0; f < kFamilyCount; ++f) {
    if (have_view[f]) L.views.emplace_back(orbit::kFamilies[f]);
  }
  return L;
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

OJ compute_metrics(const orbit::Benchmark& bench, const std::vector<SystemScores>& systems,
                   const ReportOptions& opt) {
  if (!(opt.level > 0.0 && opt.level < 1.0)) fail("interval level {} is outside (0, 1)", opt.level);
  const double z = z_for_level(opt.level);
  const OrbitLayout L = make_layout(bench);
  const std::size_t S = systems.size();
  const std::size_t nb = L.bases.size();

  // Per system and layer: base flags.
  std::vector<std::array<LayerWork, 2>> work(S);
  for (std::size_t s = 0; s < S; ++s) {
    if (systems[s].by_view.size() != bench.views.size()) {
      fail("scores of {} were not loaded against this benchmark", systems[s].name);
    }
    for (std::size_t l = 0; l < 2; ++l) {
      auto& flags = work[s][l].flags;
      flags.resize(nb);
      for (std::size_t b = 0; b < nb; ++b) {
        flags[b] = base_flags(L.bases[b], systems[s], static_cast<Layer>(l));
      }
    }
  }

  // ---- bootstrap frames: all bases (orbit) and each family's paired bases --------------------
  // Quantity order in every frame: for s, for layer: [canonical, other, gap] where `other` is
  // orbit correctness (orbit frame) or transformed correctness (family frames).
  auto qi = [](std::size_t s, std::size_t l, std::size_t k) { return (s * 2 + l) * 3 + k; };
  std::vector<Frame> frames(1 + kFamilyCount);
  frames[0].name = "orbit";
  frames[0].n = nb;
  for (std::size_t f = 0; f < kFamilyCount; ++f) {
    frames[1 + f].name = orbit::kFamilies[f];
    frames[1 + f].n = L.family_bases[f].size();
  }
  for (std::size_t s = 0; s < S; ++s) {
    for (std::size_t l = 0; l < 2; ++l) {
      const auto& flags = work[s][l].flags;
      std::vector<int> cc(nb), oc(nb);
      for (std::size_t b = 0; b < nb; ++b) {
        cc[b] = flags[b].canonical_correct ? 1 : 0;
        oc[b] = flags[b].orbit_correct ? 1 : 0;
      }
      frames[0].quantities.push_back(SparseSum::from(cc));
      frames[0].quantities.push_back(SparseSum::from(oc));
      frames[0].quantities.push_back(SparseSum{true, 0, {}, {}});
      for (std::size_t f = 0; f < kFamilyCount; ++f) {
        const auto& fb = L.family_bases[f];
        std::vector<int> fc(fb.size()), ft(fb.size());
        for (std::size_t i = 0; i < fb.size(); ++i) {
          const auto& bv = L.bases[fb[i]];
          fc[i] = flags[fb[i]].canonical_correct ? 1 : 0;
          ft[i] = systems[s].by_view[bv.family[f]].layer[l].outcome == Outcome::kCorrect ? 1 : 0;
        }
        frames[1 + f].quantities.push_back(SparseSum::from(fc));
        frames[1 + f].quantities.push_back(SparseSum::from(ft));
        frames[1 + f].quantities.push_back(SparseSum{true, 0, {}, {}});
      }
    }
  }
  for (auto& fr : frames) run_frame(fr, opt, frame_seed(opt.seed, fr.name));

  // ---- per system --------------------------------------------------------------------------
  OJ out = OJ::object();
  out["numcheck_version"] = kVersion;
  {
    OJ b = OJ::object();
    b["dir"] = bench.dir.string();
    b["bases"] = nb;
    b["prompts"] = bench.views.size();
    OJ views = OJ::object();
    for (const auto& v : L.views) {
      std::size_t n = 0;
      for (const auto& bv : L.bases) {
        if (v == "canonical" || bv.family[family_index(v)] != kNone) ++n;
      }
      views[v] = n;
    }
    b["views"] = views;
    b["templates"] = L.templates;
    OJ sha = OJ::object();
    for (const auto& [file, hex] : bench.file_sha256) sha[file] = hex;
    b["file_sha256"] = sha;
    // A subset (orbit/selection.hpp): every count above and below is scoped to it.
    if (!bench.selection.is_null()) b["selection"] = bench.selection;
    out["benchmark"] = b;
  }
  {
    OJ st = OJ::object();
    st["bootstrap_draws"] = opt.bootstrap_draws;
    st["seed"] = opt.seed;
    st["level"] = opt.level;
    st["interval"] = "percentile, base-clustered bootstrap (Rng(seed, frame).split(draw))";
    st["rate_interval"] = "Wilson score";
    st["material_threshold"] = kMaterialPoints / 100.0;
    st["alpha"] = kAlpha;
    st["holm"] = "within each system and layer over the family tests";
    out["settings"] = st;
  }

  OJ systems_json = OJ::object();
  for (std::size_t s = 0; s < S; ++s) {
    const SystemScores& sys = systems[s];
    OJ sj = OJ::object();
    sj["simulated"] = sys.simulated;
    sj["scores_file"] = sys.scores_path.string();
    sj["manifest"] = sys.manifest_path ? OJ(sys.manifest_path->string()) : OJ(nullptr);
    sj["records"] = sys.records;
    sj["scored_prompts"] = sys.scored_orbit_prompts;
    sj["missing"] = sys.missing;
    sj["ignored_records"] = sys.ignored;

    // Token summaries are layer-free; computed once and written into each layer.
    bool any_tokens = false;
    for (const auto& sp : sys.by_view) any_tokens = any_tokens || sp.completion_tokens.has_value();
    OJ tokens = OJ::object();
    if (any_tokens) {
      for (const auto& vname : L.views) {
        std::vector<double> t;
        std::uint64_t length = 0, records = 0;
        for (std::size_t v = 0; v < bench.views.size(); ++v) {
          if (bench.views[v].view != vname || !sys.by_view[v].present) continue;
          ++records;
          if (sys.by_view[v].completion_tokens) {
            t.push_back(static_cast<double>(*sys.by_view[v].completion_tokens));
          }
          if (sys.by_view[v].finish_reason == "length") ++length;
        }
        OJ tv = OJ::object();
        tv["count"] = t.size();
        tv["records"] = records;
        if (t.empty()) {
          tv["median"] = nullptr;
          tv["q1"] = nullptr;
          tv["q3"] = nullptr;
        } else {
          const auto q = stats::quartiles_inclusive(std::move(t));
          tv["median"] = q.median;
          tv["q1"] = q.q1;
          tv["q3"] = q.q3;
        }
        tv["length_finishes"] = length;
        tokens[vname] = tv;
      }
    }

    for (std::size_t l = 0; l < 2; ++l) {
      const auto& flags = work[s][l].flags;
      OJ lj = OJ::object();
      lj["descriptive"] = l == 1;

      // Per view.
      OJ views = OJ::object();
      std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> view_counts;  // correct, n
      std::map<std::string, std::map<std::string, std::pair<std::uint64_t, std::uint64_t>>> tpl_view_counts;
      std::map<std::string, std::array<std::uint64_t, kOutcomeCount>> failures;
      std::map<int, std::uint64_t> mag_k;
      std::map<std::string, std::map<int, std::uint64_t>> mag_view, mag_tpl;
      std::map<std::string, std::map<std::string, std::uint64_t>> mag_view_tpl;
      std::uint64_t value_errors = 0;
      for (std::size_t v = 0; v < bench.views.size(); ++v) {
        const auto& view = bench.views[v];
        if (!is_orbit_view(view.view)) continue;
        const auto& ls = sys.by_view[v].layer[l];
        const bool ok = ls.outcome == Outcome::kCorrect;
        auto& vc = view_counts[view.view];
        vc.first += ok ? 1 : 0;
        vc.second += 1;
        auto& tc = tpl_view_counts[view.template_id][view.view];
        tc.first += ok ? 1 : 0;
        tc.second += 1;
        auto& fc = failures[view.view];
        ++fc[static_cast<std::size_t>(ls.outcome)];
        if (ls.outcome == Outcome::kValueError) {
          ++value_errors;
          if (auto k = grade::magnitude_exponent(*ls.value, view.expected)) {
            ++mag_k[*k];
            ++mag_view[view.view][*k];
            ++mag_tpl[view.template_id][*k];
            ++mag_view_tpl[view.view][view.template_id];
          }
        }
      }
      for (const auto& vname : L.views) {
        const auto& vc = view_counts[vname];
        views[vname] = view_json(vc.first, vc.second, z);
      }
      lj["views"] = views;

      // Orbit.
      OrbitCounts oc;
      for (std::size_t b = 0; b < nb; ++b) {
        ++oc.n;
        oc.canonical += flags[b].canonical_correct;
        oc.correct += flags[b].orbit_correct;
        oc.invariant += flags[b].invariant;
        oc.consistent_wrong += flags[b].consistent_wrong;
      }
      lj["orbit"] = orbit_json(oc, z);
      {
        OJ g = OJ::object();
        g["value"] = rate_or_null(oc.canonical - oc.correct, oc.n);
        g["ci"] = ci_from(frames[0], qi(s, l, 2), opt.level);
        g["canonical_rate"] = rate_or_null(oc.canonical, oc.n);
        g["orbit_rate"] = rate_or_null(oc.correct, oc.n);
        g["material"] = oc.n > 0 && 100 * (oc.canonical - oc.correct) >=
                                        static_cast<std::uint64_t>(kMaterialPoints) * oc.n;
        lj["orbit_gap"] = g;
      }

      // Families.
      OJ fams = OJ::object();
      std::vector<double> pvals;
      std::vector<std::string> tested;
      struct FamRow {
        std::uint64_t n = 0, cc = 0, tc = 0, c = 0, t = 0;
      };
      std::vector<FamRow> rows(kFamilyCount);
      for (std::size_t f = 0; f < kFamilyCount; ++f) {
        FamRow& r = rows[f];
        for (std::size_t b : L.family_bases[f]) {
          const bool can = flags[b].canonical_correct;
          const bool tr = sys.by_view[L.bases[b].family[f]].layer[l].outcome == Outcome::kCorrect;
          ++r.n;
          r.cc += can;
          r.tc += tr;
          r.c += can && !tr;
          r.t += tr && !can;
        }
        if (r.n > 0) {
          pvals.push_back(stats::mcnemar_exact_p(r.c, r.t));
          tested.emplace_back(orbit::kFamilies[f]);
        }
      }
      const std::vector<double> adj = stats::holm(pvals);
      OJ h1_families = OJ::array();
      std::size_t ti = 0;
      for (std::size_t f = 0; f < kFamilyCount; ++f) {
        const FamRow& r = rows[f];
        if (r.n == 0) continue;
        OJ fj = OJ::object();
        fj["n"] = r.n;
        fj["canonical_correct"] = r.cc;
        fj["transformed_correct"] = r.tc;
        fj["canonical_rate"] = rate_or_null(r.cc, r.n);
        fj["transformed_rate"] = rate_or_null(r.tc, r.n);
        fj["gap"] = (static_cast<double>(r.cc) - static_cast<double>(r.tc)) / static_cast<double>(r.n);
        fj["ci"] = ci_from(frames[1 + f], qi(s, l, 2), opt.level);
        fj["c"] = r.c;
        fj["t"] = r.t;
        fj["p"] = pvals[ti];
        fj["p_holm"] = adj[ti];
        // Exact threshold test: 100 (C - T) >= 3 n, never a float comparison.
        const bool big =
            r.cc >= r.tc && 100 * (r.cc - r.tc) >= static_cast<std::uint64_t>(kMaterialPoints) * r.n;
        const bool material = big && adj[ti] < kAlpha;
        fj["material"] = material;
        if (material) h1_families.push_back(orbit::kFamilies[f]);
        fams[orbit::kFamilies[f]] = fj;
        ++ti;
      }
      lj["families"] = fams;
      {
        OJ h1 = OJ::object();
        h1["holds"] = !h1_families.empty();
        h1["families"] = h1_families;
        h1["criterion"] = "some family gap >= 0.03 with Holm-adjusted p < 0.05";
        h1["descriptive"] = l == 1;
        lj["h1"] = h1;
        OJ h2 = OJ::object();
        h2["holds"] = lj["orbit_gap"]["material"];
        h2["gap"] = lj["orbit_gap"]["value"];
        h2["criterion"] = "orbit gap (canonical minus orbit correctness) >= 0.03";
        h2["descriptive"] = l == 1;
        lj["h2"] = h2;
      }

      // Template strata (exploratory: no intervals for gaps).
      OJ tpls = OJ::object();
      for (const auto& t : L.templates) {
        OJ tj = OJ::object();
        OrbitCounts tcnt;
        for (std::size_t b = 0; b < nb; ++b) {
          if (bench.bases[L.bases[b].base].template_id != t) continue;
          ++tcnt.n;
          tcnt.canonical += flags[b].canonical_correct;
          tcnt.correct += flags[b].orbit_correct;
          tcnt.invariant += flags[b].invariant;
          tcnt.consistent_wrong += flags[b].consistent_wrong;
        }
        tj["n_bases"] = tcnt.n;
        OJ tv = OJ::object();
        for (const auto& vname : L.views) {
          auto it = tpl_view_counts[t].find(vname);
          if (it == tpl_view_counts[t].end()) continue;
          tv[vname] = view_json(it->second.first, it->second.second, z);
        }
        tj["views"] = tv;
        tj["orbit"] = orbit_json(tcnt, z);
        tj["orbit_gap"] = rate_or_null(tcnt.canonical - tcnt.correct, tcnt.n);
        tpls[t] = tj;
      }
      lj["templates"] = tpls;

      // Magnitude drops.
      {
        OJ m = OJ::object();
        std::uint64_t total = 0;
        for (const auto& [k, c] : mag_k) total += c;
        m["total"] = total;
        m["value_errors"] = value_errors;
        m["by_k"] = by_k_json(mag_k);
        OJ bv = OJ::object();
        for (const auto& vname : L.views) {
          auto it = mag_view.find(vname);
          if (it == mag_view.end()) continue;
          std::uint64_t t = 0;
          for (const auto& [k, c] : it->second) t += c;
          OJ e = OJ::object();
          e["total"] = t;
          e["by_k"] = by_k_json(it->second);
          OJ bt = OJ::object();
          for (const auto& tp : L.templates) {
            if (auto jt = mag_view_tpl[vname].find(tp); jt != mag_view_tpl[vname].end()) {
              bt[tp] = jt->second;
            }
          }
          e["by_template"] = bt;
          bv[vname] = e;
        }
        m["by_view"] = bv;
        OJ bt = OJ::object();
        for (const auto& tp : L.templates) {
          auto it = mag_tpl.find(tp);
          if (it == mag_tpl.end()) continue;
          std::uint64_t t = 0;
          for (const auto& [k, c] : it->second) t += c;
          OJ e = OJ::object();
          e["total"] = t;
          e["by_k"] = by_k_json(it->second);
          bt[tp] = e;
        }
        m["by_template"] = bt;
        lj["magnitude_drops"] = m;
      }

      // Failures per outcome per view.
      {
        OJ fj = OJ::object();
        for (const auto& vname : L.views) {
          OJ e = OJ::object();
          for (std::size_t o = 0; o < kOutcomeCount; ++o) e[kOutcomeNames[o]] = failures[vname][o];
          fj[vname] = e;
        }
        lj["failures"] = fj;
      }

      // Audit recovery (audit layer only).
      if (l == 1) {
        OJ rj = OJ::object();
        for (const auto& vname : L.views) {
          std::uint64_t n = 0, strict_ok = 0, audit_ok = 0, recovered = 0, multi = 0, length = 0;
          std::map<std::string, std::uint64_t> rules;
          for (std::size_t v = 0; v < bench.views.size(); ++v) {
            if (bench.views[v].view != vname) continue;
            const auto& sp = sys.by_view[v];
            ++n;
            strict_ok += sp.layer[0].outcome == Outcome::kCorrect;
            audit_ok += sp.layer[1].outcome == Outcome::kCorrect;
            multi += sp.multiple_final;
            length += sp.present && sp.finish_reason == "length";
            if (sp.recovered) {
              ++recovered;
              for (const auto& r : sp.rules) ++rules[r];
            }
          }
          OJ e = OJ::object();
          e["n"] = n;
          e["strict_correct"] = strict_ok;
          e["audit_correct"] = audit_ok;
          e["recovered"] = recovered;
          e["residual_failures"] = n - audit_ok;
          e["multiple_final"] = multi;
          e["length_finishes"] = length;
          OJ rr = OJ::object();
          for (const auto& [name, c] : rules) rr[name] = c;
          e["rules"] = rr;
          rj[vname] = e;
        }
        lj["recovery"] = rj;
      }

      if (any_tokens) lj["tokens"] = tokens;
      sj[kLayerNames[l]] = lj;
    }
    systems_json[sys.name] = sj;
  }
  out["systems"] = systems_json;
  {
    OJ order = OJ::array();
    for (const auto& s : systems) order.push_back(s.name);
    out["system_order"] = order;
  }

  // ---- cross-system comparisons (paired: the same resampled bases for both systems) ---------
  OJ comps = OJ::array();
  for (std::size_t a = 0; a < S; ++a) {
    for (std::size_t b = a + 1; b < S; ++b) {
      OJ cj = OJ::object();
      cj["a"] = systems[a].name;
      cj["b"] = systems[b].name;
      for (std::size_t l = 0; l < 2; ++l) {
        const OJ& la = systems_json[systems[a].name][kLayerNames[l]];
        const OJ& lb = systems_json[systems[b].name][kLayerNames[l]];
        auto num = [](const OJ& j) { return j.is_number() ? j.get<double>() : std::nan(""); };
        auto diff_entry = [&](double va, double vb, const Frame& fr, std::size_t k) {
          OJ e = OJ::object();
          const double d = va - vb;
          e["difference"] = std::isfinite(d) ? OJ(d) : OJ(nullptr);
          e["ci"] = diff_ci(fr, qi(a, l, k), qi(b, l, k), opt.level);
          return e;
        };
        OJ lj = OJ::object();
        const double n0 = static_cast<double>(frames[0].n);
        // Differences from exact counts (no float subtraction of rounded rates).
        auto count_diff = [&](const OJ& x, const OJ& y, const char* key, double n) {
          return (x[key].get<double>() - y[key].get<double>()) / n;
        };
        if (nb > 0) {
          lj["canonical_correct"] =
              diff_entry(count_diff(la["orbit"], lb["orbit"], "canonical_correct", n0), 0, frames[0], 0);
          lj["orbit_correct"] =
              diff_entry(count_diff(la["orbit"], lb["orbit"], "correct", n0), 0, frames[0], 1);
          lj["orbit_gap"] =
              diff_entry(num(la["orbit_gap"]["value"]) - num(lb["orbit_gap"]["value"]), 0, frames[0], 2);
        }
        OJ fj = OJ::object();
        for (std::size_t f = 0; f < kFamilyCount; ++f) {
          const char* fam = orbit::kFamilies[f];
          if (!la["families"].contains(fam)) continue;
          const OJ& fa = la["families"][fam];
          const OJ& fb = lb["families"][fam];
          const double n = static_cast<double>(frames[1 + f].n);
          OJ e = OJ::object();
          e["transformed_correct"] =
              diff_entry(count_diff(fa, fb, "transformed_correct", n), 0, frames[1 + f], 1);
          e["gap"] =
              diff_entry(((fa["canonical_correct"].get<double>() - fa["transformed_correct"].get<double>()) -
                          (fb["canonical_correct"].get<double>() - fb["transformed_correct"].get<double>())) /
                             n,
                         0, frames[1 + f], 2);
          fj[fam] = e;
        }
        lj["families"] = fj;
        cj[kLayerNames[l]] = lj;
      }
      comps.push_back(cj);
    }
  }
  out["comparisons"] = comps;
  // The paper's remaining analyses and the H2 independence baseline (report/analyses.hpp).
  add_paper_analyses(out, bench, systems, opt);
  return out;
}

}  // namespace numcheck::report
