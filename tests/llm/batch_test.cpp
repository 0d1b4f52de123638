// Batch runs (llm/batch.hpp): exported request lines against OpenAI's published schema for batch
// input lines (tests/llm/data/openai_batch_request.schema.json) and against what run_items sends;
// the import of batch output files: runner-shaped records, idempotent bytes, and every refused or
// reported fault (unknown custom_id, changed body hash, duplicate answer, broken JSON line,
// missing prompt, error lines, a retried batch's output, a folder holding a live run).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "io/sha256.hpp"
#include "llm/batch.hpp"
#include "llm/http_backend.hpp"
#include "llm/runner.hpp"
#include "temp_dir.hpp"
#include "test_server.hpp"

namespace numcheck::llm {
namespace {

namespace fs = std::filesystem;

std::vector<WorkItem> batch_items(int n) {
  std::vector<WorkItem> items;
  for (int i = 0; i < n; ++i) {
    WorkItem it;
    it.item_id = fmt::format("q-{:03}", i);
    it.prompt = fmt::format("Question {}: how many \"apples\"?\n", i);
    it.fields["n"] = i;
    items.push_back(std::move(it));
  }
  return items;
}

RunSettings settings() {
  RunSettings s;
  s.model = "test-model";
  s.progress = ProgressMode::kNone;
  s.use_cache = false;
  s.fsync = false;
  return s;
}

std::vector<io::Json> lines_of(const std::string& text) {
  std::vector<io::Json> out;
  (void)io::read_jsonl_text<io::Json>(text, "t",
                                      [&](const io::Record& r, std::size_t) { out.push_back(r.json()); });
  return out;
}

std::string type_of(const io::Json& v) {
  if (v.is_string()) return "string";
  if (v.is_object()) return "object";
  if (v.is_array()) return "array";
  if (v.is_number()) return "number";
  if (v.is_boolean()) return "boolean";
  return "null";
}

// Checks one exported line against the schema file; returns the problems.
std::vector<std::string> schema_problems(const io::Json& schema, const io::Json& line) {
  std::vector<std::string> p;
  for (const auto& [k, t] : schema["required"].items()) {
    if (!line.contains(k)) {
      p.push_back("missing " + k);
    } else if (type_of(line[k]) != t.get<std::string>()) {
      p.push_back(k + " is not a " + t.get<std::string>());
    }
  }
  if (!schema["additional_properties"].get<bool>()) {
    for (const auto& [k, v] : line.items())
      if (!schema["required"].contains(k)) p.push_back("extra field " + k);
  }
  if (!p.empty()) return p;
  auto in = [](const io::Json& list, const io::Json& v) {
    for (const auto& x : list)
      if (x == v) return true;
    return false;
  };
  if (!in(schema["method"], line["method"])) p.push_back("method " + io::to_line(line["method"]));
  if (!in(schema["url"], line["url"])) p.push_back("url " + io::to_line(line["url"]));
  const std::string url = line["url"].get<std::string>();
  if (!schema["body_required"].contains(url)) return p;
  for (const auto& [k, t] : schema["body_required"][url].items()) {
    if (!line["body"].contains(k) || type_of(line["body"][k]) != t.get<std::string>())
      p.push_back("body." + k);
  }
  if (line["body"].contains("messages")) {
    for (const auto& m : line["body"]["messages"]) {
      for (const auto& [k, t] : schema["message_required"].items())
        if (!m.contains(k) || type_of(m[k]) != t.get<std::string>()) p.push_back("message." + k);
      if (!in(schema["message_roles"], m["role"])) p.push_back("message.role");
    }
  }
  return p;
}

TEST(BatchExport, LinesFollowOpenAIsSchemaForBatchInputLines) {
  const io::Json schema =
      io::read_json_file(fs::path(NUMCHECK_SOURCE_DIR) / "tests/llm/data/openai_batch_request.schema.json");
  auto items = batch_items(20);
  items[3].system_prompt = "Answer briefly.";
  items[4].sampling.temperature = 0.7;
  items[5].sampling.seed = 5;
  for (const Api api : {Api::kChat, Api::kCompletions}) {
    RunSettings s = settings();
    s.system_prompt = "You are careful.";
    s.extra_body = {{"cache_prompt", false}};
    const BatchRequests r = batch_requests(items, s, api);
    const auto lines = lines_of(r.lines);
    ASSERT_EQ(lines.size(), items.size());
    std::set<std::string> ids;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const auto problems = schema_problems(schema, lines[i]);
      EXPECT_TRUE(problems.empty()) << io::to_line(lines[i]) << ": " << problems.front();
      ids.insert(lines[i]["custom_id"].get<std::string>());
      EXPECT_EQ(lines[i]["custom_id"], r.custom_ids[i]);
      EXPECT_EQ(lines[i]["url"], api == Api::kChat ? "/v1/chat/completions" : "/v1/completions");
      EXPECT_EQ(lines[i]["body"]["model"], "test-model");
    }
    EXPECT_EQ(ids.size(), items.size());  // unique
  }
  // What the checker catches: a line without a body, a GET, a body without messages.
  io::Json bad = lines_of(batch_requests(items, settings(), Api::kChat).lines)[0];
  bad["method"] = "GET";
  EXPECT_FALSE(schema_problems(schema, bad).empty());
  bad["method"] = "POST";
  bad["body"].erase("messages");
  EXPECT_FALSE(schema_problems(schema, bad).empty());
  bad.erase("body");
  EXPECT_FALSE(schema_problems(schema, bad).empty());
}

TEST(BatchExport, NeedsAModelAndUniqueIds) {
  RunSettings s = settings();
  s.model.clear();
  EXPECT_THROW((void)batch_requests(batch_items(2), s, Api::kChat), Error);
  auto items = batch_items(2);
  items[1].item_id = items[0].item_id;
  EXPECT_THROW((void)batch_requests(items, settings(), Api::kChat), Error);
}

TEST(BatchExport, BodiesAreTheBytesTheRunnerSendsAndRecords) {
  testing::TestServer server(testing::ServerOptions{}, SolveFn{});
  server.start();
  const fs::path dir = testing::fresh_temp_dir("batch", "sent");
  auto items = batch_items(12);
  items[2].system_prompt = "Be exact.";
  items[7].sampling.max_tokens = 64;
  RunSettings s = settings();
  s.extra_body = {{"cache_prompt", false}};
  HttpConfig cfg;
  cfg.endpoints = {server.base_url()};
  cfg.model = "test-model";
  auto backend = make_http_backend(cfg);
  const RunSummary sum = run_items(items, s, *backend, dir / "live");
  ASSERT_EQ(sum.answered, items.size());
  const BatchRequests r = batch_requests(items, s, Api::kChat);
  const auto lines = lines_of(r.lines);
  std::multiset<std::string> sent, exported;
  for (const auto& b : server.requests()) sent.insert(io::to_line(b));
  for (const auto& l : lines) exported.insert(io::to_line(l["body"]));
  EXPECT_EQ(sent, exported);
  // Byte for byte: the record's "request" bytes are the exported "body" bytes.
  std::map<std::string, std::string> recorded;
  io::for_each_line(dir / "live" / "responses.jsonl", [&](const io::Line& l) {
    const std::string text(l.text);
    const io::Json j = io::Json::parse(text);
    const auto at = text.find("\"request\":") + 10;
    const auto end = text.find(",\"response\":");
    recorded[j["prompt_id"].get<std::string>()] = text.substr(at, end - at);
  });
  std::size_t n = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string& line = r.lines;
    const auto start = line.find(fmt::format("\"custom_id\":\"{}", items[i].item_id));
    ASSERT_NE(start, std::string::npos);
    const auto b = line.find("\"body\":", start) + 7;
    const auto e = line.find('\n', start) - 1;  // before the line's closing brace
    EXPECT_EQ(line.substr(b, e - b), recorded[items[i].item_id]) << items[i].item_id;
    ++n;
  }
  EXPECT_EQ(n, items.size());
  server.stop();
  fs::remove_all(dir);
}

