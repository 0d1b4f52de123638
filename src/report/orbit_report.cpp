#include "report/orbit_report.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <future>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/ordered_parallel.hpp"
#include "core/utf8.hpp"
#include "io/files.hpp"
#include "report/analyses.hpp"
#include "report/selection_scope.hpp"

namespace numcheck::report {

namespace {

using OJ = io::OrderedJson;
namespace html = doc::html;
using html::Cell;
using html::Table;

// A path as the report records it: relative to the report's folder, so the same inputs in another
// place give the same bytes.
std::string relative_to(const std::filesystem::path& p, const std::filesystem::path& out_dir) {
  std::error_code ec;
  const auto a = std::filesystem::weakly_canonical(std::filesystem::absolute(p, ec), ec);
  const auto b = std::filesystem::weakly_canonical(std::filesystem::absolute(out_dir, ec), ec);
  const auto r = a.lexically_relative(b);
  return r.empty() ? p.filename().generic_string() : r.generic_string();
}

std::string rate(double x) { return html::fixed(x, 3); }
std::string interval(const std::optional<Interval>& i) {
  if (!i) return "n/a";
  return html::interval_text(i->lo, i->hi, 3);
}
std::string pts(double x) { return html::signed_points(x, 1); }
std::string pts(const std::optional<double>& x) { return pts(x ? *x : std::nan("")); }
std::string pvalue(double p) {
  if (!std::isfinite(p)) return "n/a";
  if (p == 0.0) return "<1e-300";
  if (p < 0.001) return fmt::format("{:.1e}", p);
  return fmt::format("{:.3f}", p);
}
std::string rate_with_ci(double r, const std::optional<Interval>& ci) { return rate(r) + " " + interval(ci); }
std::string yes_no(bool b) { return b ? "yes" : "no"; }
std::string count(std::uint64_t n) { return std::to_string(n); }
std::uint64_t outcome_count(const OutcomeCounts& c, Outcome o) { return c[static_cast<std::size_t>(o)]; }

// The model's entry for `key`; an entry the computation always writes, so its absence is a bug.
template <typename T>
const T& entry(const Keyed<T>& list, std::string_view key) {
  const T* p = find_key(list, key);
  if (p == nullptr) fail("metrics: no entry '{}'", key);
  return *p;
}

struct Ctx {
  const MetricsModel& m;
  std::vector<std::string> views;  // canonical and families present

