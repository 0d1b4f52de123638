// The runner against the OpenAI-compatible test server on 127.0.0.1: explicit sampling fields,
// no mixed-up answers, request order, retries and their records, error records, resume, the
// cache key, credentials. Retry delays are shortened (base delay 1 ms) so the suite stays fast.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <thread>

#include <sqlite3.h>

#include <fmt/format.h>

#include "core/error.hpp"
#include "io/files.hpp"
#include "io/json_writer.hpp"
#include "io/sha256.hpp"
#include "llm/cache.hpp"
#include "llm/http_backend.hpp"
#include "llm/preflight.hpp"
#include "llm/runner.hpp"
#include "test_server.hpp"

namespace numcheck::llm {
namespace {

namespace fs = std::filesystem;
using testing::FaultKind;
using testing::FaultRule;
using testing::TestServer;

fs::path fresh_dir(const std::string& name) {
  static int counter = 0;
  fs::path d = fs::temp_directory_path() / fmt::format("numcheck_llm_{}_{}_{}", name, ::getpid(), counter++);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::vector<WorkItem> make_items(int n, const std::string& prefix = "q") {
  std::vector<WorkItem> items;
  for (int i = 0; i < n; ++i) {
    WorkItem it;
    it.item_id = fmt::format("{}-{:03}", prefix, i);
    it.prompt = fmt::format("Question {}-{:03}: how many?", prefix, i);
    it.fields["n"] = i;
    items.push_back(std::move(it));
  }
  return items;
}

std::vector<io::Json> records(const fs::path& p) {
  std::vector<io::Json> out;
  if (!fs::exists(p)) return out;
  (void)read_records(p, [&](const io::Json& j, std::size_t) { out.push_back(j); });
  return out;
}

class RunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_dir("run");
    server_ = std::make_unique<TestServer>(testing::ServerOptions{}, SolveFn{});
    server_->start();
  }
  void TearDown() override {
    server_->stop();
    fs::remove_all(dir_);
  }

  RunSettings settings() const {
    RunSettings s;
    s.model = "test-model";
    s.retry.base_delay = std::chrono::milliseconds(1);
    s.retry.max_delay = std::chrono::milliseconds(5);
    s.retry.retries = 3;
    s.progress = ProgressMode::kNone;
    s.use_cache = false;
    s.cache_path = dir_ / "cache" / "responses.cache";
    s.fsync = false;
    return s;
  }
  std::unique_ptr<Backend> backend(std::vector<std::string> endpoints = {}, double timeout_s = 10,
                                   std::string api_key = {}, Api api = Api::kChat) const {
    HttpConfig cfg;
    cfg.endpoints = endpoints.empty() ? std::vector<std::string>{server_->base_url()} : endpoints;
    cfg.model = "test-model";
    cfg.timeout = std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
    cfg.max_response_bytes = std::size_t{4} << 20;
    cfg.api_key = std::move(api_key);
    cfg.api = api;
    return make_http_backend(cfg);
  }
  RunSummary run(const std::vector<WorkItem>& items, const RunSettings& s, const std::string& sub = "r") {
    auto b = backend();
    return run_items(items, s, *b, dir_ / sub);
  }

  fs::path dir_;
  std::unique_ptr<TestServer> server_;
};

TEST_F(RunnerTest, EveryRequestCarriesExplicitSamplingAndEveryAnswerBelongsToItsPrompt) {
  // Two replicas, four requests in flight each.
  TestServer second(testing::ServerOptions{}, SolveFn{});
  second.start();
  auto s = settings();
  s.concurrency = 4;
  s.sampling.seed = 99;
  s.extra_body = {{"cache_prompt", false}, {"chat_template_kwargs", {{"enable_thinking", false}}}};
  const auto items = make_items(120);
  auto b = backend({server_->base_url(), second.base_url()});
  const RunSummary sum = run_items(items, s, *b, dir_ / "r");
  EXPECT_EQ(sum.answered, 120u);
  EXPECT_EQ(sum.unanswered, 0u);
  EXPECT_EQ(server_->missing_sampling() + second.missing_sampling(), 0u);
  EXPECT_GT(server_->post_count(), 0u);
  EXPECT_GT(second.post_count(), 0u);
  std::vector<io::Json> all = server_->requests();
  for (const auto& r : second.requests()) all.push_back(r);
  ASSERT_EQ(all.size(), 120u);
  for (const auto& body : all) {
    EXPECT_EQ(body["temperature"], 0.0);
    EXPECT_EQ(body["top_p"], 1.0);
    EXPECT_EQ(body["top_k"], 1);
    EXPECT_EQ(body["seed"], 99);
    EXPECT_EQ(body["max_tokens"], 1024);
    EXPECT_EQ(body["model"], "test-model");
    EXPECT_EQ(body["cache_prompt"], false);
    EXPECT_EQ(body["chat_template_kwargs"]["enable_thinking"], false);
  }
  const auto recs = records(dir_ / "r" / "responses.jsonl");
  ASSERT_EQ(recs.size(), 120u);
  std::set<std::string> ids;
  std::set<std::uint64_t> indexes;
  for (const auto& r : recs) {
    const std::string id = r["prompt_id"];
    ids.insert(id);
    indexes.insert(r["request_index"].get<std::uint64_t>());
    // The echo server answers "You asked: <prompt>": the record's answer is its own prompt's.
    EXPECT_EQ(r["response"], "You asked: " + r["request"]["messages"][0]["content"].get<std::string>());
    EXPECT_EQ(r["request"]["messages"][0]["content"], fmt::format("Question {}: how many?", id));
    EXPECT_EQ(r["n"], std::stoi(id.substr(2)));
    EXPECT_EQ(r["finish_reason"], "stop");
    EXPECT_EQ(r["model"], "test-model");
    EXPECT_EQ(r["system_fingerprint"], "fp_b0001-test");
    EXPECT_EQ(r["attempts"], 1);
    EXPECT_TRUE(r["usage"].is_object());
    EXPECT_TRUE(r["timings"].is_object());
  }
  EXPECT_EQ(ids.size(), 120u);
  EXPECT_EQ(indexes.size(), 120u);
  EXPECT_EQ(*indexes.rbegin(), 119u);
  const io::Json manifest = io::read_json_file(dir_ / "r" / "run.json");
  EXPECT_EQ(manifest["model"], "test-model");
  EXPECT_EQ(manifest["simulated"], false);
  EXPECT_EQ(manifest["complete"], true);
  EXPECT_EQ(manifest["endpoints"].size(), 2u);
  EXPECT_EQ(manifest["server"]["endpoints"][0]["props"]["build_info"], "b0001-test");
  second.stop();
}

TEST_F(RunnerTest, OneRequestInFlightKeepsItemOrder) {
  const auto items = make_items(30);
  (void)run(items, settings());
  const auto bodies = server_->requests();
  ASSERT_EQ(bodies.size(), 30u);
  const auto recs = records(dir_ / "r" / "responses.jsonl");
  for (std::size_t i = 0; i < 30; ++i) {
    EXPECT_EQ(bodies[i]["messages"][0]["content"], items[i].prompt);
    EXPECT_EQ(recs[i]["prompt_id"], items[i].item_id);
    EXPECT_EQ(recs[i]["request_index"], i);
  }
}

TEST_F(RunnerTest, SystemPromptOverridesAndCompletionsRoute) {
  auto items = make_items(3);
  items[1].system_prompt = "Be brief.";
  items[2].sampling.seed = 7;
  items[2].sampling.temperature = 0.7;
  auto s = settings();
  s.system_prompt = "You are careful.";
  (void)run(items, s);
  const auto bodies = server_->requests();
  ASSERT_EQ(bodies.size(), 3u);
  EXPECT_EQ(bodies[0]["messages"][0]["role"], "system");
  EXPECT_EQ(bodies[0]["messages"][0]["content"], "You are careful.");
  EXPECT_EQ(bodies[1]["messages"][0]["content"], "Be brief.");
  EXPECT_EQ(bodies[2]["seed"], 7);
  EXPECT_EQ(bodies[2]["temperature"], 0.7);
  EXPECT_EQ(bodies[0]["seed"], 20260725);

  auto b = backend({}, 10, {}, Api::kCompletions);
  const auto sum = run_items(make_items(2, "c"), settings(), *b, dir_ / "c");
  EXPECT_EQ(sum.answered, 2u);
  const auto recs = records(dir_ / "c" / "responses.jsonl");
  EXPECT_EQ(recs[0]["request"]["prompt"], "Question c-000: how many?");
  EXPECT_EQ(recs[0]["response"], "You asked: Question c-000: how many?");
}

TEST_F(RunnerTest, TransientFaultsAreRetriedAndRecorded) {
  server_->set_faults({
      FaultRule{"q-000", FaultKind::k500, 2},
      FaultRule{"q-001", FaultKind::k429, 1, 1.0, 0.05},
      FaultRule{"q-002", FaultKind::kDrop, 1},
      FaultRule{"q-003", FaultKind::kMalformed, 2},
      FaultRule{"q-004", FaultKind::kSlow, 1, 1.0, 1, 3000},
  });
  auto s = settings();
  auto b = backend({}, 0.3);
  const auto sum = run_items(make_items(6), s, *b, dir_ / "r");
  EXPECT_EQ(sum.answered, 6u);
  EXPECT_EQ(sum.failed, 0u);
  std::map<std::string, io::Json> by_id;
  for (const auto& r : records(dir_ / "r" / "responses.jsonl")) by_id[r["prompt_id"]] = r;
  ASSERT_EQ(by_id.size(), 6u);
  EXPECT_EQ(by_id["q-000"]["attempts"], 3);
  ASSERT_EQ(by_id["q-000"]["attempt_errors"].size(), 2u);
  EXPECT_EQ(by_id["q-000"]["attempt_errors"][0]["http_status"], 500);
  EXPECT_NE(by_id["q-000"]["attempt_errors"][0]["error"].get<std::string>().find("internal server error"),
            std::string::npos);
  // 429: Retry-After honoured (the wait is at least what the server asked for).
  EXPECT_EQ(by_id["q-001"]["attempts"], 2);
  EXPECT_EQ(by_id["q-001"]["attempt_errors"][0]["http_status"], 429);
  EXPECT_EQ(by_id["q-001"]["attempt_errors"][0]["retry_after_s"], 0.05);
  EXPECT_GE(by_id["q-001"]["attempt_errors"][0]["retry_in_ms"], 50);
  EXPECT_EQ(by_id["q-002"]["attempts"], 2);
  EXPECT_NE(by_id["q-002"]["attempt_errors"][0]["error"].get<std::string>().find("connection error"),
            std::string::npos);
  EXPECT_EQ(by_id["q-003"]["attempts"], 3);
  EXPECT_NE(by_id["q-003"]["attempt_errors"][0]["error"].get<std::string>().find("malformed"),
            std::string::npos);
  EXPECT_EQ(by_id["q-004"]["attempts"], 2);
  EXPECT_NE(by_id["q-004"]["attempt_errors"][0]["error"].get<std::string>().find("timeout"),
            std::string::npos);
  EXPECT_EQ(by_id["q-005"]["attempts"], 1);
  EXPECT_TRUE(by_id["q-005"]["attempt_errors"].empty());
  for (auto& [id, r] : by_id) EXPECT_EQ(r["response"], "You asked: Question " + id + ": how many?");
  EXPECT_FALSE(fs::exists(dir_ / "r" / "errors.jsonl") && fs::file_size(dir_ / "r" / "errors.jsonl") > 0);
}

// A request that stalls (here 4 s, once) holds back no other prompt: the other prompts are all
// answered while it is still waiting, whichever event loop sent it (no loop keeps a prompt it made
// ahead while its own slots are busy). Its record is therefore the last one.
TEST_F(RunnerTest, AStalledRequestHoldsBackNoOtherPrompt) {
  server_->set_faults({FaultRule{"q-000", FaultKind::kSlow, 1, 1.0, 1, 4000}});
  auto s = settings();
  s.concurrency = 2;
  auto b = backend({}, 30);
  const auto sum = run_items(make_items(12), s, *b, dir_ / "r");
  EXPECT_EQ(sum.answered, 12u);
  const auto recs = records(dir_ / "r" / "responses.jsonl");
  ASSERT_EQ(recs.size(), 12u);
  EXPECT_EQ(recs.back()["prompt_id"], "q-000");
  EXPECT_EQ(recs.back()["attempts"], 1);
}

// The HTTP backend without its asynchronous interface: the runner's thread-per-request path.
class BlockingOnly : public Backend {
 public:
  explicit BlockingOnly(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {}
  [[nodiscard]] std::string kind() const override { return inner_->kind(); }
  [[nodiscard]] bool simulated() const override { return inner_->simulated(); }
  [[nodiscard]] std::vector<std::string> endpoints() const override { return inner_->endpoints(); }
  [[nodiscard]] ServerInfo probe() override { return inner_->probe(); }
  [[nodiscard]] std::unique_ptr<Session> open_session() override { return inner_->open_session(); }
  [[nodiscard]] Api api() const override { return inner_->api(); }

 private:
  std::unique_ptr<Backend> inner_;
};

TEST_F(RunnerTest, ThreadPerRequestPathRetriesRecordsAndStopsToo) {
  server_->set_faults({FaultRule{"q-000", FaultKind::k500, 2}, FaultRule{"q-001", FaultKind::kDrop, 1},
                       FaultRule{"q-002", FaultKind::k400, -1}});
  auto s = settings();
  s.concurrency = 3;
  BlockingOnly b(backend());
  const auto sum = run_items(make_items(20), s, b, dir_ / "r");
  EXPECT_EQ(sum.answered, 19u);
  EXPECT_EQ(sum.failed, 1u);
  std::map<std::string, io::Json> by_id;
  for (const auto& r : records(dir_ / "r" / "responses.jsonl")) by_id[r["prompt_id"]] = r;
  ASSERT_EQ(by_id.size(), 19u);
  EXPECT_EQ(by_id["q-000"]["attempts"], 3);
  EXPECT_EQ(by_id["q-001"]["attempts"], 2);
  for (auto& [id, r] : by_id) EXPECT_EQ(r["response"], "You asked: Question " + id + ": how many?");
  const auto errs = records(dir_ / "r" / "errors.jsonl");
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0]["prompt_id"], "q-002");
  EXPECT_EQ(server_->missing_sampling(), 0u);
}

