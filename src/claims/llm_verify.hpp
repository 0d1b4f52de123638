#pragma once
// The pure parts of the LLM verifier (docs/claims-reference.md, "LLM verifier"): the QuanTemp paper's
// veracity prompts (Tables 11 and 12, data/claims/prompts/verify_*.json), few-shot example
// selection that never shows a model the claim it verifies, and the strict verdict parser.
//
// Verdict answers: the text's last verdict marker, "Label:" or "Verdict:" (case-insensitive; the
// paper's prompts ask for one or the other, each prompt file names its own in "verdict_marker",
// and the QuanTemp code parses both), must be followed by exactly one of SUPPORTS, REFUTES,
// CONFLICTING (case-insensitive; '*' emphasis and a final '.' allowed) and nothing else; an
// earlier marker (of either kind) naming a different verdict makes the answer ambiguous. The
// justification is the text before the last marker (a leading "Justification:" removed). Any
// other answer is unparseable: its own outcome, scored as wrong, never dropped.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "claims/labels.hpp"
#include "claims/prompt.hpp"
#include "io/json.hpp"

namespace numcheck::claims {

struct VerdictParse {
  bool ok = false;
  Verdict verdict = Verdict::kFalse;
  std::string label_word;  // "SUPPORTS", "REFUTES", "CONFLICTING" as the model wrote it (upper-cased)
  std::string justification;
  std::string reason;  // why it failed
};
[[nodiscard]] VerdictParse parse_verdict(std::string_view response);

// The markers parse_verdict reads, as a prompt file writes them.
inline constexpr std::string_view kVerdictMarkers[] = {"Label:", "Verdict:"};
// Whether `marker` is one of kVerdictMarkers (a prompt file's "verdict_marker" must be).
[[nodiscard]] bool is_verdict_marker(std::string_view marker) noexcept;

// The model's word for a verdict: True -> SUPPORTS, False -> REFUTES, Conflicting -> CONFLICTING.
[[nodiscard]] std::string_view verdict_word(Verdict v) noexcept;

// What the verifier sees of one claim: its text, questions and evidence texts, joined.
struct VerifyInput {
  std::string id;
  std::string claim;
  std::optional<Verdict> label;  // gold, when known (shots need it)
  std::vector<std::string> questions;
  std::vector<std::string> evidence;  // snippet texts, best first
};

// Prompt rendering limits: evidence is cut to this many bytes (at a UTF-8 boundary) per claim.
struct PromptLimits {
  std::size_t evidence_bytes = 3000;       // the claim being verified
  std::size_t shot_evidence_bytes = 1000;  // each in-context example
};

// The user message: zero-shot (shots empty, Table 12 template) or few-shot (Table 11 template).
[[nodiscard]] std::string verify_prompt(const PromptSpec& spec, const VerifyInput& claim,
                                        const std::vector<const VerifyInput*>& shots,
                                        const PromptLimits& limits);

// kRandom: seeded; kSimilar: TF-IDF cosine between claim texts; kBm25: BM25 scores of the pool's
// claim texts for the claim as query, from a scorer set with ShotSelector::set_scorer (the claims
// library does not depend on the retrieval index; claimsllm plugs it in).
enum class ShotSelection : std::uint8_t { kRandom, kSimilar, kBm25 };
[[nodiscard]] std::string_view shot_selection_name(
    ShotSelection s) noexcept;  // "random" | "similar" | "bm25"
[[nodiscard]] std::optional<ShotSelection> shot_selection_from_name(std::string_view name) noexcept;

// Grouped fold assignment: near-duplicate claims (claims/normalize.hpp: the same normalize_claim
// key, or reworded above the word-overlap threshold, and so on transitively) share a fold; groups are
// shuffled with Rng(seed, "llm-verify-folds") and dealt round robin. Returns one fold index per text.
[[nodiscard]] std::vector<std::size_t> grouped_folds(const std::vector<std::string>& texts, std::size_t folds,
                                                     std::uint64_t seed);

// Picks k labelled examples for a claim from a pool. Never the claim itself: no pool entry with
// the same id or the same normalize_claim key (quote styles, dashes, case and spaces ignored), and, when
// folds are given (pool = the evaluated set), only entries of other folds. Random: Rng(seed, "llm-shots:" +
// id), so the choice for a claim does not depend on the order claims are verified in. Similar: TF-IDF cosine
// between claim texts (text_metrics.hpp); BM25: the scorer's score per pool entry; both highest first, ties
// by pool order.
class ShotSelector {
 public:
  // Scores of every pool entry (in pool order) for a claim text as the query.
  using PoolScorer = std::function<std::vector<double>(std::string_view claim_text)>;
  ShotSelector(std::vector<VerifyInput> pool, ShotSelection how, std::uint64_t seed);
  void set_scorer(PoolScorer scorer) { scorer_ = std::move(scorer); }
  // pool_folds[i] is pool entry i's fold (empty: no fold constraint).
  void set_folds(std::vector<std::size_t> pool_folds) { folds_ = std::move(pool_folds); }
  [[nodiscard]] std::vector<const VerifyInput*> select(const VerifyInput& claim, std::size_t k,
                                                       std::optional<std::size_t> claim_fold) const;
  [[nodiscard]] const std::vector<VerifyInput>& pool() const noexcept { return pool_; }

 private:
  std::vector<VerifyInput> pool_;
  std::vector<std::string> keys_;
  std::vector<std::size_t> folds_;
  ShotSelection how_;
  std::uint64_t seed_;
  struct Index;
  std::shared_ptr<const Index> index_;
  PoolScorer scorer_;
};

// One prediction record (JSONL, read by `claims evaluate`):
//   {"id", "claim", "label": "True"|"False"|"Conflicting"|"unparseable", "status": "ok" |
//    "parse_failure" | "error", "justification"?, "gold"?, "shots": [ids], "reason"?, "raw"?}
struct VerifyRecord {
  std::string id, claim;
  std::string status = "ok";
  std::optional<Verdict> verdict;
  std::string justification;
  std::optional<Verdict> gold;
  std::vector<std::string> shots;
  std::string reason;
  std::optional<std::string> raw;
};
inline constexpr std::string_view kUnparseableLabel = "unparseable";
[[nodiscard]] io::OrderedJson verify_record_json(const VerifyRecord& r);

}  // namespace numcheck::claims
