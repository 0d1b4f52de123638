// numcheck claims verify: predicts a verdict (True / False / Conflicting) for each claim of an
// evidence file with the method named by --method; methods register in claims_verify_<name>.cpp.
#include "cli/claims_verify.hpp"

#include <fmt/core.h>

#include "cli/command.hpp"
#include "core/error.hpp"

namespace numcheck::cli {

std::vector<VerifyMethod>& verify_methods() {
  static std::vector<VerifyMethod> methods;
  return methods;
}

namespace {

void setup(CLI::App& app) {
  auto a = std::make_shared<VerifyArgs>();
  std::vector<std::string> names;
  std::string help = "Verifier:";
  for (const auto& m : verify_methods()) {
    names.push_back(m.name);
    help += fmt::format(" {} ({});", m.name, m.description);
  }
  app.add_option("--method", a->method, help)->required()->check(CLI::IsMember(names));
  app.add_option("--evidence", a->evidence,
                 "Evidence file (JSONL from `claims evidence` or `claims retrieve`)")
      ->required();
  app.add_option("--out", a->out, "Output folder: predictions.jsonl, scores.jsonl, manifest.json")
      ->required();
  app.add_option("--model", a->model, "trained: model file from `claims train`; llm: the model name");
  app.add_option("--limit", a->limit, "Verify only the first N claims (0: all)")->capture_default_str();
  for (const auto& m : verify_methods()) m.add_options(app);
  app.footer(
      "Predictions are what `numcheck claims evaluate --pred DIR/predictions.jsonl` reads. See "
      "docs/claims-reference.md.");
  app.callback([a] {
    for (const auto& m : verify_methods())
      if (m.name == a->method) return m.run(*a);
    fail(ErrorCode::kUsage, "unknown --method '{}'", a->method);
  });
}

const CommandRegistration reg(
    {"claims",
     "verify",
     "Predict claim verdicts from an evidence file",
     setup,
     "numcheck claims verify --method trained --model model.json --evidence gold.jsonl --out verify",
     {"predictions written", "with --method llm, some claims unanswered (run again with --resume)"}});

}  // namespace
}  // namespace numcheck::cli
