#include "claims/evaluate.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>

#include "claims/category.hpp"
#include "claims/normalize.hpp"
#include "core/prng.hpp"
#include "doc/document.hpp"
#include "stats/bootstrap.hpp"
#include "stats/tests.hpp"

namespace numcheck::claims {

std::vector<std::optional<Verdict>> join_predictions(const std::vector<Claim>& gold,
                                                     const std::vector<Claim>& preds, JoinReport& rep,
                                                     std::vector<bool>* unparseable) {
  if (unparseable != nullptr) unparseable->assign(gold.size(), false);
  auto mark = [&](std::size_t g, std::size_t idx) {
    if (unparseable != nullptr && !preds[idx].label) (*unparseable)[g] = true;
  };
  std::unordered_map<std::string, std::vector<std::size_t>> by_id, by_text, by_key;
  for (std::size_t i = 0; i < preds.size(); ++i) {
    if (!preds[i].id.empty()) by_id[preds[i].id].push_back(i);
    if (!preds[i].text.empty()) {
      by_text[preds[i].text].push_back(i);
      by_key[normalize_claim(preds[i].text)].push_back(i);
    }
  }
  auto vname = [](const std::optional<Verdict>& v) {
    return v ? verdict_name(*v) : std::string_view("(none)");
  };
  auto note_conflicts = [&](const auto& index, const char* what) {
    for (const auto& [key, idx] : index)
      for (std::size_t k = 1; k < idx.size(); ++k)
        if (preds[idx[k]].label != preds[idx[0]].label) {
          if (rep.conflicts.size() < 20)
            rep.conflicts.push_back(fmt::format("{} {:?} has predictions {} and {} (records {} and {})", what,
                                                key.substr(0, 80), vname(preds[idx[0]].label),
                                                vname(preds[idx[k]].label), preds[idx[0]].record,
                                                preds[idx[k]].record));
          break;
        }
  };
  note_conflicts(by_id, "id");
  note_conflicts(by_text, "claim");
  std::vector<std::optional<Verdict>> out(gold.size());
  std::vector<bool> used(preds.size(), false);
  std::unordered_map<std::string, std::size_t> seen;
  for (std::size_t g = 0; g < gold.size(); ++g) {
    const Claim& c = gold[g];
    if (!c.id.empty()) {
      auto it = by_id.find(c.id);
      if (it != by_id.end()) {
        out[g] = preds[it->second.front()].label;
        mark(g, it->second.front());
        used[it->second.front()] = true;
        ++rep.by_id;
        continue;
      }
    }
    auto it = by_text.find(c.text);
    if (it != by_text.end()) {
      const std::size_t k = seen[c.text]++;
      const std::size_t idx = it->second[std::min(k, it->second.size() - 1)];
      out[g] = preds[idx].label;
      mark(g, idx);
      used[idx] = true;
      ++rep.by_text;
      continue;
    }
    // The same claim in other quotes, dashes, case or spacing (claims/normalize.hpp).
    const std::string key = normalize_claim(c.text);
    if (auto kt = by_key.find(key); !c.text.empty() && kt != by_key.end()) {
      const std::size_t k = seen["\x01" + key]++;
      const std::size_t idx = kt->second[std::min(k, kt->second.size() - 1)];
      out[g] = preds[idx].label;
      mark(g, idx);
      used[idx] = true;
      ++rep.by_text;
      continue;
    }
    ++rep.gold_without_prediction;
    if (rep.examples.size() < 5)
      rep.examples.push_back(
          fmt::format("gold {}:{} has no prediction: {:?}", c.source, c.record, c.text.substr(0, 80)));
  }
  for (std::size_t i = 0; i < preds.size(); ++i) {
    if (used[i]) continue;
    ++rep.unused_predictions;
    if (rep.examples.size() < 10)
      rep.examples.push_back(
          fmt::format("prediction {}:{} joins no gold claim: {:?}", preds[i].source, preds[i].record,
                      (preds[i].text.empty() ? preds[i].id : preds[i].text).substr(0, 80)));
  }
  return out;
}

stats::ClassificationReport verdict_report(const stats::ConfusionMatrix& m) {
  auto r = stats::classification_report(m);
  if (m.classes() <= static_cast<std::size_t>(kVerdictCount)) return r;
  r.per_class.resize(kVerdictCount);
  double mp = 0, mr = 0, mf = 0, wp = 0, wr = 0, wf = 0, support = 0;
  std::size_t present = 0;
  for (const auto& c : r.per_class) {
    const bool in = c.support > 0 || c.predicted > 0;
    if (in) {
      ++present;
      mp += c.precision;
      mr += c.recall;
      mf += c.f1;
    }
    const double w = static_cast<double>(c.support);
    wp += w * c.precision;
    wr += w * c.recall;
    wf += w * c.f1;
    support += w;
  }
  const double k = present == 0 ? 1.0 : static_cast<double>(present);
  r.macro_precision = mp / k;
  r.macro_recall = mr / k;
  r.macro_f1 = mf / k;
  r.weighted_precision = support > 0 ? wp / support : 0;
  r.weighted_recall = support > 0 ? wr / support : 0;
  r.weighted_f1 = support > 0 ? wf / support : 0;
  return r;
}

Scores score(const std::vector<int>& gold, const std::vector<int>& pred) {
  Scores s;
  s.n = gold.size();
  s.confusion = stats::ConfusionMatrix::from_labels(gold, pred, kVerdictCount + 1);
  s.report = verdict_report(s.confusion);
  for (int p : pred) s.unparseable += p == kUnparseable ? 1 : 0;
  return s;
}

namespace {

int idx(Verdict v) { return static_cast<int>(v); }

// The prediction for gold claim i: a verdict index, kUnparseable, or -1 (no prediction).
int pred_at(const SystemResult& s, std::size_t i) {
  if (s.pred[i]) return idx(*s.pred[i]);
  if (i < s.unparseable.size() && s.unparseable[i]) return kUnparseable;
  return -1;
}

double verdict_macro_f1(const std::vector<int>& g, const std::vector<int>& p) {
  return verdict_report(stats::ConfusionMatrix::from_labels(g, p, kVerdictCount + 1)).macro_f1;
}
double verdict_weighted_f1(const std::vector<int>& g, const std::vector<int>& p) {
  return verdict_report(stats::ConfusionMatrix::from_labels(g, p, kVerdictCount + 1)).weighted_f1;
}

// Bootstrap (claims resampled with replacement) percentile intervals of macro- and weighted-F1.
void add_intervals(Scores& sc, const std::vector<int>& g, const std::vector<int>& p,
                   const EvaluateOptions& opt) {
  sc.macro_lo = sc.macro_hi = sc.report.macro_f1;
  sc.weighted_lo = sc.weighted_hi = sc.report.weighted_f1;
  if (g.empty() || opt.bootstrap_draws == 0) return;
  const auto b = stats::bootstrap_counts_multi(
      g.size(), opt.bootstrap_draws, opt.seed, 2, [&](const stats::ClusterCounts& w, std::span<double> out) {
        stats::ConfusionMatrix m(kVerdictCount + 1);
        for (std::size_t i = 0; i < w.size(); ++i)
          if (w[i] > 0) m.add(static_cast<std::size_t>(g[i]), static_cast<std::size_t>(p[i]), w[i]);
        const auto r = verdict_report(m);
        out[0] = r.macro_f1;
        out[1] = r.weighted_f1;
      });
  const auto a = stats::percentile_interval(b[0]), w = stats::percentile_interval(b[1]);
  sc.macro_lo = a.lo;
  sc.macro_hi = a.hi;
  sc.weighted_lo = w.lo;
  sc.weighted_hi = w.hi;
}

// 10 shuffled folds (stats::kfold_indices: sklearn KFold's sizes, numcheck::Rng's draw), both
// systems' verdict macro/weighted F1 per fold, paired t-test over the folds.
stats::KFoldTTest kfold_ttest(const std::vector<int>& g, const std::vector<int>& a, const std::vector<int>& b,
                              std::size_t folds, std::uint64_t seed) {
  stats::KFoldTTest t;
  t.folds = folds;
  for (const auto& f : stats::kfold_indices(g.size(), folds, seed)) {
    std::vector<int> fg, fa, fb;
    for (std::size_t i : f) {
      fg.push_back(g[i]);
      fa.push_back(a[i]);
      fb.push_back(b[i]);
    }
    t.macro_a.push_back(verdict_macro_f1(fg, fa));
    t.macro_b.push_back(verdict_macro_f1(fg, fb));
    t.weighted_a.push_back(verdict_weighted_f1(fg, fa));
    t.weighted_b.push_back(verdict_weighted_f1(fg, fb));
  }
  t.macro = stats::paired_t_test(t.macro_a, t.macro_b);
  t.weighted = stats::paired_t_test(t.weighted_a, t.weighted_b);
  return t;
}

// The paired comparison of two systems on the claims both predicted: McNemar, the bootstrap of
// the macro-F1 difference, and the 10-fold t-test (also over other orders of the claims).
Comparison compare_systems(const std::vector<Claim>& gold, const SystemResult& sys_a,
                           const SystemResult& sys_b, const EvaluateOptions& opt) {
  Comparison c;
  c.a = sys_a.name;
  c.b = sys_b.name;
  std::vector<int> g, pa, pb;
  for (std::size_t i = 0; i < gold.size(); ++i) {
    const int xa = pred_at(sys_a, i), xb = pred_at(sys_b, i);
    if (!gold[i].label || xa < 0 || xb < 0) continue;
    g.push_back(idx(*gold[i].label));
    pa.push_back(xa);
    pb.push_back(xb);
  }
  c.n = g.size();
  const auto sa = score(g, pa), sb = score(g, pb);
  c.accuracy_a = sa.report.accuracy;
  c.accuracy_b = sb.report.accuracy;
  c.macro_f1_a = sa.report.macro_f1;
  c.macro_f1_b = sb.report.macro_f1;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const bool ra = pa[i] == g[i], rb = pb[i] == g[i];
    if (ra && !rb) ++c.a_only_correct;
    if (rb && !ra) ++c.b_only_correct;
  }
  c.mcnemar_p = stats::mcnemar_exact_p(c.a_only_correct, c.b_only_correct);
  c.boot_diff = c.macro_f1_a - c.macro_f1_b;
  c.draws = opt.bootstrap_draws;
  c.seed = opt.seed;
  if (c.n > 0 && opt.bootstrap_draws > 0) {
    const auto diffs =
        stats::bootstrap_counts(c.n, opt.bootstrap_draws, opt.seed, [&](const stats::ClusterCounts& w) {
          stats::ConfusionMatrix ma(kVerdictCount + 1), mb(kVerdictCount + 1);
          for (std::size_t i = 0; i < w.size(); ++i) {
            if (w[i] == 0) continue;
            ma.add(static_cast<std::size_t>(g[i]), static_cast<std::size_t>(pa[i]), w[i]);
            mb.add(static_cast<std::size_t>(g[i]), static_cast<std::size_t>(pb[i]), w[i]);
          }
          return verdict_report(ma).macro_f1 - verdict_report(mb).macro_f1;
        });
    const auto iv = stats::percentile_interval(diffs, 0.95);
    c.boot_lo = iv.lo;
    c.boot_hi = iv.hi;
    std::size_t le = 0, ge = 0;
    for (double d : diffs) {
      if (d <= 0) ++le;
      if (d >= 0) ++ge;
    }
    c.boot_p = std::min(1.0, 2.0 * static_cast<double>(std::min(le, ge)) / static_cast<double>(diffs.size()));
  }
  if (c.n >= opt.folds && opt.folds >= 2) {
    c.ttest = kfold_ttest(g, pa, pb, opt.folds, opt.fold_seed);
    c.ttest_seed = opt.fold_seed;
    c.ttest_ran = true;
    std::vector<std::size_t> order(g.size());
    for (std::size_t r = 0; r < opt.fold_orders; ++r) {
      std::iota(order.begin(), order.end(), std::size_t{0});
      if (r > 0) Rng(opt.fold_seed, fmt::format("claim-order-{}", r)).shuffle(order);
      std::vector<int> og(g.size()), oa(g.size()), ob(g.size());
      for (std::size_t i = 0; i < order.size(); ++i) {
        og[i] = g[order[i]];
        oa[i] = pa[order[i]];
        ob[i] = pb[order[i]];
      }
      c.ttest_p_orders.push_back(kfold_ttest(og, oa, ob, opt.folds, opt.fold_seed).macro.p);
    }
  }
  return c;
}

}  // namespace

