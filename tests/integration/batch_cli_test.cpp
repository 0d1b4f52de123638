// `numcheck orbit batch export|import` and `claims verify --method llm --batch-export|--batch-import`
// end to end: the exported request lines are the bodies a live run sends; a batch output file
// written as vLLM's run_batch writes it (built here from the test server's answers to the exported
// bodies) imports into a run folder whose scores are byte for byte a live run's of the same
// answers, and whose report has the same results; a second import gives the same bytes; faulty
// output files are refused or reported with their exit codes.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli_support.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "io/sha256.hpp"
#include "llm/http_backend.hpp"

namespace numcheck {
namespace {

namespace fs = std::filesystem;
using testing::Child;
using testing::kServer;
using testing::run_cli;

std::vector<io::Json> read_lines(const fs::path& p) {
  std::vector<io::Json> out;
  io::for_each_line(p, [&](const io::Line& l) {
    if (l.terminated) out.push_back(io::Json::parse(l.text));
  });
  return out;
}

// The batch output file vLLM's run_batch writes for `input`: each request line's body POSTed to
// the server at `base` (its /v1 URL), the answer wrapped as
// {"id", "custom_id", "response": {"status_code", "request_id", "body"}, "error": null}.
void write_vllm_output(const fs::path& input, const std::string& base, const fs::path& output) {
  std::ofstream out(output, std::ios::binary);
  std::size_t n = 0;
  for (const io::Json& line : read_lines(input)) {
    const std::string url = base + line["url"].get<std::string>().substr(3);  // "/v1/chat/..." -> "/chat/..."
    const llm::HttpReply reply =
        llm::post_json(url, io::to_line(line["body"]), "", std::chrono::seconds(30), std::size_t{1} << 24);
    ASSERT_TRUE(reply.ok) << reply.error;
    io::OrderedJson o = io::OrderedJson::object();
    o["id"] = fmt::format("vllm-{:032x}", n);
    o["custom_id"] = line["custom_id"];
    o["response"] = {{"status_code", 200},
                     {"request_id", fmt::format("vllm-batch-{:032x}", n)},
                     {"body", io::OrderedJson::parse(reply.body)}};
    o["error"] = nullptr;
    out << io::to_line(o) << "\n";
    ++n;
  }
}

class BatchCli : public testing::SharedDirSuite<BatchCli> {
 protected:
  static void SetUpTestSuite() { make_root_with_bench("batch_cli"); }
};

// The systems of a metrics.json without what tells a batch run from a live one (provenance) and
// the paths of their files.
io::Json results_of(const fs::path& metrics) {
  io::Json systems = io::read_json_file(metrics)["systems"];
  for (auto& s : systems) {
    s.erase("provenance");
    s.erase("scores_file");
    s.erase("manifest");
  }
  return systems;
}

TEST_F(BatchCli, ExportImportScoreReportEqualsALiveRunOfTheSameAnswers) {
  Child server({kServer, "--bench", bench().string()}, true);
  ASSERT_NE(server.first_line.find("http://127.0.0.1:"), std::string::npos) << server.first_line;
  const std::string url = server.first_line;
  const fs::path live = dir("live"), batch = dir("batch"), run = dir("run-batch");

  auto r = run_cli(fmt::format(
      "orbit run --bench '{}' --out '{}' --endpoint '{}' --model test-model --bases 6 --concurrency 1 "
      "--no-cache --progress none",
      bench().string(), live.string(), url));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli(fmt::format("orbit batch export --bench '{}' --out '{}' --bases 6 --model test-model",
                          bench().string(), (batch / "in.jsonl").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(fs::exists(batch / "in.jsonl.manifest.json"));

  // Every exported body is the body the live run sent for that prompt.
  const auto live_records = read_lines(live / "responses.jsonl");
  const auto requests = read_lines(batch / "in.jsonl");
  ASSERT_EQ(requests.size(), live_records.size());
  std::map<std::string, io::Json> sent;
  for (const auto& rec : live_records) sent[rec["prompt_id"].get<std::string>()] = rec["request"];
  for (const auto& q : requests) {
    const std::string id = q["custom_id"].get<std::string>();
    const std::string prompt_id = id.substr(0, id.rfind('#'));
    ASSERT_TRUE(sent.count(prompt_id) == 1) << id;
    EXPECT_EQ(q["body"], sent[prompt_id]) << id;
  }

  write_vllm_output(batch / "in.jsonl", url, batch / "out.jsonl");
  r = run_cli(fmt::format("orbit batch import --bench '{}' --batch-input '{}' --batch-output '{}' --out '{}'",
                          bench().string(), (batch / "in.jsonl").string(), (batch / "out.jsonl").string(),
                          run.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const io::Json run_json = io::read_json_file(run / "run.json");
  EXPECT_EQ(run_json["system"], "batch");
  EXPECT_EQ(run_json["model"], "test-model");
  EXPECT_EQ(run_json["batch"]["input_sha256"], io::sha256_hex(io::read_file(batch / "in.jsonl")));
  EXPECT_EQ(run_json["batch"]["outputs"][0]["sha256"], io::sha256_hex(io::read_file(batch / "out.jsonl")));

  // A second import of the same file gives the same bytes.
  const std::string first_responses = io::read_file(run / "responses.jsonl");
  const std::string first_run = io::read_file(run / "run.json");
  r = run_cli(fmt::format("orbit batch import --bench '{}' --batch-input '{}' --batch-output '{}' --out '{}'",
                          bench().string(), (batch / "in.jsonl").string(), (batch / "out.jsonl").string(),
                          run.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(io::read_file(run / "responses.jsonl"), first_responses);
  EXPECT_EQ(io::read_file(run / "run.json"), first_run);

  // Scores byte for byte, report results equal.
  for (const fs::path& d : {live, run}) {
    r = run_cli(fmt::format("orbit score --bench '{}' --responses '{}' --out '{}'", bench().string(),
                            (d / "responses.jsonl").string(), (d / "scores.jsonl").string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_cli(fmt::format("orbit report --bench '{}' --scores '{}' --out '{}' --bootstrap 200",
                            bench().string(), (d / "scores.jsonl").string(), (d.string() + "-report")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_EQ(io::read_file(run / "scores.jsonl"), io::read_file(live / "scores.jsonl"));
  // The supplement of the batch run's report rebuilds it.
  r = run_cli(fmt::format("orbit supplement --report '{}' --out '{}'", run.string() + "-report",
                          (run / "supplement.tar").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli(fmt::format("orbit report --from-supplement '{}' --out '{}'", (run / "supplement.tar").string(),
                          (run / "rebuilt").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("byte-identical"), std::string::npos) << r.out;
  ASSERT_EQ(results_of(fs::path(live.string() + "-report") / "metrics.json").size(), 1u);
  EXPECT_EQ(results_of(fs::path(run.string() + "-report") / "metrics.json"),
            results_of(fs::path(live.string() + "-report") / "metrics.json"));
}

// OpenAI's Batch API refuses top_k as its live API does: a batch exported with --no-top-k has none
// in any body or in the manifest's request, is served line by line by a server that refuses
// unknown fields, and imports into a run whose run.json records no top_k. Without the option,
// every line is refused.
TEST_F(BatchCli, AnExportWithNoTopKIsServedByAServerThatRefusesIt) {
  Child server({kServer, "--bench", bench().string(), "--openai-fields"}, true);
  ASSERT_NE(server.first_line.find("http://127.0.0.1:"), std::string::npos) << server.first_line;
  const std::string url = server.first_line;
  const fs::path batch = dir("batch_notopk"), run = dir("run_notopk");
  auto r = run_cli(fmt::format("orbit batch export --bench '{}' --out '{}' --bases 3 --model test-model",
                               bench().string(), (batch / "with.jsonl").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto with = read_lines(batch / "with.jsonl");
  ASSERT_FALSE(with.empty());
  for (const auto& q : with) {
    EXPECT_EQ(q["body"]["top_k"], 1) << q.dump();
    const llm::HttpReply reply = llm::post_json(url + "/chat/completions", io::to_line(q["body"]), "",
                                                std::chrono::seconds(30), std::size_t{1} << 24);
    EXPECT_EQ(reply.status, 400) << reply.error;
    EXPECT_NE(reply.error.find("Unrecognized request argument supplied: top_k"), std::string::npos)
        << reply.error;
  }

  r = run_cli(
      fmt::format("orbit batch export --bench '{}' --out '{}' --bases 3 --model test-model --no-top-k",
                  bench().string(), (batch / "in.jsonl").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto requests = read_lines(batch / "in.jsonl");
  ASSERT_EQ(requests.size(), with.size());
  for (const auto& q : requests) EXPECT_FALSE(q["body"].contains("top_k")) << q.dump();
  const io::Json manifest = io::read_json_file(batch / "in.jsonl.manifest.json");
  ASSERT_TRUE(manifest["request"].contains("top_k"));
  EXPECT_TRUE(manifest["request"]["top_k"].is_null()) << manifest["request"].dump();

  write_vllm_output(batch / "in.jsonl", url, batch / "out.jsonl");
  r = run_cli(fmt::format("orbit batch import --bench '{}' --batch-input '{}' --batch-output '{}' --out '{}'",
                          bench().string(), (batch / "in.jsonl").string(), (batch / "out.jsonl").string(),
                          run.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto records = read_lines(run / "responses.jsonl");
  EXPECT_EQ(records.size(), requests.size());
  const io::Json sampling = io::read_json_file(run / "run.json")["binding"]["sampling"];
  EXPECT_FALSE(sampling.contains("top_k")) << sampling.dump();
  EXPECT_EQ(sampling["temperature"], 0.0) << sampling.dump();
}

TEST_F(BatchCli, FaultyOutputsAreRefusedOrReportedWithTheirExitCodes) {
  Child server({kServer, "--bench", bench().string()}, true);
  ASSERT_FALSE(server.first_line.empty());
  const fs::path batch = dir("faults");
  auto r = run_cli(fmt::format("orbit batch export --bench '{}' --out '{}' --bases 2 --model test-model",
                               bench().string(), (batch / "in.jsonl").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  write_vllm_output(batch / "in.jsonl", server.first_line, batch / "out.jsonl");
  std::vector<std::string> lines;
  io::for_each_line(batch / "out.jsonl", [&](const io::Line& l) { lines.emplace_back(l.text); });
  ASSERT_GE(lines.size(), 4u);
  auto import = [&](const std::vector<std::string>& ls, const std::string& name) {
    const fs::path f = batch / (name + ".jsonl");
    std::ofstream(f, std::ios::binary) << [&] {
      std::string s;
      for (const auto& l : ls) s += l + "\n";
      return s;
    }();
    return run_cli(fmt::format(
        "orbit batch import --bench '{}' --batch-input '{}' --batch-output '{}' --out '{}'", bench().string(),
        (batch / "in.jsonl").string(), f.string(), (batch / ("run-" + name)).string()));
  };
  // A duplicated answer: refused, exit 1, nothing written.
  auto dup = lines;
  dup.push_back(lines[1]);
  r = import(dup, "dup");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("a second answer for"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(batch / "run-dup" / "run.json"));
  // A missing prompt and an error line: written, exit 3.
  auto partial = lines;
  partial.pop_back();
  io::Json e = io::Json::parse(partial[0]);
  e["response"] = nullptr;
  e["error"] = {{"code", "server_error"}, {"message", "out of memory"}};
  partial[0] = io::to_line(e);
  r = import(partial, "partial");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("1 with an error line"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 missing from the batch output"), std::string::npos) << r.err;
  const auto errors = read_lines(batch / "run-partial" / "errors.jsonl");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0]["error"], "batch error server_error: out of memory");
  // An export sends nothing and reads no key: the live run's flags are usage errors.
  r = run_cli(
      fmt::format("orbit batch export --bench '{}' --out '{}' --bases 2 --model test-model --api-key-env "
                  "OPENAI_API_KEY",
                  bench().string(), (batch / "key.jsonl").string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_FALSE(fs::exists(batch / "key.jsonl"));
  // An input file changed after the export: refused.
  { std::ofstream(batch / "in.jsonl", std::ios::app) << "\n"; }
  r = import(lines, "changed");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("changed after the export"), std::string::npos) << r.err;
}

// The LLM verifier as a batch: predictions and verdicts byte for byte a live run's.
fs::path six_marked_claims(const fs::path& dir) {
  return testing::write_marked_evidence(dir, {{"[true]", "True"},
                                              {"[false]", "False"},
                                              {"[conflicting]", "Conflicting"},
                                              {"[malformed]", "False"},
                                              {"[refuse]", "True"},
                                              {"[true]", "False"}});
}

TEST_F(BatchCli, ClaimsVerifierBatchEqualsALiveRun) {
  Child server({kServer, "--claims"}, true);
  ASSERT_FALSE(server.first_line.empty());
  const fs::path d = dir("claims");
  fs::create_directories(d);
  const fs::path ev = six_marked_claims(d);
  const std::string common = fmt::format(
      "claims verify --method llm --evidence '{}' --model test-model --shots 2 --folds 3 --progress none",
      ev.string());
  auto r = run_cli(common + fmt::format(" --endpoint '{}' --no-cache --out '{}'", server.first_line,
                                        (d / "live").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli(common + fmt::format(" --out '{}' --batch-export '{}'", (d / "batch").string(),
                                   (d / "in.jsonl").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(d / "batch" / "run.json"));
  write_vllm_output(d / "in.jsonl", server.first_line, d / "out.jsonl");
  r = run_cli(common + fmt::format(" --out '{}' --batch-import '{}'", (d / "batch").string(),
                                   (d / "out.jsonl").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("6 claims"), std::string::npos) << r.out;
  EXPECT_EQ(io::read_file(d / "batch" / "predictions.jsonl"),
            io::read_file(d / "live" / "predictions.jsonl"));
  EXPECT_EQ(io::read_file(d / "batch" / "verdicts.jsonl"), io::read_file(d / "live" / "verdicts.jsonl"));
  // Imported with other settings (another temperature): every line's body hash differs, refused.
  r = run_cli(common + fmt::format(" --temperature 0.9 --out '{}' --batch-import '{}'",
                                   (d / "other").string(), (d / "out.jsonl").string()));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("with a request body other than the one exported now"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace numcheck
