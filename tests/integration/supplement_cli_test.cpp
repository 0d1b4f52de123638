// `numcheck orbit supplement` and `orbit report --from-supplement`: a small study (run, score,
// report in one folder with relative paths), its supplement rebuilt twice byte-identically, the
// report rebuilt from the supplement elsewhere byte-identical to the original (metrics.json,
// report.md, report.html, report.tex, figures), and damaged or unusable inputs refused: paths in
// supplement.json that name a place outside the extraction folder, and a member that is also the
// folder of another. The README's study path: `orbit study` of two systems (two test servers), then
// `orbit supplement` of its report, rebuilt byte-identically.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cli_support.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "io/sha256.hpp"
#include "io/tar.hpp"

namespace numcheck {
namespace {

namespace fs = std::filesystem;

// Runs numcheck with `args` in folder `dir`; returns the exit code (output in dir/log).
int in_dir(const fs::path& dir, const std::string& args) {
  const std::string cmd = fmt::format("cd '{}' && '{}' {} >>log 2>&1", dir.string(), NUMCHECK_CLI, args);
  const int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// The archive with supplement.json's report_args changed by `edit` and SHA256SUMS made to match
// (what a hostile archive can do: the manifest only proves the members are the listed ones).
std::string with_report_args(const std::string& tar, const std::function<void(io::OrderedJson&)>& edit,
                             const std::vector<io::TarMember>& extra = {}) {
  std::vector<io::TarMember> ms = io::read_ustar(tar, "s.tar");
  for (auto& m : ms) {
    if (m.path != "supplement.json") continue;
    io::OrderedJson info = io::parse_ordered_json(m.bytes, "supplement.json");
    edit(info["report_args"]);
    m.bytes = io::to_pretty(info);
  }
  std::string sums;
  std::vector<io::TarMember> all = ms;
  all.insert(all.end(), extra.begin(), extra.end());
  for (const auto& m : all)
    if (m.path != "SHA256SUMS") sums += io::sha256_hex(m.bytes) + "  " + m.path + "\n";
  for (auto& m : ms)
    if (m.path == "SHA256SUMS") m.bytes = sums;
  std::string out = io::write_ustar(ms);
  // Members write_ustar itself refuses (a file that is also a folder) are appended as an archive of
  // their own, in place of the end-of-archive blocks.
  for (const auto& e : extra) {
    out.resize(out.size() - 1024);
    out += io::write_ustar({e});
  }
  return out;
}

// The temporary folders of `--from-supplement` left in the temp folder for an archive.
std::size_t work_folders_of(const std::string& tar) {
  const std::string tail = io::sha256_hex(tar).substr(0, 12);
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(fs::temp_directory_path())) {
    const std::string name = e.path().filename().string();
    n += name.rfind("numcheck-supplement-", 0) == 0 && name.ends_with(tail) ? 1 : 0;
  }
  return n;
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
  // Paths of report_args outside the extraction folder: refused before anything is written (the
  // report folder "../escaped" would land beside the temporary folder, an absolute one anywhere).
  const fs::path escaped = fs::temp_directory_path() / "numcheck-escaped-report";
  const fs::path absolute_dir = other / "absolute-report";
  fs::remove_all(escaped);
  const std::vector<std::pair<std::string, std::function<void(io::OrderedJson&)>>> hostile = {
      {"up", [](io::OrderedJson& a) { a["report_dir"] = "../numcheck-escaped-report"; }},
      {"abs", [&](io::OrderedJson& a) { a["report_dir"] = absolute_dir.string(); }},
      {"bench", [&](io::OrderedJson& a) { a["bench"] = (other / "elsewhere-bench").string(); }},
      {"scores", [](io::OrderedJson& a) { a["scores"][0] = "runs/../../scores.jsonl"; }},
  };
  for (const auto& [name, edit] : hostile) {
    io::write_file_atomic(other / (name + ".tar"), with_report_args(s1, edit));
    EXPECT_EQ(in_dir(other, fmt::format("orbit report --from-supplement {}.tar --out r-{}", name, name)), 1)
        << name << io::read_file(other / "log");
    EXPECT_NE(io::read_file(other / "log").find("a path outside the archive's folder"), std::string::npos)
        << name << io::read_file(other / "log");
    EXPECT_FALSE(fs::exists(other / ("r-" + name))) << name;
  }
  EXPECT_FALSE(fs::exists(escaped));
  EXPECT_FALSE(fs::exists(absolute_dir));
  fs::remove_all(escaped);
  // A member that is also the folder of another member: a clear error, no temporary folder left.
  const std::string both =
      with_report_args(s1, [](io::OrderedJson&) {}, {{"original-report/metrics.json/inside", "x"}});
  io::write_file_atomic(other / "both.tar", both);
  EXPECT_EQ(in_dir(other, "orbit report --from-supplement both.tar --out r-both"), 1)
      << io::read_file(other / "log");
  EXPECT_NE(io::read_file(other / "log").find("is a file and also the folder of member"), std::string::npos)
      << io::read_file(other / "log");
  EXPECT_EQ(io::read_file(other / "log").find("internal error"), std::string::npos)
      << io::read_file(other / "log");
  EXPECT_EQ(work_folders_of(both), 0u);
  EXPECT_FALSE(fs::exists(other / "r-both"));
  // --from-supplement with other inputs, and a supplement of a folder without a report: usage errors.
  EXPECT_EQ(in_dir(other, "orbit report --from-supplement s.tar --bench x --out r3"), 2);
  EXPECT_EQ(in_dir(other, "orbit supplement --report nothing --out x.tar"), 2);
  fs::remove_all(other);
  fs::remove_all(original);
}

// The README's study path: `orbit study` of two systems, `orbit supplement` of its report, and the
// report rebuilt from the archive alone, elsewhere, byte for byte (the study section included).
TEST(SupplementCli, AStudyOfTwoSystemsIsPackedAndRebuiltByteIdentically) {
  const fs::path dir = testing::fresh_dir("supp_study_two");
  testing::Child a({testing::kServer, "--model", "alpha", "--build", "b-alpha"}, true);
  testing::Child b({testing::kServer, "--model", "beta", "--build", "b-beta", "--fault", "length:0.2"}, true);
  ASSERT_NE(a.first_line.find("http://127.0.0.1:"), std::string::npos) << a.first_line;
  ASSERT_NE(b.first_line.find("http://127.0.0.1:"), std::string::npos) << b.first_line;
  io::write_file_atomic(dir / "study.json", fmt::format(R"({{
  "format": "numcheck-study/1",
  "selection": {{"bases": 8}},
  "systems": [
    {{"name": "alpha", "endpoint": "{}", "model": "alpha", "max_tokens": 256}},
    {{"name": "beta", "endpoint": "{}", "model": "beta", "retries": 10}}
  ]
}})",
                                                        a.first_line, b.first_line));
  ASSERT_EQ(in_dir(dir,
                   "orbit study --config study.json --out out/study --resume --no-cache --progress none "
                   "--bootstrap 200"),
            0)
      << io::read_file(dir / "log");
  ASSERT_EQ(in_dir(dir, "orbit supplement --report out/study/report --out supplement.tar"), 0)
      << io::read_file(dir / "log");
  const fs::path other = testing::fresh_dir("supp_study_two_other");
  fs::copy_file(dir / "supplement.tar", other / "supplement.tar");
  ASSERT_EQ(in_dir(other, "orbit report --from-supplement supplement.tar --out rebuilt"), 0)
      << io::read_file(other / "log");
  EXPECT_NE(io::read_file(other / "log").find("byte-identical to the supplement's originals"),
            std::string::npos)
      << io::read_file(other / "log");
  for (const char* f : {"metrics.json", "report.md", "report.html", "report.tex"}) {
    EXPECT_TRUE(io::read_file(other / "rebuilt" / f, 1 << 30) ==
                io::read_file(dir / "out/study/report" / f, 1 << 30))
        << f;
  }
  const std::string md = io::read_file(other / "rebuilt/report.md");
  EXPECT_NE(md.find("## Study"), std::string::npos);
  EXPECT_NE(md.find("2 systems; 2 in this report (alpha, beta)"), std::string::npos) << md.substr(0, 3000);
  fs::remove_all(dir);
  fs::remove_all(other);
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
