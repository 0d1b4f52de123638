// `numcheck orbit study` end to end: two systems from one study file, served by two test-server
// personalities in other processes, into one report with both (systems table from each run's
// run.json); a study killed (SIGKILL) in its second system and resumed completes with exactly one
// record per prompt; the same run in two different absolute folders gives byte-identical
// metrics.json and report.md; hostile study files are clear errors.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cli_support.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "io/sha256.hpp"

namespace numcheck {
namespace {

namespace fs = std::filesystem;
using testing::Child;
using testing::count_lines;
using testing::read_jsonl;
using testing::run_cli;

using testing::kServer;

// Exactly one record per selected prompt of the run folder (no lost or duplicated record).
void expect_one_record_per_prompt(const fs::path& run) {
  const io::Json m = io::read_json_file(run / "run.json");
  const auto n = m["selection"]["prompts"].get<std::size_t>();
  std::set<std::string> ids;
  const auto recs = read_jsonl(run / "responses.jsonl");
  for (const auto& r : recs)
    EXPECT_TRUE(ids.insert(r["prompt_id"].get<std::string>()).second) << r["prompt_id"];
  EXPECT_EQ(recs.size(), n) << run;
  EXPECT_EQ(m["complete"], true) << run;
}

class StudyCli : public testing::SharedDirSuite<StudyCli> {
 protected:
  static void SetUpTestSuite() { make_root_with_bench("study_cli"); }
};

std::string study_json(const std::string& url_a, const std::string& url_b, const std::string& model_file) {
  return fmt::format(R"({{
  "format": "numcheck-study/1",
  "seed": 20260725,
  "selection": {{"bases": 24}},
  "systems": [
    {{"name": "alpha-q4", "endpoint": "{}", "model": "alpha", "max_tokens": 512,
      "sampling": {{"temperature": 0, "seed": 7}}, "extra_body": {{"cache_prompt": false}},
      "model_file": "{}", "retries": 10}},
    {{"name": "beta", "endpoints": ["{}"], "model": "beta", "retries": 10}}
  ]
}})",
                     url_a, model_file, url_b);
}

