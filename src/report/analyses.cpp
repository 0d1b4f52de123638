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

struct BaselineWork {
  // Correct per family view over its eligible bases (slot 1 + f; slot 0, the canonical view, and
  // orbit correctness over all bases are the orbit frame's own totals: BaselineBootstrap::eval).
  std::array<stats::CountSum, kSlots> view;
};

// The allocation (Table 2): per template its bases and eligible views.
Allocation allocation(const orbit::Benchmark& bench, const OrbitLayout& L) {
  const auto info = template_info(bench);
  Allocation alloc;
  std::map<std::string, std::uint64_t> total_views;
  for (const auto& t : L.templates) {
    AllocationRow row;
    row.template_id = t;
    if (auto it = info.find(t); it != info.end()) {
      if (!it->second.name.empty()) row.name = it->second.name;
      if (!it->second.program.empty()) row.program = it->second.program;
    }
    std::map<std::string, std::uint64_t> views;
    for (const auto& bv : L.bases) {
      const auto& base = bench.bases[bv.base];
      if (base.template_id != t) continue;
      ++row.bases;
      row.canonical_unit = base.canonical_unit;
      ++views["canonical"];
      for (std::size_t f = 0; f < kFamilyCount; ++f) {
        if (bv.family[f] != kNone) ++views[orbit::kFamilies[f]];
      }
    }
    for (const auto& v : L.views) {
      row.views.emplace_back(v, views[v]);
      total_views[v] += views[v];
    }
    alloc.total_bases += row.bases;
    alloc.templates.push_back(std::move(row));
  }
  for (const auto& v : L.views) alloc.total_views.emplace_back(v, total_views[v]);
  return alloc;
}

// The first base (file order) with the most orbit views.
std::optional<ExampleOrbit> example_orbit(const orbit::Benchmark& bench, const OrbitLayout& L) {
  std::size_t best = kNone, best_views = 0;
  for (std::size_t b = 0; b < L.bases.size(); ++b) {
    if (L.bases[b].orbit.size() > best_views) {
      best = b;
      best_views = L.bases[b].orbit.size();
    }
  }
  if (best == kNone) return std::nullopt;
  const auto& base = bench.bases[L.bases[best].base];
  ExampleOrbit ex{base.base_id, base.template_id, base.answer.str(), base.canonical_unit, {}};
  for (std::size_t v : L.bases[best].orbit) ex.prompts.push_back(bench.views[v].prompt_id);
  return ex;
}

}  // namespace

// The independence baselines' inputs per system and layer, and their bootstrap replicates on the
// orbit frame's draws: per (system, layer) the excess under the observed-rates baseline, then under
// the canonical rate.
struct BaselineBootstrap::State {
  std::size_t nb = 0;
  Groups groups;
  // A draw's total per group but the largest (`largest`), as sparse sums over its bases; the
  // largest group's total is what the others leave of the draw's nb picks.
  std::vector<stats::CountSum> group_sums;
  std::size_t largest = 0;
  std::vector<std::array<LayerFlags, 2>> flags;
  std::vector<std::array<BaselineWork, 2>> work;
  std::vector<std::vector<double>> reps;
};
using Baselines = BaselineBootstrap::State;

