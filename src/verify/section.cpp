#include "verify/section.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "claims/normalize.hpp"
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

// One Table 2 row per system of the eval file, ours first (in the order given), then the others
// in name order.
void add_eval_rows(ClaimsSection& s, const io::Json& eval, const std::vector<std::string>& ours) {
  const auto is_ours = [&](const std::string& n) {
    return std::find(ours.begin(), ours.end(), n) != ours.end();
  };
  std::vector<std::string> names;
  for (const auto& n : ours)
    if (eval["systems"].contains(n) && std::find(names.begin(), names.end(), n) == names.end())
      names.push_back(n);
  for (const auto& [k, v] : eval["systems"].items())
    if (!is_ours(k)) names.push_back(k);
  for (const auto& name : names) {
    const auto& o = eval["systems"][name];
    Table2Row r;
    r.system = name;
    r.ours = is_ours(name);
    r.data = r.ours ? "ours" : "released";
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
}

// The eval file's paired comparisons that involve one of ours.
void add_paired_rows(ClaimsSection& s, const io::Json& eval, const std::vector<std::string>& ours) {
  const auto is_ours = [&](const std::string& n) {
    return std::find(ours.begin(), ours.end(), n) != ours.end();
  };
  for (const auto& c : eval.value("comparisons", io::Json::array())) {
    if (!is_ours(c.value("a", "")) && !is_ours(c.value("b", ""))) continue;
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
    if (c.contains("ttest_kfold") && c["ttest_kfold"].is_object()) {
      const auto& t = c["ttest_kfold"];
      if (t.contains("macro_f1") && t["macro_f1"].is_object())
        p.ttest_p = opt_num(t["macro_f1"].value("p", io::Json()));
      p.ttest_scheme = fmt::format("{} shuffled folds, numcheck::Rng seed {}", t.value("folds", 0),
                                   t.value("seed", std::uint64_t{0}));
      if (t.contains("macro_f1_p_over_claim_orders") && t["macro_f1_p_over_claim_orders"].is_object()) {
        const auto& o = t["macro_f1_p_over_claim_orders"];
        p.orders = o.value("orders", std::size_t{0});
        p.p_min = opt_num(o.value("min", io::Json()));
        p.p_median = opt_num(o.value("median", io::Json()));
        p.p_max = opt_num(o.value("max", io::Json()));
      }
    }
    s.paired.push_back(std::move(p));
  }
}

// The paper's published rows (other data).
void add_paper_rows(ClaimsSection& s, const io::Json& paper) {
  for (const auto& row : paper.value("rows", io::Json::array())) {
    Table2Row r;
    r.system = row.value("system", "");
    r.data = "paper (other data)";
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

// The cross-validation note and rows.
void add_cv_rows(ClaimsSection& s, const io::Json& cv) {
  const bool same_source = cv.contains("figures");  // cv files whose intervals are of the means
  s.cv_scheme = cv.value("fold_scheme", "");
  s.cv_note = fmt::format(
      "Grouped stratified {}-fold cross-validation on {} labelled val claims ({} {}), {} "
      "seeds. {}",
      cv.value("folds", 0), cv.value("records", 0),
      cv.contains("claim_groups") ? cv.value("claim_groups", 0) : cv.value("claim_texts", 0),
      cv.contains("claim_groups") ? "groups of near-duplicate claims, each kept in one fold"
                                  : "distinct texts",
      cv.value("seeds", 0),
      same_source
          ? "Every figure of a row is a mean over the seeds; the 95% intervals and p values come from "
            "one cluster bootstrap (groups resampled) of those means."
          : "Figures are means over seeds; this cv file's intervals and differences are of the first "
            "seed only (written by an older numcheck): rerun `claims cv` for one source per row.");
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
    if (d.contains("bootstrap_p") && d["bootstrap_p"].is_number()) r.boot_p = d["bootstrap_p"].get<double>();
    if (d.contains("bootstrap_p_per_seed") && d["bootstrap_p_per_seed"].is_array())
      for (const auto& x : d["bootstrap_p_per_seed"])
        if (x.is_number()) r.boot_p_per_seed.push_back(x.get<double>());
    s.cv.push_back(std::move(r));
  }
}

}  // namespace

ClaimsSection build_claims_section(const io::Json& eval, const io::Json& cv, const io::Json& paper,
                                   const std::vector<std::string>& ours, const std::string& gold_note) {
  ClaimsSection s;
  s.gold_note = gold_note;
  if (eval.is_object() && eval.contains("systems")) {
    add_eval_rows(s, eval, ours);
    add_paired_rows(s, eval, ours);
  }
  if (paper.is_object()) add_paper_rows(s, paper);
  if (cv.is_object()) add_cv_rows(s, cv);
  return s;
}

io::OrderedJson section_json(const ClaimsSection& s) {
  io::OrderedJson j;
  j["gold_note"] = s.gold_note;
  j["trained_on"] = s.trained_on;
  j["near_duplicates"] = s.near_duplicates;
  io::OrderedJson t = io::OrderedJson::array();
  for (const auto& r : s.table2) {
    io::OrderedJson o;
    o["system"] = r.system;
    o["data"] = r.data;
    o["ours"] = r.ours;
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
         {"mcnemar", {{"a_only_correct", r.a_only}, {"b_only_correct", r.b_only}, {"p", r.mcnemar_p}}},
         {"ttest_kfold",
          r.ttest_p
              ? io::OrderedJson{{"scheme", r.ttest_scheme},
                                {"macro_f1_p", *r.ttest_p},
                                {"claim_orders", r.orders},
                                {"p_min", r.p_min ? io::OrderedJson(*r.p_min) : io::OrderedJson(nullptr)},
                                {"p_median",
                                 r.p_median ? io::OrderedJson(*r.p_median) : io::OrderedJson(nullptr)},
                                {"p_max", r.p_max ? io::OrderedJson(*r.p_max) : io::OrderedJson(nullptr)}}
              : io::OrderedJson(nullptr)}});
  j["paired"] = std::move(p);
  j["cv_note"] = s.cv_note;
  j["cv_fold_scheme"] = s.cv_scheme;
  io::OrderedJson c = io::OrderedJson::array();
  for (const auto& r : s.cv)
    c.push_back(
        {{"system", r.system},
         {"kind", r.kind},
         {"macro_f1", fig_json(r.macro)},
         {"weighted_f1", fig_json(r.weighted)},
         {"class_f1", {{"True", r.classes[0]}, {"False", r.classes[1]}, {"Conflicting", r.classes[2]}}},
         {"vs_trained",
          {{"macro_f1_diff", r.diff},
           {"ci95", {r.diff_lo, r.diff_hi}},
           {"bootstrap_p", r.boot_p ? io::OrderedJson(*r.boot_p) : io::OrderedJson(nullptr)},
           {"bootstrap_p_per_fold_draw", r.boot_p_per_seed}}}});
  j["cv"] = std::move(c);
  j["notes"] = s.notes;
  return j;
}

