// Golden pins: outputs that must not change by accident (see tests/golden/README.md). Each test
// compares against literal values or committed files; none recomputes its expectation. A change
// that must change a pinned output updates the pin in the same commit, with the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>

#include <fmt/format.h>

#include "cli_support.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"

namespace numcheck {
namespace {

namespace fs = std::filesystem;
using testing::run_clean;

// The run's session times (UTC, ISO 8601) in the systems table and metrics.json differ on every
// run: they are pinned as "<time>" (scripts/update-golden.sh writes the pins the same way).
std::string mask_times(const std::string& s) {
  static const std::regex kTime(R"([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z)");
  return std::regex_replace(s, kTime, "<time>");
}

// The first line where two texts differ, for a readable failure message.
std::string first_difference(const std::string& want, const std::string& got) {
  std::size_t line = 1, i = 0;
  while (i < want.size() && i < got.size() && want[i] == got[i]) {
    if (want[i] == '\n') ++line;
    ++i;
  }
  auto line_at = [](const std::string& s, std::size_t pos) {
    const std::size_t b = s.rfind('\n', pos == 0 ? 0 : pos - 1);
    const std::size_t begin = (b == std::string::npos || pos == 0) ? 0 : b + 1;
    const std::size_t end = s.find('\n', pos);
    return s.substr(begin,
                    std::min<std::size_t>(end == std::string::npos ? s.size() : end, begin + 300) - begin);
  };
  return fmt::format("first difference at line {}:\n  pinned: {}\n  now:    {}", line, line_at(want, i),
                     line_at(got, i));
}

TEST(Golden, DefaultBenchmarkFilesArePinned) {
  const fs::path dir = testing::fresh_dir("golden_bench");
  ASSERT_EQ(run_clean(dir, "", fmt::format("'{}' orbit generate --out plain --seed 20260725", NUMCHECK_CLI)),
            0)
      << io::read_file(dir / "log");
  ASSERT_EQ(
      run_clean(dir, "",
                fmt::format("'{}' orbit generate --out para --seed 20260725 --paraphrases", NUMCHECK_CLI)),
      0)
      << io::read_file(dir / "log");
  // seed 20260725, default spec: 3,600 bases, 8,600 prompts.
  EXPECT_EQ(io::sha256_file(dir / "plain/bases.jsonl"),
            "3c20f15751b032aad8dfb48990e7d33b9453af21fcc5faff8fd3df19954968eb");
  EXPECT_EQ(io::sha256_file(dir / "plain/views.jsonl"),
            "e365b6beba460a8bcc10cf8fa8fec53508e4e30d3d3e53ae5b27a7dc6f7caedf");
  EXPECT_EQ(io::sha256_file(dir / "plain/manifest.json"),
            "954626317a4f6a9d263b21ecc9cb9aae10fc2c41471b59486de1afd4f73c4f00");
  // The same with --paraphrases (the consensus study's benchmark).
  EXPECT_EQ(io::sha256_file(dir / "para/bases.jsonl"),
            "4561ff07456ad5cc3a2606974e5d27d3a1880142268fb5c18ac85da696391785");
  EXPECT_EQ(io::sha256_file(dir / "para/views.jsonl"),
            "4b01fb6a7c7c5a175f84947178fa3b5eb570e623d84f096e185cd60430590470");
  EXPECT_EQ(io::sha256_file(dir / "para/manifest.json"),
            "b28bc8feb984f90c330aed151ad583f8c21d42ba346dba10d8e2511d3c341612");
  fs::remove_all(dir);
}

TEST(Golden, ReferenceMainJobReportIsPinned) {
  // The main job on the simulated reference system, in an empty folder with a relative output
  // folder (every recorded path is then relative and the bytes do not depend on where it ran).
  // The claims half is switched off by pointing it at no data: it has its own tests.
  const fs::path dir = testing::fresh_dir("golden_main_job");
  const std::string script = std::string(NUMCHECK_SOURCE_DIR) + "/scripts/main-job.sh";
  const std::string vars =
      fmt::format("NUMCHECK_OUT=out NUMCHECK_BIN='{}' NUMCHECK_QUANTEMP=/nonexistent", NUMCHECK_CLI);
  ASSERT_EQ(run_clean(dir, vars, fmt::format("bash '{}'", script)), 0) << io::read_file(dir / "log");
  const fs::path golden = fs::path(NUMCHECK_SOURCE_DIR) / "tests/golden/main-job";
  for (const char* name : {"metrics.json", "report.md"}) {
    const std::string want = io::read_file(golden / name);
    const std::string got = mask_times(io::read_file(dir / "out/report" / name));
    EXPECT_TRUE(want == got)
        << name << " differs from tests/golden/main-job/" << name << " (" << first_difference(want, got)
        << ")\nIf the change is intended, run scripts/update-golden.sh and say why in the commit.";
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace numcheck
