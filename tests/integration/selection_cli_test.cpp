// Honest subsets end to end: `orbit run --bases N` (and --templates/--views/--base-ids) records its
// selection; `orbit score` grades only the selected prompts; `orbit report` scopes every metric to
// the selection. The subset run's report must equal the full run's report restricted to the same
// bases, and its numbers must equal counts computed here from the full run's scores.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli_support.hpp"
#include "io/files.hpp"
#include "io/json.hpp"

namespace numcheck {
namespace {

namespace fs = std::filesystem;
using testing::kInjectFaults;
using testing::read_jsonl;
using testing::run_cli;

class SelectionCli : public testing::SharedDirSuite<SelectionCli> {
 protected:
  static void SetUpTestSuite() {
    make_root("selection_cli");
    auto r = run_cli(fmt::format("orbit generate --out '{}'", bench().string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // The full run and its scores, once for the suite.
    r = run_cli(
        fmt::format("orbit run --bench '{}' --out '{}' --system reference --inject '{}' --progress none "
                    "--no-fsync",
                    bench().string(), (*root_ / "full").string(), kInjectFaults));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_cli(fmt::format("orbit score --bench '{}' --responses '{}' --out '{}'", bench().string(),
                            (*root_ / "full" / "responses.jsonl").string(),
                            (*root_ / "full_scores.jsonl").string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
};

TEST_F(SelectionCli, SubsetReportEqualsTheFullRunRestrictedToTheSameBases) {
  // The subset run, scored and reported.
  const fs::path sub = dir("sub");
  fs::create_directories(sub / "a");
  auto r =
      run_cli(fmt::format("orbit run --bench '{}' --out '{}' --system reference --inject '{}' --bases 30 "
                          "--progress none --no-fsync",
                          bench().string(), (sub / "run").string(), kInjectFaults));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli(fmt::format("orbit score --bench '{}' --responses '{}' --out '{}'", bench().string(),
                          (sub / "run" / "responses.jsonl").string(), (sub / "a" / "scores.jsonl").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("of the run's selection (30 of 3600 bases)"), std::string::npos) << r.out;
  r = run_cli(fmt::format("orbit report --bench '{}' --scores '{}' --out '{}' --bootstrap 300",
                          bench().string(), (sub / "a" / "scores.jsonl").string(),
                          (sub / "a" / "report").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;

  // The selection the run recorded: 30 whole orbits.
  const io::Json run = io::read_json_file(sub / "run" / "run.json");
  const io::Json& sel = run["selection"];
  ASSERT_TRUE(sel["base_ids"].is_array());
  ASSERT_EQ(sel["base_ids"].size(), 30u);
  EXPECT_EQ(sel["spec"]["bases"], 30);
  std::set<std::string> bases;
  for (const auto& b : sel["base_ids"]) bases.insert(b.get<std::string>());
  std::set<std::string> templates;
  for (const auto& b : bases) templates.insert(b.substr(0, 2));
  EXPECT_EQ(templates.size(), 6u);  // stratified across every template

  // The full run's scores restricted to those bases, computed here.
  std::vector<io::Json> restricted;
  for (const auto& rec : read_jsonl(dir("full_scores.jsonl"))) {
    if (bases.count(rec["base_id"].get<std::string>())) restricted.push_back(rec);
  }
  std::map<std::string, std::pair<std::size_t, std::size_t>> per_view;  // view -> (correct, n), strict
  std::map<std::string, bool> orbit_ok, canon_ok;
  for (const auto& rec : restricted) {
    const bool ok = rec["strict"]["outcome"] == "correct";
    auto& pv = per_view[rec["view"].get<std::string>()];
    pv.first += ok ? 1 : 0;
    ++pv.second;
    const std::string b = rec["base_id"];
    orbit_ok.emplace(b, true);
    orbit_ok[b] = orbit_ok[b] && ok;
    if (rec["view"] == "canonical") canon_ok[b] = ok;
  }
  ASSERT_EQ(orbit_ok.size(), 30u);
  std::size_t orbit_correct = 0, canonical_correct = 0;
  for (const auto& [b, ok] : orbit_ok) orbit_correct += ok ? 1 : 0;
  for (const auto& [b, ok] : canon_ok) canonical_correct += ok ? 1 : 0;

  // The subset report's numbers: every denominator is the selection's, none counts an unasked prompt.
  const io::Json m = io::read_json_file(sub / "a" / "report" / "metrics.json");
  EXPECT_EQ(m["benchmark"]["bases"], 30);
  EXPECT_EQ(m["benchmark"]["prompts"], restricted.size());
  EXPECT_EQ(m["benchmark"]["selection"]["of_bases"], 3600);
  const io::Json& strict = m["systems"]["reference"]["strict"];
  for (const auto& [view, cn] : per_view) {
    EXPECT_EQ(m["benchmark"]["views"][view], cn.second) << view;
    EXPECT_EQ(strict["views"][view]["n"], cn.second) << view;
    EXPECT_EQ(strict["views"][view]["correct"], cn.first) << view;
    EXPECT_EQ(strict["failures"][view]["missing"], 0) << view;
  }
  EXPECT_EQ(strict["orbit"]["correct"], orbit_correct);
  EXPECT_EQ(strict["orbit"]["n"], 30);
  EXPECT_EQ(strict["views"]["canonical"]["correct"], canonical_correct);
  EXPECT_EQ(m["systems"]["reference"]["missing"], 0);
  // The results table `orbit report` prints: the canonical and orbit rows from the same counts.
  const auto row = [](const char* view, std::size_t n, std::size_t correct) {
    return fmt::format("| {} | {} | {:.3f} |", view, n, static_cast<double>(correct) / n);
  };
  EXPECT_NE(r.out.find(row("orbit", 30, orbit_correct)), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(row("canonical", 30, canonical_correct)), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("report: "), std::string::npos) << r.out;
  const std::string md = io::read_file(sub / "a" / "report" / "report.md");
  EXPECT_NE(md.find("Scope: this report covers a selection of 30 of the benchmark's 3600 bases"),
            std::string::npos);

  // The full run's records for those bases, reported with the same selection, give the same bytes.
  fs::create_directories(sub / "b");
  {
    std::ofstream f(sub / "b" / "scores.jsonl", std::ios::binary);
    for (const auto& rec : restricted) f << io::to_line(io::OrderedJson::parse(rec.dump())) << "\n";
  }
  // The sidecar records the selection (as `orbit score` writes it for the subset run).
  io::OrderedJson side =
      io::parse_ordered_json(io::read_file(sub / "a" / "scores.jsonl.manifest.json"), "side");
  {
    std::ofstream f(sub / "b" / "scores.jsonl.manifest.json", std::ios::binary);
    f << io::to_pretty(side);
  }
  r = run_cli(fmt::format("orbit report --bench '{}' --scores '{}' --out '{}' --bootstrap 300",
                          bench().string(), (sub / "b" / "scores.jsonl").string(),
                          (sub / "b" / "report").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Equal but for the scores file's path in the systems table.
  std::string md_b = io::read_file(sub / "b" / "report" / "report.md");
  const std::string from = (sub / "b" / "scores.jsonl").string(), to = (sub / "a" / "scores.jsonl").string();
  auto escaped = [](std::string p) {  // as Markdown shows it
    std::string out;
    for (char ch : p) out += ch == '_' ? std::string("\\_") : std::string(1, ch);
    return out;
  };
  for (auto pos = md_b.find(escaped(from)); pos != std::string::npos; pos = md_b.find(escaped(from), pos)) {
    md_b.replace(pos, escaped(from).size(), escaped(to));
  }
  EXPECT_TRUE(md_b == md) << "the subset report differs from the full run's report restricted to its bases";
}

TEST_F(SelectionCli, TemplatesViewsAndBaseIdsFiltersAndMismatchedSelections) {
  const fs::path d = dir("filters");
  fs::create_directories(d);
  {
    std::ofstream f(d / "ids.txt");
    f << "# chosen by hand\nCV-0001\nDD-0002\nLV-0003\n";
  }
  auto r =
      run_cli(fmt::format("orbit run --bench '{}' --out '{}' --system reference --base-ids '{}' --templates "
                          "CV,DD --views canonical,unit "
                          "--progress none --no-fsync",
                          bench().string(), (d / "run").string(), (d / "ids.txt").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> ids;
  for (const auto& rec : read_jsonl(d / "run" / "responses.jsonl"))
    ids.insert(rec["prompt_id"].get<std::string>());
  std::set<std::string> expected;
  for (const auto& rec : read_jsonl(bench() / "views.jsonl")) {
    const std::string b = rec["base_id"];
    if ((b == "CV-0001" || b == "DD-0002") && (rec["view"] == "canonical" || rec["view"] == "unit"))
      expected.insert(rec["prompt_id"].get<std::string>());
  }
  EXPECT_EQ(ids, expected);
  r = run_cli(fmt::format("orbit score --bench '{}' --responses '{}' --out '{}'", bench().string(),
                          (d / "run" / "responses.jsonl").string(), (d / "scores.jsonl").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // --whole-benchmark: every unasked prompt is then missing (exit 3, nothing written).
  r = run_cli(fmt::format("orbit score --bench '{}' --responses '{}' --out '{}' --whole-benchmark",
                          bench().string(), (d / "run" / "responses.jsonl").string(),
                          (d / "whole.jsonl").string()));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  // A report cannot compare a subset with the whole benchmark.
  r = run_cli(fmt::format("orbit report --bench '{}' --scores '{}' '{}' --out '{}' --bootstrap 10",
                          bench().string(), (d / "scores.jsonl").string(), dir("full_scores.jsonl").string(),
                          (d / "rep").string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("different selections"), std::string::npos) << r.err;
  // Usage errors.
  for (const std::string bad :
       {"--bases 0", "--templates XX", "--views fraction", "--views canonical,roman"}) {
    r = run_cli(fmt::format("orbit run --bench '{}' --out '{}' --system reference {}", bench().string(),
                            (d / "bad").string(), bad));
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
  }
  r = run_cli(fmt::format("orbit run --bench '{}' --out '{}' --system reference --limit 5", bench().string(),
                          (d / "bad").string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;  // --limit is gone: it cut orbits in half
}

}  // namespace
}  // namespace numcheck
