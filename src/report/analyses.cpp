#include "report/analyses.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <span>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/prng.hpp"
#include "grade/grade.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"
#include "num/rational.hpp"
#include "num/write.hpp"
#include "stats/bootstrap.hpp"

namespace numcheck::report {

namespace {

using OJ = io::OrderedJson;
using doc::Document;
namespace html = doc::html;
using html::Cell;
using html::Table;
using num::Rational;
constexpr std::size_t kNone = SIZE_MAX;
constexpr std::size_t kFamilyCount = 5;

OJ rate_or_null(std::uint64_t k, std::uint64_t n) {
  if (n == 0) return nullptr;
  return static_cast<double>(k) / static_cast<double>(n);
}

// An exact value as {"exact": "p/q", "value": nearest double}.
OJ exact_json(const Rational& q) {
  OJ o = OJ::object();
  o["exact"] = q.str();
  o["value"] = q.to_double();
  return o;
}

// Template metadata recorded in the benchmark's manifest (orbit generate embeds the spec).
struct TemplateInfo {
  std::string name, program, unit;
};
std::map<std::string, TemplateInfo> template_info(const orbit::Benchmark& bench) {
  std::map<std::string, TemplateInfo> out;
  auto parsed = io::try_parse_ordered_json(bench.manifest_json, "manifest.json");
  if (!parsed.ok() || !parsed.value->is_object()) return out;
  const OJ& m = *parsed.value;
  if (!m.contains("spec") || !m["spec"].is_object() || !m["spec"].contains("templates") ||
      !m["spec"]["templates"].is_array()) {
    return out;
  }
  for (const auto& t : m["spec"]["templates"]) {
    if (!t.is_object() || !t.contains("id") || !t["id"].is_string()) continue;
    TemplateInfo info;
    if (t.contains("name") && t["name"].is_string()) info.name = t["name"].get<std::string>();
    if (t.contains("program") && t["program"].is_string()) info.program = t["program"].get<std::string>();
    if (t.contains("canonical_unit") && t["canonical_unit"].is_string())
      info.unit = t["canonical_unit"].get<std::string>();
    out[t["id"].get<std::string>()] = info;
  }
  return out;
}

// The views of an orbit as a bit mask: bit 0 canonical, bit 1 + f family f.
unsigned orbit_mask(const OrbitLayout::BaseViews& b) {
  unsigned m = 1;
  for (std::size_t f = 0; f < kFamilyCount; ++f) {
    if (b.family[f] != kNone) m |= 1u << (1 + f);
  }
  return m;
}
std::size_t mask_view(const OrbitLayout::BaseViews& b, std::size_t slot) {
  return slot == 0 ? b.canonical : b.family[slot - 1];
}
constexpr std::size_t kSlots = 1 + kFamilyCount;

// The bases grouped by their orbit (which views they have): the independence baselines only need,
// per group, how many bases it holds (in a draw: how often they were drawn).
struct Groups {
  std::vector<unsigned> masks;
  std::vector<std::uint32_t> of_base;  // group index per base (layout position)
};
Groups make_groups(const OrbitLayout& L) {
  Groups g;
  std::map<unsigned, std::uint32_t> index;
  for (const auto& b : L.bases) {
    const unsigned m = orbit_mask(b);
    auto [it, fresh] = index.emplace(m, static_cast<std::uint32_t>(g.masks.size()));
    if (fresh) g.masks.push_back(m);
    g.of_base.push_back(it->second);
  }
  return g;
}

// Per-view correct flags and orbit-correct flags of one system and layer, by layout position.
struct LayerFlags {
  std::array<std::vector<std::uint8_t>, kSlots> correct;  // [slot][base]; 0 where not eligible
  std::vector<std::uint8_t> orbit;
};
LayerFlags layer_flags(const OrbitLayout& L, const SystemScores& s, std::size_t l) {
  LayerFlags f;
  for (auto& v : f.correct) v.assign(L.bases.size(), 0);
  f.orbit.assign(L.bases.size(), 0);
  for (std::size_t b = 0; b < L.bases.size(); ++b) {
    bool all = true;
    for (std::size_t slot = 0; slot < kSlots; ++slot) {
      const std::size_t v = mask_view(L.bases[b], slot);
      if (v == kNone) continue;
      const bool ok = s.by_view[v].layer[l].outcome == Outcome::kCorrect;
      f.correct[slot][b] = ok ? 1 : 0;
      all = all && ok;
    }
    f.orbit[b] = all ? 1 : 0;
  }
  return f;
}

// Exact expected orbit correctness (times n) under the two baselines, for weights w (1 per base:
// the point estimate). Returns {independent at observed per-view rates, every view at the
// canonical rate}; the observed orbit total comes separately.
std::pair<Rational, Rational> expected_orbit_exact(const OrbitLayout& L, const Groups& g,
                                                   const LayerFlags& f) {
  std::vector<std::uint64_t> group_n(g.masks.size(), 0);
  std::array<std::uint64_t, kSlots> eligible{}, correct{};
  for (std::size_t b = 0; b < L.bases.size(); ++b) {
    ++group_n[g.of_base[b]];
    const unsigned m = g.masks[g.of_base[b]];
    for (std::size_t slot = 0; slot < kSlots; ++slot) {
      if ((m >> slot & 1u) == 0) continue;
      ++eligible[slot];
      correct[slot] += f.correct[slot][b];
    }
  }
  std::array<Rational, kSlots> p;
  for (std::size_t slot = 0; slot < kSlots; ++slot) {
    p[slot] = eligible[slot] == 0 ? Rational(0)
                                  : Rational(mpz_class(static_cast<unsigned long>(correct[slot])),
                                             mpz_class(static_cast<unsigned long>(eligible[slot])));
  }
  Rational indep, canon_only;
  for (std::size_t gi = 0; gi < g.masks.size(); ++gi) {
    Rational prod(1), prod_c(1);
    for (std::size_t slot = 0; slot < kSlots; ++slot) {
      if ((g.masks[gi] >> slot & 1u) == 0) continue;
      prod *= p[slot];
      prod_c *= p[0];
    }
    const Rational n(static_cast<long long>(group_n[gi]));
    indep += n * prod;
    canon_only += n * prod_c;
  }
  return {indep, canon_only};
}

// A count-weighted sum over a subset of bases in one bootstrap draw: the common value (mode)
// times the subset's drawn weight plus the deviations, so only the bases that differ are visited.
struct Sparse {
  int mode = 1;
  std::vector<std::uint32_t> idx;
  std::vector<int> dev;
  static Sparse from(const std::vector<std::uint8_t>& x, const std::vector<std::uint32_t>& subset) {
    Sparse s;
    std::size_t ones = 0;
    for (auto b : subset) ones += x[b];
    s.mode = 2 * ones >= subset.size() ? 1 : 0;
    for (auto b : subset) {
      if (x[b] != s.mode) {
        s.idx.push_back(b);
        s.dev.push_back(static_cast<int>(x[b]) - s.mode);
      }
    }
    return s;
  }
  [[nodiscard]] double eval(const stats::ClusterCounts& c, double subset_weight) const {
    double t = mode * subset_weight;
    for (std::size_t k = 0; k < idx.size(); ++k) t += dev[k] * static_cast<double>(c[idx[k]]);
    return t;
  }
};

struct BaselineWork {
  std::array<Sparse, kSlots> view;  // correct per view over its eligible bases
  Sparse orbit;                     // orbit correct over all bases
};

std::string template_name_of(const OJ& metrics, const std::string& t) {
  if (!metrics.contains("allocation")) return {};
  for (const auto& row : metrics["allocation"]["templates"]) {
    if (row["template"] == t && row["name"].is_string()) return row["name"].get<std::string>();
  }
  return {};
}

}  // namespace

std::string template_label(const OJ& metrics, const std::string& template_id) {
  const std::string name = template_name_of(metrics, template_id);
  return name.empty() ? template_id : fmt::format("{} ({})", template_id, name);
}

void add_paper_analyses(OJ& out, const orbit::Benchmark& bench, const std::vector<SystemScores>& systems,
                        const ReportOptions& opt) {
  const OrbitLayout L = make_layout(bench);
  const std::size_t nb = L.bases.size();
  const auto info = template_info(bench);

  // ---- allocation (Table 2) and one example orbit ---------------------------------------------
  {
    OJ alloc = OJ::object();
    OJ rows = OJ::array();
    std::map<std::string, std::uint64_t> total_views;
    std::uint64_t total_bases = 0;
    for (const auto& t : L.templates) {
      OJ row = OJ::object();
      row["template"] = t;
      auto it = info.find(t);
      row["name"] = it != info.end() && !it->second.name.empty() ? OJ(it->second.name) : OJ(nullptr);
      row["program"] = it != info.end() && !it->second.program.empty() ? OJ(it->second.program) : OJ(nullptr);
      std::uint64_t bases = 0;
      std::map<std::string, std::uint64_t> views;
      std::string unit;
      for (const auto& bv : L.bases) {
        const auto& base = bench.bases[bv.base];
        if (base.template_id != t) continue;
        ++bases;
        unit = base.canonical_unit;
        ++views["canonical"];
        for (std::size_t f = 0; f < kFamilyCount; ++f) {
          if (bv.family[f] != kNone) ++views[orbit::kFamilies[f]];
        }
      }
      row["canonical_unit"] = unit;
      row["bases"] = bases;
      OJ vj = OJ::object();
      for (const auto& v : L.views) {
        vj[v] = views[v];
        total_views[v] += views[v];
      }
      row["views"] = vj;
      total_bases += bases;
      rows.push_back(row);
    }
    alloc["templates"] = rows;
    OJ tot = OJ::object();
    tot["bases"] = total_bases;
    OJ tv = OJ::object();
    for (const auto& v : L.views) tv[v] = total_views[v];
    tot["views"] = tv;
    alloc["total"] = tot;
    out["allocation"] = alloc;

    // The first base (file order) with the most orbit views.
    std::size_t best = kNone, best_views = 0;
    for (std::size_t b = 0; b < nb; ++b) {
      if (L.bases[b].orbit.size() > best_views) {
        best = b;
        best_views = L.bases[b].orbit.size();
      }
    }
    if (best != kNone) {
      const auto& base = bench.bases[L.bases[best].base];
      OJ ex = OJ::object();
      ex["base_id"] = base.base_id;
      ex["template"] = base.template_id;
      ex["answer"] = base.answer.str();
      ex["canonical_unit"] = base.canonical_unit;
      OJ vs = OJ::array();
      for (std::size_t v : L.bases[best].orbit) vs.push_back(bench.views[v].prompt_id);
      ex["prompts"] = vs;
      out["example_orbit"] = ex;
    }
  }

  // ---- independence baselines for H2: bootstrap on the orbit frame's draws ---------------------
  const Groups groups = make_groups(L);
  std::vector<std::vector<std::uint32_t>> slot_bases(kSlots);
  std::vector<std::uint32_t> all_bases(nb);
  for (std::size_t b = 0; b < nb; ++b) {
    all_bases[b] = static_cast<std::uint32_t>(b);
    const unsigned m = groups.masks[groups.of_base[b]];
    for (std::size_t slot = 0; slot < kSlots; ++slot) {
      if (m >> slot & 1u) slot_bases[slot].push_back(static_cast<std::uint32_t>(b));
    }
  }
  const std::size_t S = systems.size();
  std::vector<std::array<LayerFlags, 2>> flags(S);
  std::vector<std::array<BaselineWork, 2>> work(S);
  for (std::size_t s = 0; s < S; ++s) {
    for (std::size_t l = 0; l < 2; ++l) {
      flags[s][l] = layer_flags(L, systems[s], l);
      for (std::size_t slot = 0; slot < kSlots; ++slot) {
        work[s][l].view[slot] = Sparse::from(flags[s][l].correct[slot], slot_bases[slot]);
      }
      work[s][l].orbit = Sparse::from(flags[s][l].orbit, all_bases);
    }
  }
  // Per (system, layer): excess under the observed-rates baseline, then under the canonical rate.
  std::vector<std::vector<double>> reps;
  if (nb > 0 && opt.bootstrap_draws > 0 && S > 0) {
    // The same streams as the orbit gap's frame (metrics.cpp frame_seed(seed, "orbit")), so the
    // excess gap and the orbit gap are evaluated on the same resampled bases.
    const std::uint64_t seed = Rng(opt.seed, "report-bootstrap:orbit").next();
    reps = stats::bootstrap_counts_multi(
        nb, opt.bootstrap_draws, seed, S * 4,
        [&](const stats::ClusterCounts& c, std::span<double> o) {
          std::vector<double> gw(groups.masks.size(), 0.0);
          for (std::size_t b = 0; b < nb; ++b) gw[groups.of_base[b]] += c[b];
          std::array<double, kSlots> elig{};
          for (std::size_t gi = 0; gi < groups.masks.size(); ++gi) {
            for (std::size_t slot = 0; slot < kSlots; ++slot) {
              if (groups.masks[gi] >> slot & 1u) elig[slot] += gw[gi];
            }
          }
          for (std::size_t s = 0; s < S; ++s) {
            for (std::size_t l = 0; l < 2; ++l) {
              const auto& w = work[s][l];
              std::array<double, kSlots> p{};
              for (std::size_t slot = 0; slot < kSlots; ++slot) {
                p[slot] = elig[slot] > 0 ? w.view[slot].eval(c, elig[slot]) / elig[slot] : 0.0;
              }
              double indep = 0, canon = 0;
              for (std::size_t gi = 0; gi < groups.masks.size(); ++gi) {
                double prod = 1, prod_c = 1;
                for (std::size_t slot = 0; slot < kSlots; ++slot) {
                  if ((groups.masks[gi] >> slot & 1u) == 0) continue;
                  prod *= p[slot];
                  prod_c *= p[0];
                }
                indep += gw[gi] * prod;
                canon += gw[gi] * prod_c;
              }
              const double observed = w.orbit.eval(c, static_cast<double>(nb));
              const double n = static_cast<double>(nb);
              o[(s * 2 + l) * 2 + 0] = (indep - observed) / n;
              o[(s * 2 + l) * 2 + 1] = (canon - observed) / n;
            }
          }
        },
        opt.threads);
  }

  // ---- per system and layer ---------------------------------------------------------------------
  for (std::size_t s = 0; s < S; ++s) {
    const SystemScores& sys = systems[s];
    OJ& sj = out["systems"][sys.name];
    for (std::size_t l = 0; l < 2; ++l) {
      OJ& lj = sj[kLayerNames[l]];

      // Length-finished responses excluded (descriptive sensitivity analysis).
      {
        OJ le = OJ::object();
        for (const auto& vname : L.views) {
          std::uint64_t n = 0, correct = 0, excluded = 0, correct_excluded = 0;
          for (std::size_t v = 0; v < bench.views.size(); ++v) {
            if (bench.views[v].view != vname) continue;
            const auto& sp = sys.by_view[v];
            const bool ok = sp.layer[l].outcome == Outcome::kCorrect;
            if (sp.present && sp.finish_reason == "length") {
              ++excluded;
              correct_excluded += ok;
              continue;
            }
            ++n;
            correct += ok;
          }
          OJ e = OJ::object();
          e["n"] = n;
          e["correct"] = correct;
          e["rate"] = rate_or_null(correct, n);
          e["excluded_length_finishes"] = excluded;
          e["correct_among_excluded"] = correct_excluded;
          le[vname] = e;
        }
        lj["length_excluded"] = le;
      }

      // Per view and template: correctness, value errors, exact power-of-ten drops by k.
      {
        OJ vt = OJ::object();
        for (const auto& vname : L.views) {
          struct Cellc {
            std::uint64_t n = 0, correct = 0, value_errors = 0, drops = 0;
            std::map<int, std::uint64_t> by_k;
          };
          std::map<std::string, Cellc> cells;
          for (std::size_t v = 0; v < bench.views.size(); ++v) {
            const auto& view = bench.views[v];
            if (view.view != vname) continue;
            const auto& ls = sys.by_view[v].layer[l];
            Cellc& c = cells[view.template_id];
            ++c.n;
            c.correct += ls.outcome == Outcome::kCorrect;
            if (ls.outcome == Outcome::kValueError && ls.value) {
              ++c.value_errors;
              if (auto k = grade::magnitude_exponent(*ls.value, view.expected)) {
                ++c.drops;
                ++c.by_k[*k];
              }
            }
          }
          OJ tj = OJ::object();
          for (const auto& t : L.templates) {
            auto it = cells.find(t);
            if (it == cells.end()) continue;
            const Cellc& c = it->second;
            OJ e = OJ::object();
            e["n"] = c.n;
            e["correct"] = c.correct;
            e["rate"] = rate_or_null(c.correct, c.n);
            e["residual_failures"] = c.n - c.correct;
            e["value_errors"] = c.value_errors;
            e["power_of_ten"] = c.drops;
            OJ bk = OJ::object();
            for (const auto& [k, n] : c.by_k) bk[std::to_string(k)] = n;
            e["by_k"] = bk;
            tj[t] = e;
          }
          vt[vname] = tj;
        }
        lj["views_by_template"] = vt;
      }

      // Independence baselines for H2.
      {
        const auto [indep, canon] = expected_orbit_exact(L, groups, flags[s][l]);
        std::uint64_t observed = 0, canonical = 0;
        for (std::size_t b = 0; b < nb; ++b) {
          observed += flags[s][l].orbit[b];
          canonical += flags[s][l].correct[0][b];
        }
        OJ h = OJ::object();
        h["n"] = nb;
        if (nb == 0) {
          h["observed_gap"] = nullptr;
        } else {
          const Rational n(static_cast<long long>(nb));
          const Rational can_rate = Rational(static_cast<long long>(canonical)) / n;
          const Rational obs_rate = Rational(static_cast<long long>(observed)) / n;
          h["observed_gap"] = exact_json(can_rate - obs_rate);
          auto baseline = [&](const Rational& expected_total, std::size_t which, const char* what) {
            const Rational exp_rate = expected_total / n;
            OJ b = OJ::object();
            b["assumption"] = what;
            b["expected_orbit"] = exact_json(exp_rate);
            b["expected_gap"] = exact_json(can_rate - exp_rate);
            b["excess_gap"] = exact_json(exp_rate - obs_rate);
            if (reps.empty()) {
              b["ci"] = nullptr;
            } else {
              const auto i = stats::percentile_interval(reps[(s * 2 + l) * 2 + which], opt.level);
              b["ci"] = OJ::array({i.lo, i.hi});
            }
            return b;
          };
          h["independent_views"] =
              baseline(indep, 0, "each view of a base fails independently at that view's observed rate");
          h["canonical_rate"] = baseline(
              canon, 1, "each view of a base fails independently at the canonical view's observed rate");
        }
        lj["h2_independence"] = h;
      }
    }
  }
  // The repeat check (`orbit repeat`), when the run folder of a system's responses holds one.
  for (const auto& sys : systems) {
    if (!sys.responses_path) continue;
    const std::filesystem::path file = sys.responses_path->parent_path() / "repeat.json";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) continue;
    const std::string text = io::read_file(file, std::size_t{1} << 28);
    const OJ j = io::parse_ordered_json(text, file.string());
    if (!j.is_object() || j.value("kind", std::string()) != "numcheck.orbit_repeat" ||
        !j.contains("counts") || !j["counts"].is_object()) {
      fail("{}: not a repeat.json written by `numcheck orbit repeat` (kind numcheck.orbit_repeat)",
           file.string());
    }
    OJ r = OJ::object();
    r["file"] = "repeat.json";
    r["sha256"] = io::sha256_hex(text);
    for (const char* k : {"model", "seed", "n_requested"}) r[k] = j.contains(k) ? j[k] : OJ(nullptr);
    for (const char* k : {"asked", "answered", "byte_identical", "answer_identical", "request_identical"}) {
      const OJ& v = j["counts"].contains(k) ? j["counts"][k] : OJ(nullptr);
      if (!v.is_number_unsigned()) fail("{}: counts.{} is not a count", file.string(), k);
      r[k] = v;
    }
    r["warning"] = j.value("warning", std::string());
    out["systems"][sys.name]["repeat"] = r;
  }
  {
    OJ& st = out["settings"];
    st["h2_baseline"] =
        "excess gap = observed orbit gap - gap expected under independence; percentile interval on the "
        "orbit frame's base-clustered draws";
    st["length_sensitivity"] = "descriptive: responses with finish reason 'length' excluded";
  }
}

