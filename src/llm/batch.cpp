#include "llm/batch.hpp"

#include <algorithm>
#include <ctime>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/version.hpp"
#include "io/files.hpp"
#include "io/json_writer.hpp"
#include "io/sha256.hpp"
#include "llm/http_backend.hpp"

namespace numcheck::llm {

namespace fs = std::filesystem;

namespace {

constexpr const char* kBackend = "batch";   // run.json "system", binding "backend", records' endpoint
constexpr std::size_t kHashDigits = 16;     // hex digits of the body's SHA-256 in a custom_id
constexpr std::size_t kShownProblems = 20;  // refused lines named in the error
constexpr std::size_t kWriteChunk = std::size_t{1} << 20;  // bytes of records written at a time

// An answer or an error line of one item, with where it came from.
struct Origin {
  std::string file;
  std::size_t line = 0;
  std::string id;          // the line's "id" ("" when absent)
  std::string request_id;  // response.request_id ("" when absent)
};

struct Answer {
  Completion completion;
  std::optional<std::int64_t> created;  // the completion's "created" (Unix seconds)
  Origin origin;
};

struct ErrorLine {
  std::string error;
  long http_status = 0;  // 0: none
  Origin origin;
};

struct Slot {
  std::optional<Answer> answer;
  std::vector<ErrorLine> errors;
  bool named = false;  // some line names the item
};

std::optional<std::string> string_member(const io::Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// "2026-12-07T00:00:00.000Z" of Unix seconds (the form of the runner's timestamps).
std::string iso_of(std::int64_t seconds) {
  const auto t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40] = {};
  const std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return std::string(buf, n) + ".000Z";
}

// The text of an output line's "error" object ({"code", "message"}, OpenAI's and vLLM's shape).
std::string error_text(const io::Json& e) {
  if (e.is_object()) {
    const auto message = string_member(e, "message");
    std::string code;
    if (auto c = e.find("code"); c != e.end() && !c->is_null())
      code = c->is_string() ? c->get<std::string>() : io::to_line(*c);
    if (message)
      return code.empty() ? "batch error: " + *message : fmt::format("batch error {}: {}", code, *message);
  }
  if (e.is_string()) return "batch error: " + e.get<std::string>();
  return "batch error: " + io::to_line(e);
}

void write_origin(io::JsonWriter& w, const Origin& o, const std::string& custom_id) {
  using namespace io::literals;
  w.key("batch"_key).begin_object();
  w.key("file"_key).value(o.file);
  w.key("line"_key).value(static_cast<std::uint64_t>(o.line));
  w.key("id"_key).value(o.id);
  w.key("request_id"_key).value(o.request_id);
  w.key("custom_id"_key).value(custom_id);
  w.end_object();
}

// A record's first members, as the runner writes them (runner.cpp begin_record).
void begin_record(io::JsonWriter& w, const RunSettings& settings, const WorkItem& item, std::size_t index,
                  const std::string& body) {
  using namespace io::literals;
  w.begin_object().key(settings.id_field).value(item.item_id);
  for (auto f = item.fields.begin(); f != item.fields.end(); ++f) w.key(f.key()).json(f.value());
  w.key("request_index"_key).value(static_cast<std::uint64_t>(index));
  w.key("endpoint"_key).value(kBackend);
  w.key("request"_key).raw(body);
}

void append_response(std::string& out, const RunSettings& settings, const WorkItem& item, std::size_t index,
                     const std::string& body, const std::string& custom_id, const Answer& a) {
  using namespace io::literals;
  const Completion& c = a.completion;
  io::JsonWriter w(out);
  begin_record(w, settings, item, index, body);
  write_completion_fields(w, c);
  w.key("latency_ms"_key).null();
  w.key("attempts"_key).value(1);
  w.key("attempt_errors"_key).begin_array().end_array();
  w.key("cached"_key).value(false);
  w.key("started_at"_key).null();
  w.key("completed_at"_key);
  if (a.created) {
    w.value(iso_of(*a.created));
  } else {
    w.null();
  }
  w.key("session"_key).value(1);
  write_origin(w, a.origin, custom_id);
  w.end_object();
  out.push_back('\n');
}

void append_error(std::string& out, const RunSettings& settings, const WorkItem& item, std::size_t index,
                  const std::string& body, const std::string& custom_id, const ErrorLine& e) {
  using namespace io::literals;
  io::JsonWriter w(out);
  auto status = [&] {
    if (e.http_status == 0) {
      w.null();
    } else {
      w.value(static_cast<std::int64_t>(e.http_status));
    }
  };
  begin_record(w, settings, item, index, body);
  w.key("error"_key).value(e.error);
  w.key("http_status"_key);
  status();
  w.key("attempts"_key).value(1);
  w.key("attempt_errors"_key).begin_array().begin_object();
  w.key("attempt"_key).value(1);
  w.key("endpoint"_key).value(kBackend);
  w.key("error"_key).value(e.error);
  w.key("http_status"_key);
  status();
  w.key("latency_ms"_key).null();
  w.key("at"_key).null();
  w.end_object().end_array();
  w.key("started_at"_key).null();
  w.key("completed_at"_key).null();
  w.key("session"_key).value(1);
  write_origin(w, e.origin, custom_id);
  w.end_object();
  out.push_back('\n');
}

// Refuses an out_dir that holds anything but an earlier batch import.
void check_out_dir(const fs::path& dir) {
  const fs::path run_json = dir / "run.json";
  if (fs::exists(run_json)) {
    const io::Json m = io::read_json_file(run_json);
    const auto system = m.is_object() ? string_member(m, "system") : std::nullopt;
    if (system != kBackend) {
      fail(ErrorCode::kUsage, "{} holds a run that is not a batch import; choose a new --out", dir.string());
    }
    return;
  }
  if (fs::exists(dir / "responses.jsonl") || fs::exists(dir / "errors.jsonl"))
    fail(ErrorCode::kUsage, "{} has records but no run.json; choose a new --out", dir.string());
}

}  // namespace

std::string batch_url(Api api) {
  if (api == Api::kEmbeddings) return "/v1/embeddings";
  return api == Api::kChat ? "/v1/chat/completions" : "/v1/completions";
}

std::string batch_custom_id(std::string_view item_id, std::string_view body) {
  std::string id(item_id);
  id += '#';
  id += io::sha256_hex(body).substr(0, kHashDigits);
  return id;
}

BatchRequests batch_requests(const std::vector<WorkItem>& items, const RunSettings& settings, Api api) {
  using namespace io::literals;
  if (api == Api::kEmbeddings) fail(ErrorCode::kUsage, "a batch carries chat or completions requests");
  if (settings.model.empty())
    fail(ErrorCode::kUsage, "a batch needs --model: every request line names the model");
  const RequestBodies bodies(settings, settings.model, api);
  const std::string url = batch_url(api);
  std::unordered_set<std::string_view> ids;
  BatchRequests r;
  r.custom_ids.reserve(items.size());
  std::string body;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const WorkItem& item = items[i];
    if (item.item_id.empty()) fail("work item {} has an empty id", i + 1);
    if (!ids.insert(item.item_id).second) fail("work item id '{}' occurs twice", item.item_id);
    body.clear();
    bodies.append(body, item);
    std::string id = batch_custom_id(item.item_id, body);
    io::JsonWriter w(r.lines);
    w.begin_object().key("custom_id"_key).value(id);
    w.key("method"_key).value("POST").key("url"_key).value(url).key("body"_key).raw(body).end_object();
    r.lines.push_back('\n');
    r.custom_ids.push_back(std::move(id));
  }
  return r;
}