// A chat completion as OpenAI and vLLM return it.
io::OrderedJson completion(const std::string& content, const std::string& model = "served-model") {
  io::OrderedJson b = io::OrderedJson::object();
  b["id"] = "chatcmpl-1";
  b["object"] = "chat.completion";
  b["created"] = 1765065600;
  b["model"] = model;
  b["choices"] = io::OrderedJson::array({{{"index", 0},
                                          {"message", {{"role", "assistant"}, {"content", content}}},
                                          {"finish_reason", "stop"}}});
  b["usage"] = {{"prompt_tokens", 10}, {"completion_tokens", 3}, {"total_tokens", 13}};
  return b;
}

std::string answer_line(const std::string& custom_id, const io::OrderedJson& body, int status = 200) {
  io::OrderedJson o = io::OrderedJson::object();
  o["id"] = "batch_req_" + custom_id;
  o["custom_id"] = custom_id;
  o["response"] = {{"status_code", status}, {"request_id", "req-" + custom_id}, {"body", body}};
  o["error"] = nullptr;
  return io::to_line(o) + "\n";
}

std::string error_line(const std::string& custom_id, const std::string& code, const std::string& message) {
  io::OrderedJson o = io::OrderedJson::object();
  o["id"] = "batch_req_" + custom_id;
  o["custom_id"] = custom_id;
  o["response"] = nullptr;
  o["error"] = {{"code", code}, {"message", message}};
  return io::to_line(o) + "\n";
}

class BatchImportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::fresh_temp_dir("batch", "import");
    items_ = batch_items(5);
    ids_ = batch_requests(items_, settings(), Api::kChat).custom_ids;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& text) const {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  std::string all_answers() const {
    std::string t;
    for (std::size_t i = 0; i < ids_.size(); ++i)
      t += answer_line(ids_[i], completion(fmt::format("FINAL: {}", i)));
    return t;
  }
  BatchImport import(const std::vector<fs::path>& files, const std::string& out = "run") const {
    RunSettings s = settings();
    s.binding["plan"] = "x";
    return import_batch(items_, s, Api::kChat, files, io::OrderedJson::object(), dir_ / out);
  }
  // The refusal's message (an Error kInvalidInput), and that nothing was written.
  std::string refusal(const std::string& text, const std::string& out) const {
    try {
      (void)import({write(out + ".jsonl", text)}, out);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidInput);
      EXPECT_FALSE(fs::exists(dir_ / out / "run.json"));
      EXPECT_FALSE(fs::exists(dir_ / out / "responses.jsonl"));
      return e.what();
    }
    ADD_FAILURE() << "not refused";
    return "";
  }

  fs::path dir_;
  std::vector<WorkItem> items_;
  std::vector<std::string> ids_;
};

TEST_F(BatchImportTest, WritesRunnerShapedRecordsAndTheSameBytesTwice) {
  // In reverse order: the records follow the items' order whatever the output's order.
  std::string text;
  for (std::size_t i = ids_.size(); i-- > 0;)
    text += answer_line(ids_[i], completion(fmt::format("FINAL: {}", i)));
  const fs::path out = write("out.jsonl", text);
  const BatchImport r = import({out});
  EXPECT_EQ(r.answered, 5u);
  EXPECT_EQ(r.unanswered, 0u);
  EXPECT_EQ(r.models, std::vector<std::string>{"served-model"});
  const auto recs = lines_of(io::read_file(dir_ / "run" / "responses.jsonl"));
  ASSERT_EQ(recs.size(), 5u);
  for (std::size_t i = 0; i < recs.size(); ++i) {
    EXPECT_EQ(recs[i]["prompt_id"], items_[i].item_id);
    EXPECT_EQ(recs[i]["n"], static_cast<int>(i));
    EXPECT_EQ(recs[i]["response"], fmt::format("FINAL: {}", i));
    EXPECT_EQ(recs[i]["finish_reason"], "stop");
    EXPECT_EQ(recs[i]["model"], "served-model");
    EXPECT_EQ(recs[i]["usage"]["total_tokens"], 13);
    EXPECT_EQ(recs[i]["endpoint"], "batch");
    EXPECT_EQ(recs[i]["completed_at"], "2025-12-07T00:00:00.000Z");
    EXPECT_EQ(recs[i]["batch"]["custom_id"], ids_[i]);
    EXPECT_EQ(recs[i]["batch"]["request_id"], "req-" + ids_[i]);
    EXPECT_EQ(
        io::sha256_hex(io::to_line(recs[i]["request"])).substr(0, 16),
        io::sha256_hex(io::to_line(lines_of(batch_requests(items_, settings(), Api::kChat).lines)[i]["body"]))
            .substr(0, 16));
  }
  const io::Json m = io::read_json_file(dir_ / "run" / "run.json");
  EXPECT_EQ(m["system"], "batch");
  EXPECT_EQ(m["model"], "served-model");
  EXPECT_EQ(m["model_requested"], "test-model");
  EXPECT_EQ(m["complete"], true);
  EXPECT_EQ(m["binding"]["plan"], "x");
  EXPECT_EQ(m["batch"]["outputs"][0]["sha256"], io::sha256_hex(text));
  EXPECT_EQ(m["batch"]["input_sha256"], io::sha256_hex(batch_requests(items_, settings(), Api::kChat).lines));
  const std::string responses = io::read_file(dir_ / "run" / "responses.jsonl");
  const std::string errors = io::read_file(dir_ / "run" / "errors.jsonl");
  const std::string run = io::read_file(dir_ / "run" / "run.json");
  (void)import({out});
  EXPECT_EQ(io::read_file(dir_ / "run" / "responses.jsonl"), responses);
  EXPECT_EQ(io::read_file(dir_ / "run" / "errors.jsonl"), errors);
  EXPECT_EQ(io::read_file(dir_ / "run" / "run.json"), run);
}