// A backend whose sessions throw for the prompt of one item: on the event-loop path (start()
// throws) and on the blocking path (send() throws). Either way that item fails, is recorded in
// errors.jsonl, and the run goes on: one path, one behaviour.
class ThrowsFor : public Backend {
 public:
  ThrowsFor(std::unique_ptr<Backend> inner, std::string item, bool async)
      : inner_(std::move(inner)), item_(std::move(item)), async_(async) {}
  [[nodiscard]] std::string kind() const override { return inner_->kind(); }
  [[nodiscard]] bool simulated() const override { return inner_->simulated(); }
  [[nodiscard]] std::vector<std::string> endpoints() const override { return inner_->endpoints(); }
  [[nodiscard]] ServerInfo probe() override { return inner_->probe(); }
  [[nodiscard]] Api api() const override { return inner_->api(); }
  [[nodiscard]] std::unique_ptr<Session> open_session() override {
    struct S : Session {
      std::unique_ptr<Session> in;
      std::string item;
      Attempt send(const Request& r, std::size_t ep) override {
        if (r.item_id == item) throw std::runtime_error("boom in send");
        return in->send(r, ep);
      }
    };
    auto s = std::make_unique<S>();
    s->in = inner_->open_session();
    s->item = item_;
    return s;
  }
  [[nodiscard]] std::unique_ptr<AsyncSession> open_async_session() override {
    if (!async_) return nullptr;
    struct A : AsyncSession {
      std::unique_ptr<AsyncSession> in;
      std::string item;
      void start(std::uint64_t tag, const Request& r, std::size_t ep) override {
        if (r.item_id == item) throw std::runtime_error("boom in start");
        in->start(tag, r, ep);
      }
      std::vector<std::pair<std::uint64_t, Attempt>> wait(std::chrono::milliseconds t) override {
        return in->wait(t);
      }
      [[nodiscard]] std::size_t in_flight() const override { return in->in_flight(); }
    };
    auto a = std::make_unique<A>();
    a->in = inner_->open_async_session();
    a->item = item_;
    return a;
  }

 private:
  std::unique_ptr<Backend> inner_;
  std::string item_;
  bool async_;
};

TEST_F(RunnerTest, AnExceptionFromTheBackendFailsItsItemOnEveryPath) {
  for (const bool async : {true, false}) {
    SCOPED_TRACE(async ? "event loop" : "blocking sessions");
    auto s = settings();
    s.concurrency = 2;
    ThrowsFor b(backend(), "q-004", async);
    const fs::path out = dir_ / (async ? "async" : "blocking");
    const auto sum = run_items(make_items(10), s, b, out);
    EXPECT_EQ(sum.answered, 9u);
    EXPECT_EQ(sum.failed, 1u);
    EXPECT_EQ(sum.unanswered, 1u);
    const auto errs = records(out / "errors.jsonl");
    ASSERT_EQ(errs.size(), 1u);
    EXPECT_EQ(errs[0]["prompt_id"], "q-004");
    EXPECT_EQ(errs[0]["attempts"], 1);
    EXPECT_NE(errs[0]["error"].get<std::string>().find("internal error: boom in"), std::string::npos);
    EXPECT_EQ(records(out / "responses.jsonl").size(), 9u);
  }
}

TEST_F(RunnerTest, ExhaustedAndFatalFailuresGoToErrorsOnlyAndResumeRetriesThem) {
  server_->set_faults({
      FaultRule{"q-001", FaultKind::k500, -1},
      FaultRule{"q-003", FaultKind::k400, -1},
      FaultRule{"q-004", FaultKind::kHuge, -1},
      FaultRule{"q-005", FaultKind::kLength, -1},
  });
  auto s = settings();
  const auto items = make_items(7);
  const auto sum = run(items, s);
  EXPECT_EQ(sum.answered, 4u);
  EXPECT_EQ(sum.failed, 3u);
  EXPECT_EQ(sum.unanswered, 3u);
  std::map<std::string, io::Json> errs;
  for (const auto& r : records(dir_ / "r" / "errors.jsonl")) errs[r["prompt_id"]] = r;
  ASSERT_EQ(errs.size(), 3u);
  EXPECT_EQ(errs["q-001"]["attempts"], 4);  // 1 + 3 retries
  EXPECT_EQ(errs["q-001"]["http_status"], 500);
  EXPECT_EQ(errs["q-003"]["attempts"], 1);  // 4xx other than 429: no retry
  EXPECT_EQ(errs["q-003"]["http_status"], 400);
  EXPECT_NE(errs["q-003"]["error"].get<std::string>().find("exceeds the available context size"),
            std::string::npos);
  EXPECT_EQ(errs["q-004"]["attempts"], 1);
  EXPECT_NE(errs["q-004"]["error"].get<std::string>().find("larger than"), std::string::npos);
  std::map<std::string, io::Json> ok;
  for (const auto& r : records(dir_ / "r" / "responses.jsonl")) ok[r["prompt_id"]] = r;
  EXPECT_EQ(ok.size(), 4u);
  EXPECT_EQ(ok.count("q-001") + ok.count("q-003") + ok.count("q-004"), 0u);
  EXPECT_EQ(ok["q-005"]["finish_reason"], "length");  // an answer, graded later as truncated
  io::Json manifest = io::read_json_file(dir_ / "r" / "run.json");
  EXPECT_EQ(manifest["counts"]["unanswered"], 3);
  EXPECT_EQ(manifest["complete"], false);

  // The server recovers; --resume asks only the three unanswered prompts, once each.
  server_->set_faults({});
  const std::size_t before = server_->post_count();
  s.resume = true;
  const auto sum2 = run(items, s);
  EXPECT_EQ(sum2.answered_before, 4u);
  EXPECT_EQ(sum2.answered, 3u);
  EXPECT_EQ(sum2.unanswered, 0u);
  EXPECT_EQ(server_->post_count() - before, 3u);
  std::map<std::string, int> count;
  std::set<std::uint64_t> indexes;
  for (const auto& r : records(dir_ / "r" / "responses.jsonl")) {
    ++count[r["prompt_id"]];
    EXPECT_TRUE(indexes.insert(r["request_index"].get<std::uint64_t>()).second);
  }
  EXPECT_EQ(count.size(), 7u);
  for (const auto& [id, n] : count) EXPECT_EQ(n, 1) << id;
  manifest = io::read_json_file(dir_ / "r" / "run.json");
  EXPECT_EQ(manifest["complete"], true);
  EXPECT_EQ(manifest["sessions"].size(), 2u);

  // A third session has nothing to do and sends nothing.
  const std::size_t after = server_->post_count();
  const auto sum3 = run(items, s);
  EXPECT_EQ(sum3.answered, 0u);
  EXPECT_EQ(server_->post_count(), after);
}

TEST_F(RunnerTest, MaxErrorsStopsTheSessionEarly) {
  server_->set_faults({FaultRule{"", FaultKind::k400, -1}});
  auto s = settings();
  s.max_errors = 2;
  const auto sum = run(make_items(50), s);
  EXPECT_TRUE(sum.stopped_early);
  // The request in flight when the limit is reached still finishes (and is recorded).
  EXPECT_GE(sum.failed, 2u);
  EXPECT_LE(sum.failed, 3u);
  EXPECT_EQ(records(dir_ / "r" / "errors.jsonl").size(), sum.failed);
  EXPECT_EQ(sum.unanswered, 50u);
  EXPECT_LT(server_->post_count(), 50u);
}

TEST_F(RunnerTest, ResumeRefusesDifferentSettingsAndRepairsATornLine) {
  const auto items = make_items(5);
  auto s = settings();
  (void)run(items, s);
  // Without --resume an existing run directory is an error.
  EXPECT_THROW((void)run(items, s), Error);
  s.resume = true;
  auto changed = s;
  changed.sampling.temperature = 0.5;
  try {
    (void)run(items, changed);
    ADD_FAILURE() << "a different temperature was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUsage);
    EXPECT_NE(std::string(e.what()).find("sampling"), std::string::npos) << e.what();
  }
  changed = s;
  changed.binding["benchmark_sha256"] = "other";
  EXPECT_THROW((void)run(items, changed), Error);
  // The server now reports another build: a resumed run would mix two systems.
  server_->set_model("test-model", "b0002-test");
  EXPECT_THROW((void)run(items, s), Error);
  server_->set_model("test-model", "b0001-test");

  // A crash mid-write: drop the last record's tail, as a torn line.
  const fs::path resp = dir_ / "r" / "responses.jsonl";
  std::string text = io::read_file(resp);
  const std::size_t last_start = text.rfind('\n', text.size() - 2) + 1;
  const std::string last_id = io::parse_json(text.substr(last_start), "x")["prompt_id"];
  text.resize(last_start + 25);
  io::write_file_atomic(resp, text);
  const auto sum = run(items, s);
  EXPECT_GT(sum.torn_bytes_repaired, 0u);
  EXPECT_EQ(sum.answered, 1u);
  const auto recs = records(resp);
  ASSERT_EQ(recs.size(), 5u);
  EXPECT_EQ(recs.back()["prompt_id"], last_id);
}

TEST_F(RunnerTest, ResumeOnAFreshDirectorySimplyStarts) {
  auto s = settings();
  s.resume = true;
  const auto sum = run(make_items(3), s, "fresh");
  EXPECT_EQ(sum.answered, 3u);
}