namespace {

// The answers and errors of batch output files, matched to the exported requests by custom_id.
// Every line that cannot be matched or read is a problem; one problem refuses the whole import.
class OutputReader {
 public:
  OutputReader(const std::vector<WorkItem>& items, const BatchRequests& requests, Api api)
      : items_(items), requests_(requests), api_(api), slots_(items.size()) {
    for (std::size_t i = 0; i < items.size(); ++i) {
      by_custom_id_.emplace(requests.custom_ids[i], i);
      by_item_id_.emplace(items[i].item_id, i);
    }
  }

  // Reads one output file; returns its entry of run.json's batch.outputs.
  io::OrderedJson read(const fs::path& path, std::size_t& lines) {
    io::JsonlOptions options;
    options.on_bad_line = [&](const io::JsonError& e, std::size_t) { problems_.push_back(e.what()); };
    // Streamed line by line: an output file of a million answers is not held in memory.
    const io::JsonlStats stats = io::read_jsonl<io::Json>(
        path,
        [&](const io::Record& rec, std::size_t line) {
          ++lines;
          take(rec.json(), path, line);
        },
        options);
    io::OrderedJson f = io::OrderedJson::object();
    f["file"] = path.filename().string();
    f["sha256"] = io::sha256_file(path);
    f["lines"] = stats.records;
    return f;
  }

