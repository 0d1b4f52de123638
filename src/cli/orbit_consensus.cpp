// numcheck orbit consensus plan|run|analyze: the consensus study (H3). See docs/consensus.md.
//   plan     the call plan for the study subset (arms, tiers, seeds, sampling, caps)
//   run      executes the plan through the shared runner (same backend flags as `orbit run`)
//   analyze  grades the runs and writes consensus.json, consensus.md and consensus.html
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cli/cli_util.hpp"
#include "cli/command.hpp"
#include "cli/orbit_steps.hpp"
#include "cli/run_flags.hpp"
#include "consensus/plan.hpp"
#include "consensus/study.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"
#include "llm/reference.hpp"
#include "llm/runner.hpp"
#include "orbit/benchmark.hpp"

namespace numcheck::cli {
namespace {

// ---- plan --------------------------------------------------------------------------------------

struct PlanArgs {
  std::string bench;
  std::string out;
  std::string templates = "CV,DD,RL,FC";
  std::vector<std::string> third_view;
  std::string tiers = "stochastic,deterministic";
  consensus::PlanOptions options;
};

void setup_plan(CLI::App& app) {
  auto a = std::make_shared<PlanArgs>();
  app.add_option("--bench", a->bench,
                 "Benchmark directory generated with `numcheck orbit generate --paraphrases`")
      ->required();
  app.footer(help_footer("numcheck orbit consensus plan --bench out/h3 --out plan.json", {"plan written"}));
  app.add_option("--out", a->out, "Plan file to write (JSON)")->required();
  app.add_option("--templates", a->templates, "Comma-separated study templates")->capture_default_str();
  app.add_option("--per-template", a->options.per_template, "Bases per template (the first N by id)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--seed", a->options.seed, "Seed s: call position i (0, 1, 2) of every arm uses seed s + i")
      ->capture_default_str();
  app.add_option("--max-tokens", a->options.max_tokens, "Generation cap shared by every call")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--temperature", a->options.stochastic.temperature, "Stochastic tier: sampling temperature")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  app.add_option("--top-p", a->options.stochastic.top_p, "Stochastic tier: nucleus top_p")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--top-k", a->options.stochastic.top_k, "Stochastic tier: top_k (0 = off on most servers)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--third-view", a->third_view,
                 "TEMPLATE=VIEW: third representation call of a template (default FC=percent, others unit)");
  app.add_option("--tiers", a->tiers, "Comma-separated tiers: stochastic, deterministic")
      ->capture_default_str();
  app.callback([a] {
    consensus::PlanOptions o = a->options;
    o.templates = split_list(a->templates);
    o.tiers = split_list(a->tiers);
    for (const auto& tv : a->third_view) {
      const auto eq = tv.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == tv.size()) {
        fail(ErrorCode::kUsage, "--third-view '{}': expected TEMPLATE=VIEW", tv);
      }
      o.third_view[tv.substr(0, eq)] = tv.substr(eq + 1);
    }
    const orbit::Benchmark bench = orbit::load_benchmark(a->bench);
    const consensus::Plan plan = consensus::make_plan(bench, o);
    consensus::write_plan(plan, a->out);
    fmt::print("{}: {} bases, {} arms x {} calls, {} distinct requests\n", a->out, plan.bases.size(),
               plan.arms.size(), consensus::kCalls, plan.requests.size());
  });
}

// ---- run ---------------------------------------------------------------------------------------

struct RunArgs {
  std::string plan;
  std::string out;
  std::string bench;
  llm::RunOptions opts;
};

void setup_run(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  app.add_option("--plan", a->plan, "Plan file written by `numcheck orbit consensus plan`")->required();
  app.add_option("--out", a->out, "Run directory (run.json, responses.jsonl, errors.jsonl)")->required();
  app.add_option(
      "--bench", a->bench,
      "Benchmark directory for --system reference (default: the directory the plan was made from)");
  add_run_flags(app, a->opts);
  app.footer(
      "Sampling (temperature, top_p, top_k, seed, max_tokens) is fixed per call by the plan; the sampling "
      "flags are rejected here, except --no-top-k, which leaves the plan's top_k out of every call (for "
      "APIs that refuse the field, such as OpenAI's).\n\n" +
      help_footer("numcheck orbit consensus run --plan plan.json --out runs/qwen --endpoint "
                  "http://localhost:8080/v1 --model qwen3.5-4b",
                  {"every call answered", "some calls unanswered (run again with --resume)"}));
  CLI::App* self = &app;
  app.callback([a, self] {
    for (const char* flag : {"--temperature", "--top-p", "--top-k", "--seed", "--max-tokens"}) {
      if (self->count(flag) > 0) {
        fail(ErrorCode::kUsage,
             "{}: sampling is fixed per call by the consensus plan; set it with `orbit consensus plan`",
             flag);
      }
    }
    const llm::RunSummary r = run_consensus(a->plan, a->bench, a->opts, a->out);
    finish_run(a->out, r, "calls");
  });
}