TEST_F(RunnerTest, CacheServesOnlyTheSameModelBuildAndBodyAndNeverErrors) {
  auto s = settings();
  s.use_cache = true;
  const auto items = make_items(6);
  server_->set_faults({FaultRule{"q-005", FaultKind::k500, -1}});
  auto sum = run(items, s, "a");
  EXPECT_EQ(sum.answered, 5u);
  EXPECT_EQ(sum.from_cache, 0u);

  // Same model, build and bodies: the five answers come from the cache; the failed one was not
  // cached, so it goes to the server (which now answers).
  server_->set_faults({});
  std::size_t before = server_->post_count();
  sum = run(items, s, "b");
  EXPECT_EQ(sum.answered, 6u);
  EXPECT_EQ(sum.from_cache, 5u);
  EXPECT_EQ(server_->post_count() - before, 1u);
  for (const auto& r : records(dir_ / "b" / "responses.jsonl")) {
    if (r["prompt_id"] == "q-005") {
      EXPECT_EQ(r["cached"], false);
    } else {
      EXPECT_EQ(r["cached"], true);
      EXPECT_EQ(r["response"], "You asked: Question " + r["prompt_id"].get<std::string>() + ": how many?");
    }
  }

  // Another seed is another request body: no hits.
  auto other_seed = s;
  other_seed.sampling.seed = 1;
  before = server_->post_count();
  sum = run(items, other_seed, "c");
  EXPECT_EQ(sum.from_cache, 0u);
  EXPECT_EQ(server_->post_count() - before, 6u);

  // Another build of the server: no hits either, even with identical bodies.
  server_->set_model("test-model", "b0002-test");
  before = server_->post_count();
  sum = run(items, s, "d");
  EXPECT_EQ(sum.from_cache, 0u);
  EXPECT_EQ(server_->post_count() - before, 6u);

  ResponseCache cache(s.cache_path);
  const auto st = cache.stats();
  EXPECT_EQ(st.entries, 18u);
  EXPECT_EQ(st.hits, 5u);
  EXPECT_EQ(cache.clear("nobody"), 0u);
  EXPECT_EQ(cache.clear("test-model"), 18u);
  EXPECT_EQ(cache.stats().entries, 0u);
}

// Records carry UTC times to the millisecond ("2026-12-02T09:41:05.123Z"): well formed, between
// the moments before and after the run, and an answer never completed before it was started
// (the same text format orders like the times).
TEST_F(RunnerTest, RecordTimesAreUtcToTheMillisecond) {
  const auto utc = [](std::chrono::system_clock::time_point at) {
    const std::time_t t = std::chrono::system_clock::to_time_t(at);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[40];
    (void)std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    return std::string(buf);
  };
  auto s = settings();
  s.concurrency = 4;
  const std::string before = utc(std::chrono::system_clock::now());
  ASSERT_EQ(run(make_items(40), s).answered, 40u);
  const std::string after = utc(std::chrono::system_clock::now() + std::chrono::seconds(1));
  const std::regex form(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");
  const auto recs = records(dir_ / "r" / "responses.jsonl");
  ASSERT_EQ(recs.size(), 40u);
  for (const auto& r : recs) {
    const std::string started = r["started_at"], completed = r["completed_at"];
    EXPECT_TRUE(std::regex_match(started, form)) << started;
    EXPECT_TRUE(std::regex_match(completed, form)) << completed;
    EXPECT_LE(before, started);
    EXPECT_LE(started, completed);
    EXPECT_LE(completed, after);
  }
}

// The work items are checked before anything is sent or written: a repeated id, and a field that
// is reserved for the runner's records or the id (on any item, after items whose fields are
// allowed), each refused by name.
TEST_F(RunnerTest, ItemsWithARepeatedIdOrAReservedFieldAreRefusedBeforeTheRun) {
  const auto refusal = [&](const std::vector<WorkItem>& items) {
    try {
      (void)run(items, settings());
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(ran)");
  };
  auto items = make_items(50);
  items[40].item_id = items[7].item_id;
  EXPECT_EQ(refusal(items), "work item id 'q-007' occurs twice");
  for (const char* reserved : {"latency_ms", "completed_at", "http_status", "prompt_id"}) {
    items = make_items(50);
    items[30].fields["tier"] = "x";
    items[41].fields[reserved] = 1;  // "prompt_id": the id field of settings()
    EXPECT_EQ(refusal(items),
              fmt::format("work item 'q-041': field '{}' is reserved for the runner", reserved));
  }
  EXPECT_FALSE(fs::exists(dir_ / "r" / "responses.jsonl"));
  items = make_items(50);
  items[30].fields["tier"] = "x";
  EXPECT_EQ(run(items, settings()).answered, 50u);
}

// The cache's first connection is opened on a thread while the run folder is prepared: a cache
// that cannot be opened is still one clear error from run_items (kIo, naming the folder), with no
// request sent and no record file made.
TEST_F(RunnerTest, ACacheThatCannotBeOpenedIsOneClearErrorAndNothingIsSent) {
  io::write_file_atomic(dir_ / "not-a-folder", "x");
  RunSettings s = settings();
  s.use_cache = true;
  s.cache_path = dir_ / "not-a-folder" / "cache" / "responses.cache";
  const std::size_t posts_before = server_->post_count();
  try {
    (void)run(make_items(5), s);
    ADD_FAILURE() << "the run ran without its cache";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find("cannot create the cache folder " +
                                         (dir_ / "not-a-folder" / "cache").string()),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(server_->post_count(), posts_before);
  EXPECT_FALSE(fs::exists(dir_ / "r" / "responses.jsonl"));
  s.cache_path = dir_ / "cache" / "responses.cache";  // a usable one: the same items run
  EXPECT_EQ(run(make_items(5), s, "r2").answered, 5u);
}

// A cache opened ahead by the caller (RunSettings::cache_ahead) is the run's first connection when
// it is for the run's cache_path: taken once, the answers stored through it. One for another path
// is left alone (the run opens its own), and one whose opening failed is run_items' error.
TEST_F(RunnerTest, ACacheOpenedAheadIsTakenOnlyForItsOwnPath) {
  RunSettings s = settings();
  s.use_cache = true;
  s.cache_ahead = open_cache_ahead(s.cache_path);
  EXPECT_EQ(run(make_items(4), s).answered, 4u);
  EXPECT_EQ(s.cache_ahead->take(), nullptr);  // taken by the run
  const std::size_t posts = server_->post_count();
  RunSummary again = run(make_items(4), s, "r2");  // taken already: the run opens its own
  EXPECT_EQ(again.from_cache, 4u);
  EXPECT_EQ(server_->post_count(), posts);

  const fs::path other = dir_ / "other-cache" / "responses.cache";
  s.cache_ahead = open_cache_ahead(other);
  EXPECT_EQ(run(make_items(4), s, "r3").from_cache, 4u);
  auto untouched = s.cache_ahead->take();  // not the run's path: never taken
  ASSERT_NE(untouched, nullptr);
  EXPECT_EQ(untouched->stats().entries, 0u);  // nothing went into it

  io::write_file_atomic(dir_ / "not-a-folder", "x");
  s.cache_path = dir_ / "not-a-folder" / "cache" / "responses.cache";
  s.cache_ahead = open_cache_ahead(s.cache_path);
  try {
    (void)run(make_items(2), s, "r4");
    ADD_FAILURE() << "the run ran without its cache";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find("cannot create the cache folder"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "r4" / "responses.jsonl"));
}

// Two runners on one folder: the second is refused while the first holds run.lock (a lock taken
// here on the same file stands in for the other process: flock locks conflict between open files).
TEST_F(RunnerTest, ASecondRunnerOnTheSameFolderIsRefused) {
  fs::create_directories(dir_ / "r");
  io::FileLock other;
  ASSERT_TRUE(other.try_lock(dir_ / "r" / "run.lock"));
  try {
    (void)run(make_items(3), settings());
    ADD_FAILURE() << "the second runner ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("another numcheck process is running in"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "r" / "responses.jsonl"));
  other = io::FileLock();  // released: the folder is free again
  EXPECT_EQ(run(make_items(3), settings()).answered, 3u);
}

// SQL run on a SQLite database file directly (how the tests make the caches of earlier numcheck
// versions, which a store imports), and a number read from one.
void run_sql(const fs::path& path, const std::string& statements) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, statements.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

std::int64_t sql_count(const fs::path& path, const char* query) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, query, -1, &st, nullptr), SQLITE_OK);
  EXPECT_EQ(sqlite3_step(st), SQLITE_ROW);
  const auto n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

// One record of a store's entries file, read with the format as docs/runner.md describes it (a
// check of that description as much as a tool for the tests): a little-endian magic number
// "CNR1", the length of the rest, then seven fields of a length and bytes each.
struct StoredRecord {
  std::uint64_t offset = 0;
  std::vector<std::string> fields;  // key, request hash, check, model, identity, created, completion
};

std::uint32_t le32(const std::string& b, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<std::size_t>(i)]);
  return v;
}

std::vector<StoredRecord> read_entries_file(const fs::path& path) {
  const std::string b = io::read_file(path);
  EXPECT_EQ(b.substr(0, 16), "numcheck-cache1\n");
  std::vector<StoredRecord> out;
  std::size_t at = 16;
  while (at + 8 <= b.size()) {
    EXPECT_EQ(b.substr(at, 4), "CNR1") << at;
    StoredRecord r;
    r.offset = at;
    const std::size_t end = at + 8 + le32(b, at + 4);
    std::size_t f = at + 8;
    for (int i = 0; i < 7; ++i) {
      const std::size_t n = le32(b, f);
      r.fields.push_back(b.substr(f + 4, n));
      f += 4 + n;
    }
    EXPECT_EQ(f, end) << at;
    out.push_back(std::move(r));
    at = end;
  }
  EXPECT_EQ(at, b.size());
  return out;
}