  // Throws Error listing the refused lines, if any.
  void check() const {
    if (problems_.empty()) return;
    std::string list;
    for (std::size_t i = 0; i < problems_.size() && i < kShownProblems; ++i) list += "\n  " + problems_[i];
    if (problems_.size() > kShownProblems)
      list += fmt::format("\n  ... and {} more", problems_.size() - kShownProblems);
    fail("{} batch output line(s) refused (nothing written):{}", problems_.size(), list);
  }

  [[nodiscard]] const std::vector<Slot>& slots() const { return slots_; }

 private:
  // The item a custom_id names, or a problem saying why there is none.
  std::optional<std::size_t> item_of(const std::string& custom_id, const std::string& where) {
    if (auto found = by_custom_id_.find(custom_id); found != by_custom_id_.end()) return found->second;
    const auto hash = custom_id.rfind('#');
    const auto item =
        hash == std::string::npos ? by_item_id_.end() : by_item_id_.find(custom_id.substr(0, hash));
    if (item != by_item_id_.end()) {
      problems_.push_back(fmt::format(
          "{}: custom_id '{}' answers '{}' with a request body other than the one exported now ('{}'): the "
          "batch was made with other settings (model, sampling, prompt file) or another benchmark",
          where, custom_id, item->first, requests_.custom_ids[item->second]));
    } else {
      problems_.push_back(
          fmt::format("{}: unknown custom_id '{}' (no such request in the export)", where, custom_id));
    }
    return std::nullopt;
  }

  void take(const io::Json& j, const fs::path& path, std::size_t line) {
    const std::string where = fmt::format("{}:{}", path.string(), line);
    const auto custom_id = string_member(j, "custom_id");
    if (!custom_id) {
      problems_.push_back(where + ": no string field 'custom_id'");
      return;
    }
    const auto index = item_of(*custom_id, where);
    if (!index) return;
    Slot& slot = slots_[*index];
    slot.named = true;
    ErrorLine e;
    e.origin.file = path.filename().string();
    e.origin.line = line;
    e.origin.id = string_member(j, "id").value_or("");
    const auto error = j.find("error");
    const auto response = j.find("response");
    const bool has_response = response != j.end() && response->is_object();
    if (has_response) e.origin.request_id = string_member(*response, "request_id").value_or("");
    if (error != j.end() && !error->is_null()) {
      e.error = error_text(*error);
      if (has_response) {
        if (auto st = response->find("status_code"); st != response->end() && st->is_number_integer())
          e.http_status = st->get<long>();
      }
    } else if (!has_response) {
      problems_.push_back(where + ": neither a 'response' object nor an 'error'");
      return;
    } else if (!take_response(*response, *index, where, e)) {
      return;
    }
    slot.errors.push_back(std::move(e));
  }

  // A line with a response object: true when it is an error for the item (in `e`), false when it
  // was an answer (stored) or a problem.
  bool take_response(const io::Json& response, std::size_t index, const std::string& where, ErrorLine& e) {
    const auto status = response.find("status_code");
    if (status == response.end() || !status->is_number_integer()) {
      problems_.push_back(where + ": field 'response.status_code' must be an integer");
      return false;
    }
    e.http_status = status->get<long>();
    const auto body = response.find("body");
    const std::string body_text = body == response.end() ? std::string() : io::to_line(*body);
    if (e.http_status != 200) {
      const std::string msg = error_message_from_body(body_text);
      e.error = fmt::format("HTTP {}{}{}", e.http_status, msg.empty() ? "" : ": ", msg);
      return true;
    }
    ParsedBody parsed = parse_completion_body(body_text, api_);
    if (!parsed.ok) {
      e.error = parsed.error;
      return true;
    }
    Slot& slot = slots_[index];
    if (slot.answer) {
      problems_.push_back(fmt::format("{}: a second answer for '{}' (the first is at {})", where,
                                      items_[index].item_id, answered_at_[index]));
      return false;
    }
    Answer a;
    a.completion = std::move(parsed.completion);
    if (auto c = body->find("created"); c != body->end() && c->is_number_integer())
      a.created = c->get<std::int64_t>();
    a.origin = std::move(e.origin);
    answered_at_[index] = where;
    slot.answer = std::move(a);
    return false;
  }