// --dry-run prints each system's number of prompts (what `orbit run --dry-run` counts for the same
// selection) and the total, contacts no server (both endpoints here are closed ports) and makes no
// run folder.
TEST_F(StudyCli, ADryRunPrintsEachSystemsPromptsAndSendsNothing) {
  const fs::path dir = *root_ / "dry";
  fs::create_directories(dir);
  io::write_file_atomic(dir / "model.gguf", "bytes\n");
  io::write_file_atomic(dir / "study.json",
                        study_json("http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1", "model.gguf"));
  const auto one =
      run_cli(fmt::format("orbit run --bench '{}' --bases 24 --system reference --out '{}' --dry-run",
                          bench().string(), (dir / "one").string()));
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const std::string prompts = one.out.substr(0, one.out.find(" prompts"));
  ASSERT_FALSE(prompts.empty());
  const auto r =
      run_cli(fmt::format("orbit study --config '{}' --out '{}' --bench '{}' --dry-run",
                          (dir / "study.json").string(), (dir / "out").string(), bench().string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string n = prompts.substr(prompts.rfind(' ') + 1);
  EXPECT_NE(r.out.find(fmt::format("dry run: alpha-q4: {} prompts, 0 consensus calls\n", n)),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(fmt::format("dry run: beta: {} prompts, 0 consensus calls\n", n)), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(fmt::format("dry run: 2 systems, {} requests in all would be sent; no request sent",
                                   2 * std::stoul(n))),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(dir / "out" / "runs"));
}

TEST_F(StudyCli, TwoSystemsOneReportAndAKilledStudyResumes) {
  // Two personalities: alpha answers right (build b-alpha); beta runs out of tokens on a fifth of
  // its answers and answers slowly enough to be killed mid-run.
  Child a({kServer, "--bench", bench().string(), "--model", "alpha", "--build", "b-alpha"}, true);
  Child b({kServer, "--bench", bench().string(), "--model", "beta", "--build", "b-beta", "--delay-ms", "15",
           "--fault", "length:0.2"},
          true);
  ASSERT_NE(a.first_line.find("http://127.0.0.1:"), std::string::npos) << a.first_line;
  ASSERT_NE(b.first_line.find("http://127.0.0.1:"), std::string::npos) << b.first_line;
  const fs::path dir = *root_ / "two";
  fs::create_directories(dir);
  io::write_file_atomic(dir / "alpha.gguf", "not really a model, but bytes to hash\n");
  // The model file is given relative to the study file's folder.
  io::write_file_atomic(dir / "study.json", study_json(a.first_line, b.first_line, "alpha.gguf"));
  const fs::path out = dir / "out";
  const std::vector<std::string> argv = {NUMCHECK_CLI,
                                         "orbit",
                                         "study",
                                         "--config",
                                         (dir / "study.json").string(),
                                         "--out",
                                         out.string(),
                                         "--bench",
                                         bench().string(),
                                         "--no-cache",
                                         "--progress",
                                         "none",
                                         "--bootstrap",
                                         "200",
                                         "--resume"};

  // Killed while the second system runs.
  {
    Child run(argv, false);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (count_lines(out / "runs/beta/responses.jsonl") < 8 && run.running() &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_TRUE(run.running()) << "the study finished before it could be killed";
    run.kill9();
  }
  expect_one_record_per_prompt(out / "runs/alpha-q4");
  const std::size_t before = count_lines(out / "runs/beta/responses.jsonl");
  EXPECT_GE(before, 8u);
  EXPECT_FALSE(fs::exists(out / "report/metrics.json"));

  // Resumed: the same command completes it.
  std::string cmd;
  for (std::size_t i = 1; i < argv.size(); ++i) cmd += "'" + argv[i] + "' ";
  const auto r = run_cli(cmd);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  expect_one_record_per_prompt(out / "runs/alpha-q4");
  expect_one_record_per_prompt(out / "runs/beta");
  const io::Json beta_run = io::read_json_file(out / "runs/beta/run.json");
  EXPECT_EQ(beta_run["sessions"].size(), 2u);
  EXPECT_GT(read_jsonl(out / "runs/beta/responses.jsonl").size(), before);
  EXPECT_EQ(beta_run["system_name"], "beta");

  // One report with both systems, in study order, named by the study.
  const io::Json m = io::read_json_file(out / "report/metrics.json");
  ASSERT_EQ(m["system_order"], io::Json::array({"alpha-q4", "beta"}));
  const io::Json& pa = m["systems"]["alpha-q4"]["provenance"];
  const io::Json& pb = m["systems"]["beta"]["provenance"];
  EXPECT_EQ(pa["model_served"], "alpha");
  EXPECT_EQ(pb["model_served"], "beta");
  EXPECT_EQ(pa["server_build"], "b-alpha");
  EXPECT_EQ(pb["server_build"], "b-beta");
  EXPECT_EQ(pa["max_tokens"], 512);
  EXPECT_EQ(pb["max_tokens"], 1024);
  EXPECT_EQ(pa["sampling"]["seed"], 7);
  EXPECT_EQ(pa["extra_body"]["cache_prompt"], false);
  EXPECT_EQ(pa["model_file"]["sha256"], io::sha256_hex("not really a model, but bytes to hash\n"));
  EXPECT_EQ(pa["model_file"]["name"], "alpha.gguf");
  EXPECT_TRUE(pb["model_file"].is_null());
  ASSERT_EQ(pa["endpoint_hosts"].size(), 1u);
  EXPECT_EQ(pa["endpoint_hosts"][0].get<std::string>().rfind("127.0.0.1:", 0), 0u) << pa["endpoint_hosts"];
  EXPECT_TRUE(pa["started_at"].is_string());
  EXPECT_TRUE(pb["ended_at"].is_string());
  EXPECT_EQ(m["benchmark"]["seed"], 20260725);
  EXPECT_TRUE(m["benchmark"]["spec_sha256"].is_string());
  // beta's length-finished answers make it worse than alpha: the comparison is between two systems.
  EXPECT_GT(m["systems"]["alpha-q4"]["strict"]["orbit"]["correct"].get<std::size_t>(),
            m["systems"]["beta"]["strict"]["orbit"]["correct"].get<std::size_t>());
  const std::string md = io::read_file(out / "report/report.md");
  EXPECT_NE(md.find("Systems: what was run"), std::string::npos);
  EXPECT_NE(md.find("| alpha-q4 | alpha | b-alpha, fingerprint fp\\_b-alpha | 127.0.0.1:"), std::string::npos)
      << md.substr(0, 4000);
  EXPECT_NE(md.find("## Study"), std::string::npos);
  EXPECT_NE(r.out.find("alpha-q4"), std::string::npos);
  EXPECT_NE(r.out.find("report: "), std::string::npos);
  // Paths in the report are relative to it.
  EXPECT_EQ(m["benchmark"]["dir"], fs::relative(bench(), out / "report").generic_string());
  EXPECT_EQ(m["systems"]["beta"]["scores_file"], "../runs/beta/scores.jsonl");

  // --systems runs only the named system; the report still covers both complete runs.
  const std::size_t alpha_sessions = io::read_json_file(out / "runs/alpha-q4/run.json")["sessions"].size();
  const auto again = run_cli(cmd + "--systems beta");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(io::read_json_file(out / "runs/alpha-q4/run.json")["sessions"].size(), alpha_sessions);
  EXPECT_EQ(io::read_json_file(out / "runs/beta/run.json")["sessions"].size(), 3u);
  EXPECT_EQ(io::read_json_file(out / "report/metrics.json")["system_order"].size(), 2u);
}

TEST_F(StudyCli, AnUnreachableSystemLeavesTheOthersReportedAndExitsThree) {
  const fs::path dir = *root_ / "down";
  fs::create_directories(dir);
  io::write_file_atomic(dir / "study.json", R"({"format": "numcheck-study/1", "selection": {"bases": 6},
    "systems": [{"name": "sim", "system": "reference"},
                {"name": "gone", "endpoint": "http://127.0.0.1:9/v1", "model": "m"}]})");
  const auto r =
      run_cli(fmt::format("orbit study --config '{}' --out '{}' --bench '{}' --progress none --bootstrap 50",
                          (dir / "study.json").string(), (dir / "out").string(), bench().string()));
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("gone"), std::string::npos) << r.err;
  const io::Json m = io::read_json_file(dir / "out/report/metrics.json");
  EXPECT_EQ(m["system_order"], io::Json::array({"sim"}));
  EXPECT_NE(io::read_file(dir / "out/report/report.md").find("Not in this report (run not complete): gone."),
            std::string::npos);
}

TEST_F(StudyCli, AConsensusPlanRunsForEverySystemAndIsAnalysedTogether) {
  const fs::path dir = *root_ / "consensus";
  fs::create_directories(dir);
  auto r = run_cli(fmt::format("orbit generate --out '{}' --paraphrases", (dir / "pbench").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli(fmt::format("orbit consensus plan --bench '{}' --out '{}' --per-template 3",
                          (dir / "pbench").string(), (dir / "plan.json").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  io::write_file_atomic(dir / "study.json", R"({"format": "numcheck-study/1", "selection": {"bases": 8},
    "systems": [{"name": "clean", "system": "reference"},
                {"name": "faulty", "system": "reference", "inject": "times_ten=0.3,truncation=0.2"}]})");
  r = run_cli(fmt::format(
      "orbit study --config '{}' --out '{}' --bench '{}' --progress none --bootstrap 50 --consensus-plan "
      "'{}'",
      (dir / "study.json").string(), (dir / "out").string(), bench().string(), (dir / "plan.json").string()));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* name : {"clean", "faulty"}) {
    const io::Json run = io::read_json_file(dir / "out/consensus/runs" / name / "run.json");
    EXPECT_EQ(run["complete"], true) << name;
    EXPECT_EQ(run["system_name"], name);
    EXPECT_EQ(run["counts"]["items"], io::read_json_file(dir / "plan.json")["requests"].size());
  }
  const io::Json c = io::read_json_file(dir / "out/consensus/analysis/consensus.json");
  ASSERT_TRUE(c["systems"].contains("clean")) << c["systems"].dump().substr(0, 300);
  ASSERT_TRUE(c["systems"].contains("faulty"));
  const io::Json m = io::read_json_file(dir / "out/report/metrics.json");
  bool has_consensus = false;
  for (const auto& src : m["extra_sections"]) has_consensus = has_consensus || src["section"] == "consensus";
  EXPECT_TRUE(has_consensus);
  EXPECT_EQ(m["system_order"], io::Json::array({"clean", "faulty"}));
}

TEST_F(StudyCli, HostileStudyFilesAreClearErrors) {
  const fs::path dir = *root_ / "hostile";
  fs::create_directories(dir);
  const auto run = [&](const std::string& text) {
    io::write_file_atomic(dir / "s.json", text);
    return run_cli(fmt::format("orbit study --config '{}' --out '{}' --bench '{}' --progress none",
                               (dir / "s.json").string(), (dir / "out").string(), bench().string()));
  };
  auto r = run(
      R"({"format": "numcheck-study/1", "systems": [{"name": "a", "system": "reference", "temprature": 0}]})");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("temprature"), std::string::npos) << r.err;
  r = run(R"({"format": "numcheck-study/1", "systems": [{"name": "../x", "system": "reference"}]})");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("name"), std::string::npos) << r.err;
  r = run(R"({"format": "numcheck-study/1", "systems": [{"name": "a", "system": "reference"},
              {"name": "a", "system": "reference"}]})");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("two systems"), std::string::npos) << r.err;
  r = run(R"({"format": "numcheck-study/1", "seed": 5, "systems": [{"name": "a", "system": "reference"}]})");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("seed"), std::string::npos) << r.err;
  r = run("{not json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(fs::exists(dir / "out/runs"));
}

