#include "verify/section.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"

namespace numcheck::verify {

namespace {

constexpr std::array<const char*, 4> kCats = {"statistical", "temporal", "interval", "comparison"};
constexpr std::array<const char*, 3> kClasses = {"True", "False", "Conflicting"};

std::optional<double> opt_num(const io::Json& j) {
  if (j.is_number()) return j.get<double>();
  return std::nullopt;
}

Figure fig(const io::Json& o, const char* key) {
  Figure f;
  if (!o.is_object() || !o.contains(key)) return f;
  f.value = opt_num(o[key]);
  const std::string ci = std::string(key) + "_ci95";
  if (o.contains(ci) && o[ci].is_array() && o[ci].size() == 2) {
    f.lo = opt_num(o[ci][0]);
    f.hi = opt_num(o[ci][1]);
  }
  return f;
}

std::string pct(const Figure& f) {
  if (!f.value) return "–";
  std::string s = fmt::format("{:.2f}", 100 * *f.value);
  if (f.lo && f.hi) s += fmt::format(" [{:.1f}, {:.1f}]", 100 * *f.lo, 100 * *f.hi);
  return s;
}

io::OrderedJson fig_json(const Figure& f) {
  io::OrderedJson j = io::OrderedJson::object();
  j["value"] = f.value ? io::OrderedJson(*f.value) : io::OrderedJson(nullptr);
  if (f.lo && f.hi) j["ci95"] = {*f.lo, *f.hi};
  return j;
}

}  // namespace

ClaimsSection build_claims_section(const io::Json& eval, const io::Json& cv, const io::Json& paper,
                                   const std::string& ours, const std::string& gold_note) {
  ClaimsSection s;
  s.gold_note = gold_note;
  if (eval.is_object() && eval.contains("systems")) {
    // Ours first, then the others in name order.
    std::vector<std::string> names;
    if (eval["systems"].contains(ours)) names.push_back(ours);
    for (const auto& [k, v] : eval["systems"].items())
      if (k != ours) names.push_back(k);
    for (const auto& name : names) {
      const auto& o = eval["systems"][name];
      Table2Row r;
      r.system = name;
      r.data = name == ours ? "ours" : "released predictions, same claims";
      r.n = o.value("n", std::size_t{0});
      r.unparseable = o.value("unparseable", std::size_t{0});
      for (std::size_t c = 0; c < kCats.size(); ++c) {
        if (!o.contains("categories") || !o["categories"].contains(kCats[c])) continue;
        const auto& co = o["categories"][kCats[c]];
        r.categories[2 * c] = fig(co, "macro_f1");
        r.categories[2 * c + 1] = fig(co, "weighted_f1");
      }
      for (std::size_t k = 0; k < 3; ++k)
        if (o.contains("per_class") && o["per_class"].contains(kClasses[k]))
          r.classes[k].value = opt_num(o["per_class"][kClasses[k]]["f1"]);
      r.macro = fig(o, "macro_f1");
      r.weighted = fig(o, "weighted_f1");
      s.table2.push_back(std::move(r));
    }
    for (const auto& c : eval.value("comparisons", io::Json::array())) {
      if (c.value("a", "") != ours && c.value("b", "") != ours) continue;
      PairedRow p;
      p.a = c["a"].get<std::string>();
      p.b = c["b"].get<std::string>();
      p.n = c.value("n", std::size_t{0});
      p.macro_a = c.value("macro_f1_a", 0.0);
      p.macro_b = c.value("macro_f1_b", 0.0);
      p.a_only = c["mcnemar"].value("a_only_correct", std::uint64_t{0});
      p.b_only = c["mcnemar"].value("b_only_correct", std::uint64_t{0});
      p.mcnemar_p = c["mcnemar"].value("p", 1.0);
      const auto& b = c["bootstrap_macro_f1"];
      p.diff = b.value("diff", 0.0);
      p.diff_lo = b.value("lo", 0.0);
      p.diff_hi = b.value("hi", 0.0);
      p.boot_p = b.value("p", 1.0);
      s.paired.push_back(std::move(p));
    }
  }
  if (paper.is_object()) {
    for (const auto& row : paper.value("rows", io::Json::array())) {
      Table2Row r;
      r.system = row.value("system", "");
      r.data = "other data: paper, full test set (2,495 claims)";
      r.other_data = true;
      const auto& v = row["values"];
      auto at = [&](std::size_t i) {
        Figure f;
        if (i < v.size() && v[i].is_number()) f.value = v[i].get<double>() / 100.0;
        return f;
      };
      for (std::size_t i = 0; i < 8; ++i) r.categories[i] = at(i);
      for (std::size_t k = 0; k < 3; ++k) r.classes[k] = at(8 + k);
      r.macro = at(11);
      r.weighted = at(12);
      s.table2.push_back(std::move(r));
    }
  }
  if (cv.is_object()) {
    s.cv_note = fmt::format(
        "Grouped stratified {}-fold cross-validation on {} labelled val claims ({} distinct texts), {} "
        "seeds; means "
        "over seeds, 95% cluster-bootstrap intervals; Δ = trained minus system.",
        cv.value("folds", 0), cv.value("records", 0), cv.value("claim_texts", 0), cv.value("seeds", 0));
    for (const auto& o : cv.value("systems", io::Json::array())) {
      CvRow r;
      r.system = o.value("name", "");
      r.kind = o.value("kind", "");
      r.macro = fig(o, "macro_f1");
      r.weighted = fig(o, "weighted_f1");
      for (std::size_t k = 0; k < 3; ++k) r.classes[k] = o["class_f1"].value(kClasses[k], 0.0);
      const auto& d = o["vs_trained"];
      r.diff = d.value("macro_f1_diff", 0.0);
      if (d.contains("ci95") && d["ci95"].size() == 2) {
        r.diff_lo = d["ci95"][0].get<double>();
        r.diff_hi = d["ci95"][1].get<double>();
      }
      r.mcnemar_p = d.value("mcnemar_p", 1.0);
      s.cv.push_back(std::move(r));
    }
  }
  return s;
}

io::OrderedJson section_json(const ClaimsSection& s) {
  io::OrderedJson j;
  j["gold_note"] = s.gold_note;
  io::OrderedJson t = io::OrderedJson::array();
  for (const auto& r : s.table2) {
    io::OrderedJson o;
    o["system"] = r.system;
    o["data"] = r.data;
    o["other_data"] = r.other_data;
    if (!r.other_data) o["n"] = r.n;
    if (!r.other_data) o["unparseable"] = r.unparseable;
    io::OrderedJson cats = io::OrderedJson::object();
    for (std::size_t c = 0; c < kCats.size(); ++c)
      cats[kCats[c]] = {{"macro_f1", fig_json(r.categories[2 * c])},
                        {"weighted_f1", fig_json(r.categories[2 * c + 1])}};
    o["categories"] = std::move(cats);
    io::OrderedJson cl = io::OrderedJson::object();
    for (std::size_t k = 0; k < 3; ++k) cl[kClasses[k]] = fig_json(r.classes[k]);
    o["class_f1"] = std::move(cl);
    o["macro_f1"] = fig_json(r.macro);
    o["weighted_f1"] = fig_json(r.weighted);
    t.push_back(std::move(o));
  }
  j["table2"] = std::move(t);
  io::OrderedJson p = io::OrderedJson::array();
  for (const auto& r : s.paired)
    p.push_back(
        {{"a", r.a},
         {"b", r.b},
         {"n", r.n},
         {"macro_f1_a", r.macro_a},
         {"macro_f1_b", r.macro_b},
         {"macro_f1_diff", r.diff},
         {"ci95", {r.diff_lo, r.diff_hi}},
         {"bootstrap_p", r.boot_p},
         {"mcnemar", {{"a_only_correct", r.a_only}, {"b_only_correct", r.b_only}, {"p", r.mcnemar_p}}}});
  j["paired"] = std::move(p);
  j["cv_note"] = s.cv_note;
  io::OrderedJson c = io::OrderedJson::array();
  for (const auto& r : s.cv)
    c.push_back(
        {{"system", r.system},
         {"kind", r.kind},
         {"macro_f1", fig_json(r.macro)},
         {"weighted_f1", fig_json(r.weighted)},
         {"class_f1", {{"True", r.classes[0]}, {"False", r.classes[1]}, {"Conflicting", r.classes[2]}}},
         {"vs_trained",
          {{"macro_f1_diff", r.diff}, {"ci95", {r.diff_lo, r.diff_hi}}, {"mcnemar_p", r.mcnemar_p}}}});
  j["cv"] = std::move(c);
  j["notes"] = s.notes;
  return j;
}

doc::Document section_document(const ClaimsSection& s) {
  doc::Document d;
  using doc::html::Cell;
  d.heading(2, "claims", "Numerical claim verification (QuanTemp)");
  d.paragraph(
      "Verdicts (True, False, Conflicting) for real-world numerical claims. Macro-F1 (M-F1) is the "
      "unweighted "
      "mean of the three per-class F1 scores, weighted-F1 (W-F1) weights them by class support; figures in "
      "percent with 95% bootstrap intervals in brackets.");
  if (!s.table2.empty()) {
    d.heading(3, "claims-table2", "Gold evidence: per category and full set (Table 2 layout)");
    if (!s.gold_note.empty()) d.paragraph(s.gold_note);
    doc::html::Table t;
    t.caption = "Claim verification with gold evidence, per category (Table 2 layout)";
    t.id = "claims-table2";
    t.header = {"system",     "data",      "n",         "Stat. M-F1", "Stat. W-F1", "Temp. M-F1",
                "Temp. W-F1", "Int. M-F1", "Int. W-F1", "Comp. M-F1", "Comp. W-F1", "T-F1",
                "F-F1",       "C-F1",      "M-F1",      "W-F1"};
    for (const auto& r : s.table2) {
      std::vector<Cell> row = {Cell::txt(r.system), Cell::txt(r.data),
                               Cell::num(r.other_data ? "2495" : std::to_string(r.n))};
      for (const auto& f : r.categories) row.push_back(Cell::num(pct(f)));
      for (const auto& f : r.classes) row.push_back(Cell::num(pct(f)));
      row.push_back(Cell::num(pct(r.macro), !r.other_data && r.data == "ours"));
      row.push_back(Cell::num(pct(r.weighted)));
      t.rows.push_back(std::move(row));
    }
    t.note =
        "Rows marked 'other data' are the QuanTemp paper's published figures on the full test set (2,495 "
        "claims, "
        "no intervals published): they are not measured on the claims above and are shown for orientation "
        "only. "
        "Categories of the claims above come from the rule-based categorizer when the claims carry no "
        "taxonomy "
        "label.";
    d.table(std::move(t));
  }
  if (!s.paired.empty()) {
    doc::html::Table t;
    t.caption = "Paired tests on the same claims";
    t.id = "claims-paired";
    t.header = {
        "A",        "B", "n", "M-F1 A", "M-F1 B", "ΔM-F1 [95% CI]", "bootstrap p", "A-only / B-only correct",
        "McNemar p"};
    for (const auto& p : s.paired)
      t.rows.push_back(
          {Cell::txt(p.a), Cell::txt(p.b), Cell::num(std::to_string(p.n)),
           Cell::num(fmt::format("{:.2f}", 100 * p.macro_a)),
           Cell::num(fmt::format("{:.2f}", 100 * p.macro_b)),
           Cell::num(fmt::format("{:.2f} [{:.1f}, {:.1f}]", 100 * p.diff, 100 * p.diff_lo, 100 * p.diff_hi)),
           Cell::num(fmt::format("{:.3g}", p.boot_p)), Cell::num(fmt::format("{} / {}", p.a_only, p.b_only)),
           Cell::num(fmt::format("{:.3g}", p.mcnemar_p))});
    t.note =
        "Paired bootstrap over claims for the macro-F1 difference; exact McNemar test on per-claim "
        "correctness.";
    d.table(std::move(t));
  }
  if (!s.cv.empty()) {
    d.heading(3, "claims-cv", "Cross-validation of the trained verifier on the val split");
    d.paragraph(s.cv_note);
    doc::html::Table t;
    t.caption = "Grouped k-fold cross-validation: trained verifier, baselines on the same folds, ablations";
    t.id = "claims-cv";
    t.header = {"system", "kind", "M-F1 [95% CI]",   "W-F1 [95% CI]", "T-F1",
                "F-F1",   "C-F1", "Δ M-F1 [95% CI]", "McNemar p"};
    for (std::size_t i = 0; i < s.cv.size(); ++i) {
      const auto& r = s.cv[i];
      t.rows.push_back({Cell::txt(r.system), Cell::txt(r.kind), Cell::num(pct(r.macro), i == 0),
                        Cell::num(pct(r.weighted)), Cell::num(fmt::format("{:.2f}", 100 * r.classes[0])),
                        Cell::num(fmt::format("{:.2f}", 100 * r.classes[1])),
                        Cell::num(fmt::format("{:.2f}", 100 * r.classes[2])),
                        Cell::num(i == 0 ? "–"
                                         : fmt::format("{:.2f} [{:.1f}, {:.1f}]", 100 * r.diff,
                                                       100 * r.diff_lo, 100 * r.diff_hi)),
                        Cell::num(i == 0 ? "–" : fmt::format("{:.3g}", r.mcnemar_p))});
    }
    d.table(std::move(t));
  }
  for (const auto& n : s.notes) d.paragraph(n);
  return d;
}

ClaimsSection section_from_file_json(const io::Json& j, std::string_view where) {
  if (!j.is_object() || j.value("format", "") != "numcheck-claims-section")
    fail("{}: not a claims section file (from `numcheck claims section`)", where);
  try {
    auto s =
        build_claims_section(j.value("eval", io::Json()), j.value("cv", io::Json()),
                             j.value("paper", io::Json()), j.value("ours", ""), j.value("gold_note", ""));
    for (const auto& n : j.value("notes", io::Json::array())) s.notes.push_back(n.get<std::string>());
    return s;
  } catch (const io::Json::exception& e) {
    fail("{}: malformed claims section: {}", where, e.what());
  }
}

}  // namespace numcheck::verify
