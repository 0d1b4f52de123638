// The CLI's contract with scripts: --help and --version work, usage errors exit 2 with one line,
// every registered command answers --help.
#include <gtest/gtest.h>

#include "cli_support.hpp"

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

TEST(Cli, UnknownCommandIsAUsageError) {
  const auto r = run_cli("no-such-command");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_FALSE(r.err.empty());
}

TEST(Cli, NoCommandIsAUsageError) {
  const auto r = run_cli("");
  EXPECT_EQ(r.exit_code, 2) << r.err;
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

}  // namespace
}  // namespace numcheck::testing