BaselineBootstrap::BaselineBootstrap(const OrbitLayout& L, const std::vector<SystemScores>& systems)
    : s_(std::make_unique<State>()) {
  State& out = *s_;
  const std::size_t nb = L.bases.size();
  out.nb = nb;
  out.groups = make_groups(L);
  const Groups& groups = out.groups;
  if (nb > 0) {
    std::vector<std::size_t> sizes(groups.masks.size(), 0);
    for (const auto g : groups.of_base) ++sizes[g];
    out.largest = static_cast<std::size_t>(std::max_element(sizes.begin(), sizes.end()) - sizes.begin());
    std::vector<std::uint32_t> everyone(nb);
    for (std::size_t b = 0; b < nb; ++b) everyone[b] = static_cast<std::uint32_t>(b);
    std::vector<std::uint8_t> member(nb);
    out.group_sums.resize(groups.masks.size());
    for (std::size_t gi = 0; gi < groups.masks.size(); ++gi) {
      if (gi == out.largest) continue;
      for (std::size_t b = 0; b < nb; ++b) member[b] = groups.of_base[b] == gi ? 1 : 0;
      out.group_sums[gi] = stats::CountSum::over(member, everyone);
    }
  }
  std::vector<std::vector<std::uint32_t>> slot_bases(kSlots);
  for (std::size_t b = 0; b < nb; ++b) {
    const unsigned m = groups.masks[groups.of_base[b]];
    for (std::size_t slot = 0; slot < kSlots; ++slot) {
      if (m >> slot & 1u) slot_bases[slot].push_back(static_cast<std::uint32_t>(b));
    }
  }
  const std::size_t n_systems = systems.size();
  out.flags.resize(n_systems);
  out.work.resize(n_systems);
  for (std::size_t s = 0; s < n_systems; ++s) {
    for (std::size_t l = 0; l < 2; ++l) {
      out.flags[s][l] = layer_flags(L, systems[s], l);
      for (std::size_t slot = 1; slot < kSlots; ++slot) {
        out.work[s][l].view[slot] = stats::CountSum::over(out.flags[s][l].correct[slot], slot_bases[slot]);
      }
    }
  }
}

BaselineBootstrap::~BaselineBootstrap() = default;

std::size_t BaselineBootstrap::n_stats() const { return s_->nb == 0 ? 0 : s_->work.size() * 4; }

void BaselineBootstrap::set_replicates(std::vector<std::vector<double>> reps) { s_->reps = std::move(reps); }

void BaselineBootstrap::eval(const stats::ClusterCounts& c, std::span<const std::int64_t> frame_totals,
                             std::span<double> o) const {
  const State& st = *s_;
  const std::size_t nb = st.nb;
  const Groups& groups = st.groups;
  // Drawn bases per group and eligible per view, as exact integers (a mask has kSlots bits, so
  // there are at most 2^kSlots groups). A draw of the orbit frame picks nb bases in all.
  std::array<std::int64_t, std::size_t{1} << kSlots> gw{};
  std::int64_t rest = static_cast<std::int64_t>(nb);
  for (std::size_t gi = 0; gi < groups.masks.size(); ++gi) {
    if (gi == st.largest) continue;
    gw[gi] = st.group_sums[gi].eval(c, static_cast<std::int64_t>(nb));
    rest -= gw[gi];
  }
  if (nb > 0) gw[st.largest] = rest;
  std::array<std::int64_t, kSlots> elig{};
  for (std::size_t gi = 0; gi < groups.masks.size(); ++gi) {
    for (std::size_t slot = 0; slot < kSlots; ++slot) {
      if (groups.masks[gi] >> slot & 1u) elig[slot] += gw[gi];
    }
  }
  for (std::size_t s = 0; s < st.work.size(); ++s) {
    for (std::size_t l = 0; l < 2; ++l) {
      const auto& w = st.work[s][l];
      // Every base has a canonical view (elig[0] is nb): its total is the frame's.
      const std::int64_t canonical = frame_totals[(s * 2 + l) * 3];
      const std::int64_t orbit = frame_totals[(s * 2 + l) * 3 + 1];
      std::array<double, kSlots> p{};
      for (std::size_t slot = 0; slot < kSlots; ++slot) {
        const std::int64_t total = slot == 0 ? canonical : w.view[slot].eval(c, elig[slot]);
        p[slot] = elig[slot] > 0 ? static_cast<double>(total) / static_cast<double>(elig[slot]) : 0.0;
      }
      double indep = 0, canon = 0;
      for (std::size_t gi = 0; gi < groups.masks.size(); ++gi) {
        double prod = 1, prod_c = 1;
        for (std::size_t slot = 0; slot < kSlots; ++slot) {
          if ((groups.masks[gi] >> slot & 1u) == 0) continue;
          prod *= p[slot];
          prod_c *= p[0];
        }
        indep += static_cast<double>(gw[gi]) * prod;
        canon += static_cast<double>(gw[gi]) * prod_c;
      }
      const auto observed = static_cast<double>(orbit);
      const double n = static_cast<double>(nb);
      o[(s * 2 + l) * 2 + 0] = (indep - observed) / n;
      o[(s * 2 + l) * 2 + 1] = (canon - observed) / n;
    }
  }
}