// Writes `bytes` over a file's bytes at `offset` (what a damaged disk or a hand edit does).
void overwrite(const fs::path& path, std::uint64_t offset, std::string_view bytes) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f.good()) << path;
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void append_bytes(const fs::path& path, std::string_view bytes) {
  std::ofstream f(path, std::ios::app | std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

fs::path index_of(const fs::path& cache) { return fs::path(cache.string() + ".index"); }
std::uint64_t index_lines(const fs::path& cache) { return (fs::file_size(index_of(cache)) - 16) / 32; }

// A cache entry must belong to its request: records whose completions were changed by hand are
// misses (asked again, counted), never served.
TEST_F(RunnerTest, ATamperedCacheEntryIsAMissAndReported) {
  auto s = settings();
  s.use_cache = true;
  const auto items = make_items(4);
  ASSERT_EQ(run(items, s, "a").answered, 4u);
  const std::string text = io::read_file(s.cache_path);
  std::size_t at = 0;
  for (int i = 0; i < 2; ++i) {
    at = text.find("You asked", at + 1);
    ASSERT_NE(at, std::string::npos);
    overwrite(s.cache_path, at, "You said ");
  }
  const auto before = server_->post_count();
  const auto sum = run(items, s, "b");
  EXPECT_EQ(sum.answered, 4u);
  EXPECT_EQ(sum.from_cache, 2u);
  EXPECT_EQ(sum.cache_rejected, 2u);
  EXPECT_EQ(server_->post_count() - before, 2u);
  for (const auto& r : records(dir_ / "b" / "responses.jsonl"))
    EXPECT_EQ(r["response"], "You asked: " + r["request"]["messages"][0]["content"].get<std::string>());
}

// Concurrent runs share the cache: a writer holds the store's lock only while it appends a commit,
// so another connection's commit never waits for it between commits.
TEST_F(RunnerTest, CacheWritersNeverHoldTheLockBetweenCommits) {
  const fs::path path = dir_ / "shared" / "responses.cache";
  ResponseCache a(path);
  ResponseCache b(path);
  Completion c;
  c.content = "42";
  const io::Json identity = {{"model", "m"}};
  a.put(cache_key(identity, io::Json{{"q", 1}}), request_hash(io::Json{{"q", 1}}), "m", identity, c);
  b.put(cache_key(identity, io::Json{{"q", 2}}), request_hash(io::Json{{"q", 2}}), "m", identity, c);
  EXPECT_NO_THROW(b.commit());
  EXPECT_NO_THROW(a.commit());
  EXPECT_TRUE(b.get(cache_key(identity, io::Json{{"q", 1}}), request_hash(io::Json{{"q", 1}})).has_value());
  EXPECT_FALSE(b.get(cache_key(identity, io::Json{{"q", 1}}), request_hash(io::Json{{"q", 2}})).has_value());
  EXPECT_EQ(b.rejected(), 1u);
}

// The runner builds the keys from the lines it already serialized: they must equal the keys of the
// JSON values (so caches written before stay valid), for nested, unicode and invalid-UTF-8 bodies.
TEST(CacheKeys, FromLinesEqualFromValues) {
  const io::Json identity = {{"model", "m"}, {"build", {{"commit", "abc"}, {"n", 7}}}};
  const std::vector<io::Json> bodies = {
      io::Json::object(),
      {{"model", "m"},
       {"messages", {{{"role", "user"}, {"content", "3/4 of 2 L \u00e9 \"q\"\n"}}}},
       {"temperature", 0.3},
       {"seed", 20260725}},
      {{"z", 1}, {"a", {1, 2.5, nullptr, true}}, {"bad", std::string("\xff\xfe x")}},
  };
  for (const auto& body : bodies) {
    EXPECT_EQ(cache_key_from_lines(io::to_line(identity), io::to_line(body)), cache_key(identity, body))
        << body.dump(-1, ' ', false, io::Json::error_handler_t::replace);
    EXPECT_EQ(request_hash_from_line(io::to_line(body)), request_hash(body));
  }
  EXPECT_NE(cache_key_from_lines(io::to_line(identity), io::to_line(bodies[1])),
            cache_key_from_lines(io::to_line(io::Json{{"model", "n"}}), io::to_line(bodies[1])));
}

// The runner hashes the part of every key before the request body once (CacheKeyHasher) and goes on
// from a copy of it for each body: the same keys as cache_key for identities of every length (the
// part before the body ending at every place in a 64-byte block), one hasher used again and again.
TEST(CacheKeys, OneHasherForManyBodiesGivesTheSameKeys) {
  std::vector<io::Json> bodies;
  bodies.reserve(6);
  for (int i = 0; i < 6; ++i) {
    bodies.push_back(
        {{"model", "m"},
         {"messages", {{{"role", "user"}, {"content", std::string(static_cast<std::size_t>(i * 29), 'q')}}}},
         {"seed", i}});
  }
  for (std::size_t len = 0; len < 140; ++len) {
    const io::Json identity = {{"model", std::string(len, 'm')}, {"build", nullptr}};
    const CacheKeyHasher hasher(io::to_line(identity));
    for (int round = 0; round < 2; ++round) {
      for (const auto& body : bodies) {
        ASSERT_EQ(hasher.key(io::to_line(body)), cache_key(identity, body)) << "identity of " << len;
      }
    }
  }
}

// key_prefix reads a key's first 16 hex digits through a table: the same as reading them one by
// one, and the SHA-256 fallback for anything else (a capital letter, a byte next to a digit range,
// a short key), on keys made to put every kind of byte at every place.
TEST(CacheKeys, PrefixMatchesADigitByDigitReading) {
  // A key's first 16 characters read as hex when they all are lowercase hex digits, else the first
  // 16 hex digits of its SHA-256 (its first 8 bytes).
  const auto reference = [](std::string_view key) {
    const auto read = [](std::string_view digits) {
      constexpr std::string_view kHex = "0123456789abcdef";
      std::uint64_t v = 0;
      for (const char c : digits) {
        const std::size_t d = kHex.find(c);
        if (d == std::string_view::npos) return std::optional<std::uint64_t>();
        v = v * 16 + d;
      }
      return std::optional<std::uint64_t>(v);
    };
    const auto direct = key.size() >= 16 ? read(key.substr(0, 16)) : std::nullopt;
    return static_cast<std::int64_t>(direct ? *direct
                                            : *read(std::string_view(io::sha256_hex(key)).substr(0, 16)));
  };
  const std::string odd = std::string("/:@`gAFGz\x00\x7f\x80\xff", 13);
  const std::string hex = "0123456789abcdef";
  for (std::size_t pos = 0; pos < 17; ++pos) {
    for (const char c : odd + hex) {
      std::string key = "fedcba9876543210" + std::string(48, '7');
      if (pos < 16) key[pos] = c;
      ASSERT_EQ(ResponseCache::key_prefix(key), reference(key)) << pos << " " << static_cast<int>(c);
    }
  }
  for (std::size_t len = 0; len < 20; ++len) {
    const std::string key = std::string("0123456789abcdef0123").substr(0, len);
    EXPECT_EQ(ResponseCache::key_prefix(key), reference(key)) << len;
  }
}

// Many rounds of gets, puts and commits on one object stay consistent (every entry readable, hits
// counted, a wrong request hash still refused).
TEST_F(RunnerTest, CacheReusesItsStatementsAcrossManyRounds) {
  ResponseCache cache(dir_ / "rounds" / "responses.cache");
  const io::Json identity = {{"model", "m"}};
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 300; ++i) {
      const io::Json body = {{"q", i}};
      const std::string key = cache_key(identity, body);
      const std::string req = request_hash(body);
      auto hit = cache.get(key, req);
      if (round == 0) {
        ASSERT_FALSE(hit.has_value()) << i;
        Completion c;
        c.content = std::to_string(i);
        cache.put(key, req, "m", identity, c);
      } else {
        ASSERT_TRUE(hit.has_value()) << round << " " << i;
        EXPECT_EQ(hit->content, std::to_string(i));
        EXPECT_FALSE(cache.get(key, request_hash(io::Json{{"q", i + 1}})).has_value());
      }
    }
    cache.commit();
  }
  EXPECT_EQ(cache.rejected(), 600u);
  const auto st = cache.stats();
  EXPECT_EQ(st.entries, 300u);
  EXPECT_EQ(st.hits, 600u);
}

// The keys a session reads before its first request: every stored entry's (the connection's own
// batch included), so every entry get() could serve; a record with a damaged check is in it too and
// still a miss (the snapshot only spares lookups, get() decides). None when the cache holds more
// entries than asked for.
TEST_F(RunnerTest, CacheKeySnapshotHoldsTheStoredKeysUpToItsBound) {
  const fs::path path = dir_ / "snap" / "responses.cache";
  ResponseCache cache(path);
  const io::Json identity = {{"model", "m"}};
  const auto key = [&](int i) { return cache_key(identity, io::Json{{"q", i}}); };
  ASSERT_TRUE(cache.key_snapshot(10).has_value());
  EXPECT_EQ(cache.key_snapshot(10)->size(), 0u);
  EXPECT_FALSE(cache.key_snapshot(0).has_value());
  Completion c;
  c.content = "42";
  for (int i = 0; i < 6; ++i) cache.put(key(i), request_hash(io::Json{{"q", i}}), "m", identity, c);
  cache.commit();
  cache.put(key(6), request_hash(io::Json{{"q", 6}}), "m", identity, c);  // still in the batch
  // A record whose check was damaged: get() never serves it.
  for (const auto& r : read_entries_file(path))
    if (r.fields[0] == key(5)) overwrite(path, r.offset + 8 + 4 + 64 + 4 + 64 + 4, "x");
  EXPECT_FALSE(cache.key_snapshot(6).has_value());  // seven entries
  const auto snap = cache.key_snapshot(7);
  ASSERT_TRUE(snap.has_value());
  EXPECT_EQ(snap->size(), 7u);
  for (int i = 0; i < 7; ++i) EXPECT_TRUE(snap->may_contain(key(i))) << i;
  EXPECT_FALSE(cache.get(key(5), request_hash(io::Json{{"q", 5}})).has_value());
  EXPECT_TRUE(cache.get(key(4), request_hash(io::Json{{"q", 4}})).has_value());
  EXPECT_FALSE(snap->may_contain(key(7)));
  EXPECT_FALSE(snap->may_contain(""));

  // A snapshot is of its moment: an entry another connection stores afterwards is not in it.
  ResponseCache other(path);
  other.put(key(8), request_hash(io::Json{{"q", 8}}), "m", identity, c);
  other.commit();
  EXPECT_FALSE(snap->may_contain(key(8)));
  EXPECT_TRUE(cache.key_snapshot(9)->may_contain(key(8)));
}

// put() commits by itself once set_batch_size() entries wait (the runner's writer sets a large one
// and commits at its ticks): another connection sees none of a batch before, all of it after.
TEST_F(RunnerTest, CacheCommitsByItselfAtItsBatchSize) {
  const fs::path path = dir_ / "batch" / "responses.cache";
  ResponseCache writer(path);
  ResponseCache reader(path);
  writer.set_batch_size(3);
  const io::Json identity = {{"model", "m"}};
  Completion c;
  c.content = "42";
  const auto put = [&](int i) {
    writer.put(cache_key(identity, io::Json{{"q", i}}), request_hash(io::Json{{"q", i}}), "m", identity, c);
  };
  put(0);
  put(1);
  EXPECT_EQ(reader.stats().entries, 0u);
  put(2);
  EXPECT_EQ(reader.stats().entries, 3u);
  put(3);
  EXPECT_EQ(reader.stats().entries, 3u);
  writer.commit();
  EXPECT_EQ(reader.stats().entries, 4u);
}

// The CLI's preflight probes the endpoints and hands its probe to the session
// (RunSettings::server): the session asks GET /v1/models no second time, and its run.json names
// the same server identity and model as that of a session that probes by itself (the probe's
// model listing carries the server's clock, so only the identity is compared).
TEST_F(RunnerTest, ASessionTakesThePreflightsProbeInsteadOfProbingAgain) {
  const auto items = make_items(3);
  auto b = backend();
  auto s = settings();
  const std::size_t before = server_->models_count();
  s.server = preflight(*b, s, items.front());
  ASSERT_TRUE(s.server.has_value());
  EXPECT_EQ(server_->models_count(), before + 1);
  EXPECT_EQ(run_items(items, s, *b, dir_ / "given").answered, 3u);
  EXPECT_EQ(server_->models_count(), before + 1);  // not asked again

  auto own = settings();
  EXPECT_EQ(run_items(items, own, *b, dir_ / "probed").answered, 3u);
  EXPECT_EQ(server_->models_count(), before + 2);  // without it, the session probes
  const auto server_of = [](const fs::path& run_json) {
    const io::Json j = io::Json::parse(io::read_file(run_json));
    return std::make_pair(j["server"]["endpoints"][0]["identity"], j["model"]);
  };
  EXPECT_EQ(server_of(dir_ / "given" / "run.json"), server_of(dir_ / "probed" / "run.json"));
}