  const std::vector<WorkItem>& items_;
  const BatchRequests& requests_;
  Api api_;
  std::vector<Slot> slots_;
  std::vector<std::string> problems_;
  std::unordered_map<std::string, std::size_t> by_custom_id_, by_item_id_;
  std::unordered_map<std::size_t, std::string> answered_at_;  // item -> "file:line" of its answer
};

// run.json of an imported batch: run_items's fields (runner.cpp Manifest::write, make_binding),
// backend "batch".
io::OrderedJson batch_manifest(const std::vector<WorkItem>& items, const RunSettings& settings, Api api,
                               const std::vector<Slot>& slots, const BatchImport& r,
                               const BatchRequests& requests, io::OrderedJson output_files,
                               const io::OrderedJson& provenance) {
  std::size_t failed = 0;
  for (const auto& s : slots) failed += (!s.answer && !s.errors.empty()) ? 1 : 0;
  io::OrderedJson batch = io::OrderedJson::object();
  batch["custom_id"] = "<id>#<first 16 hex digits of the request body's sha256>";
  batch["input_sha256"] = io::sha256_hex(requests.lines);
  batch["requests"] = items.size();
  batch["outputs"] = std::move(output_files);
  batch["models"] = r.models;
  for (auto it = provenance.begin(); it != provenance.end(); ++it) batch[it.key()] = it.value();

  io::OrderedJson binding = io::OrderedJson::object();
  binding["kind"] = settings.kind;
  binding["id_field"] = settings.id_field;
  binding["backend"] = kBackend;
  binding["api"] = api_name(api);
  binding["model_requested"] = settings.model;
  binding["sampling"] = sampling_as_sent(items, settings);
  binding["system_prompt"] =
      settings.system_prompt ? io::OrderedJson(*settings.system_prompt) : io::OrderedJson();
  binding["extra_body"] = io::OrderedJson::parse(io::to_line(settings.extra_body));
  binding["server_identity"] = {{"backend", kBackend}, {"input_sha256", batch["input_sha256"]}};
  for (auto it = settings.binding.begin(); it != settings.binding.end(); ++it) {
    if (binding.contains(it.key())) fail("run settings: binding key '{}' is reserved", it.key());
    binding[it.key()] = it.value();
  }

  io::OrderedJson m = io::OrderedJson::object();
  m["kind"] = settings.kind;
  m["numcheck_version"] = kVersion;
  m["simulated"] = false;
  m["model"] = r.models.empty() ? settings.model : r.models.front();
  m["model_from_probe"] = r.models.empty();
  m["model_requested"] = settings.model;
  m["system"] = kBackend;
  m["api"] = api_name(api);
  m["endpoints"] = io::OrderedJson::array({kBackend});
  m["sampling"] = binding["sampling"];
  m["system_prompt"] = binding["system_prompt"];
  m["extra_body"] = binding["extra_body"];
  for (auto it = settings.binding.begin(); it != settings.binding.end(); ++it) m[it.key()] = it.value();
  for (auto it = settings.info.begin(); it != settings.info.end(); ++it) m[it.key()] = it.value();
  m["settings"] = io::OrderedJson::object();
  m["server"] = io::OrderedJson::object();
  m["batch"] = batch;
  m["started_at"] = nullptr;
  m["ended_at"] = nullptr;
  io::OrderedJson counts = io::OrderedJson::object();
  counts["items"] = items.size();
  counts["answered"] = r.answered;
  counts["unanswered"] = r.unanswered;
  counts["failed_this_session"] = failed;
  counts["from_cache_this_session"] = 0;
  m["counts"] = counts;
  m["complete"] = r.unanswered == 0;
  io::OrderedJson session = io::OrderedJson::object();
  session["session"] = 1;
  session["started_at"] = nullptr;
  session["ended_at"] = nullptr;
  session["items"] = items.size();
  session["pending"] = items.size();
  session["answered"] = r.answered;
  session["from_cache"] = 0;
  session["failed"] = failed;
  session["stopped_early"] = false;
  m["sessions"] = io::OrderedJson::array({session});
  m["binding"] = binding;
  return m;
}

// The records, in the items' order, written in pieces (each file takes its name at commit).
void write_batch_records(const fs::path& out_dir, const std::vector<WorkItem>& items,
                         const RunSettings& settings, Api api, const std::vector<Slot>& slots,
                         const BatchRequests& requests) {
  const RequestBodies bodies(settings, settings.model, api);
  io::AtomicFile responses_file(out_dir / "responses.jsonl"), errors_file(out_dir / "errors.jsonl");
  std::string responses, errors, body;
  const auto flush = [&](bool all) {
    if (all || responses.size() >= kWriteChunk) {
      responses_file.write(responses);
      responses.clear();
    }
    if (all || errors.size() >= kWriteChunk) {
      errors_file.write(errors);
      errors.clear();
    }
  };
  for (std::size_t i = 0; i < items.size(); ++i) {
    flush(false);
    const Slot& s = slots[i];
    if (!s.answer && s.errors.empty()) continue;
    body.clear();
    bodies.append(body, items[i]);
    for (const auto& e : s.errors)
      append_error(errors, settings, items[i], i, body, requests.custom_ids[i], e);
    if (s.answer) append_response(responses, settings, items[i], i, body, requests.custom_ids[i], *s.answer);
  }
  flush(true);
  responses_file.commit();
  errors_file.commit();
}

}  // namespace

