#pragma once
// Scoring a responses file against a benchmark (`numcheck orbit score`, docs/grading.md): every
// response record is graded by the strict parser and the audit layer, and every problem with the
// file (a malformed line, an unknown or duplicate prompt_id, a benchmark prompt without a record)
// is reported with its line number. Nothing is dropped or counted twice without being reported.
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "grade/grade.hpp"
#include "io/json.hpp"
#include "num/units.hpp"
#include "orbit/benchmark.hpp"
#include "orbit/index.hpp"

namespace numcheck::orbit {

enum class ScoreIssueKind : std::uint8_t {
  kMalformed,      // not a JSON object with the required fields of the required types
  kUnknownPrompt,  // prompt_id is not in the benchmark
  kDuplicate,      // a second record for a prompt (the first record is the one scored)
  kMissing,        // a benchmark prompt without a record (line 0)
};
// "malformed", "unknown_prompt", "duplicate", "missing".
[[nodiscard]] std::string_view issue_kind_name(ScoreIssueKind k) noexcept;

struct ScoreIssue {
  ScoreIssueKind kind = ScoreIssueKind::kMalformed;
  std::size_t line = 0;   // 1-based line of the responses file; 0 for a missing prompt
  std::string prompt_id;  // when known
  std::string message;    // what is wrong, without the file:line prefix
};

// One graded prompt.
struct ScoredPrompt {
  std::size_t view_index = 0;  // index into Benchmark::views (the index's prompts: the same order)
  std::size_t line = 0;        // line of the responses file the record came from
  std::string finish_reason;   // "" when the record had null
  std::optional<std::int64_t> completion_tokens;
  grade::Grade grade;
};

// What the manifest counts of the graded records (one per scored prompt). Counting is order-free,
// so the in-memory and the streaming scorers add each record once as it is graded.
struct GradeCounts {
  std::size_t records = 0;
  std::array<std::size_t, grade::kOutcomeCount> strict{};  // by grade::Outcome
  std::array<std::size_t, grade::kOutcomeCount> audit{};
  std::size_t recovered = 0;                   // strict failed, audit correct
  std::size_t multiple_final = 0;              // more than one FINAL line
  std::map<int, std::size_t> magnitude_drops;  // audit magnitude_k -> records

  void add(const grade::Grade& g);
  [[nodiscard]] std::size_t strict_count(grade::Outcome o) const {
    return strict.at(static_cast<std::size_t>(o));
  }
  [[nodiscard]] std::size_t audit_count(grade::Outcome o) const {
    return audit.at(static_cast<std::size_t>(o));
  }
};

// Everything about a scoring pass except the records themselves: what the manifest, the checks
// and the command's summary need.
struct ScoreTally {
  std::vector<ScoreIssue> issues;  // file order; missing prompts last, in benchmark order
  std::size_t lines = 0;           // lines read from the responses file
  std::size_t blank_lines = 0;     // whitespace-only lines (not records; counted, not graded)
  std::string responses_sha256;    // of the bytes read (hashed as they were read)
  // Records for prompts of the whole benchmark outside the run's selection (orbit/selection.hpp):
  // neither graded nor issues; counted in the manifest.
  std::size_t outside_selection = 0;
  GradeCounts counts;  // of the scored records