// A SQLite cache of the numcheck versions before the store (its `entries` table), found beside a
// store that does not exist yet, is copied into it once: its entries served with their hit counts,
// rows without a check left out. The SQLite file is left as it was, and a row added to it later is
// not copied again.
TEST_F(RunnerTest, ASqliteCacheBesideANewStoreIsCopiedInOnce) {
  const io::Json identity = {{"model", "m"}};
  const auto key = [&](int i) { return cache_key(identity, io::Json{{"q", i}}); };
  const auto req = [&](int i) { return request_hash(io::Json{{"q", i}}); };
  const fs::path db = dir_ / "sqlite" / "responses.sqlite3";
  fs::create_directories(db.parent_path());
  std::string rows =
      "CREATE TABLE entries (key_prefix INTEGER NOT NULL, key TEXT NOT NULL, model TEXT NOT NULL,"
      " identity TEXT NOT NULL, completion TEXT NOT NULL, created TEXT NOT NULL, hits INTEGER NOT NULL"
      " DEFAULT 0, request_sha256 TEXT, check_sha256 TEXT);";
  for (int i = 0; i < 4; ++i) {
    Completion c;
    c.content = "answer " + std::to_string(i);
    const auto e = ResponseCache::make_entry(key(i), req(i), c);
    rows += fmt::format(
        "INSERT INTO entries VALUES ({}, '{}', 'm{}', '{{\"model\":\"m\"}}', '{}', '2026-10-0{}T00:00:00Z', "
        "{}, '{}', {});",
        ResponseCache::key_prefix(e.key), e.key, i % 2, e.completion, i + 1, i * 2, e.request_sha256,
        i == 3 ? std::string("NULL") : "'" + e.check + "'");
  }
  run_sql(db, rows);
  const std::string before = io::read_file(db);
  const fs::path path = dir_ / "sqlite" / "responses.cache";
  {
    ResponseCache cache(path);
    const auto st = cache.stats();
    EXPECT_EQ(st.entries, 3u);  // the row without a check is left out
    EXPECT_EQ(st.hits, 6u);     // 0 + 2 + 4
    EXPECT_EQ(st.oldest, "2026-10-01T00:00:00Z");
    EXPECT_EQ(st.newest, "2026-10-03T00:00:00Z");
    EXPECT_EQ(st.per_model, (std::vector<std::pair<std::string, std::uint64_t>>{{"m0", 2}, {"m1", 1}}));
    for (int i = 0; i < 3; ++i) {
      const auto hit = cache.get(key(i), req(i));
      ASSERT_TRUE(hit.has_value()) << i;
      EXPECT_EQ(hit->content, "answer " + std::to_string(i));
    }
    EXPECT_FALSE(cache.get(key(3), req(3)).has_value());
    EXPECT_EQ(cache.rejected(), 0u);
  }
  EXPECT_EQ(io::read_file(db), before);
  run_sql(db, "UPDATE entries SET check_sha256 = 'x' WHERE check_sha256 IS NULL");
  ResponseCache again(path);
  EXPECT_EQ(again.stats().entries, 3u);
  EXPECT_EQ(again.stats().hits, 9u);  // and the three served above
}

// An old-schema cache with entries 0 .. n-1 (identity {"model": "m"}, request {"q": i},
// completion "answer i", created 2026-11-01, i + 1 hits; entries in `no_check` have no check), as
// numcheck wrote caches before the entries table.
void write_old_cache(const fs::path& path, int n, const std::set<int>& no_check = {}) {
  const auto quote = [](const std::string& v) {
    std::string out = "'";
    for (const char ch : v) out += ch == '\'' ? std::string("''") : std::string(1, ch);
    return out + "'";
  };
  const io::Json identity = {{"model", "m"}};
  const std::string identity_line = io::to_line(identity);
  fs::create_directories(path.parent_path());
  std::string rows =
      "CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, identity TEXT NOT NULL,"
      " completion TEXT NOT NULL, created TEXT NOT NULL, hits INTEGER NOT NULL DEFAULT 0,"
      " request_sha256 TEXT, check_sha256 TEXT);"
      "CREATE INDEX responses_model ON responses(model);BEGIN;";
  for (int i = 0; i < n; ++i) {
    Completion c;
    c.content = "answer " + std::to_string(i);
    const auto e = ResponseCache::make_entry(cache_key(identity, io::Json{{"q", i}}),
                                             request_hash(io::Json{{"q", i}}), c);
    rows += "INSERT INTO responses VALUES (" + quote(e.key) + ", 'm', " + quote(identity_line) + ", " +
            quote(e.completion) + ", '2026-11-01T00:00:00Z', " + std::to_string(i + 1) + ", " +
            quote(e.request_sha256) + ", " + (no_check.count(i) != 0 ? std::string("NULL") : quote(e.check)) +
            ");";
  }
  run_sql(path, rows + "COMMIT;");
}

// A SQLite cache made before the entries table (a `responses` table keyed by the key's text) is
// copied into a new store as well: its servable rows are served with their hit counts, rows
// without a check (never servable) are left out, and opening the store again copies nothing twice.
// A cache from before entries carried checks has nothing servable: the store starts empty.
TEST_F(RunnerTest, AnOlderSqliteCacheIsCopiedInOnceAndServesItsEntries) {
  const io::Json identity = {{"model", "m"}};
  const auto key = [&](int i) { return cache_key(identity, io::Json{{"q", i}}); };
  const auto req = [&](int i) { return request_hash(io::Json{{"q", i}}); };
  const fs::path path = dir_ / "old-schema" / "responses.cache";
  write_old_cache(dir_ / "old-schema" / "responses.sqlite3", 3, {2});
  {
    ResponseCache cache(path);
    const auto st = cache.stats();
    EXPECT_EQ(st.entries, 2u);  // the row without a check is dropped
    EXPECT_EQ(st.hits, 3u);     // 1 + 2
    EXPECT_EQ(st.oldest, "2026-11-01T00:00:00Z");
    for (int i = 0; i < 2; ++i) {
      const auto hit = cache.get(key(i), req(i));
      ASSERT_TRUE(hit.has_value()) << i;
      EXPECT_EQ(hit->content, "answer " + std::to_string(i));
    }
    EXPECT_FALSE(cache.get(key(2), req(2)).has_value());
    EXPECT_EQ(cache.rejected(), 0u);
    Completion c;
    c.content = "new";
    cache.put(key(3), req(3), "m", identity, c);
  }
  EXPECT_EQ(sql_count(dir_ / "old-schema" / "responses.sqlite3", "SELECT COUNT(*) FROM responses"), 3);
  ResponseCache again(path);
  EXPECT_EQ(again.stats().entries, 3u);
  ASSERT_TRUE(again.get(key(3), req(3)).has_value());
  ASSERT_TRUE(again.get(key(0), req(0)).has_value());

  // Older still: no request hash or check columns. Nothing there could be served; the table goes.
  const fs::path older = dir_ / "older-schema" / "responses.cache";
  fs::create_directories(older.parent_path());
  run_sql(dir_ / "older-schema" / "responses.sqlite3",
          "CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, identity TEXT NOT NULL,"
          " completion TEXT NOT NULL, created TEXT NOT NULL, hits INTEGER NOT NULL DEFAULT 0);"
          "INSERT INTO responses VALUES ('k', 'm', '{}', '{}', '2026-01-01T00:00:00Z', 0);");
  ResponseCache oldest(older);
  EXPECT_EQ(oldest.stats().entries, 0u);
}

// Several processes may open a new store beside the same SQLite cache at once (here: connections
// on threads, each with its own files and lock, as separate as processes): one copies it, the
// others wait for its lock and find the store made; every one serves every entry, none is copied
// twice, and none fails.
TEST_F(RunnerTest, ASqliteCacheOpenedByManyAtOnceIsCopiedOnce) {
  const fs::path path = dir_ / "old-shared" / "responses.cache";
  constexpr int kEntries = 400;
  write_old_cache(dir_ / "old-shared" / "responses.sqlite3", kEntries);
  const io::Json identity = {{"model", "m"}};
  constexpr int kOpeners = 4;
  std::vector<int> served(kOpeners, 0);
  std::vector<std::string> errors(kOpeners);
  std::vector<std::thread> threads;
  for (int t = 0; t < kOpeners; ++t) {
    threads.emplace_back([&, t] {
      try {
        ResponseCache cache(path);
        for (int i = 0; i < kEntries; ++i) {
          const auto hit =
              cache.get(cache_key(identity, io::Json{{"q", i}}), request_hash(io::Json{{"q", i}}));
          if (hit && hit->content == "answer " + std::to_string(i)) ++served[static_cast<std::size_t>(t)];
        }
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(t)] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kOpeners; ++t) {
    EXPECT_EQ(errors[static_cast<std::size_t>(t)], "") << t;
    EXPECT_EQ(served[static_cast<std::size_t>(t)], kEntries) << t;
  }
  // Copied once: one record per entry; in the index one line per entry, one for its hits (i + 1
  // each), and one for each entry every opener served.
  EXPECT_EQ(read_entries_file(path).size(), static_cast<std::size_t>(kEntries));
  EXPECT_EQ(index_lines(path), static_cast<std::uint64_t>(2 * kEntries + kOpeners * kEntries));
  EXPECT_EQ(ResponseCache(path).stats().hits,
            static_cast<std::uint64_t>(kEntries) * (kEntries + 1) / 2 + kOpeners * kEntries);
}

// One commit may hold answers stored under different models and server identities (a server that
// changed its reported model mid-run): each record keeps its own, and each is served back.
TEST_F(RunnerTest, OneCommitKeepsEachEntrysModelAndIdentity) {
  const fs::path path = dir_ / "sources" / "responses.cache";
  const std::vector<std::pair<std::string, std::string>> sources = {{"m1", R"({"model":"m1"})"},
                                                                    {"m1", R"({"model":"m1"})"},
                                                                    {"m2", R"({"model":"m1"})"},
                                                                    {"m2", R"({"build":"b","model":"m2"})"},
                                                                    {"m1", R"({"model":"m1"})"}};
  {
    ResponseCache cache(path);
    for (std::size_t i = 0; i < sources.size(); ++i) {
      Completion c;
      c.content = fmt::format("answer {}", i);
      const std::string key = io::sha256_hex(fmt::format("key {}", i));
      cache.put_entry(ResponseCache::make_entry(key, fmt::format("r{}", i), c), sources[i].first,
                      sources[i].second);
    }
    cache.commit();
    for (std::size_t i = 0; i < sources.size(); ++i) {
      const auto hit = cache.get(io::sha256_hex(fmt::format("key {}", i)), fmt::format("r{}", i));
      ASSERT_TRUE(hit.has_value()) << i;
      EXPECT_EQ(hit->content, fmt::format("answer {}", i));
    }
  }
  const auto stored = read_entries_file(path);
  ASSERT_EQ(stored.size(), sources.size());
  for (std::size_t i = 0; i < sources.size(); ++i) {
    EXPECT_EQ(stored[i].fields[0], io::sha256_hex(fmt::format("key {}", i)));
    EXPECT_EQ(stored[i].fields[1], fmt::format("r{}", i));
    EXPECT_EQ(stored[i].fields[3], sources[i].first) << i;
    EXPECT_EQ(stored[i].fields[4], sources[i].second) << i;
    EXPECT_NE(stored[i].fields[6].find(fmt::format("answer {}", i)), std::string::npos) << i;
  }
}

// Entries are found by their key's first 64 bits; two keys that share them are told apart by the
// whole key: a lookup of the other key misses (never the wrong answer), and storing it replaces
// the first. A key that is not hex (cache_key always makes hex) still has a stable prefix.
TEST_F(RunnerTest, KeysSharingTheirFirst64BitsAreMissesNeverWrongAnswers) {
  const fs::path path = dir_ / "prefix" / "responses.cache";
  const std::string a = "0123456789abcdef" + std::string(48, 'a');
  const std::string b = "0123456789abcdef" + std::string(48, 'b');
  ASSERT_EQ(ResponseCache::key_prefix(a), ResponseCache::key_prefix(b));
  EXPECT_EQ(ResponseCache::key_prefix(a), 0x0123456789abcdefLL);
  EXPECT_EQ(ResponseCache::key_prefix("ffffffffffffffff"), -1);
  EXPECT_EQ(ResponseCache::key_prefix("not a hex key"), ResponseCache::key_prefix("not a hex key"));
  EXPECT_NE(ResponseCache::key_prefix("not a hex key"), ResponseCache::key_prefix("not a hex kez"));
  const io::Json identity = {{"model", "m"}};
  Completion ca, cb;
  ca.content = "A";
  cb.content = "B";
  ResponseCache cache(path);
  cache.put(a, "ra", "m", identity, ca);
  cache.commit();
  EXPECT_FALSE(cache.get(b, "ra").has_value());
  EXPECT_EQ(cache.rejected(), 0u);
  ASSERT_TRUE(cache.get(a, "ra").has_value());
  cache.put(b, "rb", "m", identity, cb);
  cache.commit();
  EXPECT_FALSE(cache.get(a, "ra").has_value());
  const auto hit = cache.get(b, "rb");
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->content, "B");
  EXPECT_EQ(cache.stats().entries, 1u);
  cache.put("not a hex key", "rc", "m", identity, ca);
  cache.commit();
  ASSERT_TRUE(cache.get("not a hex key", "rc").has_value());
  const auto snap = cache.key_snapshot(10);
  ASSERT_TRUE(snap.has_value());
  EXPECT_TRUE(snap->may_contain("not a hex key"));
  EXPECT_TRUE(snap->may_contain(b));
  EXPECT_FALSE(snap->may_contain("0123456789abcdee" + std::string(48, 'a')));
}

// Within one commit, among entries whose keys share their first 64 bits, the later replaces the
// earlier, as across commits; and every entry of a commit whose keys came in falling order is
// served. (A guard for any change of the order in which a commit writes its entries: writing them
// in key order was measured in the seventeenth round of issue 16, docs/performance.md.)
TEST_F(RunnerTest, WithinOneCommitTheLaterOfTwoKeysSharingTheirFirst64BitsWins) {
  const fs::path path = dir_ / "order" / "responses.cache";
  const io::Json identity = {{"model", "m"}};
  const auto completion = [](std::string content) {
    Completion c;
    c.content = std::move(content);
    return c;
  };
  ResponseCache cache(path);
  cache.set_batch_size(1000);
  // Three keys that share their first 64 bits, put among keys of other first bits, and a hundred
  // more whose keys come in falling order.
  const std::string shared = "8000000000000000";
  cache.put("f000000000000000" + std::string(48, '0'), "r-high", "m", identity, completion("high"));
  cache.put(shared + std::string(48, 'a'), "r-a", "m", identity, completion("A"));
  cache.put(shared + std::string(48, 'c'), "r-c", "m", identity, completion("C"));
  cache.put("0000000000000001" + std::string(48, '0'), "r-low", "m", identity, completion("low"));
  cache.put(shared + std::string(48, 'b'), "r-b", "m", identity, completion("B"));
  for (int i = 99; i >= 0; --i) {
    const io::Json body = {{"q", i}};
    cache.put(fmt::format("{:02x}", 0x20 + i) + std::string(62, 'e'), request_hash(body), "m", identity,
              completion(std::to_string(i)));
  }
  cache.commit();
  EXPECT_EQ(cache.stats().entries, 103u);
  const auto b = cache.get(shared + std::string(48, 'b'), "r-b");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->content, "B");
  EXPECT_FALSE(cache.get(shared + std::string(48, 'a'), "r-a").has_value());
  EXPECT_FALSE(cache.get(shared + std::string(48, 'c'), "r-c").has_value());
  const auto high = cache.get("f000000000000000" + std::string(48, '0'), "r-high");
  ASSERT_TRUE(high.has_value());
  EXPECT_EQ(high->content, "high");
  const auto low = cache.get("0000000000000001" + std::string(48, '0'), "r-low");
  ASSERT_TRUE(low.has_value());
  EXPECT_EQ(low->content, "low");
  for (int i = 0; i < 100; ++i) {
    const io::Json body = {{"q", i}};
    const auto hit = cache.get(fmt::format("{:02x}", 0x20 + i) + std::string(62, 'e'), request_hash(body));
    ASSERT_TRUE(hit.has_value()) << i;
    EXPECT_EQ(hit->content, std::to_string(i));
  }
  EXPECT_EQ(cache.rejected(), 0u);
}