namespace {

std::string f2(double v) { return fmt::format("{:.2f}", 100 * v); }
std::string value_only(const Figure& f) { return f.value ? f2(*f.value) : "–"; }
std::string unparsed(const Table2Row& r) { return r.other_data ? "–" : fmt::format("{}", r.unparseable); }

using doc::html::Cell;

// The gold-evidence tables (Table 2 layout): the full set and the per-category rows.
void add_table2(doc::Document& d, const ClaimsSection& s) {
  d.heading(3, "claims-table2", "Gold evidence: full set and per category (Table 2 figures)");
  if (!s.gold_note.empty()) d.paragraph(s.gold_note);
  doc::html::Table t;
  t.caption = "Claim verification with gold evidence, full set";
  t.id = "claims-table2";
  t.header = {"system", "data", "n", "unparsed", "T-F1", "F-F1", "C-F1", "M-F1 [95% CI]", "W-F1"};
  bool first_ours = true;
  for (const auto& r : s.table2) {
    const bool bold = r.ours && first_ours;
    first_ours = first_ours && !r.ours;
    std::vector<Cell> row = {Cell::txt(r.system), Cell::txt(r.data),
                             Cell::num(r.other_data ? "2495" : std::to_string(r.n)), Cell::num(unparsed(r))};
    for (const auto& f : r.classes) row.push_back(Cell::num(value_only(f)));
    row.push_back(Cell::num(pct(r.macro), bold));
    row.push_back(Cell::num(value_only(r.weighted)));
    t.rows.push_back(std::move(row));
  }
  t.note =
      "Rows marked 'paper (other data)' are the QuanTemp paper's published figures on the full test set "
      "(2,495 claims, no intervals published): they are not measured on the claims above and are shown "
      "for orientation only. W-F1 intervals are in the per-category table.";
  d.table(std::move(t));
  for (const auto& r : s.table2) {
    if (r.other_data || r.unparseable == 0) continue;
    if (r.n > 0 && r.unparseable >= r.n)
      d.warning(fmt::format(
          "{}: none of its {} answers could be parsed, so every verdict counts as wrong and its F1 "
          "figures are 0 by that rule: they measure the answer format, not the verifier.",
          r.system, r.n));
    else
      d.paragraph(fmt::format("{}: {} of {} answers could not be parsed and count as wrong.", r.system,
                              r.unparseable, r.n));
  }
  doc::html::Table c;
  c.caption = "Claim verification with gold evidence, per category (Table 2 layout, one row per category)";
  c.id = "claims-table2-categories";
  c.header = {"system", "category", "M-F1 [95% CI]", "W-F1 [95% CI]", "unparsed"};
  for (const auto& r : s.table2) {
    for (std::size_t k = 0; k < kCats.size(); ++k)
      c.rows.push_back({Cell::txt(r.system), Cell::txt(kCats[k]), Cell::num(pct(r.categories[2 * k])),
                        Cell::num(pct(r.categories[2 * k + 1])), Cell::num(unparsed(r))});
    c.rows.push_back({Cell::txt(r.system), Cell::txt("full set"), Cell::num(pct(r.macro)),
                      Cell::num(pct(r.weighted)), Cell::num(unparsed(r))});
  }
  c.note =
      "unparsed: the system's answers that could not be parsed, over all categories (each counts as "
      "wrong).";
  d.table(std::move(c));
}

// The paired tests on the same claims: bootstrap and McNemar, then the 10-fold t-tests.
void add_paired(doc::Document& d, const ClaimsSection& s) {
  doc::html::Table t;
  t.caption = "Paired tests on the same claims (A minus B)";
  t.id = "claims-paired";
  t.header = {"A", "B", "n", "ΔM-F1 [95% CI]", "p (M-F1)", "A-only / B-only", "p (acc.)"};
  for (const auto& p : s.paired)
    t.rows.push_back(
        {Cell::txt(p.a), Cell::txt(p.b), Cell::num(std::to_string(p.n)),
         Cell::num(fmt::format("{:.2f} [{:.1f}, {:.1f}]", 100 * p.diff, 100 * p.diff_lo, 100 * p.diff_hi)),
         Cell::num(fmt::format("{:.3g}", p.boot_p)), Cell::num(fmt::format("{} / {}", p.a_only, p.b_only)),
         Cell::num(fmt::format("{:.3g}", p.mcnemar_p))});
  t.note =
      "Two tests of two different quantities. p (M-F1): paired bootstrap over claims of the macro-F1 "
      "difference. p (acc.): exact McNemar test on per-claim correctness, i.e. of the accuracy "
      "difference, from the claims only A or only B got right (A-only / B-only). A macro-F1 difference can "
      "be clear while "
      "accuracy is not (and the reverse), since macro-F1 weighs the rare Conflicting class as much as "
      "the others. Neither uses folds.";
  d.table(std::move(t));
  doc::html::Table k;
  k.caption = "Paired 10-fold t-tests on the same claims (the QuanTemp code's procedure), with their folds";
  k.id = "claims-ttest";
  k.header = {"A", "B", "fold scheme", "p (t, M-F1)", "p over claim orders: min / median / max"};
  for (const auto& p : s.paired) {
    if (!p.ttest_p) continue;
    const auto g = [](const std::optional<double>& x) { return x ? fmt::format("{:.3g}", *x) : "–"; };
    k.rows.push_back({Cell::txt(p.a), Cell::txt(p.b), Cell::txt(p.ttest_scheme), Cell::num(g(p.ttest_p)),
                      Cell::num(p.orders > 0 ? fmt::format("{} / {} / {} ({} orders)", g(p.p_min),
                                                           g(p.p_median), g(p.p_max), p.orders)
                                             : "–")});
  }
  k.note =
      "The claims cut into shuffled folds, each system's macro-F1 on every fold, and a paired t-test over "
      "the folds (scipy's ttest_rel). Its p depends on which claims share a fold: the folds here are drawn "
      "with numcheck::Rng, not the QuanTemp code's numpy folds, so p differs from that code's on the same "
      "predictions. The last column cuts the claims with the same scheme in other orders (the order as "
      "given, then shuffled orders) and gives the spread of p over them.";
  if (!k.rows.empty()) d.table(std::move(k));
}

// The cross-validation tables of the trained verifier.
void add_cv(doc::Document& d, const ClaimsSection& s) {
  d.heading(3, "claims-cv", "Cross-validation of the trained verifier on the val split");
  d.paragraph(s.cv_note);
  doc::html::Table t;
  t.caption =
      "Grouped k-fold cross-validation, means over seeds: trained verifier, baselines on the same "
      "folds, ablations";
  t.id = "claims-cv";
  t.header = {"system", "kind", "M-F1 [95% CI]", "W-F1 [95% CI]", "T-F1", "F-F1", "C-F1"};
  for (std::size_t i = 0; i < s.cv.size(); ++i) {
    const auto& r = s.cv[i];
    t.rows.push_back({Cell::txt(r.system), Cell::txt(r.kind), Cell::num(pct(r.macro), i == 0),
                      Cell::num(pct(r.weighted)), Cell::num(f2(r.classes[0])), Cell::num(f2(r.classes[1])),
                      Cell::num(f2(r.classes[2]))});
  }
  d.table(std::move(t));
  doc::html::Table v;
  v.caption = "Cross-validation: each system against the trained verifier, means over seeds";
  v.id = "claims-cv-paired";
  v.header = {"system", "ΔM-F1 [95% CI]", "p (M-F1)", "p per fold draw"};
  for (std::size_t i = 1; i < s.cv.size(); ++i) {
    const auto& r = s.cv[i];
    std::string per;
    for (const double x : r.boot_p_per_seed) per += fmt::format("{}{:.3g}", per.empty() ? "" : " ", x);
    v.rows.push_back(
        {Cell::txt(r.system),
         Cell::num(fmt::format("{:.2f} [{:.1f}, {:.1f}]", 100 * r.diff, 100 * r.diff_lo, 100 * r.diff_hi)),
         Cell::num(r.boot_p ? fmt::format("{:.3g}", *r.boot_p) : "–"), Cell::num(per.empty() ? "–" : per)});
  }
  v.note =
      "ΔM-F1 = trained minus this system's macro-F1, the mean over seeds, with its 95% cluster-bootstrap "
      "interval; p (M-F1) is the paired bootstrap p of that difference (two-sided); p per fold draw: the "
      "same test on each seed's out-of-fold predictions alone. Folds: " +
      (s.cv_scheme.empty() ? std::string("as in the paragraph above") : s.cv_scheme) +
      ". No accuracy test is shown here: the cv JSON keeps an exact McNemar p (per-claim correctness) of "
      "the first seed only.";
  if (!v.rows.empty()) d.table(std::move(v));
}

}  // namespace