Evaluation evaluate(const std::vector<Claim>& gold, std::vector<SystemResult> systems,
                    const EvaluateOptions& opt) {
  Evaluation e;
  e.gold_n = gold.size();
  std::vector<Category> cat(gold.size());
  if (opt.by_category) {
    for (std::size_t i = 0; i < gold.size(); ++i) {
      if (gold[i].category) {
        cat[i] = *gold[i].category;
        ++e.category_source["gold taxonomy label"];
      } else {
        cat[i] = categorize(gold[i].text).category;
        ++e.category_source["rule-based categorizer"];
      }
    }
  }
  for (auto& s : systems) {
    std::vector<int> g, p;
    std::map<Category, std::pair<std::vector<int>, std::vector<int>>> per;
    for (std::size_t i = 0; i < gold.size(); ++i) {
      const int pi = pred_at(s, i);
      if (pi < 0 || !gold[i].label) continue;
      g.push_back(idx(*gold[i].label));
      p.push_back(pi);
      if (opt.by_category) {
        per[cat[i]].first.push_back(g.back());
        per[cat[i]].second.push_back(p.back());
      }
    }
    s.all = score(g, p);
    add_intervals(s.all, g, p, opt);
    for (auto& [c, gp] : per) {
      s.by_category[c] = score(gp.first, gp.second);
      add_intervals(s.by_category[c], gp.first, gp.second, opt);
    }
  }
  // Paired comparisons: every pair (i < j), on the claims both systems predicted.
  for (std::size_t a = 0; a < systems.size(); ++a)
    for (std::size_t b = a + 1; b < systems.size(); ++b)
      e.comparisons.push_back(compare_systems(gold, systems[a], systems[b], opt));
  e.systems = std::move(systems);
  return e;
}

