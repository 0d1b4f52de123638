// numcheck orbit score: grades a responses file against a benchmark and writes one score record
// per prompt plus a sidecar manifest (docs/grading.md).
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/core.h>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "orbit/benchmark.hpp"
#include "orbit/score.hpp"
#include "orbit/selection.hpp"

namespace numcheck::cli {
namespace {

// Problems printed one per line before the summary; the sidecar manifest lists all of them.
constexpr std::size_t kMaxPrintedIssues = 20;

struct ScoreArgs {
  std::string bench;
  std::string responses;
  std::string out;
  bool allow_partial = false;
  bool whole = false;
};

void setup(CLI::App& app) {
  auto args = std::make_shared<ScoreArgs>();
  app.add_option("--bench", args->bench, "Benchmark directory (bases.jsonl, views.jsonl, manifest.json)")
      ->required();
  app.add_option("--responses", args->responses,
                 "Responses JSONL (prompt_id, response, finish_reason; e.g. RUNDIR/responses.jsonl)")
      ->required();
  app.add_option("--out", args->out, "Scores JSONL to write; the manifest goes to <out>.manifest.json")
      ->required();
  app.add_flag("--allow-partial", args->allow_partial,
               "Score the valid records even when some lines are malformed, unknown, duplicated or missing "
               "(every problem is still reported and listed in the manifest)");
  app.add_flag(
      "--whole-benchmark", args->whole,
      "Grade against the whole benchmark even when the run recorded a selection (its unasked prompts "
      "are then missing)");
  app.footer(
      "Exit codes: 0 scored; 1 malformed, unknown or duplicate records (nothing written); 3 prompts without "
      "a response (nothing written). See docs/grading.md.");
  app.callback([args] {
    // A run of a selection (orbit run --bases/--templates/--views/--base-ids) is graded against
    // the benchmark restricted to it: only its prompts can be missing, and records for prompts
    // outside it (left by an earlier, larger session) are counted, not graded.
    const orbit::Benchmark full = orbit::load_benchmark(args->bench);
    const auto sel = args->whole ? std::nullopt : orbit::run_selection(args->responses, full);
    const orbit::Benchmark bench = sel && !sel->whole() ? orbit::restrict(full, *sel) : full;
    orbit::Scores scores = orbit::score_responses(bench, args->responses);
    if (!bench.selection.is_null()) {
      std::erase_if(scores.issues, [&](const orbit::ScoreIssue& i) {
        const bool outside = i.kind == orbit::ScoreIssueKind::kUnknownPrompt && full.find_view(i.prompt_id);
        scores.outside_selection += outside ? 1 : 0;
        return outside;
      });
    }
    std::size_t printed = 0;
    for (const auto& issue : scores.issues) {
      if (printed == kMaxPrintedIssues) {
        fmt::print(stderr,
                   "numcheck: ... and {} more (all are listed in the manifest with --allow-partial)\n",
                   scores.issues.size() - printed);
        break;
      }
      fmt::print(stderr, "numcheck: {}{}\n", args->allow_partial ? "warning: " : "",
                 orbit::format_issue(issue, args->responses));
      ++printed;
    }
    if (!args->allow_partial) orbit::check_complete(scores, args->responses);
    orbit::write_scores(bench, scores, args->responses, args->out, args->allow_partial);
    std::size_t strict = 0;
    std::size_t audit = 0;
    for (const auto& p : scores.records) {
      strict += p.grade.strict.outcome == grade::Outcome::kCorrect ? 1 : 0;
      audit += p.grade.audit.outcome == grade::Outcome::kCorrect ? 1 : 0;
    }
    fmt::print("scored {} of {} prompts{}: {} strict correct, {} audit correct{}; wrote {} and {}\n",
               scores.records.size(), bench.views.size(),
               bench.selection.is_null() ? std::string()
                                         : fmt::format(" of the run's selection ({} of {} bases)",
                                                       bench.bases.size(), full.bases.size()),
               strict, audit,
               scores.issues.empty() ? "" : fmt::format(" ({} problems reported)", scores.issues.size()),
               args->out, orbit::score_manifest_path(args->out).string());
    fmt::print("next: numcheck orbit report --bench {} --scores {} --out {}\n", args->bench, args->out,
               (std::filesystem::path(args->out).parent_path() / "report").string());
  });
}

const CommandRegistration kRegistration{
    {"orbit", "score", "Grade a responses file against a benchmark: one score record per prompt", setup}};

}  // namespace
}  // namespace numcheck::cli