TEST_F(BatchImportTest, RecordsHaveTheFieldsOfALiveRunsRecords) {
  testing::TestServer server(testing::ServerOptions{}, SolveFn{});
  server.start();
  HttpConfig cfg;
  cfg.endpoints = {server.base_url()};
  cfg.model = "test-model";
  auto backend = make_http_backend(cfg);
  RunSettings s = settings();
  s.binding["plan"] = "x";
  (void)run_items(items_, s, *backend, dir_ / "live");
  server.stop();
  (void)import({write("out.jsonl", all_answers())});
  auto keys = [](const fs::path& p) {
    std::vector<std::string> k;
    const auto lines = lines_of(io::read_file(p));  // kept: the loop reads into its first record
    for (const auto& [key, v] : lines.at(0).items()) k.push_back(key);
    return k;
  };
  auto batch_keys = keys(dir_ / "run" / "responses.jsonl");
  std::erase(batch_keys, "batch");
  auto live_keys = keys(dir_ / "live" / "responses.jsonl");
  std::erase(live_keys, "system_fingerprint");
  std::erase(live_keys, "timings");
  EXPECT_EQ(batch_keys, live_keys);
  const io::Json live = io::read_json_file(dir_ / "live" / "run.json");
  const io::Json batch = io::read_json_file(dir_ / "run" / "run.json");
  for (const auto& [k, v] : live.items()) EXPECT_TRUE(batch.contains(k)) << k;
  for (const auto& [k, v] : live["binding"].items()) EXPECT_TRUE(batch["binding"].contains(k)) << k;
  EXPECT_EQ(batch["binding"]["sampling"], live["binding"]["sampling"]);
}

TEST_F(BatchImportTest, UnknownCustomIdIsRefused) {
  const std::string msg =
      refusal(all_answers() + answer_line("q-999#0123456789abcdef", completion("x")), "unknown");
  EXPECT_NE(msg.find("unknown.jsonl:6: unknown custom_id 'q-999#0123456789abcdef'"), std::string::npos)
      << msg;
}

TEST_F(BatchImportTest, ChangedBodyHashIsRefused) {
  std::string text;
  for (std::size_t i = 0; i < 4; ++i) text += answer_line(ids_[i], completion("FINAL: 1"));
  text += answer_line("q-004#ffffffffffffffff", completion("FINAL: 1"));
  const std::string msg = refusal(text, "hash");
  EXPECT_NE(
      msg.find("hash.jsonl:5: custom_id 'q-004#ffffffffffffffff' answers 'q-004' with a request body other"),
      std::string::npos)
      << msg;
}

