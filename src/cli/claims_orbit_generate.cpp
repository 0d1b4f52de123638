// numcheck claims orbit generate: rewrites each quantity of each claim into exactly equivalent
// written forms (claims.jsonl + manifest.json). docs/claim-orbits.md.
#include <fmt/core.h>

#include "claimorbit/orbit.hpp"
#include "cli/cli_util.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"

namespace numcheck::cli {
namespace {

struct Args {
  std::string claims, out, forms;
  std::uint64_t seed = 20260725;
  bool rewrite_approximate = false;
};

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--claims", a->claims,
                 "Claims file (any format the claims loaders read; JSONL {\"id\",\"claim\"})")
      ->required();
  app.add_option("--out", a->out, "Directory to write claims.jsonl and manifest.json into")->required();
  app.add_option("--forms", a->forms,
                 "Comma-separated forms (default all: digits, grouped, words, scientific, percent, fraction, "
                 "scale_word, scale_letter, unit)");
  app.add_option("--seed", a->seed, "Seed that picks the target unit among exact conversions")
      ->capture_default_str();
  app.add_flag("--rewrite-approximate", a->rewrite_approximate,
               "Also rewrite the numbers of segments with an approximator or trend word (the words stay)");
  app.footer("Same input, options and data files: byte-identical output. See docs/claim-orbits.md.");
  app.callback([a] {
    claimorbit::GenerateOptions opt;
    opt.forms = split_list(a->forms);
    opt.seed = a->seed;
    opt.rewrite_approximate = a->rewrite_approximate;
    const auto s = claimorbit::generate_to_dir(a->claims, a->out, opt);
    for (const auto& w : s.warnings) fmt::print(stderr, "numcheck: warning: {}\n", w);
    fmt::print("wrote {} claims ({} with variants), {} variants to {}\n", s.claims, s.claims_with_variants,
               s.variants, a->out);
    for (const auto& [f, k] : s.variants_by_form) fmt::print("  {}: {} variants\n", f, k);
  });
}

const CommandRegistration reg({"claims orbit",
                               "generate",
                               "Claim orbits: rewrite each claim's quantities into exactly equivalent forms",
                               setup,
                               "numcheck claims orbit generate --claims test_ev.jsonl --out orbits",
                               {"written"}});

}  // namespace
}  // namespace numcheck::cli
