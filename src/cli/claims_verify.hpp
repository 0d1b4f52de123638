#pragma once
// `numcheck claims verify --method NAME`: one command, several verifiers. Each method registers
// itself from its own file (src/cli/claims_verify_<method>.cpp) with a static
// VerifyMethodRegistration: its name, a one-line description, a function adding its own options
// to the command (the method's options are only valid with that method: `check` throws a usage
// Error otherwise), and a function that runs it. Common options (--evidence, --out, --model,
// --limit) live in VerifyArgs; every method writes DIR with verify::write_predictions.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace numcheck::cli {

struct VerifyArgs {
  std::string method;
  std::string evidence;   // evidence file (claims/evidence.hpp)
  std::string out;        // output folder
  std::string model;      // trained: model file; llm: model name at the endpoint
  std::size_t limit = 0;  // verify only the first N records (0 = all)
};

struct VerifyMethod {
  std::string name;
  std::string description;
  std::function<void(CLI::App&)> add_options;
  std::function<void(const VerifyArgs&)> run;
};

std::vector<VerifyMethod>& verify_methods();

struct VerifyMethodRegistration {
  explicit VerifyMethodRegistration(VerifyMethod m) { verify_methods().push_back(std::move(m)); }
};

}  // namespace numcheck::cli
