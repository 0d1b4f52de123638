// `numcheck orbit repeat` against the test server: a deterministic server gives N/N byte- and
// answer-identical repeats; a nondeterministic one (tests/support: by prompt, the same bytes, other
// words with the same FINAL answer, or another FINAL answer) gives exactly the counts its rule
// implies; repeat.json lands in the run folder and the report gains a "Repeat check" section.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli_support.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "llm/reference.hpp"
#include "orbit/benchmark.hpp"
#include "test_server.hpp"

namespace numcheck {
namespace {

namespace fs = std::filesystem;
using testing::Child;
using testing::run_cli;

using testing::kServer;

class RepeatCli : public testing::SharedDirSuite<RepeatCli> {
 protected:
  static void SetUpTestSuite() { make_root_with_bench("repeat_cli"); }
  static std::string system(const std::string& url) {
    return fmt::format("--endpoint '{}' --model test-model --progress none --retries 0", url);
  }
  // Runs 12 bases (about 30 prompts) against `url` into dir(name).
  static void run(const std::string& url, const std::string& name) {
    const auto r = run_cli(fmt::format("orbit run --bench '{}' --out '{}' --bases 12 --no-cache {}",
                                       bench().string(), dir(name).string(), system(url)));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
};

TEST_F(RepeatCli, DeterministicServerGivesNOfN) {
  Child server({kServer, "--bench", bench().string()}, true);
  const std::string url = server.first_line;
  run(url, "det");
  auto r =
      run_cli(fmt::format("orbit repeat --run '{}' --n 10 --seed 7 {}", dir("det").string(), system(url)));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("byte-identical 10/10, answer-identical 10/10"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("cache_prompt"), std::string::npos) << r.err;  // the llama-server warning
  const io::Json j = io::read_json_file(dir("det") / "repeat.json");
  EXPECT_EQ(j["counts"]["asked"], 10);
  EXPECT_EQ(j["counts"]["byte_identical"], 10);
  EXPECT_EQ(j["counts"]["answer_identical"], 10);
  EXPECT_EQ(j["counts"]["request_identical"], 10);
  EXPECT_EQ(j["repeat_dir"], "repeat");
  EXPECT_EQ(j["items"].size(), 10u);
  // The repeat's own records were never served from the cache.
  std::size_t records = 0;
  io::for_each_line(dir("det") / "repeat" / "responses.jsonl", [&](const io::Line& l) {
    if (!l.terminated || l.text.empty()) return;
    ++records;
    EXPECT_EQ(io::parse_json(l.text, "r")["cached"], false);
  });
  EXPECT_EQ(records, 10u);

  // The same seed chooses the same prompts; an existing repeat folder is a usage error.
  r = run_cli(fmt::format("orbit repeat --run '{}' --n 10 --seed 7 {}", dir("det").string(), system(url)));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("exists"), std::string::npos) << r.err;
  r = run_cli(fmt::format("orbit repeat --run '{}' --n 10 --seed 7 --out '{}' {}", dir("det").string(),
                          dir("det2").string(), system(url)));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const io::Json j2 = io::read_json_file(dir("det") / "repeat.json");
  for (std::size_t i = 0; i < 10; ++i) EXPECT_EQ(j2["items"][i]["prompt_id"], j["items"][i]["prompt_id"]);

  // More than recorded: every recorded prompt once.
  r = run_cli(fmt::format("orbit repeat --run '{}' --n 100000 --out '{}' {}", dir("det").string(),
                          dir("det3").string(), system(url)));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const io::Json j3 = io::read_json_file(dir("det") / "repeat.json");
  EXPECT_EQ(j3["counts"]["asked"], j3["items"].size());
  EXPECT_EQ(j3["counts"]["byte_identical"], j3["items"].size());

