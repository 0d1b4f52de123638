#pragma once
// How a CLI command joins the `numcheck` executable: each src/cli/<group>_<command>.cpp defines a
// static CommandRegistration naming its group ("orbit", "claims", "cache", or "" for top level),
// its name, a one-line description, a setup function that adds its options to the CLI11
// subcommand and sets its callback, one real example command line, and what its exit codes mean.
// main.cpp builds the tree from the registry and ends each command's --help with the example and
// the exit codes (help_footer); no file lists the commands by hand, so commands can be added
// without touching each other's files.
//
// Callbacks throw numcheck::Error on failure; main turns that into one line on stderr and the
// Error's exit code. A callback that must report an exit code other than 0 without an error
// message (e.g. `orbit validate` finding problems it already printed) throws ExitCode.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace numcheck::cli {

// What a command's exit codes mean. 1 and 2 come from main for every command (an Error, or a
// usage error); 3 only from a command that can leave work undone (ErrorCode::kIncomplete or
// ExitCode{3}): `incomplete` says when, and stays empty for a command that never exits 3.
struct ExitCodes {
  // Not explicit: a registration writes {"written"} or {"written", "some items unanswered"}.
  ExitCodes(std::string on_ok = "done", std::string on_incomplete = "",
            std::string on_error = "error (one line on stderr names the file, field or server at fault)")
      : ok(std::move(on_ok)), incomplete(std::move(on_incomplete)), error(std::move(on_error)) {}
  std::string ok;
  std::string incomplete;
  std::string error;
};

struct CommandSpec {
  CommandSpec(std::string in_group, std::string command, std::string what,
              std::function<void(CLI::App&)> set_up, std::string example_line = "", ExitCodes codes = {})
      : group(std::move(in_group)),
        name(std::move(command)),
        description(std::move(what)),
        setup(std::move(set_up)),
        example(std::move(example_line)),
        exits(std::move(codes)) {}
  std::string group;
  std::string name;
  std::string description;
  std::function<void(CLI::App&)> setup;
  std::string example;  // one real command line, shown under "Example:" in --help
  ExitCodes exits;
};

// The end of a command's --help: "Example:" with the command line, then "Exit codes:" (main adds
// it to every registered command; a command with subcommands of its own adds it to each of them).
[[nodiscard]] std::string help_footer(const std::string& example, const ExitCodes& exits);

std::vector<CommandSpec>& command_registry();

struct CommandRegistration {
  explicit CommandRegistration(CommandSpec spec) { command_registry().push_back(std::move(spec)); }
};

struct ExitCode {
  int code;
};

}  // namespace numcheck::cli
