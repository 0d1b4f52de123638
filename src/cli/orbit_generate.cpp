// numcheck orbit generate: writes the orbit benchmark (bases.jsonl, views.jsonl, manifest.json).
#include <fmt/core.h>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "orbit/generate.hpp"
#include "orbit/spec.hpp"

namespace numcheck::cli {
namespace {

struct GenerateArgs {
  std::string out;
  std::uint64_t seed = orbit::kDefaultSeed;
  std::string spec;
  bool paraphrases = false;
  std::size_t threads = 1;
};

void setup(CLI::App& app) {
  auto args = std::make_shared<GenerateArgs>();
  app.add_option("--out", args->out, "Directory to write bases.jsonl, views.jsonl and manifest.json into")
      ->required();
  app.add_option("--seed", args->seed, "Seed of the per-template pseudorandom streams")
      ->capture_default_str();
  app.add_option("--spec", args->spec,
                 "Template spec file (default: the shipped data/orbit/default_spec.json)");
  app.add_flag("--paraphrases", args->paraphrases,
               "Also write the two paraphrase views of each template's consensus subset");
  app.add_option("--threads", args->threads,
                 "Threads rendering prompts (0: one per core); the files are the same whatever the count. "
                 "A second thread pays off only for large specs (docs/performance.md)")
      ->capture_default_str();
  app.footer(
      "The same seed and spec always give byte-identical files. See docs/orbit.md for the spec format and "
      "the "
      "output fields.");
  app.callback([args] {
    const orbit::OrbitSpec spec =
        args->spec.empty() ? orbit::load_spec(orbit::default_spec_path()) : orbit::load_spec(args->spec);
    orbit::GenerateOptions opts;
    opts.seed = args->seed;
    opts.paraphrases = args->paraphrases;
    opts.threads = args->threads;
    const auto g = orbit::generate_to_dir(args->out, spec, opts);
    fmt::print("wrote {} bases and {} prompts to {} (seed {}, spec {} sha256 {})\n", g.bases, g.prompts,
               args->out, args->seed, spec.name, spec.sha256.substr(0, 16));
  });
}

const CommandRegistration reg{{"orbit",
                               "generate",
                               "Generate the orbit benchmark (bases, views, manifest) from a template spec",
                               setup,
                               "numcheck orbit generate --out out/bench",
                               {"written"}}};

}  // namespace
}  // namespace numcheck::cli
