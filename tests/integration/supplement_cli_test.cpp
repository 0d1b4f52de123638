// `numcheck orbit supplement` and `orbit report --from-supplement`: a small study (run, score,
// report in one folder with relative paths), its supplement rebuilt twice byte-identically, the
// report rebuilt from the supplement elsewhere byte-identical to the original (metrics.json,
// report.md, report.html, report.tex, figures), and damaged or unusable inputs refused.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "cli_support.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"

namespace numcheck {
namespace {

namespace fs = std::filesystem;

// Runs numcheck with `args` in folder `dir`; returns the exit code (output in dir/log).
int in_dir(const fs::path& dir, const std::string& args) {
  const std::string cmd = fmt::format("cd '{}' && '{}' {} >>log 2>&1", dir.string(), NUMCHECK_CLI, args);
  const int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(SupplementCli, RebuiltTwiceIdenticallyAndTheReportFromItEqualsTheOriginal) {
  const fs::path study = testing::fresh_dir("supp_study");
  ASSERT_EQ(in_dir(study, "orbit generate --out bench"), 0) << io::read_file(study / "log");
  ASSERT_EQ(in_dir(study,
                   "orbit run --bench bench --out run --bases 30 --system reference --inject "
                   "times_ten=0.1,markdown=0.1 --progress none"),
            0)
      << io::read_file(study / "log");
  ASSERT_EQ(in_dir(study, "orbit score --bench bench --responses run/responses.jsonl --out scores.jsonl"), 0);
  ASSERT_EQ(in_dir(study,
                   "orbit repeat --run run --n 5 --system reference --inject times_ten=0.1,markdown=0.1 "
                   "--progress none"),
            0)
      << io::read_file(study / "log");
  ASSERT_EQ(in_dir(study, "orbit report --bench bench --scores scores.jsonl --out report --bootstrap 200"), 0)
      << io::read_file(study / "log");
  ASSERT_EQ(in_dir(study, "orbit supplement --report report --out s1.tar"), 0)
      << io::read_file(study / "log");
  ASSERT_EQ(in_dir(study, "orbit supplement --report report --out s2.tar"), 0);
  const std::string s1 = io::read_file(study / "s1.tar", 1 << 30);
  EXPECT_EQ(s1, io::read_file(study / "s2.tar", 1 << 30));

  // Elsewhere, from the archive alone (the study folder is gone).
  const fs::path other = testing::fresh_dir("supp_other");
  fs::copy_file(study / "s1.tar", other / "s.tar");
  const fs::path original = testing::fresh_dir("supp_original");
  fs::copy(study / "report", original, fs::copy_options::recursive);
  fs::remove_all(study);
  ASSERT_EQ(in_dir(other, "orbit report --from-supplement s.tar --out rebuilt"), 0)
      << io::read_file(other / "log");
  EXPECT_NE(io::read_file(other / "log").find("byte-identical to the supplement's originals"),
            std::string::npos)
      << io::read_file(other / "log");
  for (const char* f : {"metrics.json", "report.md", "report.html", "report.tex"}) {
    EXPECT_TRUE(io::read_file(other / "rebuilt" / f, 1 << 30) == io::read_file(original / f, 1 << 30)) << f;
  }
  std::size_t figures = 0;
  for (const auto& e : fs::directory_iterator(original / "figures")) {
    ++figures;
    EXPECT_EQ(io::read_file(other / "rebuilt/figures" / e.path().filename()), io::read_file(e.path()))
        << e.path().filename();
  }
  EXPECT_GT(figures, 0u);
  EXPECT_NE(io::read_file(other / "rebuilt/report.md").find("## Repeat check"), std::string::npos);

  // A member changed inside the archive: refused, naming it.
  std::string bad = s1;
  const auto at = bad.find("\"prompt_id\":\"");  // inside a responses or scores record
  ASSERT_NE(at, std::string::npos);
  bad[at + 13] = bad[at + 13] == 'X' ? 'Y' : 'X';
  io::write_file_atomic(other / "bad.tar", bad);
  EXPECT_EQ(in_dir(other, "orbit report --from-supplement bad.tar --out r2"), 1);
  EXPECT_NE(io::read_file(other / "log").find("does not match its SHA-256"), std::string::npos)
      << io::read_file(other / "log");
  // --from-supplement with other inputs, and a supplement of a folder without a report: usage errors.
  EXPECT_EQ(in_dir(other, "orbit report --from-supplement s.tar --bench x --out r3"), 2);
  EXPECT_EQ(in_dir(other, "orbit supplement --report nothing --out x.tar"), 2);
  fs::remove_all(other);
  fs::remove_all(original);
}

// Members are named relative to the report folder's parent (the study folder): an input outside it
// (here the benchmark, in a sibling folder) cannot be packed under a safe name and is refused.
TEST(SupplementCli, AnInputOutsideTheStudyFolderIsRefused) {
  const fs::path study = testing::fresh_dir("supp_outside");
  const fs::path bench = testing::fresh_dir("supp_outside_bench");
  ASSERT_EQ(in_dir(study, fmt::format("orbit generate --out '{}'", bench.string())), 0);
  ASSERT_EQ(in_dir(study, fmt::format(
                              "orbit run --bench '{}' --out run --bases 6 --system reference --progress none",
                              bench.string())),
            0);
  ASSERT_EQ(
      in_dir(study, fmt::format("orbit score --bench '{}' --responses run/responses.jsonl --out scores.jsonl",
                                bench.string())),
      0);
  ASSERT_EQ(
      in_dir(study, fmt::format("orbit report --bench '{}' --scores scores.jsonl --out report --bootstrap 20",
                                bench.string())),
      0);
  EXPECT_EQ(in_dir(study, "orbit supplement --report report --out s.tar"), 1);
  EXPECT_NE(io::read_file(study / "log").find("is outside"), std::string::npos)
      << io::read_file(study / "log");
  EXPECT_FALSE(fs::exists(study / "s.tar"));
  fs::remove_all(study);
  fs::remove_all(bench);
}

}  // namespace
}  // namespace numcheck