// ---- report sections ------------------------------------------------------------------------------

namespace {

double num(const OJ& j) { return j.is_number() ? j.get<double>() : std::nan(""); }
std::uint64_t cnt(const OJ& j) { return j.is_number() ? j.get<std::uint64_t>() : 0; }

// ".998" style for a rate (the paper's), from exact counts: k/n rounded to 3 places.
std::string rate3(std::uint64_t k, std::uint64_t n) {
  if (n == 0) return "n/a";
  const Rational r(mpz_class(static_cast<unsigned long>(k)), mpz_class(static_cast<unsigned long>(n)));
  return num::fixed_decimal(r, 3);
}
std::string rate_counts(std::uint64_t k, std::uint64_t n) {
  return fmt::format("{} ({}/{})", rate3(k, n), k, n);
}

// Percentage points with sign from an exact value ("+3.1"), rounded exactly.
std::string exact_points(const OJ& e) {
  if (!e.is_object() || !e.contains("exact")) return "n/a";
  const auto q = Rational::from_string(e["exact"].get<std::string>());
  if (!q) return "n/a";
  const std::string s = num::fixed_decimal(*q * Rational(100), 1);
  return s[0] == '-' || s == "0.0" ? s : "+" + s;
}
std::string pts_interval(const OJ& j) {
  if (!j.is_array() || j.size() != 2) return "n/a";
  return fmt::format("[{}, {}]", html::signed_points(num(j[0]), 1), html::signed_points(num(j[1]), 1));
}

struct SysCtx {
  std::vector<std::string> order;
  std::map<std::string, bool> simulated;
  std::string label(const std::string& n) const {
    auto it = simulated.find(n);
    return it != simulated.end() && it->second ? n + " (simulated)" : n;
  }
};

std::string k_factors(const OJ& by_k) {
  std::string s;
  for (const auto& [k, v] : by_k.items()) {
    s += fmt::format("{}k={}: {}", s.empty() ? "" : ", ", k, cnt(v));
  }
  return s.empty() ? "-" : s;
}

Document allocation_section(const OJ& m, const orbit::Benchmark& bench) {
  Document d;
  d.heading(2, "allocation", "Benchmark: templates and allocation");
  d.paragraph(
      "Each base problem is one template's program with exact rational parameters; its orbit is the "
      "canonical prompt and the family views its eligibility grants. Per-view denominators are the "
      "eligible bases in the column below, never all bases.");
  const OJ& a = m["allocation"];
  Table t;
  t.caption = "Template allocation: bases and eligible views per template";
  t.id = "allocation";
  t.header = {"Template", "Program", "Canonical unit", "Bases"};
  std::vector<std::string> views;
  for (const auto& [v, _] : a["total"]["views"].items()) {
    if (v == "canonical") continue;
    views.push_back(v);
    t.header.push_back(v);
  }
  for (const auto& row : a["templates"]) {
    std::vector<Cell> r{
        Cell::txt(template_label(m, row["template"].get<std::string>())),
        Cell::txt(row["program"].is_string() ? "y = " + row["program"].get<std::string>() : "-"),
        Cell::txt(row["canonical_unit"].get<std::string>().empty()
                      ? std::string("(none)")
                      : row["canonical_unit"].get<std::string>()),
        Cell::num(std::to_string(cnt(row["bases"])))};
    for (const auto& v : views) {
      const std::uint64_t n = cnt(row["views"][v]);
      r.push_back(Cell::num(n == 0 ? std::string("-") : std::to_string(n)));
    }
    t.rows.push_back(std::move(r));
  }
  {
    std::vector<Cell> r{Cell::txt("total"), Cell::txt(""), Cell::txt(""),
                        Cell::num(std::to_string(cnt(a["total"]["bases"])), true)};
    for (const auto& v : views) r.push_back(Cell::num(std::to_string(cnt(a["total"]["views"][v])), true));
    t.rows.push_back(std::move(r));
  }
  t.note =
      "Every base also has one canonical prompt. A family column counts the bases eligible for that view "
      "(its transformed prompts); '-' = not eligible in the template.";
  d.table(std::move(t));

  if (m.contains("example_orbit")) {
    const OJ& ex = m["example_orbit"];
    d.heading(3, "example-orbit", "An example orbit");
    const std::string unit = ex["canonical_unit"].get<std::string>();
    d.paragraph(fmt::format(
        "Base {} of template {}: every prompt below asks for the same exact answer, {}{}. The views differ "
        "only in how the statement's quantities are written.",
        ex["base_id"].get<std::string>(), template_label(m, ex["template"].get<std::string>()),
        ex["answer"].get<std::string>(), unit.empty() ? "" : " " + unit));
    for (const auto& pid : ex["prompts"]) {
      const orbit::View* v = bench.find_view(pid.get<std::string>());
      if (v == nullptr) continue;
      d.paragraph(fmt::format("{} view:", v->view));
      d.verbatim(v->prompt);
    }
  }
  return d;
}

Document h2_section(const OJ& m, const SysCtx& c) {
  Document d;
  d.heading(2, "h2-baseline", "H2 against an independence baseline");
  d.paragraph(
      "An orbit with more views has more chances to fail, so an orbit gap appears even when no "
      "representation matters. Two baselines, computed exactly from the observed rates: (a) each view of a "
      "base fails independently at that view's observed rate; (b) each view fails independently at the "
      "canonical view's rate (no representation effect at all). Expected orbit correctness is the mean over "
      "bases of the product of the rates of the base's views; the expected gap is canonical correctness "
      "minus it. The excess gap is the observed gap minus the expected gap, with a 95% percentile interval "
      "from the same base-clustered draws as the orbit gap. Under (a) an excess near 0 says the observed "
      "gap is what independent per-view failures at these rates produce; a negative excess says failures "
      "cluster on the same bases. Under (b) a positive excess is the part of the gap that noise at the "
      "canonical rate does not explain. This is a descriptive comparison beyond the paper's protocol; it "
      "does not change H2.");
  for (std::size_t l = 0; l < 2; ++l) {
    Table t;
    t.caption = fmt::format("Orbit gap and independence baselines, {}",
                            l == 0 ? "strict parser" : "audit layer (audit_v2, descriptive)");
    t.id = fmt::format("h2-baseline-{}", kLayerNames[l]);
    t.header = {"System",
                "Bases",
                "Observed gap (pts)",
                "(a) expected gap",
                "(a) excess gap [95% CI]",
                "(b) expected gap",
                "(b) excess gap [95% CI]",
                "H2 (>= 3 pts)"};
    for (const auto& n : c.order) {
      const OJ& lj = m["systems"][n][kLayerNames[l]];
      const OJ& h = lj["h2_independence"];
      if (!h.contains("independent_views")) continue;
      const OJ& a = h["independent_views"];
      const OJ& b = h["canonical_rate"];
      auto excludes0 = [](const OJ& ci) {
        return ci.is_array() && (ci[0].get<double>() > 0.0 || ci[1].get<double>() < 0.0);
      };
      t.rows.push_back(
          {Cell::txt(c.label(n)), Cell::num(std::to_string(cnt(h["n"]))),
           Cell::num(exact_points(h["observed_gap"])), Cell::num(exact_points(a["expected_gap"])),
           Cell::num(exact_points(a["excess_gap"]) + " " + pts_interval(a["ci"]), excludes0(a["ci"])),
           Cell::num(exact_points(b["expected_gap"])),
           Cell::num(exact_points(b["excess_gap"]) + " " + pts_interval(b["ci"]), excludes0(b["ci"])),
           Cell::txt(lj["h2"]["holds"].get<bool>() ? "yes" : "no")});
    }
    t.note =
        "Percentage points; point values are exact (metrics.json: h2_independence, 'p/q'), rounded for "
        "display. Bold: the interval excludes 0.";
    d.table(std::move(t));
  }
  return d;
}

Document length_section(const OJ& m, const SysCtx& c) {
  Document d;
  d.heading(2, "length-sensitivity", "Sensitivity: excluding length-finished responses");
  d.paragraph(
      "A descriptive sensitivity analysis (the paper's section 5.2): correctness on each view after "
      "removing the responses that stopped at the generation cap (finish reason 'length'). It conditions on "
      "what the system did and does not estimate what a run with a larger cap would produce. Shown for the "
      "scientific view and every view with a length finish.");
  Table t;
  t.caption = "Correctness excluding length-finished responses";
  t.id = "length-sensitivity";
  t.header = {"System",          "View", "Length finishes", "Strict, all", "Strict, excluding", "Audit, all",
              "Audit, excluding"};
  for (const auto& n : c.order) {
    const OJ& st = m["systems"][n]["strict"];
    const OJ& au = m["systems"][n]["audit"];
    for (const auto& [v, e] : au["length_excluded"].items()) {
      const std::uint64_t ex = cnt(e["excluded_length_finishes"]);
      if (v != "scientific" && ex == 0) continue;
      const OJ& se = st["length_excluded"][v];
      t.rows.push_back({Cell::txt(c.label(n)), Cell::txt(v), Cell::num(std::to_string(ex)),
                        Cell::num(rate_counts(cnt(st["views"][v]["correct"]), cnt(st["views"][v]["n"]))),
                        Cell::num(rate_counts(cnt(se["correct"]), cnt(se["n"]))),
                        Cell::num(rate_counts(cnt(au["views"][v]["correct"]), cnt(au["views"][v]["n"]))),
                        Cell::num(rate_counts(cnt(e["correct"]), cnt(e["n"])))});
    }
  }
  if (t.rows.empty()) {
    d.paragraph("No system has a scientific view or a length-finished response: nothing to exclude.");
  } else {
    t.note =
        "rate (correct/responses). 'excluding': the length-finished responses are left out of both counts.";
    d.table(std::move(t));
  }
  return d;
}

Document power_section(const OJ& m, const SysCtx& c) {
  Document d;
  d.heading(2, "power-of-ten", "Power-of-ten factors by template");
  d.paragraph(
      "Per view and eligible template (audit layer): correctness, residual failures, and the value errors "
      "whose parsed value times 10^k equals the label for an integer 0 < |k| <= 15 (k = -3: the answer is "
      "1000 times too large, as when a sub-unit count is reported in the canonical unit). Shown for the unit "
      "view and every view with such a drop. A pooled rate mixes these strata; no claim carries beyond the "
      "listed template/view combinations.");
  std::vector<std::string> views;
  for (const auto& n : c.order) {
    for (const auto& [v, tj] : m["systems"][n]["audit"]["views_by_template"].items()) {
      bool show = v == "unit";
      for (const auto& [tp, e] : tj.items()) show = show || cnt(e["power_of_ten"]) > 0;
      if (show && std::find(views.begin(), views.end(), v) == views.end()) views.push_back(v);
    }
  }
  if (views.empty()) {
    d.paragraph("No unit view and no power-of-ten drop in any system.");
    return d;
  }
  for (const auto& v : views) {
    Table t;
    t.caption = fmt::format("{} view by eligible template, audit layer", v);
    t.id = "power-of-ten-" + v;
    t.header = {"System",       "Template",     "n",   "Correct", "Residual failures",
                "Value errors", "Power of ten", "By k"};
    for (const auto& n : c.order) {
      const OJ& vt = m["systems"][n]["audit"]["views_by_template"];
      if (!vt.contains(v)) continue;
      for (const auto& [tp, e] : vt[v].items()) {
        t.rows.push_back({Cell::txt(c.label(n)), Cell::txt(template_label(m, tp)),
                          Cell::num(std::to_string(cnt(e["n"]))),
                          Cell::num(rate_counts(cnt(e["correct"]), cnt(e["n"]))),
                          Cell::num(std::to_string(cnt(e["residual_failures"]))),
                          Cell::num(std::to_string(cnt(e["value_errors"]))),
                          Cell::num(std::to_string(cnt(e["power_of_ten"])), cnt(e["power_of_ten"]) > 0),
                          Cell::txt(k_factors(e["by_k"]))});
      }
    }
    if (!t.rows.empty()) d.table(std::move(t));
  }
  return d;
}

Document repeat_section(const OJ& m, const SysCtx& c) {
  Document d;
  d.heading(2, "repeat", "Repeat check");
  d.paragraph(
      "Recorded prompts asked again with the recorded request (sampling, system prompt, extra body), never "
      "from the cache (`numcheck orbit repeat`). Byte-identical: the same response text; answer-identical: "
      "the strict parser's parsed value equal as an exact rational (or, when neither parses, the same strict "
      "outcome). The counts characterize only the repeated prompts, not the whole run.");
  Table t;
  t.caption = "Repeat check";
  t.id = "repeat";
  t.header = {
      "System", "Model", "Asked", "Answered", "Byte-identical", "Answer-identical", "Request identical",
      "Seed"};
  std::string warning;
  for (const auto& n : c.order) {
    const OJ& s = m["systems"][n];
    if (!s.contains("repeat")) continue;
    const OJ& r = s["repeat"];
    const std::uint64_t asked = cnt(r["asked"]);
    t.rows.push_back(
        {Cell::txt(c.label(n)), Cell::txt(r["model"].is_string() ? r["model"].get<std::string>() : "-"),
         Cell::num(std::to_string(asked)), Cell::num(std::to_string(cnt(r["answered"]))),
         Cell::num(fmt::format("{}/{}", cnt(r["byte_identical"]), asked), cnt(r["byte_identical"]) < asked),
         Cell::num(fmt::format("{}/{}", cnt(r["answer_identical"]), asked),
                   cnt(r["answer_identical"]) < asked),
         Cell::num(fmt::format("{}/{}", cnt(r["request_identical"]), cnt(r["answered"]))),
         Cell::num(r["seed"].is_number() ? std::to_string(r["seed"].get<std::uint64_t>()) : "-")});
    if (warning.empty() && r["warning"].is_string()) warning = r["warning"].get<std::string>();
  }
  t.note =
      "Bold: fewer identical than asked. Request identical: the repeated request body equals the recorded "
      "one.";
  d.table(std::move(t));
  if (!warning.empty()) d.warning(warning);
  return d;
}

}  // namespace

void add_paper_sections(Document& d, const OJ& m, const orbit::Benchmark& bench) {
  SysCtx c;
  for (const auto& n : m["system_order"]) c.order.push_back(n.get<std::string>());
  for (const auto& n : c.order) c.simulated[n] = m["systems"][n]["simulated"].get<bool>();
  if (m.contains("allocation")) d.insert_before("systems", allocation_section(m, bench));
  d.insert_before("families", h2_section(m, c));
  d.insert_before("magnitude", length_section(m, c));
  d.insert_before("templates", power_section(m, c));
  bool repeat = false;
  for (const auto& n : c.order) repeat = repeat || m["systems"][n].contains("repeat");
  if (repeat) d.insert_before("examples", repeat_section(m, c));
}

}  // namespace numcheck::report
