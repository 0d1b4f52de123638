// numcheck: the command-line tool. A thin layer: argument parsing and error reporting only; the
// work happens in the libraries under src/.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/version.hpp"

namespace numcheck::cli {
std::vector<CommandSpec>& command_registry() {
  static std::vector<CommandSpec> registry;
  return registry;
}

std::string help_footer(const std::string& example, const ExitCodes& exits) {
  std::string s =
      fmt::format("Example:\n  {}\n\nExit codes: 0 {}; 1 {}; 2 usage error (the command line is wrong)",
                  example, exits.ok, exits.error);
  if (!exits.incomplete.empty()) s += fmt::format("; 3 {}", exits.incomplete);
  return s + ".";
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

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// "; did you mean 'x'?" for the closest candidate within a third of the word's length, else "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best.empty() ? std::string() : fmt::format("; did you mean '{}'?", best);
}

// The usage error as one line: names an unknown command or option and suggests the closest one.
std::string usage_message(const CLI::App& app, int argc, char** argv, const CLI::ParseError& e) {
  // The command path: the leading words that name (sub)commands.
  const CLI::App* cur = &app;
  std::string path = "numcheck";
  int i = 1;
  for (; i < argc && argv[i][0] != '-'; ++i) {
    const std::string word = argv[i];
    const CLI::App* sub = nullptr;
    for (const CLI::App* s : cur->get_subcommands([](const CLI::App*) { return true; })) {
      if (s->get_name() == word) sub = s;
    }
    if (sub == nullptr) {
      if (cur->get_subcommands([](const CLI::App*) { return true; }).empty()) break;  // a positional
      std::vector<std::string> names;
      for (const CLI::App* s : cur->get_subcommands([](const CLI::App*) { return true; }))
        names.push_back(s->get_name());
      return fmt::format("unknown command '{}' for '{}'{}", word, path, did_you_mean(word, names));
    }
    cur = sub;
    path += " " + word;
  }
  for (; i < argc; ++i) {
    std::string word = argv[i];
    if (word.rfind("--", 0) != 0 || word == "--") continue;
    word = word.substr(0, word.find('='));
    if (cur->get_option_no_throw(word) != nullptr) continue;
    std::vector<std::string> names;
    for (const CLI::Option* o : cur->get_options())
      for (const auto& l : o->get_lnames()) names.push_back("--" + l);
    return fmt::format("unknown option '{}' for '{}'{}", word, path, did_you_mean(word, names));
  }
  std::string what = e.what();
  for (char& c : what) c = (c == '\n' || c == '\r') ? ' ' : c;
  if (!cur->get_subcommands([](const CLI::App*) { return true; }).empty() &&
      what.find("subcommand") != std::string::npos) {
    return fmt::format("'{}' needs a command (see '{} --help')", path, path);
  }
  return fmt::format("{} (see '{} --help')", what, path);
}

// A filesystem call that threw (an output folder under a regular file, a folder without write
// permission, a full disk) as the project's Error: what was attempted, the path and the system's
// reason ("cannot create the folder out/report: Permission denied"), instead of an internal error.
// libstdc++'s what() is "filesystem error: <attempt>: <reason> [<path1>] [<path2>]".
numcheck::Error filesystem_error(const std::filesystem::filesystem_error& e) {
  const std::string reason = e.code().message();
  std::string attempt = e.what();
  if (attempt.rfind("filesystem error: ", 0) == 0) attempt.erase(0, 18);
  if (const auto at = attempt.find(": " + reason); at != std::string::npos) attempt.resize(at);
  if (const auto at = attempt.find(" ["); at != std::string::npos) attempt.resize(at);
  if (attempt.rfind("cannot create director", 0) == 0) attempt = "cannot create the folder";
  std::string paths = e.path1().string();
  if (!e.path2().empty()) paths += " -> " + e.path2().string();
  return numcheck::Error(numcheck::ErrorCode::kIo, paths.empty()
                                                       ? fmt::format("{}: {}", attempt, reason)
                                                       : fmt::format("{} {}: {}", attempt, paths, reason));
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
  // Only the command named on the command line gets its options and callback (CLI11 builds each
  // option with several allocations, and setting up every command cost about 1.5 ms of each start);
  // the others are listed with their descriptions, which is all a group's --help and the usage
  // errors need. The command line names a command by its leading words, before any option.
  std::string named;
  for (int i = 1; i < argc && argv[i][0] != '-'; ++i)
    named += std::string(named.empty() ? "" : " ") + argv[i];
  const auto is_named = [&named](const std::string& path) {
    return named.size() >= path.size() && named.compare(0, path.size(), path) == 0 &&
           (named.size() == path.size() || named[path.size()] == ' ');
  };
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
    if (is_named(spec.group.empty() ? spec.name : spec.group + " " + spec.name)) {
      spec.setup(*sub);
      const std::string own = sub->get_footer();
      sub->footer((own.empty() ? std::string() : own + "\n\n") + cli::help_footer(spec.example, spec.exits));
    }
  }

  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      // --help and --version exit 0; every real usage error is one line and exits 2, whatever
      // CLI11's own code.
      if (e.get_exit_code() == 0) return app.exit(e);
      fmt::print(stderr, "numcheck: usage: {}\n", usage_message(app, argc, argv, e));
      return 2;
    }
  } catch (const cli::ExitCode& e) {
    return e.code;
  } catch (const Error& e) {
    std::fflush(stdout);
    fmt::print(stderr, "numcheck: error: {}\n", e.what());
    return e.exit_code();
  } catch (const std::filesystem::filesystem_error& fe) {
    const Error e = filesystem_error(fe);
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