  // The report shows the section (the scores manifest leads to the run folder).
  r = run_cli(fmt::format("orbit score --bench '{}' --responses '{}' --out '{}'", bench().string(),
                          (dir("det") / "responses.jsonl").string(), (dir("det") / "scores.jsonl").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli(fmt::format("orbit report --bench '{}' --scores '{}' --out '{}' --bootstrap 50",
                          bench().string(), (dir("det") / "scores.jsonl").string(),
                          dir("det-report").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string md = io::read_file(dir("det-report") / "report.md", 1 << 26);
  EXPECT_NE(md.find("## Repeat check"), std::string::npos);
  const io::Json m = io::read_json_file(dir("det-report") / "metrics.json");
  const std::string name = m["system_order"][0];
  EXPECT_EQ(m["systems"][name]["repeat"]["asked"], j3["counts"]["asked"]);
}

TEST_F(RepeatCli, NondeterministicServerGivesTheCountsItsRuleImplies) {
  Child server({kServer, "--bench", bench().string(), "--nondeterministic"}, true);
  const std::string url = server.first_line;
  run(url, "nondet");
  const auto r =
      run_cli(fmt::format("orbit repeat --run '{}' --n 20 {}", dir("nondet").string(), system(url)));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const io::Json j = io::read_json_file(dir("nondet") / "repeat.json");
  // Prompt text and the first prompt of the run (the preflight probe asked it once before the run,
  // so its recorded answer is already a repeated one).
  std::map<std::string, std::string> prompt;
  std::string first;
  io::for_each_line(dir("nondet") / "responses.jsonl", [&](const io::Line& l) {
    if (!l.terminated || l.text.empty()) return;
    const io::Json rec = io::parse_json(l.text, "r");
    prompt[rec["prompt_id"]] = rec["request"]["messages"].back()["content"];
    if (rec["request_index"] == 0) first = rec["prompt_id"];
  });
  std::size_t bytes = 0, answers = 0, variants[3] = {0, 0, 0};
  for (const auto& it : j["items"]) {
    const std::string id = it["prompt_id"];
    const int v = numcheck::testing::nondeterministic_variant(prompt.at(id));
    const bool same_bytes = v == 0 || id == first;
    const bool same_answer = v != 2 || id == first;
    EXPECT_EQ(it["byte_identical"].get<bool>(), same_bytes) << id << " variant " << v;
    EXPECT_EQ(it["answer_identical"].get<bool>(), same_answer) << id << " variant " << v;
    bytes += same_bytes;
    answers += same_answer;
    ++variants[v];
  }
  EXPECT_EQ(j["counts"]["byte_identical"], bytes);
  EXPECT_EQ(j["counts"]["answer_identical"], answers);
  // The 20 prompts exercise every variant, so both counts fall short of N.
  EXPECT_GT(variants[1], 0u);
  EXPECT_GT(variants[2], 0u);
  EXPECT_LT(bytes, 20u);
  EXPECT_LT(answers, 20u);
  EXPECT_LT(bytes, answers);
}

// The endpoint and model come from run.json: `orbit repeat --run DIR` alone repeats the run's own
// system. A --model or --endpoint that names another system is a usage error before any request
// and leaves no folder behind, so the right command then simply runs.
TEST_F(RepeatCli, TakesTheSystemFromRunJsonAndRefusesAnotherBeforeAnyRequest) {
  auto bench_ptr = std::make_shared<const orbit::Benchmark>(orbit::load_benchmark(bench()));
  testing::TestServer server(testing::ServerOptions{}, llm::benchmark_solver(bench_ptr));
  server.start();
  const std::string url = server.base_url();
  run(url, "fromrun");
  const fs::path d = dir("fromrun");
  const std::size_t before = server.post_count();
  for (const std::string& wrong :
       {std::string("--model other-model"), std::string("--endpoint http://127.0.0.1:9/v1"),
        std::string("--system reference"), fmt::format("--endpoint '{}' --model test-model2", url)}) {
    const auto r =
        run_cli(fmt::format("orbit repeat --run '{}' --n 5 --progress none {}", d.string(), wrong));
    EXPECT_EQ(r.exit_code, 2) << wrong << r.out << r.err;
    EXPECT_NE(r.err.find("run.json"), std::string::npos) << wrong << r.err;
    EXPECT_EQ(server.post_count(), before) << wrong;
    EXPECT_FALSE(fs::exists(d / "repeat")) << wrong;
    EXPECT_FALSE(fs::exists(d / "repeat.json")) << wrong;
  }
  // No system flags: the run's endpoint and model.
  auto r = run_cli(fmt::format("orbit repeat --run '{}' --n 5 --progress none", d.string()));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("byte-identical 5/5, answer-identical 5/5"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("differ from the recorded ones"), std::string::npos) << r.err;
  EXPECT_GE(server.post_count(), before + 5);
  const io::Json j = io::read_json_file(d / "repeat.json");
  EXPECT_EQ(j["counts"]["request_identical"], 5);
  // The same flags as the run (with a trailing slash) are accepted too.
  r =
      run_cli(fmt::format("orbit repeat --run '{}' --n 5 --out '{}' --endpoint '{}/' --model test-model "
                          "--progress none",
                          d.string(), dir("fromrun-again").string(), url));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// A reference run's repeat takes --system reference and its faults from run.json.
TEST_F(RepeatCli, AReferenceRunIsRepeatedWithItsRecordedFaults) {
  auto r =
      run_cli(fmt::format("orbit run --bench '{}' --out '{}' --bases 6 --system reference --inject "
                          "times_ten=0.3,markdown=0.2 --progress none",
                          bench().string(), dir("ref").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli(fmt::format("orbit repeat --run '{}' --n 6 --progress none --inject times_ten=0.1",
                          dir("ref").string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_FALSE(fs::exists(dir("ref") / "repeat"));
  r = run_cli(fmt::format("orbit repeat --run '{}' --n 6 --progress none", dir("ref").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("byte-identical 6/6"), std::string::npos) << r.out;
}

TEST_F(RepeatCli, UsageErrors) {
  auto r = run_cli(fmt::format("orbit repeat --run '{}' --system reference", dir("nothing").string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("not an orbit run folder"), std::string::npos) << r.err;
  r = run_cli(fmt::format("orbit repeat --run '{}' --n 0 --system reference", dir("nothing").string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = run_cli("orbit repeat --run x --system reference --temperature 0.5");  // sampling is the recorded one
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

}  // namespace
}  // namespace numcheck
