// numcheck orbit run: sends every prompt of a benchmark to a model behind an OpenAI-compatible
// server (or to the built-in simulated reference system) and records the answers in a run
// directory, crash-safe and resumable. See docs/runner.md.
#include <filesystem>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cli/cli_util.hpp"
#include "cli/command.hpp"
#include "cli/orbit_steps.hpp"
#include "cli/run_flags.hpp"
#include "core/error.hpp"
#include "io/sha256.hpp"
#include "llm/reference.hpp"
#include "llm/runner.hpp"
#include "orbit/benchmark.hpp"
#include "orbit/selection.hpp"

namespace numcheck::cli {
namespace {

struct RunArgs {
  std::string bench;
  std::string out;
  std::string views;      // comma-separated view names; "" = every non-paraphrase view, "all" = every view
  std::string templates;  // comma-separated template ids; "" = every template
  std::optional<std::size_t> bases;
  std::string base_ids;  // file of base ids
  llm::RunOptions opts;
  bool dry_run = false;
};

void setup(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  app.add_option("--bench", args->bench, "Benchmark directory written by `numcheck orbit generate`")
      ->required();
  app.add_option("--out", args->out, "Run directory (run.json, responses.jsonl, errors.jsonl)")->required();
  app.add_option("--bases", args->bases,
                 "Run a stratified, seeded sample of N bases across templates (whole orbits: every selected "
                 "view of each chosen base); the sample for N is contained in the sample for N+1");
  app.add_option("--templates", args->templates, "Comma-separated template ids to run (default: all)");
  app.add_option(
      "--views", args->views,
      "Comma-separated views to run, canonical included (canonical, fraction, scientific, percent, "
      "words, unit, paraphrase1, paraphrase2) or 'all'; default: every view except the paraphrases");
  app.add_option("--base-ids", args->base_ids, "File with the base ids to run, one per line ('#' comments)");
  add_run_flags(app, args->opts);
  app.add_flag("--dry-run", args->dry_run,
               "Print the number of prompts the run would ask and exit (no request; nothing written)");
  app.callback([args] {
    OrbitRunRequest req;
    req.bench_dir = args->bench;
    req.selection.bases = args->bases;
    req.selection.templates = split_list(args->templates);
    req.selection.views = split_list(args->views);
    if (!args->base_ids.empty()) req.selection.base_ids_file = args->base_ids;
    req.options = args->opts;
    req.out = args->out;
    req.keep_until_exit = true;  // the command ends with this run
    req.dry_run = args->dry_run;
    const llm::RunSummary r = run_orbit(req);
    if (args->dry_run) {
      fmt::print("dry run: {} prompts would be asked; no request sent\n", r.total);
      return;
    }
    finish_run(args->out, r, "prompts");
    const std::string responses = (std::filesystem::path(args->out) / "responses.jsonl").string();
    fmt::print("next: numcheck orbit score --bench {} --responses {} --out {}\n", args->bench, responses,
               (std::filesystem::path(args->out) / "scores.jsonl").string());
  });
}

const CommandRegistration reg{
    {"orbit",
     "run",
     "Run a model (OpenAI-compatible endpoint or the simulated reference system) on a "
     "benchmark",
     setup,
     "numcheck orbit run --bench out/bench --out out/run --endpoint http://localhost:8080/v1 --model "
     "qwen3.5-4b",
     {"every prompt answered",
      "some prompts unanswered (see errors.jsonl; run again with --resume to retry them)"}}};

}  // namespace
}  // namespace numcheck::cli
