#include "claimorbit/render.hpp"

#include <fmt/format.h>

#include "doc/html.hpp"

namespace numcheck::claimorbit {

namespace {

using doc::html::Cell;
using doc::html::Table;

std::string pct(double x) { return fmt::format("{:.1f}", 100.0 * x); }
std::string ci(const stats::Interval& i) {
  return fmt::format("[{:.1f}, {:.1f}]", 100.0 * i.lo, 100.0 * i.hi);
}
std::string signed_pts(double x) { return fmt::format("{:+.1f}", 100.0 * x); }

std::string flips_text(const PairStats& s) {
  std::string out;
  for (const auto& [k, v] : s.flips) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", k, v);
  return out.empty() ? "-" : out;
}

// Invariance of one row: the share with its Wilson interval, bold below 95%; "no pairs" when no
// (claim, variant) pair was scored (a 0.0 there would read as a measured total failure).
Cell invariance_cell(const PairStats& s) {
  if (s.pairs == 0) return Cell::num("no pairs");
  return Cell::num(fmt::format("{} {}", pct(s.invariance()), ci(s.invariance_ci)), s.invariance() < 0.95);
}

void invariance_row(Table& t, const std::string& system, const std::string& what, const PairStats& s) {
  t.rows.push_back({Cell::txt(system), Cell::txt(what), Cell::num(fmt::format("{}", s.pairs)),
                    invariance_cell(s), Cell::txt(s.pairs == 0 ? "-" : flips_text(s))});
}

void accuracy_row(Table& t, const std::string& system, const std::string& what, const PairStats& s) {
  std::vector<Cell> row = {Cell::txt(system), Cell::txt(what), Cell::num(fmt::format("{}", s.gold_pairs))};
  if (s.gold_pairs > 0) {
    row.push_back(Cell::num(pct(s.accuracy_original)));
    row.push_back(Cell::num(pct(s.accuracy_variant)));
    row.push_back(
        Cell::num(fmt::format("{} {}", signed_pts(s.accuracy_variant - s.accuracy_original), ci(s.diff_ci))));
    row.push_back(Cell::num(
        fmt::format("{}/{}; p={:.3g}", s.original_only_correct, s.variant_only_correct, s.mcnemar_p),
        s.mcnemar_p < 0.05));
  } else {
    row.push_back(Cell::num("no pairs"));
    for (int i = 0; i < 3; ++i) row.push_back(Cell::num("-"));
  }
  t.rows.push_back(std::move(row));
}

// Two narrow tables instead of one wide one: invariance (every pair), accuracy (pairs with gold).
Table invariance_table(std::string caption, std::string first) {
  Table t;
  t.caption = std::move(caption);
  t.header = {"system", std::move(first), "pairs", "invariance % [95% Wilson]", "flips (original->variant)"};
  return t;
}

Table accuracy_table(std::string caption, std::string first) {
  Table t;
  t.caption = std::move(caption);
  t.header = {"system", std::move(first), "pairs", "orig. %", "var. %", "diff. [95% CI]", "McNemar b/c; p"};
  t.note =
      "Accuracy, in percent, on the original (orig.) and the variant (var.) of the pairs whose claim has a "
      "gold label. The difference (variant minus "
      "original, in points) has a claim-clustered bootstrap interval; McNemar's exact test asks whether the "
      "pairs only the original "
      "got right (b) and only the variant got right (c) differ in number.";
  return t;
}

}  // namespace

std::string marked_text(const std::string& text, const std::vector<Span>& spans) {
  std::string out;
  std::size_t at = 0;
  for (const auto& s : spans) {
    if (s.begin < at || s.end > text.size()) break;
    out += text.substr(at, s.begin - at) + "[[" + text.substr(s.begin, s.end - s.begin) + "]]";
    at = s.end;
  }
  return out + text.substr(std::min(at, text.size()));
}

std::string marked_html(const std::string& text, const std::vector<Span>& spans) {
  using doc::html::html_escape;
  std::string out;
  std::size_t at = 0;
  for (const auto& s : spans) {
    if (s.begin < at || s.end > text.size()) break;
    out += html_escape(text.substr(at, s.begin - at)) + "<mark>" +
           html_escape(text.substr(s.begin, s.end - s.begin)) + "</mark>";
    at = s.end;
  }
  return out + html_escape(text.substr(std::min(at, text.size())));
}

void add_section(doc::Document& doc, const std::vector<OrbitAnalysis>& systems) {
  doc.heading(2, "claim-orbits", "Claim orbits: verdict invariance under exact rewrites of quantities");
  doc.paragraph(
      "Each claim's quantities were rewritten into exactly equivalent written forms (every other byte kept; "
      "each "
      "variant reads back to the same exact quantities). Invariance is the share of (claim, variant) pairs "
      "whose "
      "verdict equals the verdict on the original claim; a verifier that checks the number, not its "
      "spelling, "
      "scores 100%. The accuracy tables compare the original and the variant on claims with a gold label; "
      "the "
      "difference's interval resamples claims (all variants of a claim together); McNemar b/c counts pairs "
      "only "
      "the original / only the variant got right. A verifier that reads every quantity as its canonical "
      "value (numcheck's trained verifier with canonical numbers) is given the same input for every variant, "
      "so it is invariant by construction: its 100% checks the pipeline, not an understanding of written "
      "forms. A form is used only where a writer would use it: number words for integers of at most two "
      "significant digits, p/q for ratios between 0 and 1, a percentage for a number written as a ratio, "
      "e-notation from a million up, another unit only within that unit's plausible range "
      "(data/claims/orbit.json and orbit_units.json).");
  Table orbit;
  orbit.caption = "Orbit-level invariance: every variant of a claim gets the original's verdict";
  orbit.header = {"system",
                  "claims",
                  "scored claims",
                  "orbits invariant",
                  "share % [95% Wilson]",
                  "missing (orig. / var.)"};
  orbit.note = "missing: ids with no verdict, originals / variants (no answer or an unparseable one).";
  for (const auto& a : systems)
    orbit.rows.push_back(
        {Cell::txt(a.system), Cell::num(fmt::format("{}", a.claims)),
         Cell::num(fmt::format("{}", a.scored_claims)), Cell::num(fmt::format("{}", a.orbits_invariant)),
         Cell::num(a.orbits > 0 ? fmt::format("{} {}", pct(double(a.orbits_invariant) / double(a.orbits)),
                                              ci(a.orbit_invariance_ci))
                                : "no scored orbits"),
         Cell::num(fmt::format("{} / {}", a.missing_original, a.missing_variants))});
  doc.table(std::move(orbit));
  Table forms = invariance_table("Invariance per form (systems side by side)", "form");
  Table forms_acc = accuracy_table("Accuracy on original and variant, per form", "form");
  bool any_gold = false;
  for (const auto& a : systems) {
    for (const auto& [f, s] : a.by_form) {
      invariance_row(forms, a.system, f, s);
      accuracy_row(forms_acc, a.system, f, s);
    }
    invariance_row(forms, a.system, "all forms", a.all);
    accuracy_row(forms_acc, a.system, "all forms", a.all);
    any_gold = any_gold || a.all.gold_pairs > 0;
  }
  doc.table(std::move(forms));
  if (any_gold) doc.table(std::move(forms_acc));
  Table cats = invariance_table("Invariance per claim category (all forms pooled)", "category");
  Table cats_acc = accuracy_table("Accuracy per claim category (all forms pooled)", "category");
  for (const auto& a : systems)
    for (const auto& [c, s] : a.by_category) {
      invariance_row(cats, a.system, c, s);
      accuracy_row(cats_acc, a.system, c, s);
    }
  doc.table(std::move(cats));
  if (any_gold) doc.table(std::move(cats_acc));
  for (const auto& a : systems) {
    if (a.examples.empty()) continue;
    Table ex;
    ex.caption = fmt::format("Example flips, {} (rewritten span marked)", a.system);
    ex.header = {"claim", "form", "variant", "original -> variant verdict", "gold"};
    for (const auto& e : a.examples) {
      Cell v = Cell::txt(marked_text(e.variant_text, e.spans));
      v.html = marked_html(e.variant_text, e.spans);
      ex.rows.push_back({Cell::txt(e.claim_id), Cell::txt(e.form), std::move(v),
                         Cell::txt(fmt::format("{} -> {}", claims::verdict_name(e.original),
                                               claims::verdict_name(e.variant))),
                         Cell::txt(e.gold ? std::string(claims::verdict_name(*e.gold)) : "-")});
    }
    doc.table(std::move(ex), false);
  }
}

}  // namespace numcheck::claimorbit
