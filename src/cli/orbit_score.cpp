// numcheck orbit score: grades a responses file against a benchmark and writes one score record
// per prompt plus a sidecar manifest (docs/grading.md).
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/core.h>

#include "cli/command.hpp"
#include "cli/orbit_steps.hpp"
#include "core/error.hpp"
#include "orbit/benchmark.hpp"
#include "orbit/score.hpp"
#include "orbit/selection.hpp"

namespace numcheck::cli {
namespace {

struct ScoreArgs {
  std::string bench;
  std::string responses;
  std::string out;
  bool allow_partial = false;
  bool whole = false;
  std::size_t threads = 0;
  bool no_index_cache = false;
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
  app.add_option(
         "--threads", args->threads,
         "Threads that check and grade records side by side (0 = all cores); the scores and the manifest "
         "are the same for any number")
      ->capture_default_str();
  app.add_flag(
      "--no-index-cache", args->no_index_cache,
      "Read and hash bases.jsonl and views.jsonl instead of the benchmark's cached index (kept in "
      "$NUMCHECK_CACHE_DIR, $XDG_CACHE_HOME/numcheck or ~/.cache/numcheck; used only while the files' "
      "size, inode and times are those it was made from, and hashed again unless they last changed "
      "2 s or more before it was made), and write no cache");
  app.footer("See docs/grading.md.");
  app.callback([args] {
    const OrbitScoreResult r = score_orbit(args->bench, args->responses, args->out, args->allow_partial,
                                           args->whole, args->threads, !args->no_index_cache);
    fmt::print("scored {} of {} prompts{}: {} strict correct, {} audit correct{}; wrote {} and {}\n",
               r.scored, r.prompts, r.scope, r.strict_correct, r.audit_correct,
               r.problems == 0 ? "" : fmt::format(" ({} problems reported)", r.problems), args->out,
               orbit::score_manifest_path(args->out).string());
    fmt::print("next: numcheck orbit report --bench {} --scores {} --out {}\n", args->bench, args->out,
               (std::filesystem::path(args->out).parent_path() / "report").string());
  });
}

const CommandRegistration reg{
    {"orbit",
     "score",
     "Grade a responses file against a benchmark: one score record per prompt",
     setup,
     "numcheck orbit score --bench out/bench --responses out/run/responses.jsonl --out out/run/scores.jsonl",
     {"scored", "prompts without a response (nothing written)",
      "malformed, unknown or duplicate records (nothing written), or another "
      "error named on stderr"}}};

}  // namespace
}  // namespace numcheck::cli