// ---- analyze -----------------------------------------------------------------------------------

struct AnalyzeArgs {
  std::string plan;
  std::vector<std::string> runs;
  std::vector<std::string> names;
  std::string out;
  std::string layer = "strict";
  bool allow_partial = false;
  consensus::AnalysisOptions options;
};

void setup_analyze(CLI::App& app) {
  auto a = std::make_shared<AnalyzeArgs>();
  app.add_option("--plan", a->plan, "Plan file the runs were made from")->required();
  app.add_option("--run", a->runs, "Run directory of one system (repeat for several systems)")->required();
  app.add_option("--name", a->names, "Name of the i-th system (default: the model in its run.json)");
  app.add_option("--out", a->out, "Output directory (consensus.json, consensus.md, consensus.html, figures/)")
      ->required();
  app.add_option("--layer", a->layer, "Grading layer whose values are compared: strict or audit")
      ->check(CLI::IsMember({"strict", "audit"}))
      ->capture_default_str();
  app.add_option("--bootstrap", a->options.bootstrap, "Paired base bootstrap draws (0 skips the intervals)")
      ->capture_default_str();
  app.add_option("--seed", a->options.seed, "Bootstrap seed")->capture_default_str();
  app.add_option("--level", a->options.level, "Interval level")
      ->check(CLI::Range(0.5, 0.9999))
      ->capture_default_str();
  app.add_option("--threads", a->options.threads, "Bootstrap threads (0 = all cores)")->capture_default_str();
  app.add_flag("--allow-partial", a->allow_partial,
               "Count calls without a response as unparsed instead of failing");
  app.footer(help_footer("numcheck orbit consensus analyze --plan plan.json --run runs/qwen --out consensus",
                         {"written",
                          "some planned calls have no response (finish the run with --resume, "
                          "or pass --allow-partial)"}));
  app.callback([a] {
    consensus::StudyInputs in;
    in.plan_path = a->plan;
    for (const auto& r : a->runs) in.run_dirs.emplace_back(r);
    in.names = a->names;
    in.layer = a->layer == "audit" ? consensus::Layer::kAudit : consensus::Layer::kStrict;
    in.options = a->options;
    in.allow_partial = a->allow_partial;
    const consensus::Analysis an = consensus::run_study(in);
    const auto written = consensus::write_outputs(an, a->out);
    for (const auto& sys : an.systems) {
      for (const auto& [tier, arms] : sys.tiers) {
        for (const auto& [arm, r] : arms) {
          fmt::print("{} {} {}: AURC {:.6f}, {} of {} unanimous, {} abstentions\n", sys.name, tier, arm,
                     r.orders[0].aurc, r.agreement[3], r.n_bases, r.abstentions);
        }
      }
    }
    fmt::print("wrote {} files to {}\n", written.size(), a->out);
  });
}

void setup(CLI::App& app) {
  app.require_subcommand(1);
  setup_plan(
      *app.add_subcommand("plan", "Write the call plan of the consensus study (subset, arms, tiers, seeds)"));
  setup_run(
      *app.add_subcommand("run", "Execute a consensus plan (endpoint or the simulated reference system)"));
  setup_analyze(*app.add_subcommand(
      "analyze", "Agreement, risk-coverage, AURC, bootstrap and sensitivity from consensus runs"));
}

const CommandRegistration reg{
    {"orbit",
     "consensus",
     "The consensus study (H3): plan, run and analyze agreement across representations",
     setup,
     "numcheck orbit consensus plan --bench out/h3 --out plan.json",
     {"done", "`run`: some calls unanswered; `analyze`: some planned calls have no response"}}};

}  // namespace
}  // namespace numcheck::cli
