// numcheck: the command-line tool. A thin layer: argument parsing and error reporting only; the
// work happens in the libraries under src/.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>

#include <fmt/core.h>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/version.hpp"

namespace numcheck::cli {
std::vector<CommandSpec>& command_registry() {
  static std::vector<CommandSpec> registry;
  return registry;
}
}  // namespace numcheck::cli

namespace {

const std::map<std::string, std::string>& group_descriptions() {
  static const std::map<std::string, std::string> d = {
      {"orbit", "The orbit benchmark: generate, run, grade, score, report, consensus"},
      {"claims", "Numerical claim verification: data, quantities, evaluation"},
      {"cache", "The response cache of model runs"},
      {"claims orbit", "Claim orbits: does a verifier's verdict survive rewriting a quantity exactly?"},
  };
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace numcheck;
  CLI::App app{"numcheck: exact, reproducible measurement of how language systems handle numbers"};
  app.set_version_flag("--version", std::string("numcheck ") + kVersion);
  app.require_subcommand(1);
  app.fallthrough(false);

  auto specs = cli::command_registry();
  std::stable_sort(specs.begin(), specs.end(), [](const auto& a, const auto& b) {
    return std::tie(a.group, a.name) < std::tie(b.group, b.name);
  });
  std::map<std::string, CLI::App*> groups;
  for (const auto& spec : specs) {
    CLI::App* parent = &app;
    // A group may be nested: "claims orbit" is the subcommand "orbit" of the group "claims".
    std::string path;
    for (std::size_t at = 0; at < spec.group.size();) {
      std::size_t sp = spec.group.find(' ', at);
      if (sp == std::string::npos) sp = spec.group.size();
      const std::string name = spec.group.substr(at, sp - at);
      path += (path.empty() ? "" : " ") + name;
      at = sp + 1;
      auto it = groups.find(path);
      if (it == groups.end()) {
        auto d = group_descriptions().find(path);
        CLI::App* g = parent->add_subcommand(name, d == group_descriptions().end() ? path : d->second);
        g->require_subcommand(1);
        it = groups.emplace(path, g).first;
      }
      parent = it->second;
    }
    CLI::App* sub = parent->add_subcommand(spec.name, spec.description);
    spec.setup(*sub);
  }

  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      // --help and --version exit 0; every real usage error exits 2, whatever CLI11's own code.
      return app.exit(e) == 0 ? 0 : 2;
    }
  } catch (const cli::ExitCode& e) {
    return e.code;
  } catch (const Error& e) {
    std::fflush(stdout);
    fmt::print(stderr, "numcheck: error: {}\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "numcheck: internal error: {}\n", e.what());
    return 1;
  } catch (...) {
    fmt::print(stderr, "numcheck: internal error: unknown exception\n");
    return 1;
  }
  return 0;
}