// A closed cache's entries are served by the next connection to open it, and the store is its
// three files, nothing left beside them.
TEST_F(RunnerTest, AClosedCacheIsServedByTheNextOpen) {
  const fs::path path = dir_ / "log" / "responses.cache";
  const io::Json identity = {{"model", "m"}};
  const auto key = [&](int i) { return cache_key(identity, io::Json{{"q", i}}); };
  const auto req = [&](int i) { return request_hash(io::Json{{"q", i}}); };
  {
    ResponseCache cache(path);
    for (int i = 0; i < 50; ++i) {
      Completion c;
      c.content = std::to_string(i);
      cache.put(key(i), req(i), "m", identity, c);
    }
  }
  std::set<std::string> files;
  for (const auto& f : fs::directory_iterator(path.parent_path())) files.insert(f.path().filename().string());
  EXPECT_EQ(files,
            (std::set<std::string>{"responses.cache", "responses.cache.index", "responses.cache.lock"}));
  EXPECT_EQ(index_lines(path), 50u);
  ResponseCache cache(path);
  EXPECT_EQ(cache.stats().entries, 50u);
  for (int i = 0; i < 50; ++i) {
    const auto hit = cache.get(key(i), req(i));
    ASSERT_TRUE(hit.has_value()) << i;
    EXPECT_EQ(hit->content, std::to_string(i));
  }
}

// Puts 0 .. n-1 (identity {"model": model}, request {"q": i}, completion "answer i") and commits.
void fill_cache(ResponseCache& cache, int from, int to, const std::string& model = "m") {
  const io::Json identity = {{"model", model}};
  for (int i = from; i < to; ++i) {
    Completion c;
    c.content = "answer " + std::to_string(i);
    cache.put(cache_key(identity, io::Json{{"q", i}}), request_hash(io::Json{{"q", i}}), model, identity, c);
  }
  cache.commit();
}

// How many of from .. to-1 (filled by fill_cache) a new connection serves, with their answers.
int served(const fs::path& path, int from, int to, const std::string& model = "m") {
  ResponseCache cache(path);
  const io::Json identity = {{"model", model}};
  int n = 0;
  for (int i = from; i < to; ++i) {
    const auto hit = cache.get(cache_key(identity, io::Json{{"q", i}}), request_hash(io::Json{{"q", i}}));
    if (hit && hit->content == "answer " + std::to_string(i)) ++n;
  }
  return n;
}

// A process killed in the middle of a commit leaves part of a record at the end of the entries
// file and part of a line at the end of the index. What was committed before is served; the next
// commit cuts the torn line off and its entries are found after the torn record, also by an index
// rebuilt from the entries file.
TEST_F(RunnerTest, TheTornEndsOfAKilledCommitAreHarmless) {
  const fs::path path = dir_ / "torn" / "responses.cache";
  {
    ResponseCache cache(path);
    fill_cache(cache, 0, 20);
  }
  append_bytes(path, std::string("CNR1\x40\x00\x00\x00\x40\x00\x00\x00"
                                 "abc",
                                 15));
  append_bytes(index_of(path), std::string(13, '\x5a'));
  EXPECT_EQ(served(path, 0, 20), 20);
  {
    ResponseCache cache(path);
    fill_cache(cache, 20, 25);
  }
  EXPECT_EQ((fs::file_size(index_of(path)) - 16) % 32, 0u);
  EXPECT_EQ(index_lines(path), 20u + 20u + 5u);  // the entries, served()'s hits, the new entries
  EXPECT_EQ(served(path, 0, 25), 25);
  EXPECT_EQ(ResponseCache(path).stats().entries, 25u);
  // An index rebuilt from these entries passes over the torn record to the ones after it.
  fs::remove(index_of(path));
  EXPECT_EQ(served(path, 0, 25), 25);
}

// An index line that was damaged is skipped (its entry becomes a miss, never a wrong answer); a
// lost index is rebuilt from the entries file when the cache is opened (the hit counts, kept only
// in the index, start again from 0).
TEST_F(RunnerTest, ADamagedIndexLineIsSkippedAndALostIndexIsRebuilt) {
  const fs::path path = dir_ / "index" / "responses.cache";
  {
    ResponseCache cache(path);
    fill_cache(cache, 0, 10);
    ASSERT_TRUE(
        cache.get(cache_key(io::Json{{"model", "m"}}, io::Json{{"q", 1}}), request_hash(io::Json{{"q", 1}})));
  }  // the hit is written when the connection closes
  EXPECT_EQ(index_lines(path), 11u);
  overwrite(index_of(path), 16 + 32 * 4 + 9, "\x7f");  // the offset of entry 4
  EXPECT_EQ(served(path, 0, 10), 9);
  {
    ResponseCache cache(path);
    EXPECT_EQ(cache.stats().entries, 9u);
    EXPECT_EQ(cache.stats().hits, 10u);  // the hit above and the nine served() just counted
    EXPECT_EQ(cache.rejected(), 0u);
  }
  fs::remove(index_of(path));
  EXPECT_EQ(served(path, 0, 10), 10);
  EXPECT_EQ(index_lines(path), 10u + 10u);  // rebuilt, then the ten hits just served
}

// Every cached answer served adds a hit line to the index, run after run. A connection that reads
// an index of more than four lines per entry plus 65,536 rewrites it: one line per entry and one
// with the sum of its hits, the entries file untouched, every entry still served.
TEST_F(RunnerTest, AnIndexGrownWithHitsIsRewrittenWithTheirSums) {
  const fs::path path = dir_ / "hits" / "responses.cache";
  const io::Json identity = {{"model", "m"}};
  {
    ResponseCache cache(path);
    fill_cache(cache, 0, 10);
    cache.set_batch_size(100000);
    for (int round = 0; round < 7000; ++round) {
      for (int i = 0; i < 10; ++i)
        ASSERT_TRUE(cache.get(cache_key(identity, io::Json{{"q", i}}), request_hash(io::Json{{"q", i}})));
    }
  }
  EXPECT_EQ(index_lines(path), 10u + 70000u);
  const std::string entries = io::read_file(path);
  {
    ResponseCache cache(path);
    EXPECT_EQ(cache.stats().hits, 70000u);
    EXPECT_EQ(index_lines(path), 10u + 70000u);  // stats reads the index, it does not rewrite it
    ASSERT_TRUE(cache.get(cache_key(identity, io::Json{{"q", 3}}), request_hash(io::Json{{"q", 3}})));
    EXPECT_EQ(index_lines(path), 20u);  // rewritten when the lookup read it whole
  }
  EXPECT_EQ(io::read_file(path), entries);
  ResponseCache cache(path);
  EXPECT_EQ(cache.stats().hits, 70001u);
  EXPECT_EQ(cache.stats().entries, 10u);
  EXPECT_EQ(served(path, 0, 10), 10);
}

