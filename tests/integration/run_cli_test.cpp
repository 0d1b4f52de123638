// `numcheck orbit run` end to end: the simulated reference system (the main job's command), a real
// HTTP run against the test server in another process, SIGKILL mid-run then --resume (exactly one
// record per prompt and the same graded results as an uninterrupted run), exit codes, and
// `numcheck cache stats|clear`.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cli_support.hpp"
#include "grade/grade.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "io/sha256.hpp"
#include "orbit/benchmark.hpp"

namespace numcheck {
namespace {

namespace fs = std::filesystem;
using testing::Child;
using testing::count_lines;
using testing::kInjectFaults;
using testing::read_jsonl;
using testing::run_cli;

using testing::kServer;
// prompt_id -> graded result (strict and audit JSON) of a run's responses.
std::map<std::string, std::string> graded(const orbit::Benchmark& b, const fs::path& run) {
  std::map<std::string, std::string> out;
  for (const auto& r : read_jsonl(run / "responses.jsonl")) {
    const std::string id = r["prompt_id"];
    const orbit::View* v = b.find_view(id);
    EXPECT_NE(v, nullptr) << id;
    if (v == nullptr) continue;
    const grade::Grade g =
        grade::grade_response(r["response"].get<std::string>(), grade::Question{v->expected, v->answer_unit},
                              r["finish_reason"].get<std::string>());
    EXPECT_TRUE(out.emplace(id, io::to_line(grade::to_json(g))).second) << "second record for " << id;
  }
  return out;
}

class RunCli : public testing::SharedDirSuite<RunCli> {
 protected:
  static void SetUpTestSuite() { make_root_with_bench("run_cli"); }
};

TEST_F(RunCli, MainJobReferenceRunIsSimulatedCompleteAndResumable) {
  const fs::path out = dir("ref");
  const std::string cmd =
      fmt::format("orbit run --bench '{}' --out '{}' --resume --system reference --inject '{}'",
                  bench().string(), out.string(), kInjectFaults);
  auto r = run_cli(cmd);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const io::Json m = io::read_json_file(out / "run.json");
  EXPECT_EQ(m["simulated"], true);
  EXPECT_EQ(m["model"], "reference");
  EXPECT_EQ(m["inject"]["times_ten"], 0.05);
  EXPECT_EQ(m["complete"], true);
  const auto b = orbit::load_benchmark(bench());
  const auto recs = read_jsonl(out / "responses.jsonl");
  ASSERT_EQ(recs.size(), b.views.size());
  // Every record's grade is what its injected fault implies.
  std::map<std::string, int> faults;
  for (const auto& rec : recs) {
    const orbit::View* v = b.find_view(rec["prompt_id"].get<std::string>());
    ASSERT_NE(v, nullptr);
    const auto g = grade::grade_response(rec["response"].get<std::string>(), {v->expected, v->answer_unit},
                                         rec["finish_reason"].get<std::string>());
    const std::string f = rec["simulated_fault"];
    ++faults[f];
    if (f == "none") {
      EXPECT_EQ(g.strict.outcome, grade::Outcome::kCorrect) << rec["response"];
    } else if (f == "markdown" || f == "times_ten") {
      EXPECT_NE(g.strict.outcome, grade::Outcome::kCorrect);
      EXPECT_EQ(g.audit.outcome, grade::Outcome::kCorrect) << rec["response"];
    } else if (f == "unit_slip") {
      EXPECT_EQ(g.strict.outcome, grade::Outcome::kValueError);
      EXPECT_TRUE(g.audit.magnitude_k.has_value());
    } else {
      EXPECT_EQ(f, "truncation");
      EXPECT_EQ(g.strict.outcome, grade::Outcome::kTruncationError);
    }
  }
  EXPECT_EQ(faults.size(), 5u);
  // The same command again has nothing left to do and writes nothing twice.
  r = run_cli(cmd);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_lines(out / "responses.jsonl"), b.views.size());
  // The run is byte-identical in what it answered: a second fresh run gives the same responses.
  const fs::path out2 = dir("ref2");
  r = run_cli(fmt::format("orbit run --bench '{}' --out '{}' --system reference --inject '{}' --bases 20",
                          bench().string(), out2.string(), kInjectFaults));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto recs2 = read_jsonl(out2 / "responses.jsonl");
  // 20 whole orbits, stratified across templates (so not the first prompts of the file).
  const io::Json m2 = io::read_json_file(out2 / "run.json");
  ASSERT_EQ(recs2.size(), m2["selection"]["prompts"].get<std::size_t>());
  EXPECT_EQ(m2["selection"]["bases"], 20);
  std::map<std::string, std::string> full_answers;
  for (const auto& rec : recs) full_answers[rec["prompt_id"].get<std::string>()] = rec["response"];
  std::set<std::string> templates;
  for (const auto& rec : recs2) {
    EXPECT_EQ(rec["response"], full_answers.at(rec["prompt_id"].get<std::string>()));
    templates.insert(rec["template"].get<std::string>());
  }
  EXPECT_EQ(templates.size(), 6u);
}

TEST_F(RunCli, UsageErrorsAndMismatchedResume) {
  auto r = run_cli(fmt::format("orbit run --bench '{}' --out '{}'", bench().string(), dir("u1").string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = run_cli(
      fmt::format("orbit run --bench '{}' --out '{}' --system reference --endpoint http://127.0.0.1:1/v1",
                  bench().string(), dir("u2").string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = run_cli(fmt::format("orbit run --bench '{}' --out '{}' --system reference --inject 'bold=0.1'",
                          bench().string(), dir("u3").string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("bold"), std::string::npos);
  r =
      run_cli(fmt::format("orbit run --bench '{}' --out '{}' --endpoint http://127.0.0.1:1/v1 --model m "
                          "--api-key-env NUMCHECK_SURELY_UNSET_VAR",
                          bench().string(), dir("u4").string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  // Resuming with other fault rates would mix two systems.
  const fs::path out = dir("u5");
  r = run_cli(fmt::format("orbit run --bench '{}' --out '{}' --system reference --bases 2", bench().string(),
                          out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli(fmt::format(
      "orbit run --bench '{}' --out '{}' --system reference --bases 2 --resume --inject markdown=0.5",
      bench().string(), out.string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--resume"), std::string::npos) << r.err;
  r = run_cli(fmt::format("orbit run --bench '{}' --out '{}' --system reference --bases 2", bench().string(),
                          out.string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

// A benchmark edited after generation no longer matches its manifest: `orbit run` refuses it as
// `orbit validate` and `orbit score` do.
TEST_F(RunCli, AChangedBenchmarkIsRefused) {
  const fs::path changed = dir("changed_bench");
  fs::create_directories(changed);
  for (const char* f : {"bases.jsonl", "views.jsonl", "manifest.json"})
    fs::copy_file(bench() / f, changed / f);
  std::string views = io::read_file(changed / "views.jsonl");
  const auto q = views.find('?');
  ASSERT_NE(q, std::string::npos);
  views.insert(q, " really");
  io::write_file_atomic(changed / "views.jsonl", views);
  const auto r = run_cli(fmt::format("orbit run --bench '{}' --out '{}' --system reference --bases 3",
                                     changed.string(), dir("changed_run").string()));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("does not match the manifest"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir("changed_run") / "responses.jsonl"));
}

// Responses of a run on another benchmark (another seed) are refused by `orbit score`, with or
// without --allow-partial (which once led to "0 strict correct" and exit 0), naming the two hashes;
// nothing is written. Scored against their own benchmark they are fine.
TEST_F(RunCli, ScoringAnotherBenchmarksResponsesIsRefusedNamingBothHashes) {
  const fs::path other = dir("other_seed_bench");
  auto r = run_cli(fmt::format("orbit generate --out '{}' --seed 7", other.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path run = dir("other_seed_run");
  r = run_cli(fmt::format("orbit run --bench '{}' --out '{}' --system reference --bases 6 --progress none",
                          other.string(), run.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string recorded = io::sha256_file(other / "views.jsonl");
  const std::string now = io::sha256_file(bench() / "views.jsonl");
  ASSERT_NE(recorded, now);
  for (const char* flags : {"", "--allow-partial", "--whole-benchmark --allow-partial", "--no-index-cache"}) {
    r = run_cli(fmt::format("orbit score --bench '{}' --responses '{}' --out '{}' {}", bench().string(),
                            (run / "responses.jsonl").string(), (run / "scores.jsonl").string(), flags));
    EXPECT_EQ(r.exit_code, 2) << flags << r.out << r.err;
    EXPECT_NE(r.err.find("another benchmark"), std::string::npos) << flags << r.err;
    EXPECT_NE(r.err.find(recorded), std::string::npos) << flags << r.err;
    EXPECT_NE(r.err.find(now), std::string::npos) << flags << r.err;
    EXPECT_NE(r.err.find(other.string()), std::string::npos) << flags << r.err;  // where to score them
    EXPECT_FALSE(fs::exists(run / "scores.jsonl")) << flags;
  }
  r = run_cli(fmt::format("orbit score --bench '{}' --responses '{}' --out '{}'", other.string(),
                          (run / "responses.jsonl").string(), (run / "scores.jsonl").string()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// --out naming a file is a clear usage error, not "internal error: filesystem error".
TEST_F(RunCli, OutputFolderThatIsAFileIsAClearUsageError) {
  const fs::path file = dir("a_file");
  io::write_file_atomic(file, "x");
  auto r = run_cli(fmt::format("orbit report --bench '{}' --scores '{}' --out '{}'", bench().string(),
                               file.string(), file.string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("is a file, not a folder"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  r = run_cli(fmt::format("orbit run --bench '{}' --out '{}' --system reference --bases 1", bench().string(),
                          file.string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("is a file, not a folder"), std::string::npos) << r.err;
}

TEST_F(RunCli, HttpRunKilledMidwayResumesToTheUninterruptedResult) {
  Child server({kServer, "--bench", bench().string(), "--delay-ms", "2", "--fault", "length:0.05", "--fault",
                "500:0.05"},
               true);
  ASSERT_NE(server.first_line.find("http://127.0.0.1:"), std::string::npos) << server.first_line;
  const std::string url = server.first_line;
  const std::string limit = "120";
  const auto args = [&](const fs::path& out) {
    return std::vector<std::string>{NUMCHECK_CLI,
                                    "orbit",
                                    "run",
                                    "--bench",
                                    bench().string(),
                                    "--out",
                                    out.string(),
                                    "--endpoint",
                                    url,
                                    "--model",
                                    "test-model",
                                    "--bases",
                                    limit,
                                    "--no-cache",
                                    "--retries",
                                    "10",
                                    "--retry-base-delay",
                                    "0.001",
                                    "--retry-max-delay",
                                    "0.01",
                                    "--progress",
                                    "none",
                                    "--resume"};
  };
  auto join = [](const std::vector<std::string>& a) {
    std::string s;
    for (std::size_t i = 1; i < a.size(); ++i) s += "'" + a[i] + "' ";
    return s;
  };

  // Uninterrupted.
  const fs::path whole = dir("whole");
  auto r = run_cli(join(args(whole)));
  ASSERT_EQ(r.exit_code, 0) << r.err;

  // Interrupted: SIGKILL once some records are written, then resume.
  const fs::path cut = dir("cut");
  {
    auto a = args(cut);
    a.push_back("--concurrency");
    a.push_back("3");
    Child run(a, false);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (count_lines(cut / "responses.jsonl") < 40 && run.running() &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ASSERT_TRUE(run.running()) << "the run finished before it could be killed";
    run.kill9();
  }
  const std::size_t before = count_lines(cut / "responses.jsonl");
  const std::size_t n = io::read_json_file(whole / "run.json")["selection"]["prompts"].get<std::size_t>();
  EXPECT_GT(n, 250u);
  EXPECT_LT(before, n);
  r = run_cli(join(args(cut)));
  ASSERT_EQ(r.exit_code, 0) << r.err;

  const auto b = orbit::load_benchmark(bench());
  // Each request carried its own prompt's text (the run hands the loaded benchmark's prompts over
  // to its work items instead of copying them).
  for (const auto& rec : read_jsonl(whole / "responses.jsonl")) {
    const orbit::View* v = b.find_view(rec["prompt_id"].get<std::string>());
    ASSERT_NE(v, nullptr);
    const auto& messages = rec["request"]["messages"];
    ASSERT_TRUE(messages.is_array() && !messages.empty()) << rec["request"];
    EXPECT_EQ(messages.back()["role"], "user");
    EXPECT_EQ(messages.back()["content"], v->prompt) << rec["prompt_id"];
  }
  const auto g_whole = graded(b, whole);
  const auto g_cut = graded(b, cut);
  ASSERT_EQ(g_whole.size(), n);
  ASSERT_EQ(g_cut.size(), n);
  EXPECT_EQ(g_whole, g_cut);
  // The graded results are not trivially equal: the length faults left truncated answers.
  std::size_t truncated = 0;
  for (const auto& [id, g] : g_whole) truncated += g.find("truncation_error") != std::string::npos ? 1 : 0;
  EXPECT_GT(truncated, 0u);
  EXPECT_LT(truncated, n);
  // Records of both sessions carry their session number; request indexes never repeat.
  std::set<std::uint64_t> idx;
  std::set<int> sessions;
  for (const auto& rec : read_jsonl(cut / "responses.jsonl")) {
    EXPECT_TRUE(idx.insert(rec["request_index"].get<std::uint64_t>()).second);
    sessions.insert(rec["session"].get<int>());
  }
  EXPECT_EQ(sessions.size(), 2u);
  const io::Json m = io::read_json_file(cut / "run.json");
  EXPECT_EQ(m["model"], "test-model");
  EXPECT_EQ(m["simulated"], false);
  EXPECT_EQ(m["complete"], true);
  EXPECT_EQ(m["sessions"].size(), 2u);
}

TEST_F(RunCli, UnansweredPromptsExitThreeAndTheCacheCommandsWork) {
  Child server({kServer, "--bench", bench().string(), "--fault", "400:0.2"}, true);
  ASSERT_FALSE(server.first_line.empty());
  const fs::path out = dir("partial");
  const std::string run_cmd = fmt::format(
      "orbit run --bench '{}' --out '{}' --endpoint '{}' --model test-model --bases 16 --concurrency 4 "
      "--progress none --resume",
      bench().string(), out.string(), server.first_line);
  // run_cli runs NUMCHECK_CLI itself, so the cache folder is given with --cache-dir.
  const std::string with_cache = run_cmd + fmt::format(" --cache-dir '{}'", (dir("cache2")).string());
  auto r = run_cli(with_cache);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("unanswered"), std::string::npos) << r.err;
  const auto errs = read_jsonl(out / "errors.jsonl");
  const auto oks = read_jsonl(out / "responses.jsonl");
  EXPECT_GT(errs.size(), 0u);
  EXPECT_EQ(errs.size() + oks.size(),
            io::read_json_file(out / "run.json")["selection"]["prompts"].get<std::size_t>());
  for (const auto& e : errs) EXPECT_EQ(e["http_status"], 400);

  r = run_cli(fmt::format("cache stats --cache-dir '{}' --json", dir("cache2").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const io::Json st = io::parse_json(r.out, "stats");
  EXPECT_EQ(st["entries"], oks.size());  // answers cached, errors never
  EXPECT_EQ(st["models"]["test-model"], oks.size());
  r = run_cli(fmt::format("cache clear --cache-dir '{}'", dir("cache2").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(fmt::format("removed {} ", oks.size())), std::string::npos) << r.out;
  r = run_cli(fmt::format("cache stats --cache-dir '{}' --json", dir("cache2").string()));
  EXPECT_EQ(io::parse_json(r.out, "stats")["entries"], 0);
}

// The response cache never stops a run (issue 41): on a full disk (here the cache's database may not
// grow, NUMCHECK_CACHE_MAX_PAGES: SQLite's SQLITE_FULL, as on a full disk) and with a cache folder
// that cannot be made, `orbit run` answers every prompt, warns once, exits 0 and writes a complete
// run.json; the cache keeps what it held before.
TEST_F(RunCli, AFullDiskOrAnUnusableCacheIsAWarningAndTheRunCompletes) {
  Child server({kServer, "--bench", bench().string()}, true);
  ASSERT_FALSE(server.first_line.empty());
  const fs::path cache = dir("cache-full");
  const auto run = [&](const fs::path& out, int bases, const fs::path& cache_dir) {
    return run_cli(
        fmt::format("orbit run --bench '{}' --out '{}' --endpoint '{}' --model test-model --bases {} "
                    "--concurrency 4 --progress none --cache-dir '{}'",
                    bench().string(), out.string(), server.first_line, bases, cache_dir.string()));
  };
  auto r = run(dir("full-a"), 2, cache);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::size_t cached = read_jsonl(dir("full-a") / "responses.jsonl").size();
  const auto complete = [&](const fs::path& out) {
    const io::Json m = io::read_json_file(out / "run.json");
    EXPECT_EQ(m["complete"], true) << out;
    EXPECT_EQ(read_jsonl(out / "responses.jsonl").size(), m["selection"]["prompts"].get<std::size_t>())
        << out;
  };
  ::setenv("NUMCHECK_CACHE_MAX_PAGES", "1", 1);
  r = run(dir("full-b"), 30, cache);
  ::unsetenv("NUMCHECK_CACHE_MAX_PAGES");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  complete(dir("full-b"));
  const std::string warning = "numcheck: warning: response cache " + (cache / "responses.sqlite3").string();
  EXPECT_NE(r.err.find(warning), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("full"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(warning), r.err.rfind(warning)) << "warned once: " << r.err;
  r = run_cli(fmt::format("cache stats --cache-dir '{}' --json", cache.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(io::parse_json(r.out, "stats")["entries"], cached);

  io::write_file_atomic(dir("not-a-folder"), "x");
  r = run(dir("full-c"), 2, dir("not-a-folder") / "cache");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  complete(dir("full-c"));
  EXPECT_NE(r.err.find("numcheck: warning: cannot create the cache folder"), std::string::npos) << r.err;
}

// ---- fail fast on set-up mistakes (llm/preflight.hpp) -------------------------------------------

// A run against `server_args` that must stop before sending the benchmark: exit 1, the server's own
// message and the hint on stderr, and no record of any prompt.
void expect_stops_at_once(const fs::path& bench, const fs::path& out, const std::string& url,
                          const std::string& model, const std::string& server_message,
                          const std::string& hint) {
  const auto r =
      run_cli(fmt::format("orbit run --bench '{}' --out '{}' --endpoint '{}' --model {} --bases 20 "
                          "--progress none --no-cache --retries 0",
                          bench.string(), out.string(), url, model));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(server_message), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(hint), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  EXPECT_FALSE(fs::exists(out / "responses.jsonl"));
  EXPECT_FALSE(fs::exists(out / "errors.jsonl"));
}

TEST_F(RunCli, SetUpMistakesStopBeforeTheBenchmarkIsSent) {
  {
    Child server({kServer, "--bench", bench().string(), "--api-key", "sesame"}, true);
    ASSERT_FALSE(server.first_line.empty());
    // No key: 401 on GET /models, with the server's message and the --api-key-env hint.
    expect_stops_at_once(bench(), dir("pf401"), server.first_line, "test-model", "Incorrect API key provided",
                         "--api-key-env");
    // A wrong key is refused the same way; the right one works (and never appears in any output).
    ::setenv("NUMCHECK_TEST_WRONG_KEY", "open", 1);
    ::setenv("NUMCHECK_TEST_KEY", "sesame", 1);
    auto r =
        run_cli(fmt::format("orbit run --bench '{}' --out '{}' --endpoint '{}' --model test-model --bases 2 "
                            "--progress none --no-cache --api-key-env NUMCHECK_TEST_WRONG_KEY",
                            bench().string(), dir("pf401b").string(), server.first_line));
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("refused the credentials (HTTP 401)"), std::string::npos) << r.err;
    r =
        run_cli(fmt::format("orbit run --bench '{}' --out '{}' --endpoint '{}' --model test-model --bases 2 "
                            "--progress none --no-cache --api-key-env NUMCHECK_TEST_KEY",
                            bench().string(), dir("pf401c").string(), server.first_line));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(io::read_file(dir("pf401c") / "run.json").find("sesame"), std::string::npos);
  }
  {
    // A model the server does not serve: its 404 message and the models it lists.
    Child server({kServer, "--bench", bench().string(), "--strict-model"}, true);
    expect_stops_at_once(bench(), dir("pf404m"), server.first_line, "qwen-typo",
                         "The model 'qwen-typo' does not exist", "It lists: test-model");
    // The base URL without /v1: GET /models is a 404, the hint says to add /v1.
    std::string root = server.first_line;
    root.resize(root.size() - 3);
    expect_stops_at_once(bench(), dir("pfroot"), root, "test-model", "HTTP 404", "must include /v1");
  }
  {
    // Not an OpenAI server at all: a 404 HTML page on every route.
    Child server({kServer, "--foreign"}, true);
    expect_stops_at_once(bench(), dir("pfweb"), server.first_line, "test-model", "HTTP 404",
                         "not an OpenAI-compatible");
  }
}

TEST_F(RunCli, TheSameNonRetryableErrorOnTheFirstRequestsStopsTheRun) {
  // Every request gets the same 400 (not a set-up mistake the preflight may assume: a 400 can
  // belong to one prompt), so the run stops after the first 5 instead of sending all of them.
  Child server({kServer, "--bench", bench().string(), "--fault", "400:1"}, true);
  const fs::path out = dir("same400");
  auto r =
      run_cli(fmt::format("orbit run --bench '{}' --out '{}' --endpoint '{}' --model test-model --bases 40 "
                          "--progress none --no-cache",
                          bench().string(), out.string(), server.first_line));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.out.find("the first 5 requests all failed with the same error: HTTP 400"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("to continue: numcheck orbit run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--resume"), std::string::npos) << r.out;
  EXPECT_EQ(count_lines(out / "errors.jsonl"), 5u);
  EXPECT_EQ(count_lines(out / "responses.jsonl"), 0u);
  // --stop-after-same-errors 0 turns the rule off: every prompt is asked.
  const fs::path all = dir("same400all");
  r =
      run_cli(fmt::format("orbit run --bench '{}' --out '{}' --endpoint '{}' --model test-model --bases 10 "
                          "--progress none --no-cache --stop-after-same-errors 0",
                          bench().string(), all.string(), server.first_line));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(count_lines(all / "errors.jsonl"),
            io::read_json_file(all / "run.json")["selection"]["prompts"].get<std::size_t>());
}

// OpenAI's API refuses fields it does not know, top_k among them: the run stops after the first
// requests, saying to use --no-top-k; with it nothing carries top_k, run.json records none, and a
// resume must say the same.
TEST_F(RunCli, AServerThatRefusesTopKIsRunWithNoTopK) {
  Child server({kServer, "--bench", bench().string(), "--openai-fields"}, true);
  const std::string run = fmt::format(
      "orbit run --bench '{}' --endpoint '{}' --model test-model --bases 4 "
      "--progress none --no-cache",
      bench().string(), server.first_line);
  auto r = run_cli(fmt::format("{} --out '{}'", run, dir("topk_sent").string()));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.out.find("Unrecognized request argument supplied: top_k"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the server refuses top_k: run again with --no-top-k, or \"top_k\": null in a study "
                       "file's sampling"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(count_lines(dir("topk_sent") / "responses.jsonl"), 0u);

  const fs::path out = dir("topk_none");
  r = run_cli(fmt::format("{} --out '{}' --no-top-k", run, out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto recs = read_jsonl(out / "responses.jsonl");
  ASSERT_FALSE(recs.empty());
  for (const auto& rec : recs) {
    EXPECT_FALSE(rec["request"].contains("top_k")) << rec.dump();
    EXPECT_EQ(rec["request"]["temperature"], 0.0) << rec.dump();
  }
  const io::Json sampling = io::read_json_file(out / "run.json")["binding"]["sampling"];
  EXPECT_FALSE(sampling.contains("top_k")) << sampling.dump();
  EXPECT_EQ(sampling["seed"], 20260725) << sampling.dump();
  // Resuming it with top_k would mix two request settings.
  r = run_cli(fmt::format("{} --out '{}' --resume", run, out.string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("top_k"), std::string::npos) << r.err;
  r = run_cli(fmt::format("{} --out '{}' --resume --no-top-k", run, out.string()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_jsonl(out / "responses.jsonl").size(), recs.size());
  // Both at once is a usage error.
  r = run_cli(fmt::format("{} --out '{}' --top-k 5 --no-top-k", run, dir("topk_both").string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--no-top-k"), std::string::npos) << r.err;
}

TEST_F(RunCli, TheResumeHintNeverPrintsThePasswordOfTheEndpointUrl) {
  // Every request fails alike, so the run stops early and prints the command that continues it.
  Child server({kServer, "--bench", bench().string(), "--fault", "400:1"}, true);
  std::string url = server.first_line;
  url.insert(url.find("://") + 3, "alice:pw-Zq81xK@");
  const fs::path out = dir("resumepw");
  const auto r =
      run_cli(fmt::format("orbit run --bench '{}' --out '{}' --endpoint '{}' --model test-model --bases 10 "
                          "--progress none --no-cache",
                          bench().string(), out.string(), url));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.out.find("to continue: numcheck orbit run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--endpoint " + server.first_line), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("password of the endpoint URL are left out"), std::string::npos) << r.out;
  for (const std::string& text : {r.out, r.err, io::read_file(out / "run.json")}) {
    EXPECT_EQ(text.find("pw-Zq81xK"), std::string::npos) << text;
    EXPECT_EQ(text.find("alice:"), std::string::npos) << text;
  }
}

TEST_F(RunCli, CtrlCStopsGracefullyAndLeavesAResumableRun) {
  Child server({kServer, "--bench", bench().string(), "--delay-ms", "5"}, true);
  const fs::path out = dir("sigint");
  const std::vector<std::string> argv = {
      NUMCHECK_CLI, "orbit",         "run",        "--bench",         bench().string(),
      "--out",      out.string(),    "--endpoint", server.first_line, "--model",
      "test-model", "--bases",       "200",        "--no-cache",      "--progress",
      "none",       "--concurrency", "2"};
  int code = 0;
  {
    Child run(argv, false);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (count_lines(out / "responses.jsonl") < 20 && run.running() &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ASSERT_TRUE(run.running()) << "the run finished before it could be interrupted";
    code = run.signal_and_wait(SIGINT);
  }
  EXPECT_EQ(code, 3);  // work left undone, not a crash
  const io::Json m = io::read_json_file(out / "run.json");
  EXPECT_EQ(m["complete"], false);
  EXPECT_EQ(m["sessions"].back()["stop_reason"], "interrupted");
  EXPECT_NE(m["sessions"].back()["ended_at"], nullptr);
  // Every record is whole (nothing torn) and the same command with --resume finishes the run.
  const std::size_t before = read_jsonl(out / "responses.jsonl").size();
  EXPECT_EQ(before, count_lines(out / "responses.jsonl"));
  std::string cmd;
  for (std::size_t i = 1; i < argv.size(); ++i) cmd += "'" + argv[i] + "' ";
  const auto r = run_cli(cmd + "--resume");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::size_t n = io::read_json_file(out / "run.json")["selection"]["prompts"].get<std::size_t>();
  EXPECT_LT(before, n);
  EXPECT_EQ(graded(orbit::load_benchmark(bench()), out).size(), n);
}

}  // namespace
}  // namespace numcheck