namespace {

// Length-finished responses excluded (descriptive sensitivity analysis).
Keyed<LengthExcluded> length_excluded(const orbit::Benchmark& bench, const OrbitLayout& L,
                                      const SystemScores& sys, std::size_t l) {
  Keyed<LengthExcluded> out;
  for (const auto& vname : L.views) {
    LengthExcluded e;
    for (std::size_t v = 0; v < bench.views.size(); ++v) {
      if (bench.views[v].view != vname) continue;
      const auto& sp = sys.by_view[v];
      const bool ok = sp.layer[l].outcome == Outcome::kCorrect;
      if (sp.present && sp.finish_reason == "length") {
        ++e.excluded_length_finishes;
        e.correct_among_excluded += ok;
        continue;
      }
      ++e.n;
      e.correct += ok;
    }
    out.emplace_back(vname, e);
  }
  return out;
}

// Per view and template: correctness, value errors, exact power-of-ten drops by k.
Keyed<Keyed<TemplateViewCell>> views_by_template(const orbit::Benchmark& bench, const OrbitLayout& L,
                                                 const SystemScores& sys, std::size_t l) {
  Keyed<Keyed<TemplateViewCell>> out;
  for (const auto& vname : L.views) {
    std::map<std::string, TemplateViewCell> cells;
    for (std::size_t v = 0; v < bench.views.size(); ++v) {
      const auto& view = bench.views[v];
      if (view.view != vname) continue;
      const auto& ls = sys.by_view[v].layer[l];
      TemplateViewCell& c = cells[view.template_id];
      ++c.n;
      c.correct += ls.outcome == Outcome::kCorrect;
      if (ls.outcome == Outcome::kValueError && ls.value) {
        ++c.value_errors;
        if (auto k = grade::magnitude_exponent(*ls.value, view.expected)) {
          ++c.power_of_ten;
          ++c.by_k[*k];
        }
      }
    }
    Keyed<TemplateViewCell> row;
    for (const auto& t : L.templates) {
      if (auto it = cells.find(t); it != cells.end()) row.emplace_back(t, it->second);
    }
    out.emplace_back(vname, std::move(row));
  }
  return out;
}

// The independence baselines for H2 of system s, layer l: exact point values and bootstrap intervals.
H2Independence h2_independence(const OrbitLayout& L, const Baselines& bl, std::size_t s, std::size_t l,
                               double level) {
  const std::size_t nb = L.bases.size();
  const LayerFlags& flags = bl.flags[s][l];
  const auto [indep, canon] = expected_orbit_exact(L, bl.groups, flags);
  std::uint64_t observed = 0, canonical = 0;
  for (std::size_t b = 0; b < nb; ++b) {
    observed += flags.orbit[b];
    canonical += flags.correct[0][b];
  }
  H2Independence h;
  h.n = nb;
  if (nb == 0) return h;
  const Rational n(static_cast<long long>(nb));
  const Rational can_rate = Rational(static_cast<long long>(canonical)) / n;
  const Rational obs_rate = Rational(static_cast<long long>(observed)) / n;
  h.observed_gap = can_rate - obs_rate;
  auto baseline = [&](const Rational& expected_total, std::size_t which, const char* what) {
    const Rational exp_rate = expected_total / n;
    H2Baseline b{what, exp_rate, can_rate - exp_rate, exp_rate - obs_rate, std::nullopt};
    if (!bl.reps.empty()) b.ci = stats::percentile_interval(bl.reps[(s * 2 + l) * 2 + which], level);
    return b;
  };
  h.independent_views =
      baseline(indep, 0, "each view of a base fails independently at that view's observed rate");
  h.canonical_rate =
      baseline(canon, 1, "each view of a base fails independently at the canonical view's observed rate");
  return h;
}

// The repeat check (`orbit repeat`), when the run folder of a system's responses holds one.
std::optional<RepeatCheck> repeat_check(const SystemScores& sys) {
  if (!sys.responses_path) return std::nullopt;
  const std::filesystem::path file = sys.responses_path->parent_path() / "repeat.json";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return std::nullopt;
  const std::string text = io::read_file(file, std::size_t{1} << 28);
  const OJ j = io::parse_ordered_json(text, file.string());
  if (!j.is_object() || j.value("kind", std::string()) != "numcheck.orbit_repeat" || !j.contains("counts") ||
      !j["counts"].is_object()) {
    fail("{}: not a repeat.json written by `numcheck orbit repeat` (kind numcheck.orbit_repeat)",
         file.string());
  }
  RepeatCheck r;
  r.file = "repeat.json";
  r.sha256 = io::sha256_hex(text);
  r.model = j.contains("model") ? j["model"] : OJ(nullptr);
  r.seed = j.contains("seed") ? j["seed"] : OJ(nullptr);
  r.n_requested = j.contains("n_requested") ? j["n_requested"] : OJ(nullptr);
  for (auto [k, slot] :
       {std::pair{"asked", &r.asked}, std::pair{"answered", &r.answered},
        std::pair{"byte_identical", &r.byte_identical}, std::pair{"answer_identical", &r.answer_identical},
        std::pair{"request_identical", &r.request_identical}}) {
    const OJ& v = j["counts"].contains(k) ? j["counts"][k] : OJ(nullptr);
    if (!v.is_number_unsigned()) fail("{}: counts.{} is not a count", file.string(), k);
    *slot = v.get<std::uint64_t>();
  }
  r.warning = j.value("warning", std::string());
  return r;
}

}  // namespace

