#pragma once
// Score files as the report reads them: the JSONL written by `numcheck orbit score` (one record
// per prompt: prompt_id, base_id, view, family, template, finish_reason, completion_tokens,
// strict{outcome, value, multiple_final}, audit{outcome, value, recovered, rules, magnitude_k})
// and its sidecar manifest `<scores>.manifest.json` (`system`, `simulated`, optionally
// `responses`). Records are checked against the benchmark they claim to score; see
// docs/report.md for every rule.
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/large_array.hpp"
#include "grade/grade.hpp"
#include "io/json.hpp"
#include "num/rational.hpp"
#include "orbit/benchmark.hpp"

namespace numcheck::report {

// Outcomes and layers are grade's (grade/grade.hpp): the grader's six outcomes plus kMissing for a
// prompt of the benchmark that has no score record (a failure, never a drop).
using grade::kLayerNames;
using grade::kOutcomeCount;
using grade::kOutcomeNames;
using grade::Layer;
using grade::Outcome;
using grade::outcome_from_name;
using grade::outcome_name;

struct LayerScore {
  Outcome outcome = Outcome::kMissing;
  std::optional<num::Rational> value;  // parsed value in the canonical unit (correct/value_error)
  // Only for the parseable outcomes: the value parsed and converted. Invariance compares these.
  [[nodiscard]] bool parsed() const noexcept {
    return (outcome == Outcome::kCorrect || outcome == Outcome::kValueError) && value.has_value();
  }
};

struct ScoredPrompt {
  bool present = false;  // false: no record for this prompt (both layers kMissing)
  std::size_t line = 0;  // line in the scores file
  std::array<LayerScore, 2> layer;
  std::string finish_reason;  // "" when the record has none
  std::optional<std::uint64_t> completion_tokens;
  bool multiple_final = false;
  bool recovered = false;  // audit recovered a strict failure
  std::vector<std::string> rules;
  std::optional<int> magnitude_k;  // audit's, as recorded
  // Raw response text when known (record or responses file; see load_scores' examples_per_view).
  std::optional<std::string> response;
};

struct SystemScores {
  std::string name;
  bool simulated = false;
  std::filesystem::path scores_path;
  std::optional<std::filesystem::path> manifest_path;
  io::OrderedJson manifest;                // the sidecar (null when absent)
  core::HugeVector<ScoredPrompt> by_view;  // indexed like Benchmark::views
  std::size_t records = 0;                 // records read
  std::size_t scored_orbit_prompts = 0;    // records for canonical/family views
  std::size_t ignored = 0;                 // records for other views (paraphrases): not in metrics
  std::size_t missing = 0;                 // canonical/family prompts without a record
  std::size_t responses_attached = 0;      // prompts with response text
  // Provenance: the run.json of the run folder the responses came from (the responses file's
  // folder, else the scores file's), null when there is none; and the distinct
  // system_fingerprint values of the response records, in order of first appearance.
  io::OrderedJson run;
  std::optional<std::filesystem::path> run_path;
  std::vector<std::string> fingerprints;
  std::optional<std::filesystem::path> responses_path;  // the responses file read, when one was
};

// True for the views the orbit metrics use: "canonical" and the five families.
[[nodiscard]] bool is_orbit_view(std::string_view view) noexcept;

// Loads one scores file against `bench`. The name is `name` if given, else the sidecar's `system`,
// else the file stem. `responses` (optional) is a responses JSONL (prompt_id, response) whose
// text is attached for the report's examples; otherwise the records' own `response` fields, else
// the sidecar's `responses` path when that file exists. Throws Error naming file:line for a
// malformed record, an unknown prompt, a duplicate, a record that contradicts the benchmark
// (base, view, template, or a `correct`/`value_error` whose value disagrees with the expected
// answer).
//
// `examples_per_view` bounds the response text kept from the responses file to what the report's
// examples show: per view, the first that many (benchmark order) audit failures with text; the
// other prompts' text is counted (responses_attached) but not kept. kAllResponses keeps every text.
inline constexpr std::size_t kAllResponses = static_cast<std::size_t>(-1);
// `hashes`: files' SHA-256 computed ahead (hash_named_responses), used instead of hashing them
// again.
using FileHashes = std::map<std::filesystem::path, std::string>;
[[nodiscard]] SystemScores load_scores(const std::filesystem::path& scores, const orbit::Benchmark& bench,
                                       const std::optional<std::string>& name = std::nullopt,
                                       const std::optional<std::filesystem::path>& responses = std::nullopt,
                                       std::size_t examples_per_view = kAllResponses,
                                       const FileHashes* hashes = nullptr);

// The SHA-256 of the responses file each scores file's sidecar names with a recorded sha256,
// where load_scores looks for it (the files it would hash). orbit report computes them while it
// loads the benchmark. What cannot be read is left out, for load_scores to report.
[[nodiscard]] FileHashes hash_named_responses(const std::vector<std::filesystem::path>& scores);

// The sidecar path of a scores file: `<scores>.manifest.json` if it exists, else
// `<scores without extension>.manifest.json` if that exists, else nullopt.
[[nodiscard]] std::optional<std::filesystem::path> find_sidecar(const std::filesystem::path& scores);

}  // namespace numcheck::report
