#pragma once
// How a CLI command joins the `numcheck` executable: each src/cli/<group>_<command>.cpp defines a
// static CommandRegistration naming its group ("orbit", "claims", "cache", or "" for top level),
// its name, a one-line description, and a setup function that adds its options to the CLI11
// subcommand and sets its callback. main.cpp builds the tree from the registry; no file lists the
// commands by hand, so commands can be added without touching each other's files.
//
// Callbacks throw numcheck::Error on failure; main turns that into one line on stderr and the
// Error's exit code. A callback that must report an exit code other than 0 without an error
// message (e.g. `orbit validate` finding problems it already printed) throws ExitCode.
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace numcheck::cli {

struct CommandSpec {
  std::string group;
  std::string name;
  std::string description;
  std::function<void(CLI::App&)> setup;
};

std::vector<CommandSpec>& command_registry();

struct CommandRegistration {
  explicit CommandRegistration(CommandSpec spec) { command_registry().push_back(std::move(spec)); }
};

struct ExitCode {
  int code;
};

}  // namespace numcheck::cli
