#include "report/metrics_model.hpp"

#include <array>
#include <charconv>
#include <string_view>

#include <fmt/format.h>

#include "core/error.hpp"
#include "orbit/benchmark.hpp"

namespace numcheck::report {

std::uint64_t total(const ByK& by_k) {
  std::uint64_t t = 0;
  for (const auto& [k, c] : by_k) t += c;
  return t;
}

std::vector<std::string> LayerMetrics::h1_families() const {
  std::vector<std::string> out;
  for (const auto& [f, test] : families) {
    if (test.material()) out.push_back(f);
  }
  return out;
}

const SystemMetrics& MetricsModel::system(std::string_view name) const {
  for (const auto& s : systems) {
    if (s.name == name) return s;
  }
  fail("metrics: no system named '{}'", name);
}

std::string MetricsModel::template_label(const std::string& template_id) const {
  for (const auto& row : allocation.templates) {
    if (row.template_id == template_id && row.name) return fmt::format("{} ({})", template_id, *row.name);
  }
  return template_id;
}

// ---- model -> JSON ---------------------------------------------------------------------------------

namespace {

using OJ = io::OrderedJson;
using Rec = io::OrderedRecord;

OJ number_or_null(double x) { return std::isnan(x) ? OJ(nullptr) : OJ(x); }
OJ interval_json(const std::optional<Interval>& i) { return i ? OJ::array({i->lo, i->hi}) : OJ(nullptr); }
OJ exact_json(const num::Rational& q) {
  OJ o = OJ::object();
  o["exact"] = q.str();
  o["value"] = q.to_double();
  return o;
}
OJ by_k_json(const ByK& m) {
  OJ o = OJ::object();
  for (const auto& [k, c] : m) o[std::to_string(k)] = c;
  return o;
}
template <typename T, typename F>
OJ keyed_json(const Keyed<T>& list, F f) {
  OJ o = OJ::object();
  for (const auto& [k, v] : list) o[k] = f(v);
  return o;
}
OJ count_json(std::uint64_t c) { return OJ(c); }

OJ view_json(const ViewMetrics& v) {
  OJ o = OJ::object();
  o["n"] = v.n;
  o["correct"] = v.correct;
  o["rate"] = number_or_null(v.rate());
  o["wilson"] = interval_json(v.wilson);
  return o;
}

OJ orbit_json(const OrbitMetrics& c) {
  OJ o = OJ::object();
  o["n"] = c.n;
  o["correct"] = c.correct;
  o["invariant"] = c.invariant;
  o["consistent_wrong"] = c.consistent_wrong;
  o["rate"] = number_or_null(c.rate());
  o["invariant_rate"] = number_or_null(c.invariant_rate());
  o["consistent_wrong_rate"] = number_or_null(c.consistent_wrong_rate());
  o["wilson"] = interval_json(c.wilson);
  o["invariant_wilson"] = interval_json(c.invariant_wilson);
  o["consistent_wrong_wilson"] = interval_json(c.consistent_wrong_wilson);
  o["canonical_correct"] = c.canonical_correct;
  o["canonical_rate"] = number_or_null(c.canonical_rate());
  return o;
}

OJ family_json(const FamilyTest& r) {
  OJ o = OJ::object();
  o["n"] = r.n;
  o["canonical_correct"] = r.canonical_correct;
  o["transformed_correct"] = r.transformed_correct;
  o["canonical_rate"] = number_or_null(r.canonical_rate());
  o["transformed_rate"] = number_or_null(r.transformed_rate());
  o["gap"] = r.gap();
  o["ci"] = interval_json(r.ci);
  o["c"] = r.c;
  o["t"] = r.t;
  o["p"] = r.p;
  o["p_holm"] = r.p_holm;
  o["material"] = r.material();
  return o;
}

OJ magnitude_json(const MagnitudeDrops& m) {
  OJ o = OJ::object();
  o["total"] = total(m.by_k);
  o["value_errors"] = m.value_errors;
  o["by_k"] = by_k_json(m.by_k);
  o["by_view"] = keyed_json(m.by_view, [](const ViewDrops& d) {
    OJ e = OJ::object();
    e["total"] = total(d.by_k);
    e["by_k"] = by_k_json(d.by_k);
    e["by_template"] = keyed_json(d.by_template, count_json);
    return e;
  });
  o["by_template"] = keyed_json(m.by_template, [](const ByK& by_k) {
    OJ e = OJ::object();
    e["total"] = total(by_k);
    e["by_k"] = by_k_json(by_k);
    return e;
  });
  return o;
}

OJ recovery_json(const Recovery& r) {
  OJ e = OJ::object();
  e["n"] = r.n;
  e["strict_correct"] = r.strict_correct;
  e["audit_correct"] = r.audit_correct;
  e["recovered"] = r.recovered;
  e["residual_failures"] = r.residual_failures();
  e["multiple_final"] = r.multiple_final;
  e["length_finishes"] = r.length_finishes;
  OJ rules = OJ::object();
  for (const auto& [name, c] : r.rules) rules[name] = c;
  e["rules"] = rules;
  return e;
}

OJ tokens_json(const TokenSummary& t) {
  OJ o = OJ::object();
  o["count"] = t.count;
  o["records"] = t.records;
  o["median"] = t.quartiles ? OJ(t.quartiles->median) : OJ(nullptr);
  o["q1"] = t.quartiles ? OJ(t.quartiles->q1) : OJ(nullptr);
  o["q3"] = t.quartiles ? OJ(t.quartiles->q3) : OJ(nullptr);
  o["length_finishes"] = t.length_finishes;
  return o;
}

OJ h2_json(const H2Independence& h) {
  OJ o = OJ::object();
  o["n"] = h.n;
  o["observed_gap"] = h.observed_gap ? exact_json(*h.observed_gap) : OJ(nullptr);
  auto baseline = [](const H2Baseline& b) {
    OJ e = OJ::object();
    e["assumption"] = b.assumption;
    e["expected_orbit"] = exact_json(b.expected_orbit);
    e["expected_gap"] = exact_json(b.expected_gap);
    e["excess_gap"] = exact_json(b.excess_gap);
    e["ci"] = interval_json(b.ci);
    return e;
  };
  if (h.independent_views) o["independent_views"] = baseline(*h.independent_views);
  if (h.canonical_rate) o["canonical_rate"] = baseline(*h.canonical_rate);
  return o;
}

OJ layer_json(const LayerMetrics& lm, std::size_t l) {
  OJ o = OJ::object();
  o["descriptive"] = l == 1;
  o["views"] = keyed_json(lm.views, view_json);
  o["orbit"] = orbit_json(lm.orbit);
  {
    OJ g = OJ::object();
    g["value"] = number_or_null(lm.orbit.gap());
    g["ci"] = interval_json(lm.orbit_gap_ci);
    g["canonical_rate"] = number_or_null(lm.orbit.canonical_rate());
    g["orbit_rate"] = number_or_null(lm.orbit.rate());
    g["material"] = lm.orbit.gap_material();
    o["orbit_gap"] = g;
  }
  o["families"] = keyed_json(lm.families, family_json);
  {
    const auto fams = lm.h1_families();
    OJ h1 = OJ::object();
    h1["holds"] = !fams.empty();
    h1["families"] = fams;
    h1["criterion"] = "some family gap >= 0.03 with Holm-adjusted p < 0.05";
    h1["descriptive"] = l == 1;
    o["h1"] = h1;
    OJ h2 = OJ::object();
    h2["holds"] = lm.orbit.gap_material();
    h2["gap"] = number_or_null(lm.orbit.gap());
    h2["criterion"] = "orbit gap (canonical minus orbit correctness) >= 0.03";
    h2["descriptive"] = l == 1;
    o["h2"] = h2;
  }
  o["templates"] = keyed_json(lm.templates, [](const TemplateStratum& t) {
    OJ e = OJ::object();
    e["n_bases"] = t.orbit.n;
    e["views"] = keyed_json(t.views, view_json);
    e["orbit"] = orbit_json(t.orbit);
    e["orbit_gap"] = number_or_null(t.orbit.gap());
    return e;
  });
  o["magnitude_drops"] = magnitude_json(lm.magnitude_drops);
  o["failures"] = keyed_json(lm.failures, [](const OutcomeCounts& f) {
    OJ e = OJ::object();
    for (std::size_t i = 0; i < kOutcomeCount; ++i) e[kOutcomeNames[i]] = f[i];
    return e;
  });
  if (lm.recovery) o["recovery"] = keyed_json(*lm.recovery, recovery_json);
  if (lm.tokens) o["tokens"] = keyed_json(*lm.tokens, tokens_json);
  o["length_excluded"] = keyed_json(lm.length_excluded, [](const LengthExcluded& e) {
    OJ j = OJ::object();
    j["n"] = e.n;
    j["correct"] = e.correct;
    j["rate"] = number_or_null(ratio(e.correct, e.n));
    j["excluded_length_finishes"] = e.excluded_length_finishes;
    j["correct_among_excluded"] = e.correct_among_excluded;
    return j;
  });
  o["views_by_template"] = keyed_json(lm.views_by_template, [](const Keyed<TemplateViewCell>& cells) {
    return keyed_json(cells, [](const TemplateViewCell& c) {
      OJ e = OJ::object();
      e["n"] = c.n;
      e["correct"] = c.correct;
      e["rate"] = number_or_null(ratio(c.correct, c.n));
      e["residual_failures"] = c.n - c.correct;
      e["value_errors"] = c.value_errors;
      e["power_of_ten"] = c.power_of_ten;
      e["by_k"] = by_k_json(c.by_k);
      return e;
    });
  });
  o["h2_independence"] = h2_json(lm.h2_independence);
  return o;
}

OJ provenance_json(const Provenance& p) {
  OJ o = OJ::object();
  o["run_manifest"] = p.run_manifest ? OJ(*p.run_manifest) : OJ();
  o["model_served"] = p.model_served;
  o["model_requested"] = p.model_requested;
  o["backend"] = p.backend;
  o["api"] = p.api;
  o["endpoint_hosts"] = p.endpoint_hosts;
  o["server_build"] = p.server_build;
  o["system_fingerprints"] = p.system_fingerprints;
  o["sampling"] = p.sampling;
  o["max_tokens"] = p.max_tokens;
  o["extra_body"] = p.extra_body;
  o["system_prompt"] = p.system_prompt;
  o["inject"] = p.inject;
  o["model_file"] = p.model_file;
  o["benchmark"] = p.benchmark;
  o["numcheck_version"] = p.numcheck_version;
  o["started_at"] = p.started_at;
  o["ended_at"] = p.ended_at;
  return o;
}

OJ repeat_json(const RepeatCheck& r) {
  OJ o = OJ::object();
  o["file"] = r.file;
  o["sha256"] = r.sha256;
  o["model"] = r.model;
  o["seed"] = r.seed;
  o["n_requested"] = r.n_requested;
  o["asked"] = r.asked;
  o["answered"] = r.answered;
  o["byte_identical"] = r.byte_identical;
  o["answer_identical"] = r.answer_identical;
  o["request_identical"] = r.request_identical;
  o["warning"] = r.warning;
  return o;
}

OJ system_json(const SystemMetrics& s) {
  OJ o = OJ::object();
  o["simulated"] = s.simulated;
  o["scores_file"] = s.scores_file;
  o["manifest"] = s.manifest ? OJ(*s.manifest) : OJ(nullptr);
  o["records"] = s.records;
  o["scored_prompts"] = s.scored_prompts;
  o["missing"] = s.missing;
  o["ignored_records"] = s.ignored_records;
  for (std::size_t l = 0; l < 2; ++l) o[kLayerNames[l]] = layer_json(s.layers[l], l);
  if (s.repeat) o["repeat"] = repeat_json(*s.repeat);
  if (s.provenance) o["provenance"] = provenance_json(*s.provenance);
  return o;
}

OJ difference_json(const Difference& d) {
  OJ e = OJ::object();
  e["difference"] = d.difference ? OJ(*d.difference) : OJ(nullptr);
  e["ci"] = interval_json(d.ci);
  return e;
}

OJ comparison_json(const Comparison& c) {
  OJ o = OJ::object();
  o["a"] = c.a;
  o["b"] = c.b;
  for (std::size_t l = 0; l < 2; ++l) {
    const ComparisonLayer& cl = c.layers[l];
    OJ lj = OJ::object();
    if (cl.canonical_correct) lj["canonical_correct"] = difference_json(*cl.canonical_correct);
    if (cl.orbit_correct) lj["orbit_correct"] = difference_json(*cl.orbit_correct);
    if (cl.orbit_gap) lj["orbit_gap"] = difference_json(*cl.orbit_gap);
    lj["families"] = keyed_json(cl.families, [](const FamilyDifference& f) {
      OJ e = OJ::object();
      e["transformed_correct"] = difference_json(f.transformed_correct);
      e["gap"] = difference_json(f.gap);
      return e;
    });
    o[kLayerNames[l]] = lj;
  }
  return o;
}

OJ benchmark_json(const BenchmarkInfo& b) {
  OJ o = OJ::object();
  o["dir"] = b.dir;
  o["bases"] = b.bases;
  o["prompts"] = b.prompts;
  o["views"] = keyed_json(b.views, count_json);
  o["templates"] = b.templates;
  o["file_sha256"] = keyed_json(b.file_sha256, [](const std::string& s) { return OJ(s); });
  // A subset (orbit/selection.hpp): every count is scoped to it.
  if (!b.selection.is_null()) o["selection"] = b.selection;
  for (const auto& [k, v] : b.generator.items()) o[k] = v;
  return o;
}

OJ settings_json(const MetricsSettings& s) {
  OJ o = OJ::object();
  o["bootstrap_draws"] = s.bootstrap_draws;
  o["seed"] = s.seed;
  o["level"] = s.level;
  o["interval"] = "percentile, base-clustered bootstrap (Rng(seed, frame).split(draw))";
  o["rate_interval"] = "Wilson score";
  o["material_threshold"] = kMaterialPoints / 100.0;
  o["alpha"] = kAlpha;
  o["holm"] = "within each system and layer over the family tests";
  o["h2_baseline"] =
      "excess gap = observed orbit gap - gap expected under independence; percentile interval on the "
      "orbit frame's base-clustered draws";
  o["length_sensitivity"] = "descriptive: responses with finish reason 'length' excluded";
  return o;
}

OJ allocation_json(const Allocation& a) {
  OJ rows = OJ::array();
  for (const auto& r : a.templates) {
    OJ row = OJ::object();
    row["template"] = r.template_id;
    row["name"] = r.name ? OJ(*r.name) : OJ(nullptr);
    row["program"] = r.program ? OJ(*r.program) : OJ(nullptr);
    row["canonical_unit"] = r.canonical_unit;
    row["bases"] = r.bases;
    row["views"] = keyed_json(r.views, count_json);
    rows.push_back(row);
  }
  OJ o = OJ::object();
  o["templates"] = rows;
  OJ tot = OJ::object();
  tot["bases"] = a.total_bases;
  tot["views"] = keyed_json(a.total_views, count_json);
  o["total"] = tot;
  return o;
}

OJ example_json(const ExampleOrbit& e) {
  OJ o = OJ::object();
  o["base_id"] = e.base_id;
  o["template"] = e.template_id;
  o["answer"] = e.answer;
  o["canonical_unit"] = e.canonical_unit;
  o["prompts"] = e.prompts;
  return o;
}

}  // namespace

OJ to_json(const MetricsModel& m) {
  OJ out = OJ::object();
  out["numcheck_version"] = m.numcheck_version;
  out["benchmark"] = benchmark_json(m.benchmark);
  out["settings"] = settings_json(m.settings);
  OJ systems = OJ::object();
  OJ order = OJ::array();
  for (const auto& s : m.systems) {
    systems[s.name] = system_json(s);
    order.push_back(s.name);
  }
  out["systems"] = systems;
  out["system_order"] = order;
  OJ comps = OJ::array();
  for (const auto& c : m.comparisons) comps.push_back(comparison_json(c));
  out["comparisons"] = comps;
  out["allocation"] = allocation_json(m.allocation);
  if (m.example_orbit) out["example_orbit"] = example_json(*m.example_orbit);
  if (!m.extra_sections.is_null() && !m.extra_sections.empty()) out["extra_sections"] = m.extra_sections;
  return out;
}

// ---- JSON -> model ---------------------------------------------------------------------------------

namespace {

std::optional<Interval> read_interval(const Rec& r, std::string_view key) {
  const OJ& j = r.at(key);
  if (j.is_null()) return std::nullopt;
  if (!j.is_array() || j.size() != 2 || !j[0].is_number() || !j[1].is_number()) {
    r.fail_field(key, "must be null or [lo, hi]");
  }
  return Interval{j[0].get<double>(), j[1].get<double>()};
}

num::Rational read_exact(const Rec& r, std::string_view key) {
  const Rec e = r.object(key);
  const auto q = num::Rational::from_string(e.string("exact"));
  if (!q) e.fail_field("exact", "must be an exact rational (\"p/q\")");
  return *q;
}

// An object whose entries are all read by f(record, key), in their order.
template <typename T, typename F>
Keyed<T> read_keyed(const Rec& r, std::string_view key, F f) {
  const Rec o = r.object(key);
  Keyed<T> out;
  for (const auto& item : o.json().items()) out.emplace_back(item.key(), f(o, item.key()));
  return out;
}
std::uint64_t read_count(const Rec& r, std::string_view key) { return r.unsigned_integer(key); }

ByK read_by_k(const Rec& r, std::string_view key) {
  const Rec o = r.object(key);
  ByK out;
  for (const auto& item : o.json().items()) {
    const std::string& k = item.key();
    int v = 0;
    const auto [p, ec] = std::from_chars(k.data(), k.data() + k.size(), v);
    if (ec != std::errc() || p != k.data() + k.size()) o.fail_field(k, "is not a power-of-ten exponent");
    out[v] = o.unsigned_integer(k);
  }
  return out;
}

// A count that cannot exceed `limit` (a part of a whole): the derived rates and gaps rely on it.
std::uint64_t read_part(const Rec& r, std::string_view key, std::uint64_t limit, std::string_view whole) {
  const std::uint64_t k = r.unsigned_integer(key);
  if (k > limit) r.fail_field(key, fmt::format("must not exceed {} ({})", whole, limit));
  return k;
}

ViewMetrics read_view(const Rec& r, std::string_view key) {
  const Rec v = r.object(key);
  const std::uint64_t n = v.unsigned_integer("n");
  return {n, read_part(v, "correct", n, "n"), read_interval(v, "wilson")};
}

OrbitMetrics read_orbit(const Rec& r, std::string_view key) {
  const Rec o = r.object(key);
  OrbitMetrics m;
  m.n = o.unsigned_integer("n");
  m.canonical_correct = read_part(o, "canonical_correct", m.n, "n");
  m.correct = read_part(o, "correct", m.canonical_correct, "canonical_correct");
  m.invariant = read_part(o, "invariant", m.n, "n");
  m.consistent_wrong = read_part(o, "consistent_wrong", m.invariant, "invariant");
  m.wilson = read_interval(o, "wilson");
  m.invariant_wilson = read_interval(o, "invariant_wilson");
  m.consistent_wrong_wilson = read_interval(o, "consistent_wrong_wilson");
  return m;
}

FamilyTest read_family(const Rec& r, std::string_view key) {
  const Rec o = r.object(key);
  FamilyTest f;
  f.n = o.unsigned_integer("n");
  if (f.n == 0) o.fail_field("n", "must be at least 1 (a family is tested on its eligible bases)");
  f.canonical_correct = read_part(o, "canonical_correct", f.n, "n");
  f.transformed_correct = read_part(o, "transformed_correct", f.n, "n");
  f.c = read_part(o, "c", f.canonical_correct, "canonical_correct");
  f.t = read_part(o, "t", f.transformed_correct, "transformed_correct");
  f.ci = read_interval(o, "ci");
  f.p = o.number("p");
  f.p_holm = o.number("p_holm");
  return f;
}

MagnitudeDrops read_magnitude(const Rec& r) {
  const Rec o = r.object("magnitude_drops");
  MagnitudeDrops m;
  m.value_errors = o.unsigned_integer("value_errors");
  m.by_k = read_by_k(o, "by_k");
  m.by_view = read_keyed<ViewDrops>(o, "by_view", [](const Rec& p, const std::string& k) {
    const Rec e = p.object(k);
    return ViewDrops{read_by_k(e, "by_k"), read_keyed<std::uint64_t>(e, "by_template", read_count)};
  });
  m.by_template = read_keyed<ByK>(
      o, "by_template", [](const Rec& p, const std::string& k) { return read_by_k(p.object(k), "by_k"); });
  return m;
}

Recovery read_recovery(const Rec& p, std::string_view key) {
  const Rec e = p.object(key);
  Recovery r;
  r.n = e.unsigned_integer("n");
  r.strict_correct = read_part(e, "strict_correct", r.n, "n");
  r.audit_correct = read_part(e, "audit_correct", r.n, "n");
  r.recovered = e.unsigned_integer("recovered");
  r.multiple_final = e.unsigned_integer("multiple_final");
  r.length_finishes = e.unsigned_integer("length_finishes");
  const Rec rules = e.object("rules");
  for (const auto& item : rules.json().items()) r.rules[item.key()] = rules.unsigned_integer(item.key());
  return r;
}

TokenSummary read_tokens(const Rec& p, std::string_view key) {
  const Rec e = p.object(key);
  TokenSummary t;
  t.count = e.unsigned_integer("count");
  t.records = e.unsigned_integer("records");
  t.length_finishes = e.unsigned_integer("length_finishes");
  if (!e.at("median").is_null())
    t.quartiles = stats::Quartiles{e.number("q1"), e.number("median"), e.number("q3")};
  return t;
}

H2Independence read_h2(const Rec& r) {
  const Rec o = r.object("h2_independence");
  H2Independence h;
  h.n = o.unsigned_integer("n");
  if (!o.at("observed_gap").is_null()) h.observed_gap = read_exact(o, "observed_gap");
  auto baseline = [&](std::string_view key) -> std::optional<H2Baseline> {
    if (!o.contains(key)) return std::nullopt;
    const Rec b = o.object(key);
    return H2Baseline{b.string("assumption"), read_exact(b, "expected_orbit"), read_exact(b, "expected_gap"),
                      read_exact(b, "excess_gap"), read_interval(b, "ci")};
  };
  h.independent_views = baseline("independent_views");
  h.canonical_rate = baseline("canonical_rate");
  return h;
}

LayerMetrics read_layer(const Rec& r) {
  LayerMetrics lm;
  lm.views = read_keyed<ViewMetrics>(r, "views", read_view);
  lm.orbit = read_orbit(r, "orbit");
  lm.orbit_gap_ci = read_interval(r.object("orbit_gap"), "ci");
  lm.families = read_keyed<FamilyTest>(r, "families", read_family);
  lm.templates = read_keyed<TemplateStratum>(r, "templates", [](const Rec& p, const std::string& k) {
    const Rec t = p.object(k);
    return TemplateStratum{read_keyed<ViewMetrics>(t, "views", read_view), read_orbit(t, "orbit")};
  });
  lm.magnitude_drops = read_magnitude(r);
  lm.failures = read_keyed<OutcomeCounts>(r, "failures", [](const Rec& p, const std::string& k) {
    const Rec f = p.object(k);
    OutcomeCounts c{};
    for (std::size_t i = 0; i < kOutcomeCount; ++i) c[i] = f.unsigned_integer(kOutcomeNames[i]);
    return c;
  });
  if (r.contains("recovery")) lm.recovery = read_keyed<Recovery>(r, "recovery", read_recovery);
  if (r.contains("tokens")) lm.tokens = read_keyed<TokenSummary>(r, "tokens", read_tokens);
  lm.length_excluded =
      read_keyed<LengthExcluded>(r, "length_excluded", [](const Rec& p, const std::string& k) {
        const Rec e = p.object(k);
        const std::uint64_t n = e.unsigned_integer("n");
        return LengthExcluded{n, read_part(e, "correct", n, "n"),
                              e.unsigned_integer("excluded_length_finishes"),
                              e.unsigned_integer("correct_among_excluded")};
      });
  lm.views_by_template =
      read_keyed<Keyed<TemplateViewCell>>(r, "views_by_template", [](const Rec& p, const std::string& v) {
        return read_keyed<TemplateViewCell>(p, v, [](const Rec& q, const std::string& t) {
          const Rec e = q.object(t);
          const std::uint64_t n = e.unsigned_integer("n");
          return TemplateViewCell{n, read_part(e, "correct", n, "n"), e.unsigned_integer("value_errors"),
                                  e.unsigned_integer("power_of_ten"), read_by_k(e, "by_k")};
        });
      });
  lm.h2_independence = read_h2(r);
  return lm;
}

Provenance read_provenance(const Rec& p) {
  Provenance o;
  o.run_manifest = p.opt_string("run_manifest");
  o.model_served = p.at("model_served");
  o.model_requested = p.at("model_requested");
  o.backend = p.at("backend");
  o.api = p.at("api");
  o.endpoint_hosts = p.strings("endpoint_hosts");
  o.server_build = p.at("server_build");
  o.system_fingerprints = p.strings("system_fingerprints");
  o.sampling = p.at("sampling");
  o.max_tokens = p.at("max_tokens");
  o.extra_body = p.at("extra_body");
  o.system_prompt = p.at("system_prompt");
  o.inject = p.at("inject");
  o.model_file = p.at("model_file");
  o.benchmark = p.at("benchmark");
  o.numcheck_version = p.at("numcheck_version");
  o.started_at = p.at("started_at");
  o.ended_at = p.at("ended_at");
  return o;
}

RepeatCheck read_repeat(const Rec& r) {
  RepeatCheck o;
  o.file = r.string("file");
  o.sha256 = r.string("sha256");
  o.model = r.at("model");
  o.seed = r.at("seed");
  o.n_requested = r.at("n_requested");
  o.asked = r.unsigned_integer("asked");
  o.answered = r.unsigned_integer("answered");
  o.byte_identical = r.unsigned_integer("byte_identical");
  o.answer_identical = r.unsigned_integer("answer_identical");
  o.request_identical = r.unsigned_integer("request_identical");
  o.warning = r.string("warning");
  return o;
}

SystemMetrics read_system(const Rec& r, const std::string& name) {
  SystemMetrics s;
  s.name = name;
  s.simulated = r.boolean("simulated");
  s.scores_file = r.string("scores_file");
  s.manifest = r.opt_string("manifest");
  s.records = r.unsigned_integer("records");
  s.scored_prompts = r.unsigned_integer("scored_prompts");
  s.missing = r.unsigned_integer("missing");
  s.ignored_records = r.unsigned_integer("ignored_records");
  for (std::size_t l = 0; l < 2; ++l) s.layers[l] = read_layer(r.object(kLayerNames[l]));
  if (r.contains("repeat")) s.repeat = read_repeat(r.object("repeat"));
  if (r.contains("provenance")) s.provenance = read_provenance(r.object("provenance"));
  return s;
}

Difference read_difference(const Rec& r, std::string_view key) {
  const Rec e = r.object(key);
  return {e.opt_number("difference"), read_interval(e, "ci")};
}

Comparison read_comparison(const Rec& r) {
  Comparison c;
  c.a = r.string("a");
  c.b = r.string("b");
  for (std::size_t l = 0; l < 2; ++l) {
    const Rec lj = r.object(kLayerNames[l]);
    ComparisonLayer& cl = c.layers[l];
    for (auto [key, slot] :
         {std::pair{"canonical_correct", &cl.canonical_correct},
          std::pair{"orbit_correct", &cl.orbit_correct}, std::pair{"orbit_gap", &cl.orbit_gap}}) {
      if (lj.contains(key)) *slot = read_difference(lj, key);
    }
    cl.families = read_keyed<FamilyDifference>(lj, "families", [](const Rec& p, const std::string& f) {
      const Rec e = p.object(f);
      return FamilyDifference{read_difference(e, "transformed_correct"), read_difference(e, "gap")};
    });
  }
  return c;
}

BenchmarkInfo read_benchmark(const Rec& r) {
  BenchmarkInfo b;
  b.dir = r.string("dir");
  b.bases = r.unsigned_integer("bases");
  b.prompts = r.unsigned_integer("prompts");
  b.views = read_keyed<std::uint64_t>(r, "views", read_count);
  b.templates = r.strings("templates");
  b.file_sha256 = read_keyed<std::string>(r, "file_sha256",
                                          [](const Rec& p, const std::string& k) { return p.string(k); });
  if (r.contains("selection")) b.selection = r.at("selection");
  for (const auto& item : r.json().items()) {
    static constexpr std::array<std::string_view, 7> kOwn = {"dir",       "bases",       "prompts",  "views",
                                                             "templates", "file_sha256", "selection"};
    if (std::find(kOwn.begin(), kOwn.end(), item.key()) == kOwn.end()) b.generator[item.key()] = item.value();
  }
  return b;
}

Allocation read_allocation(const Rec& r) {
  Allocation a;
  for (const Rec& row : r.objects("templates")) {
    AllocationRow t;
    t.template_id = row.string("template");
    t.name = row.opt_string("name");
    t.program = row.opt_string("program");
    t.canonical_unit = row.string("canonical_unit");
    t.bases = row.unsigned_integer("bases");
    t.views = read_keyed<std::uint64_t>(row, "views", read_count);
    a.templates.push_back(std::move(t));
  }
  const Rec tot = r.object("total");
  a.total_bases = tot.unsigned_integer("bases");
  a.total_views = read_keyed<std::uint64_t>(tot, "views", read_count);
  return a;
}

}  // namespace

MetricsModel metrics_from_json(const OJ& j, const std::string& where) {
  const Rec r = Rec::of(j, where);
  MetricsModel m;
  m.numcheck_version = r.string("numcheck_version");
  m.benchmark = read_benchmark(r.object("benchmark"));
  {
    const Rec st = r.object("settings");
    m.settings.bootstrap_draws = st.unsigned_integer("bootstrap_draws");
    m.settings.seed = st.unsigned_integer("seed");
    m.settings.level = st.number("level");
  }
  const Rec systems = r.object("systems");
  for (const auto& name : r.strings("system_order"))
    m.systems.push_back(read_system(systems.object(name), name));
  if (systems.json().size() != m.systems.size()) {
    r.fail_field("system_order", "must name every entry of 'systems' once");
  }
  for (const Rec& c : r.objects("comparisons")) m.comparisons.push_back(read_comparison(c));
  m.allocation = read_allocation(r.object("allocation"));
  if (r.contains("example_orbit")) {
    const Rec e = r.object("example_orbit");
    m.example_orbit = ExampleOrbit{e.string("base_id"), e.string("template"), e.string("answer"),
                                   e.string("canonical_unit"), e.strings("prompts")};
  }
  if (r.contains("extra_sections")) m.extra_sections = r.array("extra_sections");
  return m;
}

}  // namespace numcheck::report