void add_paper_analyses(MetricsModel& m, const orbit::Benchmark& bench, const OrbitLayout& layout,
                        const std::vector<SystemScores>& systems, const ReportOptions& opt,
                        const BaselineBootstrap& baselines) {
  m.allocation = allocation(bench, layout);
  m.example_orbit = example_orbit(bench, layout);
  const Baselines& bl = baselines.state();
  for (std::size_t s = 0; s < systems.size(); ++s) {
    SystemMetrics& sm = m.systems.at(s);
    for (std::size_t l = 0; l < 2; ++l) {
      LayerMetrics& lm = sm.layers[l];
      lm.length_excluded = length_excluded(bench, layout, systems[s], l);
      lm.views_by_template = views_by_template(bench, layout, systems[s], l);
      lm.h2_independence = h2_independence(layout, bl, s, l, opt.level);
    }
    sm.repeat = repeat_check(systems[s]);
  }
}

// ---- report sections ------------------------------------------------------------------------------

namespace {

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
std::string exact_points(const Rational& q) {
  const std::string s = num::fixed_decimal(q * Rational(100), 1);
  return s[0] == '-' || s == "0.0" ? s : "+" + s;
}

std::string k_factors(const ByK& by_k) {
  std::string s;
  for (const auto& [k, v] : by_k) s += fmt::format("{}k={}: {}", s.empty() ? "" : ", ", k, v);
  return s.empty() ? "-" : s;
}

Document allocation_section(const MetricsModel& m, const orbit::Benchmark& bench) {
  Document d;
  d.heading(2, "allocation", "Benchmark: templates and allocation");
  d.paragraph(
      "Each base problem is one template's program with exact rational parameters; its orbit is the "
      "canonical prompt and the family views its eligibility grants. Per-view denominators are the "
      "eligible bases in the column below, never all bases.");
  const Allocation& a = m.allocation;
  Table t;
  t.caption = "Template allocation: bases and eligible views per template";
  t.id = "allocation";
  t.header = {"Template", "Program", "Canonical unit", "Bases"};
  std::vector<std::string> views;
  for (const auto& [v, _] : a.total_views) {
    if (v == "canonical") continue;
    views.push_back(v);
    t.header.push_back(v);
  }
  for (const auto& row : a.templates) {
    std::vector<Cell> r{Cell::txt(m.template_label(row.template_id)),
                        Cell::txt(row.program ? "y = " + *row.program : "-"),
                        Cell::txt(row.canonical_unit.empty() ? std::string("(none)") : row.canonical_unit),
                        Cell::num(std::to_string(row.bases))};
    for (const auto& v : views) {
      const std::uint64_t* n = find_key(row.views, v);
      r.push_back(Cell::num(n == nullptr || *n == 0 ? std::string("-") : std::to_string(*n)));
    }
    t.rows.push_back(std::move(r));
  }
  {
    std::vector<Cell> r{Cell::txt("total"), Cell::txt(""), Cell::txt(""),
                        Cell::num(std::to_string(a.total_bases), true)};
    for (const auto& v : views) r.push_back(Cell::num(std::to_string(*find_key(a.total_views, v)), true));
    t.rows.push_back(std::move(r));
  }
  t.note =
      "Every base also has one canonical prompt. A family column counts the bases eligible for that view "
      "(its transformed prompts); '-' = not eligible in the template.";
  d.table(std::move(t));

  if (m.example_orbit) {
    const ExampleOrbit& ex = *m.example_orbit;
    d.heading(3, "example-orbit", "An example orbit");
    d.paragraph(fmt::format(
        "Base {} of template {}: every prompt below asks for the same exact answer, {}{}. The views differ "
        "only in how the statement's quantities are written.",
        ex.base_id, m.template_label(ex.template_id), ex.answer,
        ex.canonical_unit.empty() ? "" : " " + ex.canonical_unit));
    for (const auto& pid : ex.prompts) {
      const orbit::View* v = bench.find_view(pid);
      if (v == nullptr) continue;
      d.paragraph(fmt::format("{} view:", v->view));
      d.verbatim(v->prompt);
    }
  }
  return d;
}

Document h2_section(const MetricsModel& m) {
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
    for (const auto& s : m.systems) {
      const LayerMetrics& lm = s.layers[l];
      const H2Independence& h = lm.h2_independence;
      if (!h.independent_views || !h.canonical_rate || !h.observed_gap) continue;
      const H2Baseline& a = *h.independent_views;
      const H2Baseline& b = *h.canonical_rate;
      auto excludes0 = [](const std::optional<Interval>& ci) { return ci && (ci->lo > 0.0 || ci->hi < 0.0); };
      t.rows.push_back({Cell::txt(s.label()), Cell::num(std::to_string(h.n)),
                        Cell::num(exact_points(*h.observed_gap)), Cell::num(exact_points(a.expected_gap)),
                        Cell::num(exact_points(a.excess_gap) + " " + pts_interval(a.ci), excludes0(a.ci)),
                        Cell::num(exact_points(b.expected_gap)),
                        Cell::num(exact_points(b.excess_gap) + " " + pts_interval(b.ci), excludes0(b.ci)),
                        Cell::txt(lm.orbit.gap_material() ? "yes" : "no")});
    }
    t.note =
        "Percentage points; point values are exact (metrics.json: h2_independence, 'p/q'), rounded for "
        "display. Bold: the interval excludes 0.";
    d.table(std::move(t));
  }
  return d;
}