TEST_F(BatchImportTest, DuplicateAnswerIsRefused) {
  const std::string msg = refusal(all_answers() + answer_line(ids_[2], completion("FINAL: 9")), "dup");
  EXPECT_NE(msg.find("dup.jsonl:6: a second answer for 'q-002'"), std::string::npos) << msg;
}

TEST_F(BatchImportTest, BrokenJsonLineIsRefused) {
  const std::string msg = refusal(all_answers() + "{\"custom_id\": \"q-000#\n", "broken");
  EXPECT_NE(msg.find("broken.jsonl:6"), std::string::npos) << msg;
  EXPECT_NE(refusal(all_answers() + "{\"response\": {}}\n", "noid").find("no string field 'custom_id'"),
            std::string::npos);
}

TEST_F(BatchImportTest, MissingPromptsAndErrorLinesAreReportedAndKept) {
  std::string text = answer_line(ids_[0], completion("FINAL: 0"));
  text += error_line(ids_[1], "server_error", "out of memory");
  text += answer_line(ids_[2], io::OrderedJson{{"error", {{"message", "context length exceeded"}}}}, 400);
  text += answer_line(ids_[3], io::OrderedJson{{"not", "a completion"}});
  const BatchImport r = import({write("out.jsonl", text)});  // q-004 has no line
  EXPECT_EQ(r.answered, 1u);
  EXPECT_EQ(r.error_lines, 3u);
  EXPECT_EQ(r.unanswered, 4u);
  EXPECT_EQ(r.missing, std::vector<std::string>{"q-004"});
  const auto errors = lines_of(io::read_file(dir_ / "run" / "errors.jsonl"));
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0]["prompt_id"], "q-001");
  EXPECT_EQ(errors[0]["error"], "batch error server_error: out of memory");
  EXPECT_TRUE(errors[0]["http_status"].is_null());
  EXPECT_EQ(errors[1]["error"], "HTTP 400: context length exceeded");
  EXPECT_EQ(errors[1]["http_status"], 400);
  EXPECT_EQ(errors[1]["attempt_errors"][0]["error"], "HTTP 400: context length exceeded");
  EXPECT_EQ(errors[2]["prompt_id"], "q-003");
  const io::Json m = io::read_json_file(dir_ / "run" / "run.json");
  EXPECT_EQ(m["complete"], false);
  EXPECT_EQ(m["counts"]["unanswered"], 4);
  try {
    check_batch_complete(r, dir_ / "run", "prompts");
    ADD_FAILURE() << "complete";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIncomplete);
    EXPECT_NE(std::string(e.what()).find("4 of 5 prompts unanswered: 3 with an error line"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("1 missing from the batch output (q-004)"), std::string::npos)
        << e.what();
  }
}

TEST_F(BatchImportTest, ARetriedBatchAnswersWhatTheFirstFailed) {
  std::string first;
  for (std::size_t i = 0; i < 4; ++i) first += answer_line(ids_[i], completion("FINAL: 1"));
  first += error_line(ids_[4], "rate_limit_exceeded", "try later");
  const BatchImport r = import(
      {write("first.jsonl", first), write("retry.jsonl", answer_line(ids_[4], completion("FINAL: 4")))});
  EXPECT_EQ(r.answered, 5u);
  EXPECT_EQ(r.unanswered, 0u);
  EXPECT_EQ(lines_of(io::read_file(dir_ / "run" / "errors.jsonl")).size(), 1u);
  EXPECT_NO_THROW(check_batch_complete(r, dir_ / "run", "prompts"));
}

TEST_F(BatchImportTest, RefusesAFolderHoldingALiveRun) {
  fs::create_directories(dir_ / "live");
  io::write_file_atomic(dir_ / "live" / "run.json", "{\"system\": \"openai\"}\n");
  try {
    (void)import({write("out.jsonl", all_answers())}, "live");
    ADD_FAILURE() << "not refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUsage);
  }
  EXPECT_EQ(io::read_file(dir_ / "live" / "run.json"), "{\"system\": \"openai\"}\n");
}

}  // namespace
}  // namespace numcheck::llm
