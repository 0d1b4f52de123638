// numcheck claims decompose: claims -> questions, through a model (ClaimDecomp yes/no questions or
// ProgramFC programs) on the runner, or from released questions (--from-released). See
// docs/claims-reference.md, "Decomposition".
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/core.h>

#include "claims/decompose.hpp"
#include "claims/load.hpp"
#include "claimsllm/stages.hpp"
#include "cli/claims_llm.hpp"
#include "cli/cli_util.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"
#include "io/sha256.hpp"
#include "llm/runner.hpp"

namespace numcheck::cli {
namespace {

struct Args {
  std::string claims;
  std::string method = "claimdecomp";
  std::string prompt;  // "" = data/claims/prompts/<method>.json
  std::string released;
  std::string out;
  std::optional<std::size_t> limit;
  llm::RunOptions opts;
};

constexpr StageOutput kOutput{"decompositions.jsonl", "ok", "parse failures"};

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--claims", a->claims, "Claims to decompose (any claims file format: JSON, JSONL, CSV)");
  app.add_option("--method", a->method,
                 "claimdecomp (yes/no questions) or programfc (Verify/Question programs)")
      ->check(CLI::IsMember({"claimdecomp", "programfc"}))
      ->capture_default_str();
  app.add_option("--prompt", a->prompt, "Prompt file (default: data/claims/prompts/<method>.json)");
  app.add_option("--from-released", a->released,
                 "Write released questions (e.g. QuanTemp's test_claimdecomp.csv) in the output format; no "
                 "model");
  app.add_option("--out", a->out,
                 "Output directory (decompositions.jsonl, decompose.json, and the run files)")
      ->required();
  app.add_option("--limit", a->limit, "Decompose only the first N claims");
  add_run_flags(app, a->opts);
  app.footer(
      "Method defaults come from the prompt file (claimdecomp: temperature 0.3, frequency penalty 0.6, "
      "presence "
      "penalty 0.8); a sampling flag overrides them.\nA model answer that does not parse is a record with "
      "status parse_failure and its raw text, never a default decomposition.");
  app.callback([a, &app] {
    if (!a->released.empty()) {
      if (!a->claims.empty() || !a->opts.endpoints.empty())
        fail(ErrorCode::kUsage, "--from-released takes no --claims or --endpoint");
      const auto loaded = claims::load_claims(a->released);
      report_issues(loaded.issues);
      const auto c = claimsllm::write_released(loaded.claims, a->released, a->out);
      print_stage_counts(a->out, kOutput, c);
      return;
    }
    if (a->claims.empty()) fail(ErrorCode::kUsage, "give --claims FILE (or --from-released FILE)");
    const auto method = *claims::decomp_method_from_name(a->method);
    auto backend = claims_backend(a->opts);
    claimsllm::DecomposeSpec spec;
    spec.method = method;
    spec.prompt = a->prompt.empty() ? claims::builtin_prompt(a->method) : claims::load_prompt(a->prompt);
    spec.claims_path = a->claims;
    llm::RunSettings s = claims_stage_settings(a->opts, spec.prompt, app);

    auto loaded = claims::load_claims(a->claims);
    report_issues(loaded.issues);
    if (a->limit && loaded.claims.size() > *a->limit) loaded.claims.resize(*a->limit);
    if (loaded.claims.empty()) fail("{}: no claims", a->claims);
    const auto items = claimsllm::decompose_items(loaded.claims, spec);

    s.binding["method"] = a->method;
    s.binding["prompt_sha256"] = spec.prompt.sha256;
    s.binding["claims_sha256"] = io::sha256_file(a->claims);
    io::OrderedJson sel = io::OrderedJson::object();
    sel["claims"] = a->claims;
    sel["limit"] = a->limit ? io::OrderedJson(*a->limit) : io::OrderedJson();
    sel["prompt"] = spec.prompt.path;
    s.info["selection"] = sel;
    run_claims_stage("claims decompose", items, s, *backend, a->out, kOutput,
                     [&] { return claimsllm::write_decompositions(loaded.claims, spec, a->out); });
  });
}

const CommandRegistration reg{{"claims",
                               "decompose",
                               "Decompose claims into questions (ClaimDecomp, ProgramFC) through an "
                               "OpenAI-compatible endpoint, or load released questions",
                               setup,
                               "numcheck claims decompose --claims claims.jsonl --method claimdecomp --out "
                               "cd-qwen --endpoint http://localhost:8080/v1 --model qwen3.5-4b",
                               {"every claim answered (parse failures are records, not errors)",
                                "some claims unanswered (run again with --resume)"}}};

}  // namespace
}  // namespace numcheck::cli