Document length_section(const MetricsModel& m) {
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
  for (const auto& s : m.systems) {
    const LayerMetrics& st = s.layers[0];
    const LayerMetrics& au = s.layers[1];
    for (const auto& [v, e] : au.length_excluded) {
      const std::uint64_t ex = e.excluded_length_finishes;
      if (v != "scientific" && ex == 0) continue;
      const LengthExcluded* se = find_key(st.length_excluded, v);
      const ViewMetrics* sv = find_key(st.views, v);
      const ViewMetrics* av = find_key(au.views, v);
      if (se == nullptr || sv == nullptr || av == nullptr)
        fail("metrics: system {} lacks view {}", s.name, v);
      t.rows.push_back({Cell::txt(s.label()), Cell::txt(v), Cell::num(std::to_string(ex)),
                        Cell::num(rate_counts(sv->correct, sv->n)),
                        Cell::num(rate_counts(se->correct, se->n)),
                        Cell::num(rate_counts(av->correct, av->n)), Cell::num(rate_counts(e.correct, e.n))});
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

Document power_section(const MetricsModel& m) {
  Document d;
  d.heading(2, "power-of-ten", "Power-of-ten factors by template");
  d.paragraph(
      "Per view and eligible template (audit layer): correctness, residual failures, and the value errors "
      "whose parsed value times 10^k equals the label for an integer 0 < |k| <= 15 (k = -3: the answer is "
      "1000 times too large, as when a sub-unit count is reported in the canonical unit). Shown for the unit "
      "view and every view with such a drop. A pooled rate mixes these strata; no claim carries beyond the "
      "listed template/view combinations.");
  std::vector<std::string> views;
  for (const auto& s : m.systems) {
    for (const auto& [v, cells] : s.layers[1].views_by_template) {
      bool show = v == "unit";
      for (const auto& [tp, e] : cells) show = show || e.power_of_ten > 0;
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
    for (const auto& s : m.systems) {
      const Keyed<TemplateViewCell>* cells = find_key(s.layers[1].views_by_template, v);
      if (cells == nullptr) continue;
      for (const auto& [tp, e] : *cells) {
        t.rows.push_back(
            {Cell::txt(s.label()), Cell::txt(m.template_label(tp)), Cell::num(std::to_string(e.n)),
             Cell::num(rate_counts(e.correct, e.n)), Cell::num(std::to_string(e.n - e.correct)),
             Cell::num(std::to_string(e.value_errors)),
             Cell::num(std::to_string(e.power_of_ten), e.power_of_ten > 0), Cell::txt(k_factors(e.by_k))});
      }
    }
    if (!t.rows.empty()) d.table(std::move(t));
  }
  return d;
}

Document repeat_section(const MetricsModel& m) {
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
  for (const auto& s : m.systems) {
    if (!s.repeat) continue;
    const RepeatCheck& r = *s.repeat;
    t.rows.push_back(
        {Cell::txt(s.label()), Cell::txt(r.model.is_string() ? r.model.get<std::string>() : "-"),
         Cell::num(std::to_string(r.asked)), Cell::num(std::to_string(r.answered)),
         Cell::num(fmt::format("{}/{}", r.byte_identical, r.asked), r.byte_identical < r.asked),
         Cell::num(fmt::format("{}/{}", r.answer_identical, r.asked), r.answer_identical < r.asked),
         Cell::num(fmt::format("{}/{}", r.request_identical, r.answered)),
         Cell::num(r.seed.is_number() ? std::to_string(r.seed.get<std::uint64_t>()) : "-")});
    if (warning.empty()) warning = r.warning;
  }
  t.note =
      "Bold: fewer identical than asked. Request identical: the repeated request body equals the recorded "
      "one.";
  d.table(std::move(t));
  if (!warning.empty()) d.warning(warning);
  return d;
}

}  // namespace

std::string pts_interval(const std::optional<Interval>& i) {
  if (!i) return "n/a";
  return fmt::format("[{}, {}]", html::signed_points(i->lo, 1), html::signed_points(i->hi, 1));
}

void add_paper_sections(Document& d, const MetricsModel& m, const orbit::Benchmark& bench) {
  d.insert_before("systems", allocation_section(m, bench));
  d.insert_before("families", h2_section(m));
  d.insert_before("magnitude", length_section(m));
  d.insert_before("templates", power_section(m));
  bool repeat = false;
  for (const auto& s : m.systems) repeat = repeat || s.repeat.has_value();
  if (repeat) d.insert_before("examples", repeat_section(m));
}

}  // namespace numcheck::report
