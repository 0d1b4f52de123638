#pragma once
// The claims section of the main job's report: the Table 2 figures (full-set per-class, macro and
// weighted F1 with 95% bootstrap intervals and the unparseable answers of each system; per category
// in a second, long table) of numcheck's verifiers on the gold-evidence test claims beside the
// released predictions on the same claims and the QuanTemp paper's published figures (marked as
// other data: the full test set), the paired tests, and the cross-validation tables. Every table
// keeps to a width that fits the page. Typed data (ClaimsSection) built from the JSON of
// `claims evaluate --json` and `claims cv --json`; rendered as doc::Document blocks (Markdown,
// HTML, LaTeX) and stored whole in metrics.json.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "doc/document.hpp"
#include "io/json.hpp"

namespace numcheck::verify {

struct Figure {
  std::optional<double> value, lo, hi;  // fractions in [0, 1]
};

struct Table2Row {
  std::string system;
  std::string data;  // whose predictions: "ours" (numcheck's verifiers), "released", "paper (other data)"
  bool other_data = false;
  bool ours = false;  // one of numcheck's own verifiers
  std::size_t n = 0;
  std::array<Figure, 8> categories{};  // statistical, temporal, interval, comparison: (macro, weighted)
  std::array<Figure, 3> classes{};     // True, False, Conflicting F1
  Figure macro, weighted;
  std::size_t unparseable = 0;
};

struct PairedRow {
  std::string a, b;
  std::size_t n = 0;
  double macro_a = 0, macro_b = 0, diff = 0, diff_lo = 0, diff_hi = 0, boot_p = 1, mcnemar_p = 1;
  std::uint64_t a_only = 0, b_only = 0;
};

// One system of the cross-validation; every figure is a mean over seeds (intervals and the paired
// bootstrap p of the macro-F1 difference from the same bootstrap of those means).
struct CvRow {
  std::string system, kind;
  Figure macro, weighted;
  std::array<double, 3> classes{};
  double diff = 0, diff_lo = 0, diff_hi = 0;
  std::optional<double> boot_p;  // absent in cv files written before it existed
};

struct ClaimsSection {
  std::string gold_note, cv_note;
  std::vector<Table2Row> table2;
  std::vector<PairedRow> paired;
  std::vector<CvRow> cv;
  std::vector<std::string> notes;
};

// eval: `claims evaluate --by-category --json`; cv: `claims cv --json` (null to skip); paper:
// data/verify/quantemp_table2.json (null to skip). `ours` names numcheck's own systems in eval
// (the trained verifier first, in bold; the LLM verifier...): they are labelled "ours", every other
// system "released".
[[nodiscard]] ClaimsSection build_claims_section(const io::Json& eval, const io::Json& cv,
                                                 const io::Json& paper, const std::vector<std::string>& ours,
                                                 const std::string& gold_note);

[[nodiscard]] io::OrderedJson section_json(const ClaimsSection& s);
[[nodiscard]] doc::Document section_document(const ClaimsSection& s);

// From the file `claims section --out` writes ({"format": "numcheck-claims-section", "ours" (a name
// or a list of names),
// "gold_note", "notes", "eval", "cv", "paper"}); throws Error naming `where` when it is not one.
[[nodiscard]] ClaimsSection section_from_file_json(const io::Json& j, std::string_view where);

}  // namespace numcheck::verify