  [[nodiscard]] std::size_t count(ScoreIssueKind k) const;
};

struct Scores : ScoreTally {
  std::vector<ScoredPrompt> records;  // benchmark (views.jsonl) order
};

// Grades every record of `responses` (JSONL). Throws Error only when the file cannot be read or a
// benchmark view asks for a unit the registry does not know; everything wrong with a record is
// an issue.
// `threads` grade side by side (0: one per core); the result does not depend on it.
[[nodiscard]] Scores score_responses(const Benchmark& bench, const std::filesystem::path& responses,
                                     const num::UnitRegistry& units = num::UnitRegistry::builtin(),
                                     std::size_t threads = 0);
[[nodiscard]] Scores score_responses(const BenchmarkIndex& bench, const std::filesystem::path& responses,
                                     const num::UnitRegistry& units = num::UnitRegistry::builtin(),
                                     std::size_t threads = 0);

// "responses.jsonl:12: duplicate prompt_id 'CV-0001:canonical' (first record at line 3)".
[[nodiscard]] std::string format_issue(const ScoreIssue& issue, const std::filesystem::path& responses);

// When there are issues: throws the Error `orbit score` fails with (kInvalidInput for malformed,
// unknown or duplicate records; kIncomplete when prompts are only missing). No-op otherwise.
void check_complete(const ScoreTally& scores, const std::filesystem::path& responses);

// One score record: prompt_id, base_id, view, family, template, expected, answer_unit,
// finish_reason, completion_tokens (when present), line, strict, audit.
[[nodiscard]] io::OrderedJson score_record(const Benchmark& bench, const ScoredPrompt& p);
[[nodiscard]] io::OrderedJson score_record(const BenchmarkIndex& bench, const ScoredPrompt& p);
// The score line of p (to_line(score_record(bench, p)) and "\n"), written without a DOM.
void append_score_line(std::string& out, const BenchmarkIndex& bench, const ScoredPrompt& p);

// The system that produced a responses file: run.json next to it (fields "model" and
// "simulated") when present, else the file's stem.
struct SystemInfo {
  std::string name;
  bool simulated = false;
  std::string source;  // "run.json" or "file_name"
};
[[nodiscard]] SystemInfo read_system_info(const std::filesystem::path& responses);

// Throws Error when run.json next to `responses` (an `orbit run` folder's) records benchmark files
// (binding.benchmark_sha256) whose SHA-256 differs from `bench`'s: the responses answer another
// benchmark's prompts, and scoring them would grade them against the wrong expected answers (or
// count every record unknown). The message names the file and both hashes. Compares bases.jsonl
// and views.jsonl (what the prompts and answers are); no run.json, or none that records them: no-op.
void check_run_benchmark(const std::filesystem::path& responses, const BenchmarkIndex& bench);

// The sidecar manifest written next to the scores (<out>.manifest.json).
[[nodiscard]] io::OrderedJson score_manifest(const BenchmarkIndex& bench, const ScoreTally& scores,
                                             const std::filesystem::path& responses,
                                             const std::filesystem::path& out, std::string_view scores_sha256,
                                             bool allow_partial);

// Path of the sidecar: "<out>.manifest.json".
[[nodiscard]] std::filesystem::path score_manifest_path(const std::filesystem::path& out);

// Writes the scores (one JSON line per record, benchmark order) and the sidecar, both atomically.
void write_scores(const Benchmark& bench, const Scores& scores, const std::filesystem::path& responses,
                  const std::filesystem::path& out, bool allow_partial);
void write_scores(const BenchmarkIndex& bench, const Scores& scores, const std::filesystem::path& responses,
                  const std::filesystem::path& out, bool allow_partial);

// What `orbit score` does, with memory flat in the number of responses: one pass over
// `responses` grades each record. Score lines of records in benchmark order, give or take what a
// reorder window of `window` bytes holds (a run's records, finished a few hundred prompts apart),
// go straight to the output; once a record comes after a later prompt's line was written, the
// lines go to a spool file next to `out` ("<out>.spool.<pid>", unlinked as soon as it is open, so
// no exit path leaves it behind), keeping only each line's place per prompt. `review` then sees
// the tally (issues, counts) and may change it or throw (check_complete): a throw writes nothing.
// Otherwise the scores file is finished (from the spool in benchmark order, if it was used) and,
// like the manifest, written atomically; both are byte for byte what score_responses +
// write_scores write, whatever the window. `orbit score` passes the compact index
// (orbit/index.hpp); a Benchmark is turned into one.
inline constexpr std::size_t kScoreReorderWindow = std::size_t{4} << 20;
ScoreTally score_to_file(const BenchmarkIndex& bench, const std::filesystem::path& responses,
                         const std::filesystem::path& out, bool allow_partial,
                         const std::function<void(ScoreTally&)>& review,
                         const num::UnitRegistry& units = num::UnitRegistry::builtin(),
                         std::size_t threads = 0, std::size_t window = kScoreReorderWindow);
ScoreTally score_to_file(const Benchmark& bench, const std::filesystem::path& responses,
                         const std::filesystem::path& out, bool allow_partial,
                         const std::function<void(ScoreTally&)>& review,
                         const num::UnitRegistry& units = num::UnitRegistry::builtin(),
                         std::size_t threads = 0);

}  // namespace numcheck::orbit
