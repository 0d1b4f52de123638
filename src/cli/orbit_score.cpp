// numcheck orbit score: grades a responses file against a benchmark and writes one score record
// per prompt plus a sidecar manifest (docs/grading.md).
#include <memory>
#include <string>

#include <fmt/core.h>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "orbit/benchmark.hpp"
#include "orbit/score.hpp"

namespace numcheck::cli {
namespace {

// Problems printed one per line before the summary; the sidecar manifest lists all of them.
constexpr std::size_t kMaxPrintedIssues = 20;

struct ScoreArgs {
  std::string bench;
  std::string responses;
  std::string out;
  bool allow_partial = false;
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
  app.footer(
      "Exit codes: 0 scored; 1 malformed, unknown or duplicate records (nothing written); 3 prompts without "
      "a response (nothing written). See docs/grading.md.");
  app.callback([args] {
    const orbit::Benchmark bench = orbit::load_benchmark(args->bench);
    const orbit::Scores scores = orbit::score_responses(bench, args->responses);
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
    fmt::print("scored {} of {} prompts: {} strict correct, {} audit correct{}; wrote {} and {}\n",
               scores.records.size(), bench.views.size(), strict, audit,
               scores.issues.empty() ? "" : fmt::format(" ({} problems reported)", scores.issues.size()),
               args->out, orbit::score_manifest_path(args->out).string());
  });
}

const CommandRegistration kRegistration{
    {"orbit", "score", "Grade a responses file against a benchmark: one score record per prompt", setup}};

}  // namespace
}  // namespace numcheck::cli
