#include "consensus/study.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/version.hpp"
#include "doc/document.hpp"
#include "doc/html.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"
#include "num/write.hpp"

namespace numcheck::consensus {

namespace html = doc::html;

std::string arm_label(std::string_view arm) {
  if (arm == "self_consistency") return "self-consistency";
  return std::string(arm);
}

// ---- running the study -------------------------------------------------------------------------

Analysis run_study(const StudyInputs& in) {
  if (in.run_dirs.empty()) fail(ErrorCode::kUsage, "consensus analyze: give at least one --run directory");
  if (!in.names.empty() && in.names.size() != in.run_dirs.size()) {
    fail(ErrorCode::kUsage, "consensus analyze: {} --name values for {} --run directories", in.names.size(),
         in.run_dirs.size());
  }
  if (!(in.options.level > 0 && in.options.level < 1)) {
    fail(ErrorCode::kUsage, "consensus analyze: --level must be in (0, 1)");
  }
  Analysis a;
  const std::string plan_text = io::read_file(in.plan_path, std::size_t{1} << 30);
  a.plan_sha256 = io::sha256_hex(plan_text);
  a.plan = plan_from_json(io::parse_json(plan_text, in.plan_path.string()), in.plan_path.string());
  a.layer = in.layer;
  a.options = in.options;
  std::set<std::string> names;
  for (std::size_t i = 0; i < in.run_dirs.size(); ++i) {
    LoadedRun run = load_run(a.plan, a.plan_sha256, in.run_dirs[i], in.layer);
    SystemRun sr;
    if (!in.names.empty()) {
      sr.name = in.names[i];
    } else if (!run.model.empty()) {
      sr.name = run.model;
    } else {
      sr.name = in.run_dirs[i].filename().string();
      if (sr.name.empty()) sr.name = in.run_dirs[i].parent_path().filename().string();
    }
    if (sr.name.empty()) sr.name = fmt::format("system{}", i + 1);
    if (!names.insert(sr.name).second) {
      if (!in.names.empty())
        fail(ErrorCode::kUsage, "consensus analyze: system name '{}' is given twice", sr.name);
      // Two runs of the same model without --name: keep both, numbered.
      std::string base = sr.name;
      for (int k = 2; !names.insert(sr.name).second; ++k) sr.name = fmt::format("{} #{}", base, k);
    }
    sr.run_dir = in.run_dirs[i].string();
    sr.model = run.model;
    sr.simulated = run.simulated;
    sr.top_k_sent = run.top_k_sent;
    sr.records = run.records;
    sr.missing_calls = run.missing;
    if (run.missing > 0 && !in.allow_partial) {
      fail(ErrorCode::kIncomplete,
           "consensus analyze: {} of {} planned calls have no response in {} (finish the run with "
           "`orbit consensus run --resume`, or pass --allow-partial to count them as unparsed)",
           run.missing, a.plan.requests.size(), in.run_dirs[i].string());
    }
    a.systems.push_back(analyze_system(a.plan, sr.name, run.calls));
    a.runs.push_back(std::move(sr));
  }
  for (auto& sys : a.systems) {
    auto c = bootstrap_system(sys, a.options);
    a.comparisons.insert(a.comparisons.end(), c.begin(), c.end());
  }
  return a;
}

// ---- JSON --------------------------------------------------------------------------------------

namespace {

io::OrderedJson opt_double(std::optional<double> v) { return v ? io::OrderedJson(*v) : io::OrderedJson(); }

io::OrderedJson interval_json(const std::optional<stats::Interval>& i) {
  if (!i) return io::OrderedJson();
  return io::OrderedJson::array({i->lo, i->hi});
}

std::string threshold_name(std::int64_t t) {
  switch (t) {
    case 3:
      return "3-of-3";
    case 2:
      return "2-of-3";
    case 1:
      return "any parse (fallback)";
    default:
      return "full coverage (fallback)";
  }
}

io::OrderedJson order_json(const std::array<std::size_t, 3>& o) {
  return io::OrderedJson::array({o[0] + 1, o[1] + 1, o[2] + 1});
}

io::OrderedJson arm_json(const ArmResult& r) {
  io::OrderedJson j;
  j["n_bases"] = r.n_bases;
  j["agreement"] = {
      {"3", r.agreement[3]}, {"2", r.agreement[2]}, {"1", r.agreement[1]}, {"0", r.agreement[0]}};
  j["predictions"] = r.predictions;
  j["abstentions"] = r.abstentions;
  j["prediction_correct"] = r.prediction_correct;
  j["prediction_wrong"] = r.prediction_wrong;
  j["aurc"] = r.orders[0].aurc;
  j["aurc_exact"] = r.orders[0].aurc_exact.str();
  j["aurc_ci"] = interval_json(r.aurc_ci);
  io::OrderedJson ops = io::OrderedJson::array();
  for (const auto& p : r.operating_points) {
    ops.push_back({{"threshold", p.threshold},
                   {"name", threshold_name(p.threshold)},
                   {"accepted", p.accepted},
                   {"coverage", p.coverage()},
                   {"errors", p.errors},
                   {"selective_risk", opt_double(p.risk())}});
  }
  j["operating_points"] = std::move(ops);
  j["unanimous"] = {{"decisions", r.unanimous_correct + r.unanimous_wrong},
                    {"correct", r.unanimous_correct},
                    {"wrong", r.unanimous_wrong}};
  j["non_unanimous"] = r.non_unanimous;
  j["fallback"] = {
      {"order", order_json(r.orders[0].order)},
      {"correct", r.orders[0].fallback_correct},
      {"wrong", r.orders[0].fallback_wrong},
      {"accuracy", r.n_bases == 0 ? io::OrderedJson()
                                  : io::OrderedJson(static_cast<double>(r.orders[0].fallback_correct) /
                                                    static_cast<double>(r.n_bases))}};
  j["useful_flags"] = r.orders[0].useful_flags;
  j["false_alarms"] = r.orders[0].false_alarms;
  io::OrderedJson sens = io::OrderedJson::array();
  for (const auto& o : r.orders) {
    sens.push_back({{"order", order_json(o.order)},
                    {"fallback_correct", o.fallback_correct},
                    {"fallback_wrong", o.fallback_wrong},
                    {"useful_flags", o.useful_flags},
                    {"false_alarms", o.false_alarms},
                    {"aurc", o.aurc},
                    {"aurc_exact", o.aurc_exact.str()}});
  }
  j["sensitivity"] = std::move(sens);
  io::OrderedJson curve = io::OrderedJson::array();
  for (const auto& p : r.curve) curve.push_back(io::OrderedJson::array({p.coverage, p.risk}));
  j["risk_coverage"] = std::move(curve);
  j["calls"] = {{"answered", r.answered}, {"parsed", r.parsed}, {"correct", r.correct}};
  j["missing_calls"] = r.missing_calls;
  return j;
}

}  // namespace

io::OrderedJson analysis_to_json(const Analysis& a) {
  const PlanOptions& o = a.plan.options;
  io::OrderedJson j;
  j["kind"] = "numcheck.consensus_analysis";
  j["version"] = 1;
  j["numcheck_version"] = kVersion;
  io::OrderedJson tiers = io::OrderedJson::object();
  for (const auto& t : o.tiers) {
    const bool det = t == "deterministic";
    tiers[t] = {{"arms", tier_arms(t)},
                {"temperature", det ? 0.0 : o.stochastic.temperature},
                {"top_p", det ? 1.0 : o.stochastic.top_p},
                {"top_k", det ? 1 : o.stochastic.top_k}};
  }
  j["benchmark"] = a.plan.bench_generator;  // generator version, prompt version, seed, spec sha256
  j["plan"] = {{"sha256", a.plan_sha256},
               {"bases", a.plan.bases.size()},
               {"templates", o.templates},
               {"per_template", o.per_template},
               {"seed", o.seed},
               {"max_tokens", o.max_tokens},
               {"requests", a.plan.requests.size()},
               {"tiers", tiers}};
  j["settings"] = {{"layer", std::string(layer_name(a.layer))},
                   {"bootstrap", a.options.bootstrap},
                   {"seed", a.options.seed},
                   {"level", a.options.level}};
  io::OrderedJson runs = io::OrderedJson::object();
  for (const auto& r : a.runs) {
    runs[r.name] = {{"run_dir", r.run_dir},
                    {"model", r.model},
                    {"simulated", r.simulated},
                    {"records", r.records},
                    {"missing_calls", r.missing_calls}};
    if (!r.top_k_sent) runs[r.name]["top_k_sent"] = false;  // absent: the plan's top_k was sent
  }
  j["runs"] = std::move(runs);
  io::OrderedJson systems = io::OrderedJson::object();
  for (const auto& sys : a.systems) {
    io::OrderedJson sj = io::OrderedJson::object();
    for (const auto& t : o.tiers) {
      auto tit = sys.tiers.find(t);
      if (tit == sys.tiers.end()) continue;
      io::OrderedJson tj = io::OrderedJson::object();
      for (const auto& arm : tier_arms(t)) {
        auto ait = tit->second.find(arm);
        if (ait != tit->second.end()) tj[arm] = arm_json(ait->second);
      }
      sj[t] = std::move(tj);
    }
    systems[sys.name] = std::move(sj);
  }
  j["systems"] = std::move(systems);
  io::OrderedJson comps = io::OrderedJson::array();
  for (const auto& c : a.comparisons) {
    comps.push_back({{"system", c.system},
                     {"tier", c.tier},
                     {"arm", c.arm},
                     {"baseline", c.baseline},
                     {"aurc_difference", c.difference},
                     {"aurc_difference_exact", c.difference_exact.str()},
                     {"ci", interval_json(c.ci)}});
  }
  j["comparisons"] = std::move(comps);
  return j;
}

// ---- the tables and charts of the consensus section
// ---------------------------------------------------------

namespace {

using html::Cell;

std::string n(std::uint64_t v) { return std::to_string(v); }
std::string aurc_text(double v) { return html::fixed(v, 6); }
std::string ci_text(const std::optional<stats::Interval>& i) {
  return i ? html::interval_text(i->lo, i->hi, 6) : std::string("-");
}
std::string risk_text(const stats::OperatingPoint& p) {
  const auto r = p.risk();
  return r ? fmt::format("{} ({}/{})", html::fixed(*r, 4), p.errors, p.accepted)
           : std::string("- (0 accepted)");
}
// An exact value for a table cell: short fractions as they are, long ones (AURC differences can
// have 70-digit denominators) rounded exactly to 9 decimals; the JSON keeps the fraction.
std::string exact_text(const num::Rational& q) {
  if (q.is_zero()) return "0 (exactly)";
  std::string s = q.str();
  if (s.size() <= 12) return s;
  return "~" + num::fixed_decimal(q, 9);
}
std::string order_text(const std::array<std::size_t, 3>& o) {
  return fmt::format("{}-{}-{}", o[0] + 1, o[1] + 1, o[2] + 1);
}

std::string system_label(const Analysis& a, const SystemResult& sys) {
  for (const auto& r : a.runs) {
    if (r.name == sys.name && r.simulated) return sys.name + " (simulated)";
  }
  return sys.name;
}

const ArmResult* find_arm(const SystemResult& sys, const std::string& tier, const std::string& arm) {
  auto t = sys.tiers.find(tier);
  if (t == sys.tiers.end()) return nullptr;
  auto it = t->second.find(arm);
  return it == t->second.end() ? nullptr : &it->second;
}

html::Table design_table(const Analysis& a) {
  const PlanOptions& o = a.plan.options;
  html::Table t;
  t.id = "consensus-design";
  t.caption = "Design";
  t.header = {"tier", "arms", "calls per arm", "temperature", "top_p", "top_k", "seeds", "max_tokens"};
  for (const auto& tier : o.tiers) {
    const bool det = tier == "deterministic";
    std::string arms;
    for (const auto& arm : tier_arms(tier)) arms += (arms.empty() ? "" : ", ") + arm_label(arm);
    t.rows.push_back({Cell::txt(tier), Cell::txt(arms), Cell::num(n(kCalls)),
                      Cell::num(html::fixed(det ? 0.0 : o.stochastic.temperature, 2)),
                      Cell::num(html::fixed(det ? 1.0 : o.stochastic.top_p, 2)),
                      Cell::num(std::to_string(det ? 1 : o.stochastic.top_k)),
                      Cell::txt(fmt::format("{}, {}, {}", o.seed, o.seed + 1, o.seed + 2)),
                      Cell::num(std::to_string(o.max_tokens))});
  }
  std::string tmpl;
  for (const auto& x : o.templates) tmpl += (tmpl.empty() ? "" : ", ") + x;
  t.note = fmt::format(
      "{} bases: the first {} by id of {}. Arms: self-consistency = canonical x3; paraphrase = canonical, "
      "paraphrase 1, paraphrase 2; representation = canonical, fraction, unit (percent for FC). Call i of "
      "every "
      "arm uses seed s+i. Grading layer: {}.",
      a.plan.bases.size(), o.per_template, tmpl, layer_name(a.layer));
  std::string no_top_k;
  for (const auto& r : a.runs) {
    if (!r.top_k_sent) no_top_k += (no_top_k.empty() ? "" : ", ") + r.name;
  }
  if (!no_top_k.empty())
    t.note +=
        fmt::format(" Runs made with --no-top-k sent no top_k (the column is the plan's): {}.", no_top_k);
  return t;
}

html::Table arms_table(const Analysis& a, const std::string& tier) {
  html::Table t;
  t.id = "consensus-arms-" + tier;
  t.caption = fmt::format("Arms, {} tier", tier);
  t.header = {"system",
              "arm",
              "bases",
              "3/3",
              "2/3",
              "1",
              "0 parsed",
              "predictions",
              "abstentions",
              "risk at 3-of-3",
              "risk at 2-of-3",
              "AURC",
              "AURC 95% CI",
              "fallback wrong",
              "non-unanimous",
              "useful flags",
              "false alarms"};
  for (const auto& sys : a.systems) {
    for (const auto& arm : tier_arms(tier)) {
      const ArmResult* r = find_arm(sys, tier, arm);
      if (r == nullptr) continue;
      std::vector<Cell> row = {Cell::txt(system_label(a, sys)), Cell::txt(arm_label(arm))};
      for (const std::string& v :
           {n(r->n_bases), n(r->agreement[3]), n(r->agreement[2]), n(r->agreement[1]), n(r->agreement[0]),
            n(r->predictions), n(r->abstentions), risk_text(r->operating_points[0]),
            risk_text(r->operating_points[1]), aurc_text(r->orders[0].aurc), ci_text(r->aurc_ci),
            n(r->orders[0].fallback_wrong), n(r->non_unanimous), n(r->orders[0].useful_flags),
            n(r->orders[0].false_alarms)}) {
        row.push_back(Cell::num(v));
      }
      t.rows.push_back(std::move(row));
    }
  }
  t.note =
      "3/3, 2/3, 1, 0 parsed: bases by agreement level (largest number of equal canonicalized values). A "
      "prediction "
      "needs 2 or more equal values; otherwise the arm abstains. Risk = wrong / accepted at the operating "
      "point. "
      "AURC: bases ranked by agreement, loss = no-abstention fallback wrong, averaged exactly over orderings "
      "within "
      "ties; interval: paired base bootstrap. Useful flag = non-unanimous and fallback wrong; false alarm = "
      "non-unanimous and fallback correct (call priority 1-2-3).";
  return t;
}

html::Table operating_table(const Analysis& a, const std::string& tier) {
  html::Table t;
  t.id = "consensus-operating-" + tier;
  t.caption = fmt::format("Risk-coverage operating points, {} tier", tier);
  t.header = {"system", "arm", "operating point", "accepted", "coverage", "errors", "selective risk"};
  t.note =
      "3-of-3: unanimous bases only; 2-of-3: bases with a prediction (two or more equal values); any parse: "
      "bases "
      "with at least one parsed call, answered with the fallback; full coverage: every base, fallback (no "
      "parse "
      "is wrong).";
  for (const auto& sys : a.systems) {
    for (const auto& arm : tier_arms(tier)) {
      const ArmResult* r = find_arm(sys, tier, arm);
      if (r == nullptr) continue;
      for (const auto& p : r->operating_points) {
        const auto risk = p.risk();
        t.rows.push_back(
            {Cell::txt(system_label(a, sys)), Cell::txt(arm_label(arm)),
             Cell::txt(p.threshold == 0
                           ? std::string("always (fallback)")
                           : fmt::format("agreement >= {} ({})", p.threshold, threshold_name(p.threshold))),
             Cell::num(n(p.accepted)), Cell::num(html::fixed(p.coverage(), 3)), Cell::num(n(p.errors)),
             Cell::num(risk ? html::fixed(*risk, 4) : std::string("-"))});
      }
    }
  }
  return t;
}

html::Table comparison_table(const Analysis& a) {
  html::Table t;
  t.id = "consensus-differences-table";  // the heading has id consensus-differences
  t.caption = "AURC differences between arms (paired base bootstrap)";
  t.header = {"system", "tier", "difference", "AURC difference", "exact", "95% CI", "resolved"};
  for (const auto& c : a.comparisons) {
    std::string resolved = "-";
    if (c.ci)
      resolved = c.ci->lo > 0 ? "arm worse" : (c.ci->hi < 0 ? "arm better" : "no (interval includes 0)");
    std::string label;
    for (const auto& s : a.systems) {
      if (s.name == c.system) label = system_label(a, s);
    }
    t.rows.push_back({Cell::txt(label), Cell::txt(c.tier),
                      Cell::txt(arm_label(c.arm) + " - " + arm_label(c.baseline)),
                      Cell::num(aurc_text(c.difference)), Cell::txt(exact_text(c.difference_exact)),
                      Cell::num(ci_text(c.ci)), Cell::txt(resolved)});
  }
  t.note = fmt::format(
      "{} bootstrap draws over bases (seed {}), percentile interval at level {}. Exact: the difference as a "
      "fraction when it is short, else rounded to 9 decimals (the exact fraction is in consensus.json, "
      "aurc_difference_exact).",
      a.options.bootstrap, a.options.seed, a.options.level);
  return t;
}

html::Table sensitivity_table(const Analysis& a) {
  html::Table t;
  t.id = "consensus-sensitivity-table";
  t.caption = "Fallback-order sensitivity (cyclic call-priority orders)";
  t.header = {"system",       "tier",           "arm", "priority order", "non-unanimous", "useful flags",
              "false alarms", "fallback wrong", "AURC"};
  for (const auto& sys : a.systems) {
    for (const auto& tier : a.plan.options.tiers) {
      for (const auto& arm : tier_arms(tier)) {
        const ArmResult* r = find_arm(sys, tier, arm);
        if (r == nullptr) continue;
        for (const auto& o : r->orders) {
          t.rows.push_back({Cell::txt(system_label(a, sys)), Cell::txt(tier), Cell::txt(arm_label(arm)),
                            Cell::txt(order_text(o.order)), Cell::num(n(r->non_unanimous)),
                            Cell::num(n(o.useful_flags)), Cell::num(n(o.false_alarms)),
                            Cell::num(n(o.fallback_wrong)), Cell::num(aurc_text(o.aurc))});
        }
      }
    }
  }
  t.note =
      "The fallback is the modal value, else the first parsed call in the priority order, else wrong; only "
      "bases "
      "whose parsed values all differ depend on the order.";
  return t;
}

html::Table calls_table(const Analysis& a) {
  html::Table t;
  t.id = "consensus-calls-table";
  t.caption = "Calls by position";
  t.header = {"system", "tier", "arm", "position", "view", "answered", "parsed", "correct"};
  for (const auto& sys : a.systems) {
    for (const auto& tier : a.plan.options.tiers) {
      for (const auto& arm : tier_arms(tier)) {
        const ArmResult* r = find_arm(sys, tier, arm);
        if (r == nullptr) continue;
        for (std::size_t c = 0; c < kCalls; ++c) {
          std::string view = "canonical";
          if (arm == "paraphrase" && c > 0) view = c == 1 ? "paraphrase1" : "paraphrase2";
          if (arm == "representation" && c > 0) view = c == 1 ? "fraction" : "unit / percent";
          t.rows.push_back({Cell::txt(system_label(a, sys)), Cell::txt(tier), Cell::txt(arm_label(arm)),
                            Cell::num(n(c + 1)), Cell::txt(view), Cell::num(n(r->answered[c])),
                            Cell::num(n(r->parsed[c])), Cell::num(n(r->correct[c]))});
        }
      }
    }
  }
  return t;
}

html::LineChart rc_chart(const SystemResult& sys, const std::string& tier, const std::string& title) {
  html::LineChart c;
  c.title = title;
  c.x_label = "coverage";
  c.y_label = "selective risk (tie-averaged)";
  c.x_min = 0;
  c.x_max = 1;
  c.y_min = 0;
  c.x_percent = true;
  double ymax = 0;
  auto t = sys.tiers.find(tier);
  if (t != sys.tiers.end()) {
    std::size_t k = 0;
    for (const char* arm : kArms) {
      auto it = t->second.find(arm);
      if (it == t->second.end()) continue;
      html::LineSeries s;
      s.name = arm_label(arm);
      s.color = std::string(html::palette(k++));
      s.dashed = std::string(arm) == "self_consistency";
      for (const auto& p : it->second.curve) {
        s.points.emplace_back(p.coverage, p.risk);
        ymax = std::max(ymax, p.risk);
      }
      c.series.push_back(std::move(s));
    }
  }
  c.y_max = ymax > 0 ? std::min(1.0, ymax * 1.1) : 0.05;
  return c;
}

std::string chart_title(const Analysis& a, const SystemResult& sys, const std::string& tier) {
  return fmt::format("Risk-coverage, {}, {} tier", system_label(a, sys), tier);
}

}  // namespace

H3Verdict h3_verdict(const Analysis& a) {
  H3Verdict v;
  io::OrderedJson cells = io::OrderedJson::array();
  bool undetermined = false;
  for (const auto& sys : a.systems) {
    for (const auto& tier : a.plan.options.tiers) {
      io::OrderedJson comps = io::OrderedJson::array();
      bool supports = true, any = false, missing = false;
      for (const auto& c : a.comparisons) {
        if (c.system != sys.name || c.tier != tier || c.arm != "representation") continue;
        any = true;
        io::OrderedJson cj = io::OrderedJson::object();
        cj["control"] = c.baseline;
        cj["difference"] = c.difference;
        cj["ci"] = c.ci ? io::OrderedJson::array({c.ci->lo, c.ci->hi}) : io::OrderedJson(nullptr);
        comps.push_back(cj);
        if (!c.ci) {
          missing = true;
        } else if (!(c.ci->hi < 0.0)) {
          supports = false;
        }
      }
      if (!any) continue;
      ++v.cells;
      undetermined = undetermined || (missing && supports);
      supports = supports && !missing;
      v.supporting += supports ? 1 : 0;
      io::OrderedJson cell = io::OrderedJson::object();
      cell["system"] = sys.name;
      cell["tier"] = tier;
      cell["supports"] = supports;
      cell["comparisons"] = comps;
      cells.push_back(cell);
    }
  }
  const std::string criterion =
      "a system-tier cell supports H3 when every representation - control AURC difference in the tier has "
      "its interval entirely below 0";
  if (v.cells == 0 || undetermined) {
    v.status = "undetermined";
  } else if (v.supporting == v.cells) {
    v.status = "supported";
  } else if (v.supporting == 0) {
    v.status = "unsupported";
  } else {
    v.status = "mixed";
  }
  const std::string level = fmt::format("{:g}%", 100 * a.options.level);
  if (v.status == "undetermined") {
    v.text = v.cells == 0 ? "H3 verdict: undetermined (no representation-versus-control AURC comparison)."
                          : "H3 verdict: undetermined (the AURC differences have no bootstrap intervals).";
  } else {
    v.text = fmt::format(
        "H3 verdict: {}. Representation consensus improves risk-coverage (AURC lower, {} paired "
        "base-bootstrap "
        "interval below 0) over every equal-call control in {} of {} system-tier cells. {}",
        v.status, level, v.supporting, v.cells,
        v.status == "unsupported"
            ? "An interval that includes 0 is no evidence that the methods are equivalent."
            : "Scoped to the study's subset of bases and templates.");
  }
  v.json = io::OrderedJson::object();
  v.json["status"] = v.status;
  v.json["criterion"] = criterion;
  v.json["cells"] = v.cells;
  v.json["supporting_cells"] = v.supporting;
  v.json["by_cell"] = cells;
  return v;
}

doc::Document report_section(const Analysis& a) {
  doc::Document d;
  d.heading(2, "consensus", "Consensus study (H3): does disagreement predict errors?");
  d.paragraph(h3_verdict(a).text);
  bool simulated = false;
  for (const auto& r : a.runs) simulated |= r.simulated;
  if (simulated) {
    d.warning(
        "Systems marked (simulated) are the built-in reference system with injected faults, not a model.");
  }
  d.paragraph(fmt::format(
      "Agreement of three calls per base in each arm (self-consistency, paraphrase, representation) as a "
      "signal of errors: {} bases, plan sha256 {}. From `numcheck orbit consensus analyze`; see "
      "docs/consensus.md.",
      a.plan.bases.size(), a.plan_sha256.substr(0, 12)));
  d.table(design_table(a));
  for (const auto& tier : a.plan.options.tiers) {
    d.heading(3, "consensus-" + tier,
              tier == "stochastic" ? "Consensus: stochastic tier" : "Consensus: deterministic (greedy) tier");
    d.table(arms_table(a, tier));
    for (std::size_t i = 0; i < a.systems.size(); ++i) {
      html::LineChart c = rc_chart(a.systems[i], tier, chart_title(a, a.systems[i], tier));
      c.id = fmt::format("consensus-rc-{}-{}", i + 1, tier);
      d.figure(html::line_chart(c));
    }
    d.table(operating_table(a, tier));
  }
  d.heading(3, "consensus-differences", "Consensus: AURC differences");
  d.table(comparison_table(a));
  d.heading(3, "consensus-sensitivity", "Consensus: fallback-order sensitivity");
  d.table(sensitivity_table(a));
  d.heading(3, "consensus-calls", "Consensus: calls by position");
  d.table(calls_table(a), false);
  return d;
}

namespace {

using OR = io::OrderedRecord;
using U = std::uint64_t;

std::optional<stats::Interval> interval_of(const OR& r, std::string_view key) {
  const io::OrderedJson& v = r.at(key);
  if (v.is_null()) return std::nullopt;
  if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number())
    r.fail_field(key, "is not null or [lo, hi]");
  return stats::Interval{v[0].get<double>(), v[1].get<double>()};
}

num::Rational rational_of(const OR& r, std::string_view key) {
  const std::string s = r.string(key);
  auto q = num::Rational::from_string(s);
  if (!q) r.fail_field(key, fmt::format("is not an exact rational: '{}'", s));
  return *q;
}

int int_of(const OR& r, std::string_view key) {
  return static_cast<int>(r.integer(key, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
}

// A list of exactly n non-negative integers.
template <std::size_t N>
std::array<U, N> counts_of(const OR& r, std::string_view key, std::string_view what) {
  const io::OrderedJson& v = r.at(key);
  std::array<U, N> out{};
  if (!v.is_array() || v.size() != N) r.fail_field(key, what);
  for (std::size_t i = 0; i < N; ++i) {
    if (!v[i].is_number_unsigned()) r.fail_field(key, what);
    out[i] = v[i].get<U>();
  }
  return out;
}

std::array<std::size_t, 3> order_of(const OR& r, std::string_view key) {
  const auto c = counts_of<3>(r, key, "is not an order of three calls");
  std::array<std::size_t, 3> o{};
  for (std::size_t i = 0; i < 3; ++i) {
    if (c[i] < 1 || c[i] > 3) r.fail_field(key, "is not an order of three calls");
    o[i] = static_cast<std::size_t>(c[i] - 1);
  }
  return o;
}

ArmResult arm_from_json(const OR& j, const std::string& tier, const std::string& arm) {
  ArmResult r;
  r.tier = tier;
  r.arm = arm;
  r.n_bases = j.unsigned_integer("n_bases");
  const OR ag = j.object("agreement");
  for (std::size_t l = 0; l < 4; ++l) r.agreement[l] = ag.unsigned_integer(std::to_string(l));
  r.predictions = j.unsigned_integer("predictions");
  r.abstentions = j.unsigned_integer("abstentions");
  r.prediction_correct = j.unsigned_integer("prediction_correct");
  r.prediction_wrong = j.unsigned_integer("prediction_wrong");
  r.aurc_ci = interval_of(j, "aurc_ci");
  const OR un = j.object("unanimous");
  r.unanimous_correct = un.unsigned_integer("correct");
  r.unanimous_wrong = un.unsigned_integer("wrong");
  r.non_unanimous = j.unsigned_integer("non_unanimous");
  for (const auto& p : j.objects("operating_points")) {
    stats::OperatingPoint op;
    op.threshold = p.integer("threshold");
    op.accepted = p.unsigned_integer("accepted");
    op.errors = p.unsigned_integer("errors");
    op.n = r.n_bases;
    r.operating_points.push_back(op);
  }
  if (r.operating_points.size() != kCalls + 1) j.fail_field("operating_points", "needs 4 entries");
  for (const auto& o : j.objects("sensitivity")) {
    OrderResult orr;
    orr.order = order_of(o, "order");
    orr.fallback_correct = o.unsigned_integer("fallback_correct");
    orr.fallback_wrong = o.unsigned_integer("fallback_wrong");
    orr.useful_flags = o.unsigned_integer("useful_flags");
    orr.false_alarms = o.unsigned_integer("false_alarms");
    orr.aurc_exact = rational_of(o, "aurc_exact");
    orr.aurc = orr.aurc_exact.to_double();
    r.orders.push_back(orr);
  }
  if (r.orders.empty()) j.fail_field("sensitivity", "is empty");
  for (const auto& p : j.array("risk_coverage")) {
    if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_number())
      j.fail_field("risk_coverage", "holds a point that is not [coverage, risk]");
    stats::CurvePoint c;
    c.coverage = p[0].get<double>();
    c.risk = p[1].get<double>();
    r.curve.push_back(c);
  }
  const OR calls = j.object("calls");
  r.answered = counts_of<kCalls>(calls, "answered", "needs 3 counts");
  r.parsed = counts_of<kCalls>(calls, "parsed", "needs 3 counts");
  r.correct = counts_of<kCalls>(calls, "correct", "needs 3 counts");
  r.missing_calls = j.unsigned_integer("missing_calls");
  return r;
}

void plan_from_analysis(const OR& plan, Analysis& a) {
  a.plan_sha256 = plan.string("sha256");
  a.plan.bases.assign(plan.unsigned_integer("bases"), std::string());
  PlanOptions& o = a.plan.options;
  o.templates = plan.strings("templates");
  o.per_template = plan.unsigned_integer("per_template");
  o.seed = plan.unsigned_integer("seed");
  o.max_tokens = int_of(plan, "max_tokens");
  o.tiers.clear();
  const OR tiers = plan.object("tiers");
  if (tiers.json().empty()) plan.fail_field("tiers", "is not a non-empty object");
  for (const auto& [tier, tj] : tiers.json().items()) {
    if (tier != "stochastic" && tier != "deterministic")
      fail("{}: unknown tier '{}' in plan.tiers", plan.where(), tier);
    o.tiers.push_back(tier);
    if (tier == "stochastic") {
      const OR st = tiers.object(tier);
      o.stochastic.temperature = st.number("temperature");
      o.stochastic.top_p = st.number("top_p");
      o.stochastic.top_k = int_of(st, "top_k");
    }
  }
}

}  // namespace

Analysis analysis_from_json(std::string_view text, const std::string& where) {
  const io::OrderedJson json = io::parse_ordered_json(text, where);  // keeps the systems' order
  if (!json.is_object() || !json.contains("kind") || json["kind"] != "numcheck.consensus_analysis")
    fail("{}: not a consensus analysis (kind is not numcheck.consensus_analysis)", where);
  const OR j = OR::of(json, where);
  if (int_of(j, "version") != 1) fail("{}: unsupported version (expected 1)", where);
  Analysis a;
  plan_from_analysis(j.object("plan"), a);
  if (const auto b = json.find("benchmark"); b != json.end() && b->is_object()) a.plan.bench_generator = *b;
  const PlanOptions& o = a.plan.options;
  const OR st = j.object("settings");
  const std::string layer = st.string("layer");
  if (layer != "strict" && layer != "audit") fail("{}: field settings.layer is '{}'", where, layer);
  a.layer = layer == "audit" ? Layer::kAudit : Layer::kStrict;
  a.options.bootstrap = st.unsigned_integer("bootstrap");
  a.options.seed = st.unsigned_integer("seed");
  a.options.level = st.number("level");
  const OR runs = j.object("runs");
  const OR systems = j.object("systems");
  for (const auto& [name, rj] : runs.json().items()) {
    const OR rr = runs.object(name);
    SystemRun r;
    r.name = name;
    r.run_dir = rr.string("run_dir");
    r.model = rr.string("model");
    r.simulated = rr.boolean("simulated");
    r.records = rr.unsigned_integer("records");
    r.missing_calls = rr.unsigned_integer("missing_calls");
    r.top_k_sent = rr.opt_boolean("top_k_sent").value_or(true);
    a.runs.push_back(std::move(r));
  }
  for (const auto& [name, sj] : systems.json().items()) {
    const OR sr = systems.object(name);
    SystemResult sys;
    sys.name = name;
    for (const auto& tier : o.tiers) {
      const OR tj = sr.object(tier);
      for (const auto& arm : tier_arms(tier)) sys.tiers[tier][arm] = arm_from_json(tj.object(arm), tier, arm);
    }
    a.systems.push_back(std::move(sys));
  }
  if (a.systems.size() != a.runs.size())
    fail("{}: {} systems for {} runs", where, a.systems.size(), a.runs.size());
  for (const auto& c : j.objects("comparisons")) {
    Comparison cmp;
    cmp.system = c.string("system");
    cmp.tier = c.string("tier");
    cmp.arm = c.string("arm");
    cmp.baseline = c.string("baseline");
    cmp.difference_exact = rational_of(c, "aurc_difference_exact");
    cmp.difference = cmp.difference_exact.to_double();
    cmp.ci = interval_of(c, "ci");
    a.comparisons.push_back(std::move(cmp));
  }
  return a;
}

std::vector<std::filesystem::path> write_outputs(const Analysis& a, const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  const doc::Document d = report_section(a);
  const fs::path fig_dir = dir / std::string(doc::kFigureDir);
  std::error_code ec;
  fs::create_directories(fig_dir, ec);
  if (ec) fail(ErrorCode::kIo, "cannot create {}: {}", fig_dir.string(), ec.message());
  // Drop risk-coverage figures of an earlier analysis in the same folder (a run with more systems),
  // and nothing else: the folder may hold other figures.
  for (const auto& e : fs::directory_iterator(fig_dir)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && name.find("-consensus-rc-") != std::string::npos && name.ends_with(".svg"))
      fs::remove(e.path());
  }
  std::vector<fs::path> written;
  for (const auto& [file, svg] : d.figure_files()) {
    io::write_file_atomic(fig_dir / file, svg);
    written.push_back(fig_dir / file);
  }
  const std::vector<std::pair<std::string, std::string>> files = {
      {"consensus.json", io::to_pretty(analysis_to_json(a))},
      {"consensus.md", d.to_markdown()},
      {"consensus.html", d.to_html("numcheck consensus study")},
  };
  for (const auto& [file, text] : files) {
    io::write_file_atomic(dir / file, text);
    written.push_back(dir / file);
  }
  return written;
}

}  // namespace numcheck::consensus
