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
  // The QuanTemp code's 10-fold paired t-test (claims evaluate's ttest_kfold), when the eval file has
  // it: its fold scheme in words, the macro-F1 p, and that p's spread over orders of the claims cut
  // with the same scheme (min, median, max over `orders`; absent in older eval files).
  std::optional<double> ttest_p;
  std::string ttest_scheme;
  std::size_t orders = 0;
  std::optional<double> p_min, p_median, p_max;
};

// One system of the cross-validation; every figure is a mean over seeds (intervals and the paired
// bootstrap p of the macro-F1 difference from the same bootstrap of those means).
struct CvRow {
  std::string system, kind;
  Figure macro, weighted;
  std::array<double, 3> classes{};
  double diff = 0, diff_lo = 0, diff_hi = 0;
  std::optional<double> boot_p;         // absent in cv files written before it existed
  std::vector<double> boot_p_per_seed;  // one p per fold draw (empty in older cv files)
};

struct ClaimsSection {
  std::string gold_note, cv_note;
  std::string cv_scheme;   // the cv's fold scheme in words (cv file's "fold_scheme"; empty in older files)
  std::string trained_on;  // what numcheck's trained verifier was trained on (trained_on_note)
  std::string near_duplicates;  // near-duplicates across the claim files (near_duplicates_note)
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

// One paragraph saying what the trained verifier `name` was trained on, from its model file's JSON
// (`claims train --out`): learner, numbers, the training records' count, labels and SHA-256, and
// `data` (what those records are, as the caller knows it; may be empty). Throws Error naming
// `where` when `model` is not a verifier model.
[[nodiscard]] std::string trained_on_note(const io::Json& model, const std::string& name,
                                          const std::string& data, std::string_view where);

// One paragraph counting the near-duplicate claims across claim files, from the JSON of `claims stats
// --near-duplicates` (per pair of files: same text, reworded, claims of the second file with a twin
// in the first). Throws Error naming `where` when `j` is not that JSON.
[[nodiscard]] std::string near_duplicates_note(const io::Json& j, std::string_view where);

// From the file `claims section --out` writes ({"format": "numcheck-claims-section", "ours" (a name
// or a list of names), "gold_note", "trained_on" (optional), "notes", "eval", "cv", "paper"}); throws Error
// naming `where` when it is not one.
[[nodiscard]] ClaimsSection section_from_file_json(const io::Json& j, std::string_view where);

}  // namespace numcheck::verify