doc::Document section_document(const ClaimsSection& s) {
  doc::Document d;
  d.heading(2, "claims", "Numerical claim verification (QuanTemp)");
  d.paragraph(
      "Verdicts (True, False, Conflicting) for real-world numerical claims. Macro-F1 (M-F1) is the "
      "unweighted mean of the three per-class F1 scores, weighted-F1 (W-F1) weights them by class "
      "support; figures in percent with 95% bootstrap intervals in brackets. \"ours\" marks numcheck's own "
      "verifiers, \"released\" the QuanTemp authors' released predictions. An answer that could not be "
      "parsed counts as wrong; the \"unparsed\" column beside the F1 figures says how many there were.");
  if (!s.trained_on.empty()) d.paragraph(s.trained_on);
  if (!s.near_duplicates.empty()) d.paragraph(s.near_duplicates);
  if (!s.table2.empty()) add_table2(d, s);
  if (!s.paired.empty()) add_paired(d, s);
  if (!s.cv.empty()) add_cv(d, s);
  for (const auto& n : s.notes) d.paragraph(n);
  return d;
}

std::string trained_on_note(const io::Json& model, const std::string& name, const std::string& data,
                            std::string_view where) {
  if (!model.is_object() || model.value("format", "") != "numcheck-verifier-model")
    fail("{}: not a numcheck verifier model (from `numcheck claims train`)", where);
  try {
    const auto& t = model.at("training");
    const auto& st = model.value("settings", io::Json::object());
    std::string labels;
    for (const char* c : kClasses)
      if (t.contains("labels") && t["labels"].contains(c))
        labels += fmt::format("{}{} {}", labels.empty() ? "" : ", ", c, t["labels"][c].get<std::size_t>());
    const std::string sha = t.value("data_sha256", "");
    std::string left_out;
    if (t.contains("near_duplicates_left_out")) {
      const auto ids = t["near_duplicates_left_out"].get<std::vector<std::string>>();
      left_out = fmt::format(
          " Training left out {} claim{} that {} near-duplicate{} of the claims it scores (same text after "
          "Unicode "
          "normalisation, or at least 3/5 of their words shared){}{}.",
          ids.size(), ids.size() == 1 ? "" : "s", ids.size() == 1 ? "is a" : "are",
          ids.size() == 1 ? "" : "s", ids.empty() ? "" : ": ", fmt::join(ids, ", "));
    }
    return fmt::format(
        "{} is numcheck's trained verifier ({}, {} numbers), trained on {}{} labelled claims{} with their "
        "evidence (SHA-256 of the training records {}...).{}",
        name, model.value("learner", "?"), st.value("numbers", "?"), data.empty() ? "" : data + ": ",
        t.value("records", std::size_t{0}), labels.empty() ? "" : " (" + labels + ")", sha.substr(0, 16),
        left_out);
  } catch (const io::Json::exception& e) {
    fail("{}: malformed verifier model: {}", where, e.what());
  }
}