// A file at the cache's path that is not a numcheck cache is an error naming it, and is left as it was.
TEST_F(RunnerTest, AFileThatIsNotACacheIsAnErrorAndLeftAlone) {
  const fs::path path = dir_ / "other" / "responses.cache";
  fs::create_directories(path.parent_path());
  const std::string text("SQLite format 3\0 and more", 25);
  io::write_file_atomic(path, text);
  try {
    ResponseCache cache(path);
    FAIL() << "opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find(path.string() + " is not a numcheck response cache"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(io::read_file(path), text);
}

// Clearing one model's entries rewrites the store without them and keeps the others with their
// hits. A connection opened before the clear writes into the new files, not the old ones: its
// commit after the clear is served by a new connection.
TEST_F(RunnerTest, ClearingOneModelKeepsTheOthersAndAnOpenConnectionWritesOnIntoTheNewFiles) {
  const fs::path path = dir_ / "clear" / "responses.cache";
  ResponseCache before(path);
  fill_cache(before, 0, 3, "a");
  fill_cache(before, 0, 2, "b");
  ASSERT_TRUE(
      before.get(cache_key(io::Json{{"model", "b"}}, io::Json{{"q", 1}}), request_hash(io::Json{{"q", 1}})));
  before.commit();
  {
    ResponseCache cache(path);
    EXPECT_EQ(cache.clear("a"), 3u);
    const auto st = cache.stats();
    EXPECT_EQ(st.entries, 2u);
    EXPECT_EQ(st.hits, 1u);
    EXPECT_EQ(st.per_model, (std::vector<std::pair<std::string, std::uint64_t>>{{"b", 2}}));
  }
  EXPECT_EQ(served(path, 0, 3, "a"), 0);
  EXPECT_EQ(served(path, 0, 2, "b"), 2);
  fill_cache(before, 10, 12, "a");
  EXPECT_EQ(served(path, 10, 12, "a"), 2);
  EXPECT_EQ(ResponseCache(path).stats().entries, 4u);
  {
    ResponseCache cache(path);
    EXPECT_EQ(cache.clear(), 4u);
    EXPECT_EQ(cache.stats().entries, 0u);
  }
  EXPECT_EQ(fs::file_size(path), 16u);
  EXPECT_EQ(index_lines(path), 0u);
}

// Many connections writing at once (as separate as processes: each has its own files and lock)
// lose and repeat nothing: every entry is in the index once and served.
TEST_F(RunnerTest, ManyWritersAtOnceLoseAndRepeatNothing) {
  const fs::path path = dir_ / "writers" / "responses.cache";
  constexpr int kWriters = 4;
  constexpr int kEach = 300;
  std::vector<std::thread> threads;
  std::vector<std::string> errors(kWriters);
  std::atomic<int> ready{0};
  for (int t = 0; t < kWriters; ++t) {
    threads.emplace_back([&, t] {
      try {
        ResponseCache cache(path);
        cache.set_batch_size(1);  // a commit per entry: as many chances to collide as there can be
        ready.fetch_add(1);
        while (ready.load() < kWriters) std::this_thread::yield();
        fill_cache(cache, t * kEach, (t + 1) * kEach);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(t)] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& e : errors) EXPECT_EQ(e, "");
  EXPECT_EQ(index_lines(path), static_cast<std::uint64_t>(kWriters * kEach));
  EXPECT_EQ(read_entries_file(path).size(), static_cast<std::size_t>(kWriters * kEach));
  EXPECT_EQ(served(path, 0, kWriters * kEach), kWriters * kEach);
}

// A run with more answers than the writer holds before committing without its tick (2,048) caches
// every answer exactly once, and a second run is served all of them from the cache. (This checks
// that early commits lose and repeat nothing; when they happen is a matter of speed, measured in
// docs/performance.md, not tested.)
TEST_F(RunnerTest, ARunOfThousandsOfAnswersCachesEachOnce) {
  auto s = settings();
  s.use_cache = true;
  s.concurrency = 8;
  const auto items = make_items(2600);
  const auto first = run(items, s, "a");
  ASSERT_EQ(first.answered, 2600u);
  EXPECT_EQ(ResponseCache(s.cache_path).stats().entries, 2600u);
  const auto before = server_->post_count();
  const auto second = run(items, s, "b");
  EXPECT_EQ(second.answered, 2600u);
  EXPECT_EQ(second.from_cache, 2600u);
  EXPECT_EQ(server_->post_count(), before);
  EXPECT_EQ(records(dir_ / "b" / "responses.jsonl").size(), 2600u);
}

// With more cache entries than the snapshot's bound for the session's requests (60 > 16 x 3), the
// session takes no snapshot and looks every request up: the two hits among sixty entries are
// served, the new one is asked. (Which path a session takes changes only its cost; the bound is
// tested above, this checks that the path without a snapshot still serves.)
TEST_F(RunnerTest, ALargeCacheStillServesItsHits) {
  auto s = settings();
  s.use_cache = true;
  const auto items = make_items(60);
  ASSERT_EQ(run(items, s, "a").answered, 60u);
  const std::vector<WorkItem> few = {items[3], items[47], make_items(61)[60]};
  const auto before = server_->post_count();
  const auto sum = run(few, s, "b");
  EXPECT_EQ(sum.answered, 3u);
  EXPECT_EQ(sum.from_cache, 2u);
  EXPECT_EQ(server_->post_count() - before, 1u);
}

TEST_F(RunnerTest, TwoRunsSharingTheCacheAtOnceBothComplete) {
  auto s = settings();
  s.use_cache = true;
  s.concurrency = 4;
  const auto items = make_items(150);
  RunSummary s1, s2;
  std::thread t1([&] { s1 = run(items, s, "x"); });
  std::thread t2([&] { s2 = run(items, s, "y"); });
  t1.join();
  t2.join();
  EXPECT_EQ(s1.unanswered + s2.unanswered, 0u);
  EXPECT_EQ(s1.answered + s2.answered, 300u);
}

// A server that sends its headers, then trickles the body, is abandoned after low_speed_time and
// the attempt retried, instead of holding the prompt until the timeout.
TEST_F(RunnerTest, AStalledResponseIsAbandonedAndRetried) {
  server_->set_faults({FaultRule{"q-000", FaultKind::kTrickle, 1}});
  HttpConfig cfg;
  cfg.endpoints = {server_->base_url()};
  cfg.model = "test-model";
  cfg.timeout = std::chrono::milliseconds(60000);
  cfg.low_speed_time = std::chrono::milliseconds(1000);
  auto b = make_http_backend(cfg);
  const auto sum = run_items(make_items(2), settings(), *b, dir_ / "r");
  EXPECT_EQ(sum.answered, 2u);
  std::map<std::string, io::Json> by_id;
  for (const auto& r : records(dir_ / "r" / "responses.jsonl")) by_id[r["prompt_id"]] = r;
  ASSERT_EQ(by_id["q-000"]["attempts"], 2);
  EXPECT_NE(by_id["q-000"]["attempt_errors"][0]["error"].get<std::string>().find("stalled server"),
            std::string::npos)
      << by_id["q-000"]["attempt_errors"][0];
}

// A server echoing the key (in /v1/models, /props and a ~500-byte error message that the key
// straddles the cut of) never gets it, or a piece of it, into any file or the cache.
TEST_F(RunnerTest, AKeyEchoedByTheServerIsMaskedEverywhere) {
  const std::string key = "sk-LEAKCHECK-0123456789abcdefghij";
  testing::ServerOptions opts;
  opts.echo_key = true;
  TestServer leaky(opts, SolveFn{});
  leaky.start();
  leaky.set_faults({FaultRule{"q-001", FaultKind::kEchoKey, -1}});
  auto s = settings();
  s.use_cache = true;
  HttpConfig cfg;
  cfg.endpoints = {leaky.base_url()};
  cfg.model = "test-model";
  cfg.api_key = key;
  auto b = make_http_backend(cfg);
  const auto sum = run_items(make_items(3), s, *b, dir_ / "r");
  leaky.stop();
  EXPECT_EQ(sum.answered, 2u);
  EXPECT_EQ(sum.failed, 1u);
  EXPECT_EQ(leaky.last_headers()["authorization"], "Bearer " + key);
  const std::string run_json = io::read_file(dir_ / "r" / "run.json");
  EXPECT_NE(run_json.find("[redacted]"), std::string::npos);  // the echo was there, masked
  for (const fs::path& f : {dir_ / "r" / "run.json", dir_ / "r" / "responses.jsonl",
                            dir_ / "r" / "errors.jsonl", s.cache_path, index_of(s.cache_path)}) {
    if (!fs::exists(f)) continue;
    const std::string text = io::read_file(f);
    EXPECT_EQ(text.find("sk-LEAKCH"), std::string::npos) << f;
    EXPECT_EQ(text.find("LEAKCHECK"), std::string::npos) << f;
  }
}

// The text with JSON string escapes decoded (backslash-slash and backslash-u escapes of ASCII), so
// that a key spelt with escapes in a file is found too.
std::string unescaped(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '/') {
      out += '/';
      ++i;
    } else if (text[i] == '\\' && i + 5 < text.size() && text[i + 1] == 'u' &&
               text.compare(i + 2, 2, "00") == 0 &&
               std::isxdigit(static_cast<unsigned char>(text[i + 4])) != 0 &&
               std::isxdigit(static_cast<unsigned char>(text[i + 5])) != 0) {
      out += static_cast<char>(std::stoi(text.substr(i + 4, 2), nullptr, 16));
      i += 5;
    } else {
      out += text[i];
    }
  }
  return out;
}

// A server whose JSON encoder escapes the key it echoes ("/" as backslash-slash, PHP's default, or
// every character as a backslash-u escape), in an error message and in an answer's content and
// reasoning: neither the key nor its first 24 characters reach any file of the run or the cache.
TEST_F(RunnerTest, AKeyEchoedWithJsonEscapesIsMaskedEverywhere) {
  const std::string key = "sk-proj/LEAKCHECK/0123456789abcdefghij";
  TestServer leaky(testing::ServerOptions{}, SolveFn{});
  leaky.start();
  leaky.set_faults({FaultRule{"q-001", FaultKind::kEchoKeyEscaped, -1},
                    FaultRule{"q-002", FaultKind::kEchoKeyInAnswer, -1}});
  auto s = settings();
  s.use_cache = true;
  s.stop_after_same_errors = 0;
  HttpConfig cfg;
  cfg.endpoints = {leaky.base_url()};
  cfg.model = "test-model";
  cfg.api_key = key;
  auto b = make_http_backend(cfg);
  const auto sum = run_items(make_items(3), s, *b, dir_ / "r");
  leaky.stop();
  EXPECT_EQ(sum.answered, 2u);
  EXPECT_EQ(sum.failed, 1u);
  std::map<std::string, io::Json> by_id;
  for (const auto& r : records(dir_ / "r" / "responses.jsonl")) by_id[r["prompt_id"]] = r;
  EXPECT_EQ(by_id["q-002"]["response"], "Your key is [redacted], or [redacted]. FINAL: 1");
  EXPECT_EQ(by_id["q-002"]["reasoning"], "Your key is [redacted], or [redacted]. FINAL: 1");
  const auto errors = records(dir_ / "r" / "errors.jsonl");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0]["error"].get<std::string>().find("key=[redacted] again=[redacted]"), std::string::npos)
      << errors[0]["error"];
  std::size_t files = 0;
  for (const auto& f : fs::recursive_directory_iterator(dir_)) {
    if (!f.is_regular_file()) continue;
    ++files;
    const std::string text = io::read_file(f.path());
    for (const std::string& t : {text, unescaped(text)}) {
      EXPECT_EQ(t.find("LEAKCHECK"), std::string::npos) << f.path();
      EXPECT_EQ(t.find(key.substr(0, 24)), std::string::npos) << f.path();
    }
  }
  EXPECT_GE(files, 3u);  // run.json, responses.jsonl, errors.jsonl and the cache's files
}

TEST_F(RunnerTest, TheApiKeyIsSentButNeverWritten) {
  const std::string key = "sk-test-5f1d2c3b4a";
  auto s = settings();
  server_->set_faults({FaultRule{"q-001", FaultKind::k500, 1}});
  auto b = backend({"http://user:pw@127.0.0.1:" + std::to_string(server_->port()) + "/v1"}, 10, key);
  const auto sum = run_items(make_items(2), s, *b, dir_ / "r");
  EXPECT_EQ(sum.answered, 2u);
  EXPECT_EQ(server_->last_headers()["authorization"], "Bearer " + key);
  for (const char* f : {"run.json", "responses.jsonl", "errors.jsonl"}) {
    if (!fs::exists(dir_ / "r" / f)) continue;
    const std::string text = io::read_file(dir_ / "r" / f);
    EXPECT_EQ(text.find(key), std::string::npos) << f;
    EXPECT_EQ(text.find("user:pw"), std::string::npos) << f;
  }
}

TEST_F(RunnerTest, BadInputsAreErrors) {
  auto s = settings();
  auto items = make_items(2);
  items[1].item_id = items[0].item_id;
  EXPECT_THROW((void)run(items, s, "dup"), Error);
  items = make_items(1);
  items[0].fields["response"] = "x";
  EXPECT_THROW((void)run(items, s, "reserved"), Error);
  s.extra_body = {{"temperature", 1}};
  EXPECT_THROW((void)run(make_items(1), s, "extra"), Error);
  // An unreachable endpoint fails the probe with a network error naming it.
  TestServer gone(testing::ServerOptions{}, SolveFn{});
  const int port = gone.start();
  gone.stop();
  auto b = backend({fmt::format("http://127.0.0.1:{}/v1", port)}, 2);
  try {
    (void)run_items(make_items(1), settings(), *b, dir_ / "gone");
    ADD_FAILURE() << "no error for an unreachable endpoint";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNetwork);
    EXPECT_NE(std::string(e.what()).find(std::to_string(port)), std::string::npos);
  }
}

