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
  app.footer(
      "Exit codes: 0 every prompt answered, 1 error, 2 usage error, 3 some prompts unanswered (see "
      "errors.jsonl; "
      "run again with --resume to retry them).");
  app.callback([args] {
    // Options first (a usage error should not wait for the benchmark to load); the reference
    // system's solver is bound once the benchmark is loaded.
    llm::SolveFn solver;
    auto backend =
        llm::make_backend(args->opts, [&solver](std::string_view id, std::string_view prompt,
                                                std::string* why) { return solver(id, prompt, why); });
    llm::RunSettings s = llm::settings_from(args->opts);
    auto bench = std::make_shared<const orbit::Benchmark>(orbit::load_benchmark(args->bench));
    solver = llm::benchmark_solver(bench);
    orbit::SelectionSpec spec;
    spec.bases = args->bases;
    spec.templates = split_list(args->templates);
    spec.views = split_list(args->views);
    if (!args->base_ids.empty()) spec.base_ids_file = args->base_ids;
    const orbit::Selection sel = orbit::select(*bench, spec);
    const orbit::Benchmark chosen = orbit::restrict(*bench, sel);
    std::vector<llm::WorkItem> items;
    for (const auto& v : chosen.views) {
      llm::WorkItem it;
      it.item_id = v.prompt_id;
      it.prompt = v.prompt;
      it.fields["base_id"] = v.base_id;
      it.fields["template"] = v.template_id;
      it.fields["view"] = v.view;
      items.push_back(std::move(it));
    }
    if (items.empty())
      fail(ErrorCode::kUsage, "no prompts selected (check --views, --templates, --base-ids)");

    s.kind = "orbit run";
    s.id_field = "prompt_id";
    io::OrderedJson files = io::OrderedJson::object();
    for (const auto& [name, hash] : bench->file_sha256) files[name] = hash;
    files["manifest.json"] = io::sha256_hex(bench->manifest_json);
    s.binding["benchmark_sha256"] = files;
    io::OrderedJson selection = io::OrderedJson::object();
    selection["benchmark_dir"] = args->bench;
    const io::OrderedJson recorded = orbit::to_json(sel, *bench);
    for (const auto& [k, v] : recorded.items()) selection[k] = v;
    s.info["selection"] = selection;
    if (backend->simulated()) {
      s.info["inject"] = llm::to_json(llm::parse_fault_rates(args->opts.inject));
    }

    const llm::RunSummary r = run_session(items, s, *backend, args->out);
    finish_run(args->out, r, "prompts");
    const std::string responses = (std::filesystem::path(args->out) / "responses.jsonl").string();
    fmt::print("next: numcheck orbit score --bench {} --responses {} --out {}\n", args->bench, responses,
               (std::filesystem::path(args->out) / "scores.jsonl").string());
  });
}

const CommandRegistration reg{
    {"orbit", "run",
     "Run a model (OpenAI-compatible endpoint or the simulated reference system) on a "
     "benchmark",
     setup}};

}  // namespace
}  // namespace numcheck::cli