std::string near_duplicates_note(const io::Json& j, std::string_view where) {
  const auto r = io::Record::of(j, where);
  if (!r.has("pairs"))
    fail("{}: not a near-duplicates file (from `numcheck claims stats --near-duplicates`)", where);
  std::vector<std::string> parts;
  const auto file = [](const std::string& path) { return std::filesystem::path(path).filename().string(); };
  for (const auto& p : r.objects("pairs")) {
    parts.push_back(
        fmt::format("{} of the {} claims of {} have a twin among the {} of {} ({} same text, {} reworded)",
                    p.unsigned_integer("b_with_twin"), p.unsigned_integer("b_claims"), file(p.string("b")),
                    p.unsigned_integer("a_claims"), file(p.string("a")), p.unsigned_integer("same_text"),
                    p.unsigned_integer("reworded")));
  }
  return fmt::format(
      "Near-duplicates across the claim files (two claims are near-duplicates when their texts are equal "
      "after "
      "Unicode NFKC normalisation of case, quotes, dashes and spacing, or when at least {}/{} of their words "
      "are "
      "shared): {}.",
      claims::kNearDuplicateJaccardNum, claims::kNearDuplicateJaccardDen,
      parts.empty() ? std::string("no pairs of files") : fmt::format("{}", fmt::join(parts, "; ")));
}

ClaimsSection section_from_file_json(const io::Json& j, std::string_view where) {
  if (!j.is_object() || j.value("format", "") != "numcheck-claims-section")
    fail("{}: not a claims section file (from `numcheck claims section`)", where);
  try {
    std::vector<std::string> ours;
    if (j.contains("ours") && j["ours"].is_array()) {
      for (const auto& n : j["ours"]) ours.push_back(n.get<std::string>());
    } else {
      ours.push_back(j.value("ours", ""));
    }
    auto s = build_claims_section(j.value("eval", io::Json()), j.value("cv", io::Json()),
                                  j.value("paper", io::Json()), ours, j.value("gold_note", ""));
    for (const auto& n : j.value("notes", io::Json::array())) s.notes.push_back(n.get<std::string>());
    s.trained_on = j.value("trained_on", "");
    s.near_duplicates = j.value("near_duplicates", "");
    return s;
  } catch (const io::Json::exception& e) {
    fail("{}: malformed claims section: {}", where, e.what());
  }
}

}  // namespace numcheck::verify