// Answered items are recorded after the freed slot is refilled (so that, with one request in flight,
// recording overlaps the next request): when starting the next item throws, the answers already in
// are still recorded before the session fails. Here the sixth check_answer call (the cache hit
// served while refilling after the fifth fresh answer) throws.
TEST_F(RunnerTest, AnswersAreRecordedWhenRefillingTheirSlotsFails) {
  auto s = settings();
  s.use_cache = true;
  s.concurrency = 1;
  (void)run(make_items(1), s, "fill");  // q-000 is now cached
  std::vector<WorkItem> items = make_items(5, "p");
  items.push_back(make_items(1).front());
  // The check throws on q-000's cached answer, which the runner checks when it makes q-000's job:
  // while p-004 is in flight (the job is made ahead) or when p-004's answer frees the slot.
  std::atomic<int> calls{0};
  s.check_answer = [&](const Completion& c) -> std::string {
    ++calls;
    if (c.content.find("q-000") != std::string::npos)
      throw std::runtime_error("check failed while refilling");
    return "";
  };
  EXPECT_THROW((void)run(items, s, "r"), std::runtime_error);
  EXPECT_EQ(calls.load(), 6);
  std::set<std::string> ids;
  for (const auto& r : records(dir_ / "r" / "responses.jsonl")) ids.insert(r["prompt_id"].get<std::string>());
  EXPECT_EQ(ids, (std::set<std::string>{"p-000", "p-001", "p-002", "p-003", "p-004"}));
}

// A backend with no server: every attempt answers from a table (awkward values on purpose), the
// first attempt of "a-000" fails once (so its record has an attempt error) and "a-001" fails for
// good (an error record). Used to compare the records' bytes with the DOM's.
class Canned : public Backend {
 public:
  [[nodiscard]] std::string kind() const override { return "openai"; }
  [[nodiscard]] bool simulated() const override { return false; }
  [[nodiscard]] std::vector<std::string> endpoints() const override { return {"http://canned/v1"}; }
  [[nodiscard]] ServerInfo probe() override {
    ServerInfo info;
    info.model = "canned \xce\xbb";
    info.identity = {{"model", info.model}, {"build", "b\x01"}};
    info.info = io::OrderedJson::object();
    return info;
  }
  [[nodiscard]] Api api() const override { return Api::kChat; }
  [[nodiscard]] std::unique_ptr<Session> open_session() override {
    struct S : Session {
      Canned* owner;
      Attempt send(const Request& r, std::size_t) override {
        Attempt a;
        a.latency = std::chrono::milliseconds(7);
        if (r.item_id == "a-001") {
          a.status = Attempt::Status::kFatal;
          a.http_status = 404;
          a.error = "HTTP 404: no such \"model\"\x01\xff";
          return a;
        }
        if (r.item_id == "a-000" && !owner->failed_once.exchange(true)) {
          a.status = Attempt::Status::kRetryable;
          a.error = "connection reset \\ here";
          return a;
        }
        a.status = Attempt::Status::kOk;
        Completion& c = a.completion;
        c.content = "FINAL: 2.75 L\n\ttab \"quoted\" \\ \x01\x1f \xce\xbb broken \xff\xfe end " + r.item_id;
        if (r.item_id != "a-002") c.reasoning = std::string("think\r\n\xe2\x82");
        c.finish_reason = r.item_id == "a-003" ? "" : "length";
        c.usage = io::Json::parse(
            R"({"prompt_tokens":12,"completion_tokens":3,"neg":-4,"big":18446744073709551615})");
        if (r.item_id != "a-003")
          c.timings = io::Json::parse(R"({"prompt_ms":1.25,"per_s":-0.5e3,"x":[1,2.5,null,"s"]})");
        c.model = "canned \xce\xbb";
        if (r.item_id == "a-002") c.system_fingerprint = "fp\x7f";
        if (r.item_id == "a-004") c.simulated_fault = "none";
        return a;
      }
    };
    auto s = std::make_unique<S>();
    s->owner = this;
    return s;
  }
  std::atomic<bool> failed_once{false};
};

// Every record line is written directly (no DOM per record): its bytes must be nlohmann's for the
// same value (to_line of the parsed line gives the line back), its members in the documented order,
// invalid UTF-8 replaced as to_line replaces it; the cache's entries read back to the same record.
TEST_F(RunnerTest, RecordLinesAreTheDomsBytesForAwkwardValues) {
  std::vector<WorkItem> items = make_items(6, "a");
  items[0].fields = io::OrderedJson::parse(R"({"base_id":"b\"1","meta":{"z":[1,2.5,null],"a":-3},"n":0})");
  items[1].fields["quote\"key\x01"] = "v\xff";
  auto s = settings();
  s.use_cache = true;
  s.concurrency = 2;
  s.retry.retries = 2;
  Canned b;
  const auto sum = run_items(items, s, b, dir_ / "first");
  EXPECT_EQ(sum.answered, 5u);
  EXPECT_EQ(sum.failed, 1u);
  const std::vector<std::string> order = {
      "prompt_id", "base_id",        "meta",          "n",          "request_index", "endpoint", "request",
      "response",  "reasoning",      "finish_reason", "usage",      "timings",       "model",    "latency_ms",
      "attempts",  "attempt_errors", "cached",        "started_at", "completed_at",  "session"};
  const auto lines_of = [](const fs::path& p) {
    std::vector<std::string> lines;
    io::for_each_line(p, [&](const io::Line& l) { lines.emplace_back(l.text); });
    return lines;
  };
  const auto check_lines = [&](const fs::path& p) {
    const auto lines = lines_of(p);
    for (const auto& line : lines) EXPECT_EQ(io::to_line(io::parse_ordered_json(line, "line")), line);
    return lines.size();
  };
  EXPECT_EQ(check_lines(dir_ / "first" / "responses.jsonl"), 5u);
  EXPECT_EQ(check_lines(dir_ / "first" / "errors.jsonl"), 1u);
  std::map<std::string, io::OrderedJson> first;
  for (const auto& line : lines_of(dir_ / "first" / "responses.jsonl")) {
    const auto j = io::parse_ordered_json(line, "line");
    first[j["prompt_id"].get<std::string>()] = j;
  }
  const io::OrderedJson& a0 = first.at("a-000");
  std::vector<std::string> keys;
  for (auto it = a0.begin(); it != a0.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, order);
  EXPECT_EQ(a0["response"],
            "FINAL: 2.75 L\n\ttab \"quoted\" \\ \x01\x1f \xce\xbb broken \xef\xbf\xbd\xef\xbf\xbd end a-000");
  EXPECT_EQ(a0["meta"]["z"][1], 2.5);
  EXPECT_EQ(a0["usage"]["big"], 18446744073709551615ULL);
  EXPECT_EQ(a0["attempts"], 2);
  ASSERT_EQ(a0["attempt_errors"].size(), 1u);
  EXPECT_EQ(a0["attempt_errors"][0]["error"], "connection reset \\ here");
  EXPECT_EQ(a0["endpoint"], "http://canned/v1");
  EXPECT_EQ(first.at("a-002")["system_fingerprint"], "fp\x7f");
  EXPECT_FALSE(first.at("a-002").contains("reasoning"));
  EXPECT_FALSE(first.at("a-003").contains("timings"));
  EXPECT_EQ(first.at("a-004")["simulated_fault"], "none");
  const auto err = io::parse_ordered_json(lines_of(dir_ / "first" / "errors.jsonl").at(0), "e");
  EXPECT_EQ(err["quote\"key\x01"], "v\xef\xbf\xbd");
  EXPECT_EQ(err["http_status"], 404);
  EXPECT_EQ(err["error"], "HTTP 404: no such \"model\"\x01\xef\xbf\xbd");

  // A second run answered from the cache: the same answers, endpoint null, cached true.
  const auto again = run_items(items, s, b, dir_ / "second");
  EXPECT_EQ(again.from_cache, 5u);
  EXPECT_EQ(check_lines(dir_ / "second" / "responses.jsonl"), 5u);
  for (const auto& line : lines_of(dir_ / "second" / "responses.jsonl")) {
    const auto j = io::parse_ordered_json(line, "line");
    const io::OrderedJson& f = first.at(j["prompt_id"].get<std::string>());
    EXPECT_TRUE(j["endpoint"].is_null());
    EXPECT_EQ(j["cached"], true);
    for (const char* k :
         {"response", "reasoning", "finish_reason", "usage", "timings", "model", "system_fingerprint"}) {
      EXPECT_EQ(j.contains(k), f.contains(k)) << k;
      if (f.contains(k)) {
        EXPECT_EQ(j[k], f[k]) << k;
      }
    }
  }
}

}  // namespace
}  // namespace numcheck::llm

namespace numcheck::llm {
namespace {

// The bodies made from the serialized template are the bytes the JSON object gives, for every
// kind of prompt and setting (they are sent, recorded and hashed into the cache key: a changed
// byte would make every cached answer a miss).
TEST(RequestBodies, TemplatedBodiesAreTheDomsBytes) {
  const std::vector<std::string> prompts = {"How many litres?",
                                            "",
                                            "quote \" backslash \\ slash / tab\t newline\n cr\r",
                                            "ctrl \x01\x1f del \x7f",
                                            "\xce\xbb \xe2\x82\xac \xf0\x9f\x98\x80",
                                            "broken \xff\xfe utf-8 \xe2\x82",
                                            "\x01numcheck request body prompt\x02",
                                            std::string(5000, 'x')};
  std::vector<RunSettings> variants(6);
  variants[1].system_prompt = "Answer with FINAL: \"x\"";
  variants[2].extra_body = io::Json::parse(R"({"cache_prompt":false,"a":[1,2.5,null],"zz":{"k":"v"}})");
  variants[3].sampling.frequency_penalty = 0.6;
  variants[3].sampling.temperature = 0.7;
  variants[3].sampling.seed = 18446744073709551615ULL;
  variants[4].extra_body = io::Json::parse(R"({"note":"\u0001numcheck request body prompt\u0002"})");
  variants[5].system_prompt = "";
  for (const Api api : {Api::kChat, Api::kCompletions}) {
    for (const RunSettings& settings : variants) {
      const RequestBodies bodies(settings, "model \xce\xbb", api);
      EXPECT_EQ(bodies.templated(), api == Api::kChat && &settings != &variants[4]);
      for (const std::string& prompt : prompts) {
        for (int own = 0; own < 3; ++own) {
          WorkItem item;
          item.prompt = prompt;
          if (own == 1) item.sampling.seed = 7;
          if (own == 2) item.system_prompt = "item's own";
          std::string fast;
          bodies.append(fast, item);
          std::string dom;
          io::append_json(dom, build_request_body(item, settings, "model \xce\xbb", api));
          ASSERT_EQ(fast, dom) << prompt;
          ASSERT_EQ(fast, io::to_line(build_request_body(item, settings, "model \xce\xbb", api)));
        }
      }
    }
  }
}

}  // namespace
}  // namespace numcheck::llm

namespace numcheck::llm {
namespace {

// Which client carries a run (docs/runner.md "HTTP clients"): numcheck's own for plain http://,
// A proxy named in the environment carries the requests (libcurl honours it): an unreachable one
// makes the probe fail, as it must.
TEST_F(RunnerTest, AProxyInTheEnvironmentIsUsed) {
  ::setenv("http_proxy", "http://127.0.0.1:1", 1);
  try {
    (void)backend({}, 5)->probe();
    ADD_FAILURE() << "the proxy was not used";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNetwork);
  }
  ::unsetenv("http_proxy");
  EXPECT_EQ(backend({}, 5)->probe().info["http_client"], "libcurl");
}

}  // namespace
}  // namespace numcheck::llm
