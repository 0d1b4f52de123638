#pragma once
// Features of the trained claim verifier, from one evidence record (claims/evidence.hpp):
// word n-grams of the claim and of its evidence, with number tokens canonicalized through the
// quantity layer (claims::find_segments over num::find_numbers, so "1,000" and "one thousand" are
// one token) or kept as written (NumberMode::kSurface, a plain bag of words); the alignment of the
// claim's quantities and periods with the evidence's; the claim category; claim cues; character
// n-grams of the claim's words. With canonical numbers every feature is a function of the
// quantities' exact values, never of how they are written (tests/verify/orbit_invariance_test.cpp).
// Definitions
// and learner settings live in data/verify/features.json; docs/claims-reference.md documents every feature.
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "claims/evidence.hpp"
#include "claims/segment.hpp"
#include "io/json.hpp"
#include "verify/boost.hpp"

namespace numcheck::verify {

enum class NumberMode : std::uint8_t { kCanonical, kSurface };
[[nodiscard]] std::string_view number_mode_name(NumberMode m) noexcept;  // "canonical" | "surface"
[[nodiscard]] NumberMode number_mode_from_name(std::string_view name);   // throws Error (kUsage)

enum class Group : std::uint8_t {
  kClaimNgrams,
  kEvidenceNgrams,
  kAlignment,
  kCategory,
  kCues,
  kClaimChars,
  kEvidenceContext
};
inline constexpr std::size_t kGroupCount = 7;
inline constexpr std::array<std::string_view, kGroupCount> kGroupNames = {
    "claim_ngrams", "evidence_ngrams", "alignment", "category", "cues", "claim_chars", "evidence_context"};

struct GroupSettings {
  bool enabled = true;
  double weight = 1.0;
  // n-gram groups: word n-grams of 1..max_n words (claim_ngrams, evidence_ngrams; 1..4), or
  // character n-grams of 3..max_n bytes inside each word (claim_chars; 3..6).
  int max_n = 1;
};

// kind: "linear" (liblinear over every enabled group), "xgboost" (gradient-boosted trees over the
// dense groups only: alignment, category, cues) or "stacked" (trees over the dense groups plus the
// linear model's three class probabilities, out-of-fold on the training records through
// inner_folds grouped folds, so the trees never see a probability from a model trained on the
// record itself).
struct LearnerSettings {
  std::string kind = "linear";
  int inner_folds = 5;
  // Inner-CV selection of the linear learner (empty: none): every (C, class weight) pair of these
  // lists is scored by the macro-F1 of its out-of-fold predictions over inner_folds grouped folds of
  // the training records, and the best (ties: first in list order) is trained on all of them.
  std::vector<double> select_C;
  std::vector<std::string> select_class_weight;  // "balanced" | "none"
  // Decision offsets of the linear learner (macro-F1 rule): when tune_offsets, an additive offset to
  // the True and Conflicting decision values (False stays 0), each in [-offset_range, offset_range]
  // by steps of 0.05, is chosen by the macro-F1 of the out-of-fold decisions over inner_folds
  // grouped folds of the training records (ties: the offsets nearest 0), and added to the model's
  // bias; `offsets` (per verdict: True, False, Conflicting) records the choice.
  bool tune_offsets = false;
  double offset_range = 1.0;
  std::array<double, 3> offsets{0.0, 0.0, 0.0};
  BoostSettings boost;
  std::string solver = "l2r_lr";  // l2r_lr | l2r_l2loss_svc (both primal, deterministic)
  double C = 1.0;
  double eps = 0.01;
  bool balanced = true;  // class weights n / (k * n_c)
  double bias = 1.0;
};

struct FeatureSettings {
  NumberMode numbers = NumberMode::kCanonical;
  std::size_t min_df = 2;  // n-grams seen in fewer training records are dropped
  std::size_t max_evidence_chars = 1500;
  std::size_t max_evidence_docs = 3;
  std::array<GroupSettings, kGroupCount> groups{};
  std::vector<std::pair<std::string, std::vector<std::vector<std::string>>>> cues;  // name -> phrases (words)
  // Evidence cues (cues group, features "ke:NAME"): phrases matched on the evidence's words.
  std::vector<std::pair<std::string, std::vector<std::vector<std::string>>>> evidence_cues;
  // Evidence context (evidence_context group, features "x:..."): word lists matched on the evidence
  // words within context_chars bytes of an evidence quantity that agrees with a claim quantity
  // ("x:agree:NAME") or contradicts one ("x:contra:NAME"); see EvidenceContext.
  std::vector<std::pair<std::string, std::vector<std::vector<std::string>>>> context_words;
  std::size_t context_chars = 60;
  LearnerSettings learner;