  [[nodiscard]] std::string label(const std::string& name) const {
    for (const auto& s : m.systems) {
      if (s.name == name) return s.label();
    }
    return name;
  }
  [[nodiscard]] const LayerMetrics& layer(const SystemMetrics& s, std::size_t l) const { return s.layers[l]; }
};

std::string layer_title(std::size_t l) {
  return l == 0 ? "strict parser" : "audit layer (audit_v2, descriptive)";
}

// Stacked bars per view for one system: strict-correct, audit-recovered, residual failures by
// audit outcome (value errors split into exact power-of-ten drops and others).
std::string outcome_chart(const Ctx& c, const SystemMetrics& s) {
  html::StackedBarChart ch;
  ch.title = fmt::format(
      "{}: responses by view (strict correct, audit recovered, residual "
      "failures by outcome)",
      s.label());
  ch.id = "fig-outcomes-" + s.name;
  ch.segments = {{"strict correct", "#0072B2"},
                 {"audit recovered", "#56B4E9"},
                 {"truncation_error", "#E69F00"},
                 {"format_error", "#CC79A7"},
                 {"parse_error", "#F0E442"},
                 {"unit_error", "#009E73"},
                 {"value_error: power of ten", "#D55E00"},
                 {"value_error: other", "#7A2E00"},
                 {"missing", "#999999"}};
  const LayerMetrics& strict = s.layers[0];
  const LayerMetrics& audit = s.layers[1];
  for (const auto& v : c.views) {
    const ViewMetrics& sv = entry(strict.views, v);
    const double sc = static_cast<double>(sv.correct);
    const double ac = static_cast<double>(entry(audit.views, v).correct);
    const OutcomeCounts& f = entry(audit.failures, v);
    auto oc = [&](Outcome o) { return static_cast<double>(outcome_count(f, o)); };
    double mag = 0;
    if (const ViewDrops* d = find_key(audit.magnitude_drops.by_view, v))
      mag = static_cast<double>(total(d->by_k));
    const double ve = oc(Outcome::kValueError);
    ch.row_labels.push_back(fmt::format("{} (n={})", v, sv.n));
    ch.values.push_back({sc, std::max(0.0, ac - sc), oc(Outcome::kTruncationError), oc(Outcome::kFormatError),
                         oc(Outcome::kParseError), oc(Outcome::kUnitError), mag, std::max(0.0, ve - mag),
                         oc(Outcome::kMissing)});
  }
  return html::stacked_bar_chart(ch);
}

std::string gap_chart(const Ctx& c, std::size_t l) {
  html::IntervalChart ch;
  ch.title = fmt::format(
      "Gaps ({}): canonical minus transformed (families) or orbit correctness, "
      "percentage points, 95% base-bootstrap intervals; dashed line = 3 points",
      layer_title(l));
  ch.id = fmt::format("fig-gaps-{}", kLayerNames[l]);
  ch.thresholds = {0.03};
  ch.axis_label = "gap (percentage points)";
  for (const auto& s : c.m.systems) {
    const LayerMetrics& lm = s.layers[l];
    html::IntervalRow r;
    r.label = fmt::format("{} · orbit", s.label());
    r.estimate = lm.orbit.gap();
    r.lo = lm.orbit_gap_ci ? lm.orbit_gap_ci->lo : std::nan("");
    r.hi = lm.orbit_gap_ci ? lm.orbit_gap_ci->hi : std::nan("");
    r.highlight = lm.orbit.gap_material();
    ch.rows.push_back(r);
    for (const auto& [fam, ft] : lm.families) {
      html::IntervalRow fr;
      fr.label = fmt::format("{} · {}", s.label(), fam);
      fr.estimate = ft.gap();
      fr.lo = ft.ci ? ft.ci->lo : std::nan("");
      fr.hi = ft.ci ? ft.ci->hi : std::nan("");
      fr.highlight = ft.material();
      ch.rows.push_back(fr);
    }
  }
  return html::interval_chart(ch);
}

std::string view_bar_chart(const Ctx& c, std::size_t l) {
  html::BarChart ch;
  ch.title = fmt::format("Correctness by view ({})", layer_title(l));
  ch.id = fmt::format("fig-views-{}", kLayerNames[l]);
  ch.groups = c.views;
  for (const auto& s : c.m.systems) ch.series.push_back(s.label());
  ch.y_label = "correct (%)";
  ch.y_percent = true;
  ch.y_max = 1.0;
  for (const auto& v : c.views) {
    std::vector<double> row;
    for (const auto& s : c.m.systems) row.push_back(entry(s.layers[l].views, v).rate());
    ch.values.push_back(row);
  }
  return html::bar_chart(ch);
}

std::string k_list(const ByK& by_k) {
  std::string s;
  for (const auto& [k, v] : by_k) {
    if (!s.empty()) s += ", ";
    s += fmt::format("k={}: {}", k, v);
  }
  return s.empty() ? "-" : s;
}

std::string rules_text(const std::map<std::string, std::uint64_t>& rules) {
  std::string s;
  for (const auto& [rule, k] : rules) s += fmt::format("{}{}: {}", s.empty() ? "" : ", ", rule, k);
  return s.empty() ? "-" : s;
}

std::string truncate_utf8(const std::string& s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  return std::string(utf8::prefix(s, max_bytes)) +
         fmt::format("\n[... truncated: {} bytes in all]", s.size());
}

// A JSON value as a table cell: strings as they are, null/absent as "-", anything else compact.
std::string cell_text(const OJ& j) {
  if (j.is_null()) return "-";
  if (j.is_string()) return j.get<std::string>().empty() ? "-" : j.get<std::string>();
  return io::to_line(j);
}

// A run.json field when it is present (null otherwise): run.json is input, not trusted.
OJ field(const OJ& obj, std::initializer_list<const char*> path) {
  const OJ* cur = &obj;
  for (const char* k : path) {
    if (!cur->is_object()) return OJ();
    auto it = cur->find(k);
    if (it == cur->end()) return OJ();
    cur = &*it;
  }
  return *cur;
}

// "host:port" of an endpoint URL: no scheme, user info (credentials), path or query.
std::string endpoint_host(const std::string& url) {
  std::string h = url;
  if (const auto p = h.find("://"); p != std::string::npos) h = h.substr(p + 3);
  h = h.substr(0, h.find_first_of("/?#"));
  if (const auto at = h.rfind('@'); at != std::string::npos) h = h.substr(at + 1);
  return h;
}

// The per-system provenance metrics.json records (docs/report.md "Systems and provenance"), from
// the run.json beside the scored responses and the responses' system_fingerprint values.
Provenance system_provenance(const SystemScores& sys, const std::filesystem::path& out_dir) {
  Provenance p;
  if (sys.run_path) p.run_manifest = relative_to(*sys.run_path, out_dir);
  const OJ& r = sys.run;
  p.model_served = field(r, {"model"});
  p.model_requested = field(r, {"model_requested"});
  p.backend = field(r, {"system"});
  p.api = field(r, {"api"});
  const bool built_in = field(r, {"system"}) == OJ("reference");  // no endpoint: the simulated system
  for (const auto& e : field(r, {"endpoints"})) {
    if (e.is_string() && !built_in) p.endpoint_hosts.push_back(endpoint_host(e.get<std::string>()));
  }
  // llama-server's /props build_info, vLLM's /version (as the runner's probe recorded them).
  for (const auto& ep : field(r, {"server", "endpoints"})) {
    const OJ b = field(ep, {"identity", "build"});
    if (!b.is_null()) {
      p.server_build = b;
      break;
    }
  }
  p.system_fingerprints = sys.fingerprints;
  p.sampling = field(r, {"sampling"});
  p.max_tokens = field(r, {"sampling", "max_tokens"});
  p.extra_body = field(r, {"extra_body"});
  p.system_prompt = field(r, {"system_prompt"});
  p.inject = field(r, {"inject"});
  p.model_file = field(r, {"binding", "model_file"});
  p.benchmark = field(r, {"benchmark"});
  p.numcheck_version = field(r, {"numcheck_version"});
  p.started_at = field(r, {"started_at"});
  p.ended_at = field(r, {"ended_at"});
  return p;
}

// Sampling as a cell: "temperature 0, top_p 1, top_k 1, seed 20260725" (max_tokens has its own
// column); per call kind "tier stochastic: ...; tier deterministic: ...".
std::string sampling_text(const OJ& s) {
  if (!s.is_object()) return cell_text(s);
  auto fields = [](const OJ& o) {
    std::string t;
    for (const auto& [k, v] : o.items()) {
      if (k == "max_tokens" || k == "calls") continue;
      t += (t.empty() ? "" : ", ") + k + " " + cell_text(v);
    }
    return t;
  };
  for (const auto& [k, v] : s.items()) {
    if (k.rfind("by_", 0) == 0 && v.is_object()) {
      std::string t;
      for (const auto& [kind, o] : v.items())
        t += (t.empty() ? "" : "; ") + k.substr(3) + " " + kind + ": " + fields(o);
      return t;
    }
  }
  return fields(s);
}

// ---- build_document, one section per function -----------------------------------------------------

void header_section(doc::Document& d, const MetricsModel& m) {
  const BenchmarkInfo& b = m.benchmark;
  const std::string* bases_sha = find_key(b.file_sha256, "bases.jsonl");
  d.heading(1, "top", "Orbit benchmark report");
  d.paragraph(fmt::format(
      "Benchmark {}: {} bases, {} prompts (generator {}, prompt version {}, seed {}, spec sha256 {}; "
      "bases.jsonl sha256 {}). {} system(s). Intervals: {} "
      "base-clustered bootstrap draws (seed {}) for gaps, Wilson score intervals for rates, "
      "level {}. Generated by numcheck {}.",
      b.dir, b.bases, b.prompts, cell_text(field(b.generator, {"generator_version"})),
      cell_text(field(b.generator, {"prompt_version"})), cell_text(field(b.generator, {"seed"})),
      cell_text(field(b.generator, {"spec_sha256"})), bases_sha != nullptr ? *bases_sha : std::string("?"),
      m.systems.size(), m.settings.bootstrap_draws, m.settings.seed, m.settings.level, m.numcheck_version));
  if (!b.selection.is_null()) d.paragraph(selection_note(b.selection));
  for (const auto& s : m.systems) {
    if (s.simulated) {
      d.warning(
          fmt::format("{} is a SIMULATED system (so labelled by its run manifest, e.g. the built-in "
                      "reference solver with injected faults): its numbers exercise the pipeline "
                      "and measure no model.",
                      s.name));
    }
  }
}

void systems_table(doc::Document& d, const MetricsModel& m) {
  Table t;
  t.caption = "Systems and their score files";
  t.id = "systems";
  t.header = {"System",         "Simulated",       "Score records",
              "Scored prompts", "Missing prompts", "Other records (ignored)",
              "Scores file"};
  for (const auto& s : m.systems) {
    t.rows.push_back({Cell::txt(s.label()), Cell::txt(yes_no(s.simulated)), Cell::num(count(s.records)),
                      Cell::num(count(s.scored_prompts)), Cell::num(count(s.missing), s.missing > 0),
                      Cell::num(count(s.ignored_records)), Cell::txt(s.scores_file)});
    if (s.missing > 0) {
      d.warning(
          fmt::format("{}: {} prompts of the benchmark have no score record; they count "
                      "as failures (outcome 'missing') in every metric.",
                      s.label(), s.missing));
    }
  }
  t.note =
      "Other records are scores for views outside the orbit metrics (the consensus "
      "study's paraphrases).";
  d.table(std::move(t));
}

void provenance_table(doc::Document& d, const MetricsModel& m) {
  Table t;
  t.caption = "Systems: what was run";
  t.id = "provenance";
  t.header = {"System",   "Model (as served)", "Server build", "Endpoint host",
              "Sampling", "Cap (max_tokens)",  "Extra body",   "Model file SHA-256",
              "numcheck", "Run started",       "Run ended"};
  bool any_run = false;
  const Provenance none;
  for (const auto& s : m.systems) {
    const Provenance& p = s.provenance ? *s.provenance : none;
    any_run = any_run || p.run_manifest.has_value();
    std::vector<std::string> parts;
    if (!p.server_build.is_null()) parts.push_back(cell_text(p.server_build));
    for (const auto& fp : p.system_fingerprints) parts.push_back("fingerprint " + cell_text(OJ(fp)));
    std::string build;
    for (const auto& part : parts) build += (build.empty() ? "" : ", ") + part;
    if (build.empty()) build = "-";
    std::string hosts;
    for (const auto& h : p.endpoint_hosts) hosts += (hosts.empty() ? "" : ", ") + cell_text(OJ(h));
    std::string model = cell_text(p.model_served);
    if (p.model_requested.is_string() && cell_text(p.model_requested) != model)
      model += " (requested " + cell_text(p.model_requested) + ")";
    const std::string model_file = p.model_file.is_object()
                                       ? fmt::format("{} ({})", cell_text(field(p.model_file, {"sha256"})),
                                                     cell_text(field(p.model_file, {"name"})))
                                       : "-";
    t.rows.push_back({Cell::txt(s.label()), Cell::txt(model), Cell::txt(build),
                      Cell::txt(hosts.empty() ? (s.simulated ? "(built in)" : "-") : hosts),
                      Cell::txt(sampling_text(p.sampling)), Cell::num(cell_text(p.max_tokens)),
                      Cell::txt(cell_text(p.extra_body)), Cell::txt(model_file),
                      Cell::txt(cell_text(p.numcheck_version)), Cell::txt(cell_text(p.started_at)),
                      Cell::txt(cell_text(p.ended_at))});
  }
  t.note =
      "From each run's run.json (beside the scored responses): the model id the server reported, its build "
      "(llama-server /props build_info, vLLM /version) and the responses' system_fingerprint values, the "
      "sampling and generation cap sent, the extra request body, the endpoint's host (never credentials), "
      "the SHA-256 of the weights file given with --model-file, and the run's first and last session times "
      "(UTC). '-': not recorded.";
  if (!any_run)
    t.note += " No run.json was found for any system (the scores manifest names no responses file).";
  d.table(std::move(t));
}

void hypotheses_section(doc::Document& d, const MetricsModel& m) {
  d.heading(2, "hypotheses", "Operational hypotheses");
  d.paragraph(
      "H1: some strict-parser family gap is at least 3 points and Holm-significant "
      "(adjusted p < 0.05). H2: the strict-parser orbit gap is at least 3 points. The same "
      "criteria on the audit layer are descriptive, not a relabeling of H1/H2.");
  Table t;
  t.caption = "H1 and H2 by system and layer";
  t.id = "hypotheses";
  t.header = {"System", "Layer", "H1", "Material families", "H2", "Orbit gap (pts)"};
  for (const auto& s : m.systems) {
    for (std::size_t l = 0; l < 2; ++l) {
      const LayerMetrics& lm = s.layers[l];
      std::string fams;
      for (const auto& f : lm.h1_families()) fams += (fams.empty() ? "" : ", ") + f;
      const bool h1 = !fams.empty();
      const bool h2 = lm.orbit.gap_material();
      t.rows.push_back({Cell::txt(s.label()), Cell::txt(l == 0 ? "strict" : "audit (descriptive)"),
                        Cell{yes_no(h1), false, h1, {}, {}}, Cell::txt(fams.empty() ? "-" : fams),
                        Cell{yes_no(h2), false, h2, {}, {}}, Cell::num(pts(lm.orbit.gap()))});
    }
  }
  d.table(std::move(t));
}

void views_section(doc::Document& d, const Ctx& c) {
  const MetricsModel& m = c.m;
  d.heading(2, "views", "Per-view correctness");
  d.paragraph(
      "Correct responses over the eligible bases of each view (strict / audit). "
      "Denominators are the bases that have the view, not all bases.");
  {
    Table t;
    t.caption = "Per-view correctness, strict / audit";
    t.id = "views-summary";
    t.header = {"System"};
    for (const auto& v : c.views)
      t.header.push_back(fmt::format("{} (n={})", v, entry(m.benchmark.views, v)));
    for (const auto& s : m.systems) {
      std::vector<Cell> row{Cell::txt(s.label())};
      for (const auto& v : c.views) {
        row.push_back(Cell::num(fmt::format("{} / {}", rate(entry(s.layers[0].views, v).rate()),
                                            rate(entry(s.layers[1].views, v).rate()))));
      }
      t.rows.push_back(std::move(row));
    }
    d.table(std::move(t));
  }
  for (std::size_t l = 0; l < 2; ++l) d.figure(view_bar_chart(c, l));
  {
    Table t;
    t.caption = "Per-view correctness with 95% Wilson intervals";
    t.id = "views-detail";
    t.header = {"System",
                "View",
                "n",
                "Strict correct",
                "Strict rate [Wilson]",
                "Audit correct",
                "Audit rate [Wilson]",
                "Recovered by audit"};
    for (const auto& s : m.systems) {
      for (const auto& v : c.views) {
        const ViewMetrics& sv = entry(s.layers[0].views, v);
        const ViewMetrics& av = entry(s.layers[1].views, v);
        const Recovery* rec = s.layers[1].recovery ? find_key(*s.layers[1].recovery, v) : nullptr;
        t.rows.push_back({Cell::txt(s.label()), Cell::txt(v), Cell::num(count(sv.n)),
                          Cell::num(count(sv.correct)), Cell::num(rate_with_ci(sv.rate(), sv.wilson)),
                          Cell::num(count(av.correct)), Cell::num(rate_with_ci(av.rate(), av.wilson)),
                          Cell::num(count(rec != nullptr ? rec->recovered : 0))});
      }
    }
    d.table(std::move(t));
  }
  d.heading(3, "outcome-figures", "Outcomes by view");
  for (const auto& s : m.systems) d.figure(outcome_chart(c, s));
}

void orbit_section(doc::Document& d, const MetricsModel& m) {
  d.heading(2, "orbit", "Orbit metrics");
  d.paragraph(
      "C = orbit correctness (every eligible view correct), I = invariance (every view "
      "parsed and all canonicalized values equal, compared as exact rationals), CW = "
      "consistent-wrong (invariant but wrong). Rates with 95% Wilson intervals; the gap is "
      "canonical correctness minus orbit correctness with a 95% base-bootstrap interval.");
  for (std::size_t l = 0; l < 2; ++l) {
    Table t;
    t.caption = fmt::format("Orbit metrics, {}", layer_title(l));
    t.id = fmt::format("orbit-{}", kLayerNames[l]);
    t.header = {"System",     "Bases",       "Canonical",         "C [Wilson]",
                "I [Wilson]", "CW [Wilson]", "Gap (pts) [95% CI]"};
    for (const auto& s : m.systems) {
      const OrbitMetrics& o = s.layers[l].orbit;
      t.rows.push_back(
          {Cell::txt(s.label()), Cell::num(count(o.n)), Cell::num(rate(o.canonical_rate())),
           Cell::num(rate_with_ci(o.rate(), o.wilson)),
           Cell::num(rate_with_ci(o.invariant_rate(), o.invariant_wilson)),
           Cell::num(rate_with_ci(o.consistent_wrong_rate(), o.consistent_wrong_wilson)),
           Cell::num(pts(o.gap()) + " " + pts_interval(s.layers[l].orbit_gap_ci), o.gap_material())});
    }
    t.note = "Bold gap: at least 3 points.";
    d.table(std::move(t));
  }
}

void families_section(doc::Document& d, const Ctx& c) {
  d.heading(2, "families", "Paired family tests");
  d.paragraph(
      "For each family, on the bases eligible for it: canonical (C) and transformed (T) "
      "correctness, the gap C - T with a 95% base-bootstrap interval, discordance c "
      "(canonical-only correct) and t (transformed-only correct), the exact two-sided "
      "McNemar p and its Holm adjustment within the system and layer. Bold: gap >= 3 "
      "points and adjusted p < 0.05.");
  for (std::size_t l = 0; l < 2; ++l) {
    d.figure(gap_chart(c, l));
    Table t;
    t.caption = fmt::format("Paired family results, {}", layer_title(l));
    t.id = fmt::format("families-{}", kLayerNames[l]);
    t.header = {"System", "Family", "n", "C", "T", "Gap (pts) [95% CI]", "c", "t", "p", "p (Holm)"};
    for (const auto& s : c.m.systems) {
      for (const auto& [fam, f] : s.layers[l].families) {
        const bool mat = f.material();
        t.rows.push_back({Cell::txt(s.label()), Cell::txt(fam), Cell::num(count(f.n)),
                          Cell::num(rate(f.canonical_rate())), Cell::num(rate(f.transformed_rate())),
                          Cell::num(pts(f.gap()) + " " + pts_interval(f.ci), mat), Cell::num(count(f.c)),
                          Cell::num(count(f.t)), Cell::num(pvalue(f.p)), Cell::num(pvalue(f.p_holm), mat)});
      }
    }
    d.table(std::move(t));
  }
}

void recovery_section(doc::Document& d, const MetricsModel& m) {
  d.heading(2, "recovery", "Audit recovery and scientific notation");
  {
    Table t;
    t.caption = "Scientific-notation responses under strict and audited scoring";
    t.id = "scientific";
    t.header = {"System",
                "n",
                "Strict correct",
                "Audit correct",
                "Recovered",
                "Length finishes",
                "Residual failures",
                "Magnitude drops",
                "Rules (recovered)"};
    for (const auto& s : m.systems) {
      const LayerMetrics& audit = s.layers[1];
      const Recovery* r = audit.recovery ? find_key(*audit.recovery, "scientific") : nullptr;
      if (r == nullptr) continue;
      const ViewDrops* drops = find_key(audit.magnitude_drops.by_view, "scientific");
      t.rows.push_back(
          {Cell::txt(s.label()), Cell::num(count(r->n)),
           Cell::num(fmt::format("{} ({})", r->strict_correct,
                                 rate(entry(s.layers[0].views, "scientific").rate()))),
           Cell::num(fmt::format("{} ({})", r->audit_correct, rate(entry(audit.views, "scientific").rate()))),
           Cell::num(count(r->recovered)), Cell::num(count(r->length_finishes)),
           Cell::num(count(r->residual_failures())),
           Cell::num(count(drops != nullptr ? total(drops->by_k) : 0)), Cell::txt(rules_text(r->rules))});
    }
    if (!t.rows.empty()) d.table(std::move(t));
  }
  Table t;
  t.caption = "Audit recovery by view";
  t.id = "recovery";
  t.header = {"System",
              "View",
              "n",
              "Strict correct",
              "Audit correct",
              "Recovered",
              "Multiple FINAL lines",
              "Rules that fired in recovered responses"};
  for (const auto& s : m.systems) {
    if (!s.layers[1].recovery) continue;
    for (const auto& [v, r] : *s.layers[1].recovery) {
      t.rows.push_back({Cell::txt(s.label()), Cell::txt(v), Cell::num(count(r.n)),
                        Cell::num(count(r.strict_correct)), Cell::num(count(r.audit_correct)),
                        Cell::num(count(r.recovered)), Cell::num(count(r.multiple_final)),
                        Cell::txt(rules_text(r.rules))});
    }
  }
  d.table(std::move(t));
}

void magnitude_section(doc::Document& d, const MetricsModel& m) {
  d.heading(2, "magnitude", "Magnitude drops");
  d.paragraph(
      "Residual parseable wrong values with parsed x 10^k = expected for an integer "
      "0 < |k| <= 15 (audit layer: the audit_v2 definition; strict layer: the same "
      "relation on strict value errors).");
  for (std::size_t l = 0; l < 2; ++l) {
    Table t;
    t.caption = fmt::format("Magnitude drops by view, k and template, {}", layer_title(l));
    t.id = fmt::format("magnitude-{}", kLayerNames[l]);
    t.header = {"System", "View", "Drops", "By k", "By template"};
    for (const auto& s : m.systems) {
      const MagnitudeDrops& md = s.layers[l].magnitude_drops;
      for (const auto& [v, e] : md.by_view) {
        std::string tpl;
        for (const auto& [tp, k] : e.by_template)
          tpl += fmt::format("{}{}: {}", tpl.empty() ? "" : ", ", tp, k);
        t.rows.push_back({Cell::txt(s.label()), Cell::txt(v), Cell::num(count(total(e.by_k))),
                          Cell::txt(k_list(e.by_k)), Cell::txt(tpl)});
      }
      t.rows.push_back({Cell::txt(s.label()), Cell::txt("all views"),
                        Cell::num(fmt::format("{} of {} value errors", total(md.by_k), md.value_errors)),
                        Cell::txt(k_list(md.by_k)), Cell::txt("")});
    }
    d.table(std::move(t));
  }
}

void templates_section(doc::Document& d, const Ctx& c) {
  const MetricsModel& m = c.m;
  d.heading(2, "templates", "Template strata");
  d.paragraph(
      "Exploratory strata (no multiplicity adjustment, no gap intervals): per-view "
      "correctness within each template and orbit metrics of the template's bases.");
  for (std::size_t l = 0; l < 2; ++l) {
    Table t;
    t.caption = fmt::format("Template strata, {}", layer_title(l));
    t.id = fmt::format("templates-{}", kLayerNames[l]);
    t.header = {"System", "Template", "Bases"};
    for (const auto& v : c.views) t.header.push_back(v);
    for (const auto& h : {"Orbit C", "I", "CW", "Gap (pts)"}) t.header.emplace_back(h);
    for (const auto& s : m.systems) {
      for (const auto& tp : m.benchmark.templates) {
        const TemplateStratum& ts = entry(s.layers[l].templates, tp);
        std::vector<Cell> row{Cell::txt(s.label()), Cell::txt(m.template_label(tp)),
                              Cell::num(count(ts.orbit.n))};
        for (const auto& v : c.views) {
          const ViewMetrics* vm = find_key(ts.views, v);
          row.push_back(Cell::num(vm != nullptr ? fmt::format("{} ({})", rate(vm->rate()), vm->n) : "-"));
        }
        row.push_back(Cell::num(rate(ts.orbit.rate())));
        row.push_back(Cell::num(rate(ts.orbit.invariant_rate())));
        row.push_back(Cell::num(rate(ts.orbit.consistent_wrong_rate())));
        row.push_back(Cell::num(pts(ts.orbit.gap())));
        t.rows.push_back(std::move(row));
      }
    }
    t.note = "View cells: rate (eligible bases of that view in the template).";
    d.table(std::move(t));
  }
}

void failures_section(doc::Document& d, const Ctx& c) {
  d.heading(2, "failures", "Outcomes per view");
  for (std::size_t l = 0; l < 2; ++l) {
    Table t;
    t.caption = fmt::format("Outcome counts per view, {}", layer_title(l));
    t.id = fmt::format("failures-{}", kLayerNames[l]);
    t.header = {"System", "View"};
    for (auto o : kOutcomeNames) t.header.emplace_back(o);
    for (const auto& s : c.m.systems) {
      for (const auto& v : c.views) {
        const OutcomeCounts& f = entry(s.layers[l].failures, v);
        std::vector<Cell> row{Cell::txt(s.label()), Cell::txt(v)};
        for (std::size_t o = 0; o < kOutcomeCount; ++o) row.push_back(Cell::num(count(f[o])));
        t.rows.push_back(std::move(row));
      }
    }
    d.table(std::move(t));
  }
}

void tokens_section(doc::Document& d, const MetricsModel& m) {
  d.heading(2, "tokens", "Completion length and truncation");
  Table t;
  t.caption = "Completion tokens: median [Q1, Q3] (inclusive quartiles) and length finishes";
  t.id = "tokens";
  t.header = {"System", "View", "Responses with counts", "Median [Q1, Q3]", "Length finishes"};
  for (const auto& s : m.systems) {
    if (!s.layers[0].tokens) continue;
    for (const auto& [v, tv] : *s.layers[0].tokens) {
      const std::string q = tv.quartiles ? fmt::format("{:g} [{:g}, {:g}]", tv.quartiles->median,
                                                       tv.quartiles->q1, tv.quartiles->q3)
                                         : "n/a";
      t.rows.push_back({Cell::txt(s.label()), Cell::txt(v),
                        Cell::num(fmt::format("{} of {}", tv.count, tv.records)), Cell::num(q),
                        Cell::num(count(tv.length_finishes))});
    }
  }
  t.note = "Comparable across views within a system; tokenizers differ across systems.";
  if (t.rows.empty()) {
    d.paragraph("No score record carries a completion token count.");
  } else {
    d.table(std::move(t));
  }
}

void comparisons_section(doc::Document& d, const Ctx& c) {
  const MetricsModel& m = c.m;
  d.heading(2, "comparisons", "Cross-system comparisons");
  d.paragraph(
      "Differences A - B in percentage points with 95% paired base-bootstrap intervals "
      "(both systems are evaluated on the same resampled bases in every draw). "
      "Correctness columns compare rates; gap columns compare representation "
      "sensitivity.");
  for (std::size_t l = 0; l < 2; ++l) {
    Table t;
    t.caption = fmt::format("Paired differences between systems, {}", layer_title(l));
    t.id = fmt::format("comparisons-{}", kLayerNames[l]);
    t.header = {"A - B", "Canonical C", "Orbit C", "Orbit gap"};
    std::vector<std::string> fams;
    if (!m.comparisons.empty()) {
      for (const auto& [f, _] : m.comparisons[0].layers[l].families) {
        fams.push_back(f);
        t.header.push_back(f + " gap");
      }
    }
    auto cell = [](const std::optional<Difference>& e) {
      if (!e) return Cell::num("n/a n/a", false);
      return Cell::num(pts(e->difference) + " " + pts_interval(e->ci), e->excludes_zero());
    };
    for (const auto& cmp : m.comparisons) {
      const ComparisonLayer& cl = cmp.layers[l];
      std::vector<Cell> row{Cell::txt(fmt::format("{} - {}", c.label(cmp.a), c.label(cmp.b))),
                            cell(cl.canonical_correct), cell(cl.orbit_correct), cell(cl.orbit_gap)};
      for (const auto& f : fams) row.push_back(cell(entry(cl.families, f).gap));
      t.rows.push_back(std::move(row));
    }
    t.note = "Bold: the interval excludes 0.";
    d.table(std::move(t));
  }
}

void examples_section(doc::Document& d, const Ctx& c, const orbit::Benchmark& bench,
                      const std::vector<SystemScores>& systems, std::size_t examples_per_view) {
  d.heading(2, "examples", "Residual failures: example responses");
  std::size_t shown_total = 0;
  for (const auto& sys : systems) {
    if (sys.responses_attached == 0) continue;
    d.heading(3, "", fmt::format("{}", c.label(sys.name)));
    for (const auto& v : c.views) {
      std::size_t shown = 0;
      for (std::size_t i = 0; i < bench.views.size() && shown < examples_per_view; ++i) {
        const auto& view = bench.views[i];
        const auto& sp = sys.by_view[i];
        if (view.view != v || !sp.present || !sp.response) continue;
        if (sp.layer[1].outcome == Outcome::kCorrect) continue;
        ++shown;
        ++shown_total;
        d.paragraph(fmt::format(
            "{}: strict {}, audit {}{}; expected {} {}; finish reason {}.", view.prompt_id,
            outcome_name(sp.layer[0].outcome), outcome_name(sp.layer[1].outcome),
            sp.layer[1].value ? fmt::format(" (value {})", sp.layer[1].value->str()) : "",
            view.expected.str(), view.answer_unit, sp.finish_reason.empty() ? "unknown" : sp.finish_reason));
        d.verbatim(truncate_utf8(*sp.response, 1500));
      }
    }
  }
  if (shown_total == 0) {
    d.paragraph(
        "No example responses: either every orbit response is audit-correct or the "
        "response texts were not available (pass --responses, or record 'responses' in "
        "the scores manifest).");
  }
}

void methods_section(doc::Document& d) {
  d.heading(2, "methods", "Definitions and methods");
  d.paragraph(
      "Per-view correctness: correct responses over the eligible bases of the view. "
      "Orbit: a base's canonical view and its eligible family views. Orbit correct: "
      "every view correct. Invariant: every view parsed (correct or value_error) and all "
      "canonicalized values equal as exact rationals; a base with only its canonical view "
      "is invariant when it parses. Consistent-wrong: invariant and wrong. A prompt "
      "without a score record is a failure that never parses.");
  d.paragraph(
      "Family tests: exact two-sided McNemar test on the discordant pairs (binomial, "
      "p capped at 1), Holm step-down adjustment within each system and layer over the "
      "family tests. Material: gap >= 3 points (decided on exact counts) and Holm p < "
      "0.05. Gap intervals: percentile intervals of a base-clustered bootstrap (all bases "
      "for the orbit gap, the family's paired bases for a family gap); every system uses "
      "the same draws, which makes cross-system differences paired. Rate intervals: "
      "two-sided Wilson score intervals.");
}

}  // namespace

doc::Document build_document(const MetricsModel& m, const orbit::Benchmark& bench,
                             const std::vector<SystemScores>& systems, std::size_t examples_per_view) {
  Ctx c{m, {}};
  for (const auto& [v, _] : m.benchmark.views) c.views.push_back(v);
  doc::Document d;
  header_section(d, m);
  d.heading(2, "systems", "Systems");
  systems_table(d, m);
  provenance_table(d, m);
  hypotheses_section(d, m);
  views_section(d, c);
  orbit_section(d, m);
  families_section(d, c);
  recovery_section(d, m);
  magnitude_section(d, m);
  templates_section(d, c);
  failures_section(d, c);
  tokens_section(d, m);
  if (m.systems.size() > 1) comparisons_section(d, c);
  examples_section(d, c, bench, systems, examples_per_view);
  methods_section(d);
  add_paper_sections(d, m, bench);
  return d;
}

namespace {

// The systems' scores files. They are independent: loaded on up to one thread per core (each
// file on one thread, in order), then checked in order, so the first failing file's error is the
// one given, as a one-by-one load would; two systems may not share a name.
std::vector<SystemScores> load_systems(const ReportInputs& in, const orbit::Benchmark& bench,
                                       const FileHashes& hashes) {
  const std::size_t n_sys = in.scores.size();
  std::vector<std::optional<SystemScores>> loaded(n_sys);
  std::vector<std::exception_ptr> errors(n_sys);
  const auto load_one = [&](std::size_t i) {
    try {
      std::optional<std::string> name;
      if (i < in.names.size()) name = in.names[i];
      std::optional<std::filesystem::path> resp;
      if (i < in.responses.size()) resp = in.responses[i];
      loaded[i] = load_scores(in.scores[i], bench, name, resp, in.examples_per_view, &hashes);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  {
    const std::size_t threads = core::thread_count(in.options.threads);
    core::parallel_for(n_sys, threads, load_one);
  }
  std::vector<SystemScores> systems;
  std::set<std::string> names;
  for (std::size_t i = 0; i < n_sys; ++i) {
    if (errors[i]) std::rethrow_exception(errors[i]);
    systems.push_back(std::move(*loaded[i]));
    if (!names.insert(systems.back().name).second) {
      fail(ErrorCode::kUsage, "two systems are named '{}' ({}); give each a --name", systems.back().name,
           in.scores[i].string());
    }
  }
  return systems;
}

}  // namespace

ReportOutput run_orbit_report(const ReportInputs& in) {
  if (in.scores.empty()) fail(ErrorCode::kUsage, "at least one --scores file is needed");
  if (in.names.size() > in.scores.size()) {
    fail(ErrorCode::kUsage, "{} --name values for {} --scores files", in.names.size(), in.scores.size());
  }
  if (in.responses.size() > in.scores.size()) {
    fail(ErrorCode::kUsage, "{} --responses files for {} --scores files", in.responses.size(),
         in.scores.size());
  }
  // The responses files the scores' sidecars name are hashed (to check they are the files that
  // were scored) on a thread of their own while the benchmark loads; systems given --responses
  // use that file instead.
  std::future<FileHashes> hashing = std::async(std::launch::async, [&in] {
    return hash_named_responses(
        {in.scores.begin() + static_cast<std::ptrdiff_t>(in.responses.size()), in.scores.end()});
  });
  const orbit::Benchmark bench = scope_to_scores(orbit::load_benchmark(in.bench_dir), in.scores);
  const FileHashes hashes = hashing.get();
  const std::vector<SystemScores> systems = load_systems(in, bench, hashes);
  ReportOutput out;
  out.model = compute_metrics(bench, systems, in.options);
  // Provenance, and every path relative to the report's folder (the same inputs elsewhere give the
  // same bytes).
  MetricsModel& model = out.model;
  model.benchmark.dir = relative_to(in.bench_dir, in.out_dir);
  model.benchmark.generator = orbit::generator_provenance(bench);
  for (std::size_t i = 0; i < systems.size(); ++i) {
    const SystemScores& sys = systems[i];
    SystemMetrics& sm = model.systems.at(i);
    sm.scores_file = relative_to(sys.scores_path, in.out_dir);
    sm.manifest.reset();
    if (sys.manifest_path) sm.manifest = relative_to(*sys.manifest_path, in.out_dir);
    sm.provenance = system_provenance(sys, in.out_dir);
  }
  doc::Document doc = build_document(model, bench, systems, in.examples_per_view);
  {
    doc::Document h;
    if (in.hypothesis_notes.empty()) {
      h.paragraph(
          "H3 (representation consensus improves risk-coverage over both equal-call controls) is not "
          "assessed in this report: it needs the consensus study (orbit report --consensus).");
    }
    for (const auto& note : in.hypothesis_notes) h.paragraph(note);
    doc.insert_before("views", h);
  }
  for (const auto& extra : in.extra_sections) doc.insert_before("methods", extra);
  if (!in.extra_sources.empty()) {
    OJ sources = in.extra_sources;
    for (auto& src : sources) {
      if (src.is_object() && src.contains("file") && src["file"].is_string()) {
        src["file"] = relative_to(src["file"].get<std::string>(), in.out_dir);
      }
    }
    model.extra_sections = std::move(sources);
  }

  std::filesystem::create_directories(in.out_dir);
  std::string sim_names;
  for (const auto& s : systems) {
    if (s.simulated) sim_names += (sim_names.empty() ? "" : ", ") + s.name;
  }
  const std::string title = sim_names.empty()
                                ? std::string("Orbit benchmark report")
                                : fmt::format("Orbit benchmark report (simulated: {})", sim_names);
  const std::string tex_comment = fmt::format(
      "Orbit benchmark report tables and figures, generated by numcheck {}.\nNeeds "
      "\\usepackage{{booktabs}}, \\usepackage{{graphicx}} and \\usepackage{{tikz}}; \\input this file.{}",
      model.numcheck_version, sim_names.empty() ? "" : fmt::format("\nSIMULATED systems: {}", sim_names));
  // The four renderings are independent: one thread each at a time.
  std::vector<std::pair<std::string, std::string>> files = {
      {"metrics.json", {}}, {"report.md", {}}, {"report.html", {}}, {"report.tex", {}}};
  const std::size_t threads = core::thread_count(in.options.threads);
  core::parallel_for(files.size(), threads, [&](std::size_t i) {
    switch (i) {
      case 0:
        files[i].second = io::to_pretty(to_json(model));
        break;
      case 1:
        files[i].second = doc.to_markdown();
        break;
      case 2:
        files[i].second = doc.to_html(title);
        break;
      default:
        files[i].second = doc.to_latex(tex_comment);
        break;
    }
  });
  // Figures first (report.md links them); drop figures of an earlier report in the same folder.
  const std::filesystem::path fig_dir = in.out_dir / std::string(doc::kFigureDir);
  std::filesystem::create_directories(fig_dir);
  for (const auto& e : std::filesystem::directory_iterator(fig_dir)) {
    if (e.is_regular_file() && e.path().extension() == ".svg") std::filesystem::remove(e.path());
  }
  for (const auto& [file, svg] : doc.figure_files()) {
    io::write_file_atomic(fig_dir / file, svg);
    out.files.push_back(fig_dir / file);
  }
  for (const auto& [file, text] : files) {
    io::write_file_atomic(in.out_dir / file, text);
    out.files.push_back(in.out_dir / file);
  }
  return out;
}

}  // namespace numcheck::report
