// The CLI's contract with scripts: --help and --version work, usage errors exit 2 with one line,
// every registered command answers --help.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "cli_support.hpp"
#include "io/files.hpp"

namespace numcheck::testing {
namespace {

TEST(Cli, VersionAndHelp) {
  const auto v = run_cli("--version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.out.find("numcheck "), std::string::npos) << v.out;
  const auto h = run_cli("--help");
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("orbit"), std::string::npos) << h.out;
}

// XGBoost, the one library only some commands need, is loaded on first use (core/dynlib.hpp), so a
// command that does not train or apply a boosted model starts without it: the dynamic loader's
// trace (LD_DEBUG=files) of `--version` and of a group's --help does not name it. The libraries
// numcheck always needs (libcurl, SQLite, ICU, libstemmer, liblinear) are linked: the trace names them.
TEST(Cli, StartsWithoutTheLibrariesOnlySomeCommandsNeed) {
  ::setenv("LD_DEBUG", "files", 1);
  const auto v = run_cli("--version");
  const auto h = run_cli("claims --help");
  ::unsetenv("LD_DEBUG");
  ASSERT_EQ(v.exit_code, 0) << v.err;
  ASSERT_EQ(h.exit_code, 0) << h.err;
  ASSERT_NE(v.err.find("file=libgmp"), std::string::npos) << "no LD_DEBUG trace: " << v.err;
  for (const char* lib : {"libxgboost"}) {
    EXPECT_EQ(v.err.find(std::string("file=") + lib), std::string::npos) << "--version loaded " << lib;
    EXPECT_EQ(h.err.find(std::string("file=") + lib), std::string::npos) << "claims --help loaded " << lib;
  }
  for (const char* lib : {"libcurl", "libsqlite3", "libicuuc", "libstemmer", "liblinear"}) {
    EXPECT_NE(v.err.find(std::string("file=") + lib), std::string::npos) << "--version did not load " << lib;
  }
}

TEST(Cli, UnknownCommandIsAUsageError) {
  const auto r = run_cli("no-such-command");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_FALSE(r.err.empty());
}

// Usage errors are one line, prefixed "numcheck:", and suggest the closest command or option.
TEST(Cli, UsageErrorsAreOnePrefixedLineWithASuggestion) {
  auto one_line = [](const std::string& err) {
    EXPECT_EQ(err.rfind("numcheck: usage: ", 0), 0u) << err;
    EXPECT_EQ(err.find('\n'), err.size() - 1) << err;
  };
  auto r = run_cli("orbit runn --bench x --out y");
  EXPECT_EQ(r.exit_code, 2);
  one_line(r.err);
  EXPECT_NE(r.err.find("unknown command 'runn' for 'numcheck orbit'; did you mean 'run'?"), std::string::npos)
      << r.err;
  r = run_cli("orbt");
  EXPECT_EQ(r.exit_code, 2);
  one_line(r.err);
  EXPECT_NE(r.err.find("did you mean 'orbit'?"), std::string::npos) << r.err;
  r = run_cli("orbit run --bench x --out y --concurency 2");
  EXPECT_EQ(r.exit_code, 2);
  one_line(r.err);
  EXPECT_NE(
      r.err.find("unknown option '--concurency' for 'numcheck orbit run'; did you mean '--concurrency'?"),
      std::string::npos)
      << r.err;
  r = run_cli("orbit run --out y");
  EXPECT_EQ(r.exit_code, 2);
  one_line(r.err);
  EXPECT_NE(r.err.find("--bench is required"), std::string::npos) << r.err;
  r = run_cli("orbit");
  EXPECT_EQ(r.exit_code, 2);
  one_line(r.err);
  EXPECT_NE(r.err.find("'numcheck orbit' needs a command"), std::string::npos) << r.err;
}

// --api-key-env given the key itself instead of a variable name never prints it.
TEST(Cli, AKeyGivenAsTheVariableNameIsNeverPrinted) {
  const std::string key = "sk-proj-Zq8xW3vT9kL2mN4p";
  const auto r = run_cli(
      "orbit run --bench /nonexistent --out /tmp/numcheck-never --endpoint http://127.0.0.1:1/v1 "
      "--model m --api-key-env '" +
      key + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.find("Zq8xW3"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("Zq8xW3"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("NAME of an environment variable"), std::string::npos) << r.err;
}

TEST(Cli, NoCommandIsAUsageError) {
  const auto r = run_cli("");
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

// main sets up only the command the leading words name (the others are listed, not built): the
// named command has its options and footer at any depth, followed by positionals or options.
TEST(Cli, TheNamedCommandHasItsOptionsAtAnyDepth) {
  auto r = run_cli("orbit consensus plan --help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("--per-template"), std::string::npos) << r.out;
  r = run_cli("claims orbit generate --help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("byte-identical output"), std::string::npos) << r.out;
  r = run_cli("orbit score --help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("--responses"), std::string::npos) << r.out;
  r = run_cli("orbit --help");  // a group lists its commands with their descriptions
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("consensus"), std::string::npos) << r.out;
  r = run_cli("orbit score --bench /nonexistent/b --responses /nonexistent/r --out /nonexistent/o");
  EXPECT_EQ(r.exit_code, 1) << r.err;  // the callback ran: a missing benchmark is an error, not usage
  EXPECT_EQ(r.err.rfind("numcheck: error: ", 0), 0u) << r.err;
}

TEST(Cli, EveryCommandHasHelp) {
  // Walk the command tree printed by --help: every group and command must answer --help with 0.
  for (const char* group : {"orbit", "claims", "cache"}) {
    const auto g = run_cli(std::string(group) + " --help");
    if (g.exit_code != 0) continue;  // group not built into this binary
    // Lines under "Subcommands:" are "  name   description".
    const auto pos = g.out.find("ubcommands:");
    ASSERT_NE(pos, std::string::npos) << g.out;
    std::size_t start = g.out.find('\n', pos);
    int seen = 0;
    while (start != std::string::npos && start + 1 < g.out.size()) {
      const std::size_t end = g.out.find('\n', start + 1);
      std::string line =
          g.out.substr(start + 1, end == std::string::npos ? std::string::npos : end - start - 1);
      start = end;
      const auto first = line.find_first_not_of(' ');
      if (first == std::string::npos || first == 0) continue;
      const std::string name = line.substr(first, line.find(' ', first) - first);
      const auto h = run_cli(std::string(group) + " " + name + " --help");
      EXPECT_EQ(h.exit_code, 0) << group << " " << name << ": " << h.err;
      EXPECT_NE(h.out.find("Usage"), std::string::npos) << group << " " << name;
      ++seen;
    }
    EXPECT_GT(seen, 0) << group;
  }
}

// The names listed under "Subcommands:" in a --help text ("  name   description" lines).
std::vector<std::string> subcommands_of(const std::string& help) {
  std::vector<std::string> names;
  const auto pos = help.find("ubcommands:");
  if (pos == std::string::npos) return names;
  std::size_t start = help.find('\n', pos);
  while (start != std::string::npos && start + 1 < help.size()) {
    const std::size_t end = help.find('\n', start + 1);
    const std::string line =
        help.substr(start + 1, end == std::string::npos ? std::string::npos : end - start - 1);
    start = end;
    const auto first = line.find_first_not_of(' ');
    // The list ends at its first blank or unindented line (the footer's "Example:" follows).
    if (first == std::string::npos) {
      if (names.empty()) continue;
      break;
    }
    if (first == 0) break;
    names.push_back(line.substr(first, line.find(' ', first) - first));
  }
  return names;
}

TEST(Cli, EveryCommandsHelpShowsAnExampleAndItsExitCodes) {
  // Walk the tree from `numcheck --help`: every command (a node without subcommands) ends its
  // --help with a real example of itself and the meaning of its exit codes.
  int commands = 0;
  const std::function<void(const std::string&)> walk = [&](const std::string& path) {
    ASSERT_LT(std::count(path.begin(), path.end(), ' '), 3) << "the walk went astray: " << path;
    const auto h = run_cli(path + (path.empty() ? "" : " ") + "--help");
    ASSERT_EQ(h.exit_code, 0) << path << ": " << h.err;
    const auto subs = subcommands_of(h.out);
    if (!subs.empty()) {
      for (const auto& s : subs) walk(path.empty() ? s : path + " " + s);
      if (path.empty() || path == "orbit" || path == "claims" || path == "cache" || path == "claims orbit")
        return;  // a group: its commands carry the example
    }
    ++commands;
    const auto ex = h.out.find("Example:\n  ");
    ASSERT_NE(ex, std::string::npos) << path << ":\n" << h.out;
    const std::string example = h.out.substr(ex + 11, h.out.find('\n', ex + 11) - ex - 11);
    EXPECT_NE(example.find("numcheck " + path + " "), std::string::npos) << path << ": " << example;
    EXPECT_NE(h.out.find("Exit codes: 0 "), std::string::npos) << path << ":\n" << h.out;
    EXPECT_NE(h.out.find("; 1 "), std::string::npos) << path;
    EXPECT_NE(h.out.find("; 2 usage error"), std::string::npos) << path;
  };
  walk("");
  EXPECT_GE(commands, 29);
  // A command that can leave work undone says when it exits 3; one that cannot says nothing of 3.
  EXPECT_NE(run_cli("orbit run --help").out.find("; 3 some prompts unanswered"), std::string::npos);
  EXPECT_EQ(run_cli("orbit generate --help").out.find("; 3 "), std::string::npos);
}

TEST(Cli, AnOutputFolderThatCannotBeMadeIsNamedWithTheReason) {
  // A folder under a regular file cannot be made, even as root: the error names the folder and
  // the system's reason, exit 1, never "internal error".
  const auto d = fresh_dir("unwritable_out");
  io::write_file_atomic(d / "claims.jsonl",
                        "{\"id\": \"a\", \"claim\": \"Families making $86k pay 80% of the tax\"}\n");
  io::write_file_atomic(d / "file.txt", "a file\n");
  const std::string out = (d / "file.txt" / "sub").string();
  const auto r = run_cli(
      fmt::format("claims orbit generate --claims '{}' --out '{}'", (d / "claims.jsonl").string(), out));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  EXPECT_EQ(r.err, fmt::format("numcheck: error: cannot create the folder {}: Not a directory\n", out));
  std::filesystem::remove_all(d);
}

}  // namespace
}  // namespace numcheck::testing
