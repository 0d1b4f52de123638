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
#include "temp_dir.hpp"
#include "test_server.hpp"

namespace numcheck::llm {
namespace {

namespace fs = std::filesystem;
using testing::FaultKind;
using testing::FaultRule;
using testing::TestServer;

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
    dir_ = testing::fresh_temp_dir("llm", "run");
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
    s.cache_path = dir_ / "cache" / "responses.sqlite3";
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

// A cache that cannot be opened (here its folder cannot be made) never stops a run: every item is
// answered by the server, nothing is cached, and the summary says why (cache_warning).
TEST_F(RunnerTest, ACacheThatCannotBeOpenedIsAWarningAndTheRunGoesOn) {
  io::write_file_atomic(dir_ / "not-a-folder", "x");
  RunSettings s = settings();
  s.use_cache = true;
  s.cache_path = dir_ / "not-a-folder" / "cache" / "responses.sqlite3";
  const std::size_t posts_before = server_->post_count();
  const RunSummary sum = run(make_items(5), s);
  EXPECT_EQ(sum.answered, 5u);
  EXPECT_EQ(sum.unanswered, 0u);
  EXPECT_EQ(server_->post_count() - posts_before, 5u);
  EXPECT_NE(
      sum.cache_warning.find("cannot create the cache folder " + (dir_ / "not-a-folder" / "cache").string()),
      std::string::npos)
      << sum.cache_warning;
  EXPECT_EQ(records(dir_ / "r" / "responses.jsonl").size(), 5u);
  s.cache_path = dir_ / "cache" / "responses.sqlite3";  // a usable one: no warning
  EXPECT_EQ(run(make_items(5), s, "r2").cache_warning, "");
}

// A cache opened ahead by the caller (RunSettings::cache_ahead) is the run's first connection when
// it is for the run's cache_path: taken once, the answers stored through it. One for another path
// is left alone (the run opens its own), and one whose opening failed is the run's cache_warning.
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

  const fs::path other = dir_ / "other-cache" / "responses.sqlite3";
  s.cache_ahead = open_cache_ahead(other);
  EXPECT_EQ(run(make_items(4), s, "r3").from_cache, 4u);
  auto untouched = s.cache_ahead->take();  // not the run's path: never taken
  ASSERT_NE(untouched, nullptr);
  EXPECT_EQ(untouched->stats().entries, 0u);  // nothing went into it

  io::write_file_atomic(dir_ / "not-a-folder", "x");
  s.cache_path = dir_ / "not-a-folder" / "cache" / "responses.sqlite3";
  s.cache_ahead = open_cache_ahead(s.cache_path);
  const RunSummary failed = run(make_items(2), s, "r4");  // its opening failed: the run goes on
  EXPECT_EQ(failed.answered, 2u);
  EXPECT_NE(failed.cache_warning.find("cannot create the cache folder"), std::string::npos)
      << failed.cache_warning;
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

// SQL run on a SQLite database file directly (what a hand edit does).
void run_sql(const fs::path& path, const std::string& statements) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, statements.c_str(), nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err != nullptr ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

// A cache entry must belong to its request: rows whose completions were changed by hand are misses
// (asked again, counted), never served.
TEST_F(RunnerTest, ATamperedCacheEntryIsAMissAndReported) {
  auto s = settings();
  s.use_cache = true;
  const auto items = make_items(4);
  ASSERT_EQ(run(items, s, "a").answered, 4u);
  run_sql(s.cache_path,
          "UPDATE entries SET completion = replace(completion, 'You asked', 'You said') WHERE rowid IN "
          "(SELECT rowid FROM entries ORDER BY rowid LIMIT 2)");
  const auto before = server_->post_count();
  const auto sum = run(items, s, "b");
  EXPECT_EQ(sum.answered, 4u);
  EXPECT_EQ(sum.from_cache, 2u);
  EXPECT_EQ(sum.cache_rejected, 2u);
  EXPECT_EQ(server_->post_count() - before, 2u);
  for (const auto& r : records(dir_ / "b" / "responses.jsonl"))
    EXPECT_EQ(r["response"], "You asked: " + r["request"]["messages"][0]["content"].get<std::string>());
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

// A session looks every request up: the two hits among sixty entries are served, the new one is asked.
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
  for (const fs::path& f :
       {dir_ / "r" / "run.json", dir_ / "r" / "responses.jsonl", dir_ / "r" / "errors.jsonl", s.cache_path,
        fs::path(s.cache_path.string() + "-wal")}) {
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
  s.check_answer = [&](const Request&, const Completion& c) -> std::string {
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