TEST_F(StudyCli, TheSameRunInTwoFoldersGivesTheSameReportBytes) {
  const fs::path a = *root_ / "place-a";
  const fs::path b = *root_ / "elsewhere/place-b";
  fs::create_directories(a);
  fs::create_directories(b);
  auto r =
      run_cli(fmt::format("orbit run --bench '{}' --out '{}' --system reference --inject times_ten=0.1 "
                          "--bases 30 --progress none --model-file '{}'",
                          bench().string(), (a / "run").string(), (bench() / "views.jsonl").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  fs::copy(bench(), a / "bench", fs::copy_options::recursive);
  fs::copy(a / "bench", b / "bench", fs::copy_options::recursive);
  fs::copy(a / "run", b / "run", fs::copy_options::recursive);
  for (const fs::path& d : {a, b}) {
    r = run_cli(fmt::format("orbit score --bench '{}' --responses '{}' --out '{}'", (d / "bench").string(),
                            (d / "run/responses.jsonl").string(), (d / "scores.jsonl").string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_cli(fmt::format("orbit report --bench '{}' --scores '{}' --out '{}' --bootstrap 300",
                            (d / "bench").string(), (d / "scores.jsonl").string(), (d / "report").string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  for (const char* f : {"metrics.json", "report.md"}) {
    const std::string x = io::read_file(a / "report" / f);
    const std::string y = io::read_file(b / "report" / f);
    EXPECT_TRUE(x == y) << f << " differs between the two folders";
    EXPECT_EQ(x.find(a.string()), std::string::npos) << f << " holds an absolute path";
  }
  const io::Json m = io::read_json_file(a / "report/metrics.json");
  EXPECT_EQ(m["benchmark"]["dir"], "../bench");
  EXPECT_EQ(m["systems"]["reference"]["provenance"]["run_manifest"], "../run/run.json");
  EXPECT_EQ(m["systems"]["reference"]["provenance"]["model_file"]["sha256"],
            io::sha256_file(bench() / "views.jsonl"));
  EXPECT_EQ(m["systems"]["reference"]["provenance"]["benchmark"]["seed"], 20260725);
}

}  // namespace
}  // namespace numcheck
