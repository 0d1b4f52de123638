#pragma once
// Claim-orbit analysis: given the orbits (claims.jsonl of `claims orbit generate`) and one
// verifier's verdict for each original claim and variant, how often does the verdict survive an
// exact rewrite of a quantity? Per form: invariance (share of claims whose variant's verdict equals
// the original's) with a Wilson interval, flips by direction, and with gold labels the accuracy on
// original vs variant with an exact McNemar test and a claim-clustered bootstrap interval of the
// difference; the same per category and over all forms; orbit-level invariance (every variant of a
// claim agrees with the original). docs/claim-orbits.md defines every figure.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "claimorbit/orbit.hpp"
#include "claims/claim.hpp"
#include "claims/evidence.hpp"
#include "io/json.hpp"
#include "stats/interval.hpp"

namespace numcheck::claimorbit {

// Verdicts keyed by id: a claim id for the original claim, "<claim id>#<form>" for a variant.
using Verdicts = std::map<std::string, claims::Verdict>;

// Reads one verifier's verdicts: a `variant_id,verdict` CSV (header required), or, for a file
// ending in .jsonl, the predictions.jsonl of `claims verify` (records {"id", "label"}). Verdicts go
// through the label map, so "True", "SUPPORTS", "Half True/False" all work. In JSONL a label
// "unparseable" or null (a model answer that did not parse) is no verdict: the id is left out and
// counted in *unparseable (when given), so the analysis reports it as missing, never guesses it.
// Throws Error naming file:line on a malformed record or an unknown verdict, and on two different
// verdicts for one id.
[[nodiscard]] Verdicts read_verdicts(const std::filesystem::path& path, std::size_t* unparseable = nullptr);

// The evidence records a verifier reads for a set of orbits: for each orbit whose claim id has a
// record in `evidence`, the original (the claim id, the orbit's claim text) and every variant
// (variant id, variant text), all with the original claim's evidence, label and questions, so only
// the claim text changes. Orbits without evidence are counted in *without_evidence.
[[nodiscard]] std::vector<claims::EvidenceRecord> orbit_evidence(
    const std::vector<ClaimOrbit>& orbits, const std::map<std::string, claims::EvidenceRecord>& evidence,
    std::size_t* without_evidence = nullptr);

// Paired comparison of original vs variant on a set of (claim, variant) pairs.
struct PairStats {
  std::size_t pairs = 0, claims = 0, invariant = 0;
  stats::Interval invariance_ci;             // Wilson 95% over pairs
  std::map<std::string, std::size_t> flips;  // "True->False": original verdict -> variant verdict
  // With gold labels (pairs whose claim has one):
  std::size_t gold_pairs = 0, original_correct = 0, variant_correct = 0;
  std::size_t original_only_correct = 0, variant_only_correct = 0;  // McNemar's discordant pairs
  double accuracy_original = 0, accuracy_variant = 0, mcnemar_p = 1;
  stats::Interval diff_ci;  // variant - original accuracy, 95% bootstrap, claims resampled
  [[nodiscard]] double invariance() const { return pairs > 0 ? double(invariant) / double(pairs) : 0.0; }
};

struct Flip {
  std::string claim_id, form, claim, variant_text;
  std::vector<Span> spans;
  claims::Verdict original{}, variant{};
  std::optional<claims::Verdict> gold;
};

struct AnalyzeOptions {
  std::size_t draws = 10000;
  std::uint64_t seed = 20240714;
  std::size_t max_examples = 10;
};

struct OrbitAnalysis {
  std::string system;  // name of the verifier / predictions
  std::size_t claims = 0, claims_with_variants = 0, scored_claims = 0;
  std::size_t missing_original = 0, missing_variants = 0;  // ids with no verdict
  std::vector<std::pair<std::string, PairStats>> by_form;  // in the forms' order
  PairStats all;                                           // all forms pooled (claims as clusters)
  std::map<std::string, PairStats> by_category;            // all forms pooled, per claim category
  std::size_t orbits = 0, orbits_invariant = 0;            // claims with >= 1 scored variant
  stats::Interval orbit_invariance_ci;
  std::vector<Flip> examples;  // first flips in file order, at most max_examples
  std::size_t draws = 0;
  std::uint64_t seed = 0;
};

// `gold` and `categories` are keyed by claim id (missing = unknown; categories default to the
// rule-based categorizer on the claim text).
[[nodiscard]] OrbitAnalysis analyze(const std::vector<ClaimOrbit>& orbits, const Verdicts& verdicts,
                                    const std::map<std::string, claims::Verdict>& gold,
                                    const std::map<std::string, claims::Category>& categories,
                                    const AnalyzeOptions& opt = {}, std::string system = "system");

[[nodiscard]] io::OrderedJson analysis_json(const OrbitAnalysis& a);
// The inverse of analysis_json (what `orbit report --claim-orbits` reads back from the metrics.json
// of `claims orbit report --out`); throws Error naming `where` and the field on anything malformed,
// including a span outside its variant text.
[[nodiscard]] OrbitAnalysis analysis_from_json(const io::Json& j, std::string_view where);

}  // namespace numcheck::claimorbit