  [[nodiscard]] const GroupSettings& group(Group g) const { return groups[static_cast<std::size_t>(g)]; }
  [[nodiscard]] GroupSettings& group(Group g) { return groups[static_cast<std::size_t>(g)]; }

  [[nodiscard]] static FeatureSettings parse(const io::Json& j, std::string_view where);
  [[nodiscard]] static FeatureSettings load(const std::filesystem::path& path);
  [[nodiscard]] static const FeatureSettings& builtin();  // data/verify/features.json
  [[nodiscard]] io::OrderedJson to_json() const;          // parse(to_json()) gives the same settings
};

// Word tokens of `text`, lower case. kCanonical: each quantity segment becomes one token of its
// exact canonical value, in the canonical unit of its dimension ("<USD 1000>" for "$1,000" and
// "one thousand dollars", "<m 5000>" for "5 km", "<1/8>" for "12.5%", "0.125" and "1/8": a
// percentage is a plain number), a range "<lo..hi>", a bound "<>800000>"; a temporal expression
// "<t:start/end>". With `values` given, the stream holds the quantity's shape instead
// ("<#prop>", "<#num>", "<#USD>"...; see features.cpp) and the exact-value tokens are appended to
// *values, in order. kSurface: numbers stay as written ("1,000", "one", "thousand"); `values` is
// left alone. `segments` are find_segments(text) (computed when null).
[[nodiscard]] std::vector<std::string> tokenize(std::string_view text, NumberMode mode,
                                                const std::vector<claims::Segment>* segments = nullptr,
                                                std::vector<std::string>* values = nullptr);

// How the claim's quantities and periods line up with the evidence's (counts; see docs/claims-reference.md).
struct Alignment {
  std::size_t claim_quantities = 0;  // quantity segments of the claim with a value or a bound
  std::size_t same_dimension = 0;    // ... with a same-dimension quantity in the evidence
  std::size_t exact = 0, within_1pct = 0, within_10pct = 0, contradicting = 0;
  std::size_t in_interval = 0;        // claim value inside an evidence interval
  std::size_t contains_evidence = 0;  // claim interval/bound holds an evidence value
  std::size_t approx_agree = 0, approx_disagree = 0;
  std::size_t trend_claim = 0, trend_agree = 0, trend_contradict = 0;
  std::size_t claim_periods = 0, period_overlap = 0, period_disjoint = 0;
  std::size_t shares = 0, shares_matched = 0, shares_contradicted = 0;
  std::size_t evidence_quantities = 0;
};
[[nodiscard]] Alignment align(const std::vector<claims::Segment>& claim,
                              const std::vector<std::vector<claims::Segment>>& evidence_docs);

// How the evidence documents relate to the claim beyond its quantities' values (evidence_context
// group): how much of the claim a document quotes (the share of the claim's word 3-grams found in
// it, best document), whether the best-quoting document holds a claim quantity exactly, and which
// context words (FeatureSettings::context_words) stand near evidence quantities that agree with a
// claim quantity (same quantity class, within 10%, or inside its interval/bound) or contradict one
// (same class, further apart). Quantities are compared exactly (num::Rational).
struct EvidenceContext {
  double quote = 0;                                    // best document's share of the claim's word 3-grams
  bool quote_doc_exact = false;                        // that document holds a claim quantity's exact value
  bool first_doc_agree = false;                        // the first document holds an agreeing quantity
  std::size_t agreeing = 0, contradicting = 0;         // evidence quantities, over all documents
  std::vector<std::string> agree_words, contra_words;  // names of the lists matched near them
};
[[nodiscard]] EvidenceContext evidence_context(std::string_view claim,
                                               const std::vector<claims::Segment>& claim_segs,
                                               const std::vector<std::string_view>& docs,
                                               const std::vector<std::vector<claims::Segment>>& doc_segs,
                                               const FeatureSettings& s);

// Named features of one record, per group, before vocabulary lookup and normalization.
struct NamedFeatures {
  std::array<std::vector<std::pair<std::string, double>>, kGroupCount> groups;
};
[[nodiscard]] NamedFeatures extract(const claims::EvidenceRecord& r, const FeatureSettings& s);

}  // namespace numcheck::verify