namespace {

io::OrderedJson num_or_null(double v) {
  if (std::isnan(v)) return nullptr;
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

io::OrderedJson scores_json(const Scores& s) {
  io::OrderedJson j;
  j["n"] = s.n;
  j["unparseable"] = s.unparseable;
  j["accuracy"] = s.report.accuracy;
  j["macro_f1"] = s.report.macro_f1;
  j["macro_f1_ci95"] = {s.macro_lo, s.macro_hi};
  j["weighted_f1"] = s.report.weighted_f1;
  j["weighted_f1_ci95"] = {s.weighted_lo, s.weighted_hi};
  io::OrderedJson pc = io::OrderedJson::object();
  for (Verdict v : kVerdicts) {
    const auto& c = s.report.per_class[static_cast<std::size_t>(v)];
    io::OrderedJson o;
    o["precision"] = c.precision;
    o["recall"] = c.recall;
    o["f1"] = c.f1;
    o["support"] = c.support;
    pc[std::string(verdict_name(v))] = o;
  }
  j["per_class"] = pc;
  io::OrderedJson conf = io::OrderedJson::object();
  for (Verdict g : kVerdicts) {
    io::OrderedJson row = io::OrderedJson::object();
    for (Verdict p : kVerdicts)
      row[std::string(verdict_name(p))] =
          s.confusion.at(static_cast<std::size_t>(g), static_cast<std::size_t>(p));
    row["unparseable"] = s.confusion.at(static_cast<std::size_t>(g), kUnparseable);
    conf[std::string(verdict_name(g))] = row;
  }
  j["confusion"] = conf;
  return j;
}

std::string pct(double v) { return fmt::format("{:.2f}", 100.0 * v); }

std::string pval(double p) {
  if (std::isnan(p)) return "n/a";
  if (p < 1e-4) return fmt::format("{:.1e}", p);
  return fmt::format("{:.4f}", p);
}

}  // namespace

io::OrderedJson evaluation_json(const Evaluation& e) {
  io::OrderedJson j;
  io::OrderedJson sys = io::OrderedJson::object();
  for (const auto& s : e.systems) {
    io::OrderedJson o = scores_json(s.all);
    io::OrderedJson cats = io::OrderedJson::object();
    for (const auto& [c, sc] : s.by_category) cats[std::string(category_name(c))] = scores_json(sc);
    o["categories"] = cats;
    io::OrderedJson jn;
    jn["by_id"] = s.join.by_id;
    jn["by_text"] = s.join.by_text;
    jn["gold_without_prediction"] = s.join.gold_without_prediction;
    jn["unused_predictions"] = s.join.unused_predictions;
    jn["malformed_records"] = s.issues.size();
    o["join"] = jn;
    sys[s.name] = o;
  }
  j["systems"] = sys;
  io::OrderedJson comps = io::OrderedJson::array();
  for (const auto& c : e.comparisons) {
    io::OrderedJson o;
    o["a"] = c.a;
    o["b"] = c.b;
    o["n"] = c.n;
    o["accuracy_a"] = c.accuracy_a;
    o["accuracy_b"] = c.accuracy_b;
    o["macro_f1_a"] = c.macro_f1_a;
    o["macro_f1_b"] = c.macro_f1_b;
    o["mcnemar"] = {
        {"a_only_correct", c.a_only_correct}, {"b_only_correct", c.b_only_correct}, {"p", c.mcnemar_p}};
    o["bootstrap_macro_f1"] = {{"diff", c.boot_diff}, {"lo", c.boot_lo},  {"hi", c.boot_hi},
                               {"p", c.boot_p},       {"draws", c.draws}, {"seed", c.seed}};
    if (c.ttest_ran) {
      io::OrderedJson t;
      t["folds"] = c.ttest.folds;
      t["seed"] = c.ttest_seed;
      t["folds_from"] = "numcheck::Rng; not the QuanTemp code's numpy RandomState(42) folds";
      t["macro_f1"] = {{"mean_diff", c.ttest.macro.mean_diff},
                       {"t", num_or_null(c.ttest.macro.t)},
                       {"p", num_or_null(c.ttest.macro.p)}};
      t["weighted_f1"] = {{"mean_diff", c.ttest.weighted.mean_diff},
                          {"t", num_or_null(c.ttest.weighted.t)},
                          {"p", num_or_null(c.ttest.weighted.p)}};
      if (!c.ttest_p_orders.empty()) {
        std::vector<double> ps;
        for (const double p : c.ttest_p_orders)
          if (!std::isnan(p)) ps.push_back(p);
        std::sort(ps.begin(), ps.end());
        const std::size_t m = ps.size();
        t["macro_f1_p_over_claim_orders"] = {
            {"orders", c.ttest_p_orders.size()},
            {"how",
             "the claims as given, then shuffled with numcheck::Rng(seed, \"claim-order-<r>\"); each "
             "order cut into the same shuffled folds"},
            {"min", m == 0 ? io::OrderedJson(nullptr) : io::OrderedJson(ps.front())},
            {"median", m == 0 ? io::OrderedJson(nullptr)
                              : io::OrderedJson(m % 2 == 1 ? ps[m / 2] : (ps[m / 2 - 1] + ps[m / 2]) / 2)},
            {"max", m == 0 ? io::OrderedJson(nullptr) : io::OrderedJson(ps.back())}};
      }
      t["fold_macro_f1_a"] = c.ttest.macro_a;
      t["fold_macro_f1_b"] = c.ttest.macro_b;
      o["ttest_kfold"] = t;
    } else {
      o["ttest_kfold"] = nullptr;
    }
    comps.push_back(o);
  }
  j["comparisons"] = comps;
  return j;
}

namespace {

using doc::html::Cell;
using doc::html::Table;

Cell num_cell(std::string t) { return Cell::num(std::move(t)); }

// One row per system: the figures over all claims and how the predictions were joined.
void add_summary(doc::Document& d, const Evaluation& e) {
  const auto num = num_cell;
  Table t;
  t.header = {"system",
              "n",
              "accuracy",
              "M-F1",
              "W-F1",
              "T-F1",
              "F-F1",
              "C-F1",
              "unparseable",
              "joined by id / text",
              "gold unpredicted",
              "unused predictions"};
  for (const auto& s : e.systems) {
    const auto& r = s.all.report;
    t.rows.push_back({Cell::txt(s.name), num(fmt::format("{}", s.all.n)), num(pct(r.accuracy)),
                      num(pct(r.macro_f1)), num(pct(r.weighted_f1)), num(pct(r.per_class[0].f1)),
                      num(pct(r.per_class[1].f1)), num(pct(r.per_class[2].f1)),
                      num(fmt::format("{}", s.all.unparseable)),
                      Cell::txt(fmt::format("{} / {}", s.join.by_id, s.join.by_text)),
                      num(fmt::format("{}", s.join.gold_without_prediction)),
                      num(fmt::format("{}", s.join.unused_predictions))});
  }
  t.note =
      "Scores in percent (F1 with scikit-learn's definitions over the three verdicts; zero_division = 0). "
      "An "
      "unparseable prediction (a label that maps to no verdict) counts as wrong.";
  d.table(std::move(t));
}

// Per system: per-class precision, recall and F1, and the confusion matrix.
void add_per_system(doc::Document& d, const Evaluation& e) {
  const auto num = num_cell;
  for (const auto& s : e.systems) {
    d.heading(2, "system-" + s.name, s.name);
    Table pc;
    pc.header = {"class", "precision", "recall", "F1", "support"};
    for (Verdict v : kVerdicts) {
      const auto& c = s.all.report.per_class[static_cast<std::size_t>(v)];
      pc.rows.push_back({Cell::txt(std::string(verdict_name(v))), num(pct(c.precision)), num(pct(c.recall)),
                         num(pct(c.f1)), num(fmt::format("{}", c.support))});
    }
    d.table(std::move(pc));
    Table cm;
    cm.caption = "Confusion (rows gold, columns predicted)";
    cm.header = {"gold \\ pred", "True", "False", "Conflicting", "unparseable"};
    for (Verdict g : kVerdicts) {
      const auto gi = static_cast<std::size_t>(g);
      cm.rows.push_back({Cell::txt(std::string(verdict_name(g))),
                         num(fmt::format("{}", s.all.confusion.at(gi, 0))),
                         num(fmt::format("{}", s.all.confusion.at(gi, 1))),
                         num(fmt::format("{}", s.all.confusion.at(gi, 2))),
                         num(fmt::format("{}", s.all.confusion.at(gi, kUnparseable)))});
    }
    d.table(std::move(cm));
    for (const auto& c : s.join.conflicts) d.paragraph("Conflicting duplicate: " + c);
  }
}

// Per category, as in Table 2 of the QuanTemp paper.
void add_per_category(doc::Document& d, const Evaluation& e) {
  const auto num = num_cell;
  d.heading(2, "per-category", "Per category (as in Table 2 of the QuanTemp paper)");
  std::string from = "Categories from: ";
  bool first = true;
  for (const auto& [k, v] : e.category_source) {
    from += fmt::format("{}{} ({} claims)", first ? "" : ", ", k, v);
    first = false;
  }
  d.paragraph(from + ".");
  Table t;
  t.header = {"system",     "Stat. M-F1", "Stat. W-F1", "Temp. M-F1", "Temp. W-F1", "Int. M-F1", "Int. W-F1",
              "Comp. M-F1", "Comp. W-F1", "T-F1",       "F-F1",       "C-F1",       "Full M-F1", "Full W-F1"};
  for (const auto& s : e.systems) {
    std::vector<Cell> row{Cell::txt(s.name)};
    for (Category c : kCategories) {
      auto it = s.by_category.find(c);
      row.push_back(num(it == s.by_category.end() ? "-" : pct(it->second.report.macro_f1)));
      row.push_back(num(it == s.by_category.end() ? "-" : pct(it->second.report.weighted_f1)));
    }
    const auto& r = s.all.report;
    for (double v : {r.per_class[0].f1, r.per_class[1].f1, r.per_class[2].f1, r.macro_f1, r.weighted_f1})
      row.push_back(num(pct(v)));
    t.rows.push_back(std::move(row));
  }
  d.table(std::move(t));
  Table n;
  n.header = {"system", "category", "n"};
  for (const auto& s : e.systems)
    for (const auto& [c, sc] : s.by_category)
      n.rows.push_back(
          {Cell::txt(s.name), Cell::txt(std::string(category_name(c))), num(fmt::format("{}", sc.n))});
  d.table(std::move(n));
}

// The paired comparisons: McNemar, the bootstrap of the macro-F1 difference and the 10-fold t-test.
void add_comparisons(doc::Document& d, const Evaluation& e) {
  const auto num = num_cell;
  d.heading(2, "paired-comparisons", "Paired comparisons");
  Table t;
  t.header = {"A",
              "B",
              "n",
              "M-F1 A",
              "M-F1 B",
              "McNemar A-only / B-only",
              "McNemar p",
              "bootstrap ΔM-F1 [95% CI]",
              "bootstrap p",
              "10-fold paired t (M-F1)",
              "t-test p (M-F1)",
              "t-test p (W-F1)"};
  for (const auto& c : e.comparisons) {
    t.rows.push_back({Cell::txt(c.a), Cell::txt(c.b), num(fmt::format("{}", c.n)), num(pct(c.macro_f1_a)),
                      num(pct(c.macro_f1_b)),
                      Cell::txt(fmt::format("{} / {}", c.a_only_correct, c.b_only_correct)),
                      num(pval(c.mcnemar_p)),
                      Cell::txt(fmt::format("{} [{}, {}]", pct(c.boot_diff), pct(c.boot_lo), pct(c.boot_hi))),
                      num(pval(c.boot_p)), num(c.ttest_ran ? fmt::format("{:.3f}", c.ttest.macro.t) : "n/a"),
                      num(c.ttest_ran ? pval(c.ttest.macro.p) : "n/a"),
                      num(c.ttest_ran ? pval(c.ttest.weighted.p) : "n/a")});
  }
  const auto& f = e.comparisons.front();
  t.note = fmt::format(
      "Bootstrap: {} paired resamples of claims (seed {}), percentile interval. t-test: the claims cut "
      "into {} "
      "shuffled folds drawn with numcheck::Rng (seed {}), scipy's ttest_rel on the per-fold scores. This "
      "is "
      "the QuanTemp code's procedure but not its folds (that code draws them with numpy's "
      "RandomState(42)), "
      "so its t and p values differ from that code's.",
      f.draws, f.seed, f.ttest.folds, f.ttest_seed);
  d.table(std::move(t));
}

}  // namespace

std::string evaluation_markdown(const Evaluation& e, bool by_category) {
  doc::Document d;
  d.heading(1, "claim-evaluation", "Claim verdict evaluation");
  d.paragraph(fmt::format("Gold: {} ({} claims{}).", e.gold_path, e.gold_n,
                          e.gold_issues.empty() ? std::string()
                                                : fmt::format(", {} malformed records reported on stderr",
                                                              e.gold_issues.size())));
  add_summary(d, e);
  add_per_system(d, e);
  if (by_category) add_per_category(d, e);
  if (!e.comparisons.empty()) add_comparisons(d, e);
  return d.to_markdown();
}

}  // namespace numcheck::claims