BatchImport import_batch(const std::vector<WorkItem>& items, const RunSettings& settings, Api api,
                         const std::vector<fs::path>& outputs, const io::OrderedJson& provenance,
                         const fs::path& out_dir) {
  if (outputs.empty()) fail(ErrorCode::kUsage, "no batch output file given");
  // The requests as the export wrote them: their bodies (for the records) and custom ids.
  const BatchRequests requests = batch_requests(items, settings, api);
  BatchImport r;
  r.items = items.size();
  OutputReader reader(items, requests, api);
  io::OrderedJson output_files = io::OrderedJson::array();
  for (const fs::path& path : outputs) output_files.push_back(reader.read(path, r.lines));
  reader.check();

  // The counts, in the items' order.
  const std::vector<Slot>& slots = reader.slots();
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Slot& s = slots[i];
    if (!s.named) r.missing.push_back(items[i].item_id);
    r.error_lines += s.errors.size();
    if (!s.answer) {
      ++r.unanswered;
      continue;
    }
    ++r.answered;
    const std::string& m = s.answer->completion.model;
    if (!m.empty() && std::find(r.models.begin(), r.models.end(), m) == r.models.end()) r.models.push_back(m);
  }

  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) fail(ErrorCode::kIo, "cannot create {}: {}", out_dir.string(), ec.message());
  io::FileLock lock;  // held until the import returns
  if (!lock.try_lock(out_dir / "run.lock")) {
    fail(
        "another numcheck process is running in {} (it holds {}); wait for it to end or choose another --out",
        out_dir.string(), (out_dir / "run.lock").string());
  }
  check_out_dir(out_dir);
  // run.json first: a folder an interrupted import left is still known as a batch import's, and
  // importing again replaces it.
  io::write_file_atomic(out_dir / "run.json",
                        io::to_pretty(batch_manifest(items, settings, api, slots, r, requests,
                                                     std::move(output_files), provenance)));
  write_batch_records(out_dir, items, settings, api, slots, requests);
  return r;
}

std::string batch_summary(const BatchImport& r, const fs::path& out_dir, std::string_view noun) {
  return fmt::format(
      "{}: {} {}, {} answered, {} unanswered ({} with an error line, {} missing from the output); "
      "{} output lines, {} kept as error records",
      out_dir.string(), r.items, noun, r.answered, r.unanswered, r.unanswered - r.missing.size(),
      r.missing.size(), r.lines, r.error_lines);
}

void check_batch_complete(const BatchImport& r, const fs::path& out_dir, std::string_view noun) {
  if (r.unanswered == 0) return;
  std::string missing;
  for (std::size_t i = 0; i < r.missing.size() && i < 5; ++i) missing += (i == 0 ? "" : ", ") + r.missing[i];
  if (r.missing.size() > 5) missing += ", ...";
  throw Error(
      ErrorCode::kIncomplete,
      fmt::format("{} of {} {} unanswered: {} with an error line (see {}/errors.jsonl), {} missing from "
                  "the batch output{}",
                  r.unanswered, r.items, noun, r.unanswered - r.missing.size(), out_dir.string(),
                  r.missing.size(), missing.empty() ? "" : " (" + missing + ")"));
}

}  // namespace numcheck::llm
