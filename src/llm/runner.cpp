#include "llm/runner.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/prng.hpp"
#include "core/version.hpp"
#include "io/files.hpp"
#include "llm/cache.hpp"
#include "llm/progress.hpp"

namespace numcheck::llm {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

Sampling SamplingOverride::apply(Sampling s) const {
  if (temperature) s.temperature = *temperature;
  if (top_p) s.top_p = *top_p;
  if (top_k) s.top_k = *top_k;
  if (seed) s.seed = *seed;
  if (max_tokens) s.max_tokens = *max_tokens;
  return s;
}

namespace {

// Fields the runner writes into every record; WorkItem::fields may not use them.
constexpr const char* kRecordFields[] = {
    "request_index",   "endpoint",     "request",  "response",       "reasoning",
    "finish_reason",   "usage",        "timings",  "model",          "system_fingerprint",
    "simulated_fault", "latency_ms",   "attempts", "attempt_errors", "cached",
    "started_at",      "completed_at", "session",  "error",          "http_status"};
// Request fields the runner owns; --extra-body may not set them.
constexpr const char* kOwnedBodyFields[] = {"model", "messages", "prompt", "temperature",
                                            "top_p", "top_k",    "seed",   "max_tokens"};

std::string iso_now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03}Z", buf, ms);
}

// Appends whole lines with one write(2) each; a process killed at any moment leaves every earlier
// line intact and at most one torn last line (repaired on resume).
class RecordFile {
 public:
  explicit RecordFile(const fs::path& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) fail(ErrorCode::kIo, "cannot open {}: {}", path.string(), std::strerror(errno));
  }
  ~RecordFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  RecordFile(const RecordFile&) = delete;
  RecordFile& operator=(const RecordFile&) = delete;

  void append(std::string line) {
    line += '\n';
    std::size_t off = 0;
    while (off < line.size()) {
      const ssize_t n = ::write(fd_, line.data() + off, line.size() - off);
      if (n < 0) {
        if (errno == EINTR) continue;
        fail(ErrorCode::kIo, "cannot write {}: {}", path_.string(), std::strerror(errno));
      }
      off += static_cast<std::size_t>(n);
    }
    dirty_.store(true);
  }
  void sync() {
    if (!dirty_.exchange(false)) return;
    if (::fdatasync(fd_) != 0)
      fail(ErrorCode::kIo, "cannot sync {}: {}", path_.string(), std::strerror(errno));
  }

 private:
  fs::path path_;
  int fd_ = -1;
  std::atomic<bool> dirty_{false};
};

struct Job {
  std::size_t item = 0;  // index into items
  std::uint64_t request_index = 0;
  Request request;
  std::string cache_key;
  std::string started_at;
};

struct Outcome {
  bool ok = false;
  bool abandoned = false;  // the session stopped while this item waited to retry: no record
  Attempt last;
  io::OrderedJson attempt_errors = io::OrderedJson::array();
  int attempts = 0;
  std::size_t endpoint = 0;
  std::string completed_at;
};

milliseconds backoff_delay(const RetryPolicy& p, int failed_attempt, Rng& rng,
                           std::optional<double> retry_after) {
  double base = static_cast<double>(p.base_delay.count());
  for (int i = 1; i < failed_attempt && base < static_cast<double>(p.max_delay.count()); ++i) base *= 2;
  base = std::min(base, static_cast<double>(p.max_delay.count()));
  double d = base * (0.5 + 0.5 * rng.unit());
  if (retry_after) {
    const double ra = std::min(*retry_after * 1000.0, static_cast<double>(p.max_retry_after.count()));
    d = std::max(d, ra);
  }
  return milliseconds(static_cast<std::int64_t>(d));
}

// Stop signal shared by the workers and the main thread; waits are interruptible.
struct StopFlag {
  std::mutex m;
  std::condition_variable cv;
  bool stop = false;
  std::size_t workers_done = 0;
  void set() {
    {
      std::lock_guard lock(m);
      stop = true;
    }
    cv.notify_all();
  }
  [[nodiscard]] bool is_set() {
    std::lock_guard lock(m);
    return stop;
  }
  // Sleeps for d; returns true when stopped meanwhile.
  bool sleep_for(milliseconds d) {
    std::unique_lock lock(m);
    return cv.wait_for(lock, d, [&] { return stop; });
  }
};

// One item's attempts: sends, retries with backoff, records each failed attempt.
Outcome attempt_item(const Request& request, Session& session, std::size_t home, std::size_t n_endpoints,
                     const std::vector<std::string>& endpoint_names, const RetryPolicy& policy, Rng& rng,
                     StopFlag& stop) {
  Outcome out;
  for (int attempt = 0;; ++attempt) {
    const std::size_t ep = (home + static_cast<std::size_t>(attempt)) % n_endpoints;
    out.endpoint = ep;
    Attempt a;
    try {
      a = session.send(request, ep);
    } catch (const std::exception& e) {
      a.status = Attempt::Status::kFatal;
      a.error = std::string("internal error: ") + e.what();
    }
    out.attempts = attempt + 1;
    if (a.status == Attempt::Status::kOk) {
      out.ok = true;
      out.last = std::move(a);
      break;
    }
    io::OrderedJson err = io::OrderedJson::object();
    err["attempt"] = attempt + 1;
    err["endpoint"] = endpoint_names[ep];
    err["error"] = a.error;
    err["http_status"] = a.http_status == 0 ? io::OrderedJson() : io::OrderedJson(a.http_status);
    err["latency_ms"] = a.latency.count();
    err["at"] = iso_now();
    const bool last_try = a.status == Attempt::Status::kFatal || attempt >= policy.retries;
    if (!last_try) {
      const milliseconds delay = backoff_delay(policy, attempt + 1, rng, a.retry_after_s);
      if (a.retry_after_s) err["retry_after_s"] = *a.retry_after_s;
      err["retry_in_ms"] = delay.count();
      out.attempt_errors.push_back(std::move(err));
      if (stop.sleep_for(delay)) {
        out.abandoned = true;
        out.last = std::move(a);
        break;
      }
      continue;
    }
    out.attempt_errors.push_back(std::move(err));
    out.last = std::move(a);
    break;
  }
  out.completed_at = iso_now();
  return out;
}

io::OrderedJson sampling_json(const Sampling& s) {
  io::OrderedJson j = io::OrderedJson::object();
  j["temperature"] = s.temperature;
  j["top_p"] = s.top_p;
  j["top_k"] = s.top_k;
  j["seed"] = s.seed;
  j["max_tokens"] = s.max_tokens;
  return j;
}

std::string short_json(const io::OrderedJson& j) {
  std::string s = io::to_line(j);
  if (s.size() > 200) s = s.substr(0, 200) + "...";
  return s;
}

// Compares the binding settings of a run directory with this session's, key by key.
void check_binding(const io::OrderedJson& old_binding, const io::OrderedJson& now, const fs::path& run_json) {
  if (!old_binding.is_object())
    fail("{}: missing field 'binding' (not a run directory written by numcheck?)", run_json.string());
  for (auto it = now.begin(); it != now.end(); ++it) {
    auto o = old_binding.find(it.key());
    if (o == old_binding.end()) {
      fail(ErrorCode::kUsage, "--resume: setting '{}' is new in this session ({}); start a new run directory",
           it.key(), short_json(it.value()));
    }
    // Compare as sorted JSON so key order never matters.
    if (io::Json::parse(io::to_line(*o)) != io::Json::parse(io::to_line(it.value()))) {
      fail(ErrorCode::kUsage,
           "--resume: setting '{}' differs from the run in {} (run: {}, now: {}); use the same settings or a "
           "new "
           "--out",
           it.key(), run_json.parent_path().string(), short_json(*o), short_json(it.value()));
    }
  }
  for (auto it = old_binding.begin(); it != old_binding.end(); ++it) {
    if (!now.contains(it.key())) {
      fail(ErrorCode::kUsage, "--resume: the run in {} has setting '{}' ({}) that this session lacks",
           run_json.parent_path().string(), it.key(), short_json(it.value()));
    }
  }
}

// One record line: the fields of `head`, then "request" with the exact body bytes sent, then the
// fields of `tail` (both non-empty objects).
std::string record_line(const io::OrderedJson& head, const std::string& body, const io::OrderedJson& tail) {
  std::string h = io::to_line(head);
  const std::string t = io::to_line(tail);
  h.pop_back();  // '}'
  h += ",\"request\":";
  h += body;
  h += ',';
  h.append(t, 1, std::string::npos);  // without '{'
  return h;
}

}  // namespace

io::Json build_request_body(const WorkItem& item, const RunSettings& settings, const std::string& model,
                            Api api) {
  const Sampling s = item.sampling.apply(settings.sampling);
  io::Json body = io::Json::object();
  body["model"] = model;
  const std::optional<std::string>& system = item.system_prompt ? item.system_prompt : settings.system_prompt;
  if (api == Api::kEmbeddings) {  // no sampling: the vector of the prompt text
    body["input"] = item.prompt;
    for (auto it = settings.extra_body.begin();
         settings.extra_body.is_object() && it != settings.extra_body.end(); ++it) {
      if (it.key() == "model" || it.key() == "input")
        fail(ErrorCode::kUsage, "--extra-body may not set '{}' (the runner sends it)", it.key());
      body[it.key()] = it.value();
    }
    return body;
  }
  if (api == Api::kChat) {
    io::Json messages = io::Json::array();
    if (system) messages.push_back({{"role", "system"}, {"content", *system}});
    messages.push_back({{"role", "user"}, {"content", item.prompt}});
    body["messages"] = std::move(messages);
  } else {
    body["prompt"] = system ? *system + "\n\n" + item.prompt : item.prompt;
  }
  body["temperature"] = s.temperature;
  body["top_p"] = s.top_p;
  body["top_k"] = s.top_k;
  body["seed"] = s.seed;
  body["max_tokens"] = s.max_tokens;
  if (settings.extra_body.is_object()) {
    for (auto it = settings.extra_body.begin(); it != settings.extra_body.end(); ++it) {
      for (const char* owned : kOwnedBodyFields) {
        if (it.key() == owned) {
          fail(ErrorCode::kUsage, "--extra-body may not set '{}' (the runner sends it; use its own option)",
               it.key());
        }
      }
      body[it.key()] = it.value();
    }
  }
  return body;
}

std::size_t read_records(const fs::path& path, const std::function<void(const io::Json&, std::size_t)>& fn) {
  std::size_t torn = 0;
  io::for_each_line(path, [&](const io::Line& line) {
    if (!line.terminated) {
      torn = line.text.size();
      return;
    }
    if (line.text.empty()) return;
    const std::string where = fmt::format("{}:{}", path.string(), line.number);
    fn(io::parse_json(line.text, where), line.number);
  });
  return torn;
}

RunSummary run_items(const std::vector<WorkItem>& items, const RunSettings& settings, Backend& backend,
                     const fs::path& out_dir) {
  RunSummary summary;
  summary.total = items.size();
  if (settings.concurrency == 0) fail(ErrorCode::kUsage, "--concurrency must be at least 1");
  if (settings.id_field.empty()) fail(ErrorCode::kUsage, "run settings: empty id field");

  // Items: unique non-empty ids, fields that do not collide with the runner's.
  std::unordered_map<std::string, std::size_t> index;
  index.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto& it = items[i];
    if (it.item_id.empty()) fail("work item {} has an empty id", i + 1);
    if (!index.emplace(it.item_id, i).second) fail("work item id '{}' occurs twice", it.item_id);
    if (!it.fields.is_object()) fail("work item '{}': fields must be a JSON object", it.item_id);
    for (auto f = it.fields.begin(); f != it.fields.end(); ++f) {
      bool clash = f.key() == settings.id_field;
      for (const char* r : kRecordFields) clash = clash || f.key() == r;
      if (clash) fail("work item '{}': field '{}' is reserved for the runner", it.item_id, f.key());
    }
  }
  if (!settings.extra_body.is_object()) fail(ErrorCode::kUsage, "--extra-body must be a JSON object");

  const fs::path run_json = out_dir / "run.json";
  const fs::path responses_path = out_dir / "responses.jsonl";
  const fs::path errors_path = out_dir / "errors.jsonl";
  std::error_code ec;
  const bool existing = fs::exists(run_json) || fs::exists(responses_path) || fs::exists(errors_path);
  if (existing && !settings.resume) {
    fail(ErrorCode::kUsage, "{} already holds a run; pass --resume to continue it or choose a new --out",
         out_dir.string());
  }
  if (existing && !fs::exists(run_json)) {
    fail(ErrorCode::kInvalidInput,
         "{} has records but no run.json; it is not a run directory numcheck can resume", out_dir.string());
  }
  fs::create_directories(out_dir, ec);
  if (ec) fail(ErrorCode::kIo, "cannot create {}: {}", out_dir.string(), ec.message());

  // The server(s): identity for the cache key and the resume check.
  ServerInfo server = backend.probe();
  const Api api = backend.api();
  const std::vector<std::string> endpoint_names = backend.endpoints();
  const std::string request_model = settings.model.empty() ? server.model : settings.model;

  io::OrderedJson binding = io::OrderedJson::object();
  binding["kind"] = settings.kind;
  binding["id_field"] = settings.id_field;
  binding["backend"] = backend.kind();
  binding["api"] = api_name(api);
  binding["model_requested"] = request_model;
  binding["sampling"] = sampling_json(settings.sampling);
  binding["system_prompt"] =
      settings.system_prompt ? io::OrderedJson(*settings.system_prompt) : io::OrderedJson();
  binding["extra_body"] = io::OrderedJson::parse(io::to_line(settings.extra_body));
  binding["server_identity"] = io::OrderedJson::parse(io::to_line(server.identity));
  for (auto it = settings.binding.begin(); it != settings.binding.end(); ++it) {
    if (binding.contains(it.key())) fail("run settings: binding key '{}' is reserved", it.key());
    binding[it.key()] = it.value();
  }

  // Earlier sessions.
  io::OrderedJson old_manifest;
  std::unordered_set<std::string> answered;
  std::uint64_t next_request_index = 0;
  std::string reported_model;
  io::OrderedJson sessions = io::OrderedJson::array();
  if (existing) {
    old_manifest = io::parse_ordered_json(io::read_file(run_json), run_json.string());
    check_binding(old_manifest.value("binding", io::OrderedJson()), binding, run_json);
    if (old_manifest.contains("sessions") && old_manifest["sessions"].is_array())
      sessions = old_manifest["sessions"];
    if (old_manifest.contains("model") && old_manifest["model"].is_string() &&
        !old_manifest.value("model_from_probe", true)) {
      reported_model = old_manifest["model"].get<std::string>();
    }
    summary.torn_bytes_repaired += io::repair_torn_tail(responses_path);
    summary.torn_bytes_repaired += io::repair_torn_tail(errors_path);
    if (fs::exists(responses_path)) {
      read_records(responses_path, [&](const io::Json& rec, std::size_t line) {
        auto id = rec.find(settings.id_field);
        if (id == rec.end() || !id->is_string()) {
          fail("{}:{}: missing field '{}'", responses_path.string(), line, settings.id_field);
        }
        if (!answered.insert(id->get<std::string>()).second) {
          fail("{}:{}: a second record for '{}' (the file was edited?)", responses_path.string(), line,
               id->get<std::string>());
        }
        if (auto ri = rec.find("request_index"); ri != rec.end() && ri->is_number_unsigned()) {
          next_request_index = std::max(next_request_index, ri->get<std::uint64_t>() + 1);
        }
      });
    }
    if (fs::exists(errors_path)) {
      read_records(errors_path, [&](const io::Json& rec, std::size_t) {
        if (auto ri = rec.find("request_index"); ri != rec.end() && ri->is_number_unsigned()) {
          next_request_index = std::max(next_request_index, ri->get<std::uint64_t>() + 1);
        }
      });
    }
  }

  std::vector<std::size_t> pending;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (answered.count(items[i].item_id) != 0) {
      ++summary.answered_before;
    } else {
      pending.push_back(i);
    }
  }

  // Manifest at session start.
  const std::size_t session_no = sessions.size() + 1;
  const std::string session_started = iso_now();
  io::OrderedJson session = io::OrderedJson::object();
  session["session"] = session_no;
  session["started_at"] = session_started;
  session["ended_at"] = nullptr;
  session["items"] = items.size();
  session["pending"] = pending.size();
  sessions.push_back(session);

  io::OrderedJson recorded = io::OrderedJson::object();
  recorded["concurrency_per_endpoint"] = settings.concurrency;
  recorded["retries"] = settings.retry.retries;
  recorded["retry_base_delay_ms"] = settings.retry.base_delay.count();
  recorded["retry_max_delay_ms"] = settings.retry.max_delay.count();
  recorded["max_errors"] = settings.max_errors ? io::OrderedJson(*settings.max_errors) : io::OrderedJson();
  recorded["cache"] =
      settings.use_cache ? io::OrderedJson(settings.cache_path.string()) : io::OrderedJson(false);
  for (auto it = settings.recorded.begin(); it != settings.recorded.end(); ++it)
    recorded[it.key()] = it.value();

  auto write_manifest = [&](bool final_write) {
    io::OrderedJson m = io::OrderedJson::object();
    m["kind"] = settings.kind;
    m["numcheck_version"] = kVersion;
    m["simulated"] = backend.simulated();
    m["model"] = reported_model.empty() ? server.model : reported_model;
    m["model_from_probe"] = reported_model.empty();
    m["model_requested"] = request_model;
    m["system"] = backend.kind();
    m["api"] = api_name(api);
    m["endpoints"] = endpoint_names;
    m["sampling"] = sampling_json(settings.sampling);
    m["system_prompt"] = binding["system_prompt"];
    m["extra_body"] = binding["extra_body"];
    for (auto it = settings.binding.begin(); it != settings.binding.end(); ++it) m[it.key()] = it.value();
    for (auto it = settings.info.begin(); it != settings.info.end(); ++it) m[it.key()] = it.value();
    m["settings"] = recorded;
    m["server"] = server.info;
    m["started_at"] = old_manifest.is_object() && old_manifest.contains("started_at")
                          ? old_manifest["started_at"]
                          : io::OrderedJson(session_started);
    m["ended_at"] = final_write ? io::OrderedJson(iso_now()) : io::OrderedJson();
    io::OrderedJson counts = io::OrderedJson::object();
    counts["items"] = summary.total;
    counts["answered"] = summary.answered_before + summary.answered;
    counts["unanswered"] = summary.total - (summary.answered_before + summary.answered);
    counts["failed_this_session"] = summary.failed;
    counts["from_cache_this_session"] = summary.from_cache;
    m["counts"] = counts;
    m["complete"] = final_write && counts["unanswered"] == 0;
    m["sessions"] = sessions;
    m["binding"] = binding;
    io::write_file_atomic(run_json, io::to_pretty(m));
  };
  write_manifest(false);

  RecordFile responses(responses_path);
  RecordFile errors(errors_path);
  std::unique_ptr<ResponseCache> cache;
  if (settings.use_cache) cache = std::make_unique<ResponseCache>(settings.cache_path);

  Progress progress(settings.progress, pending.size(), settings.progress_interval);

  auto base_record = [&](const WorkItem& item, std::uint64_t request_index) {
    io::OrderedJson rec = io::OrderedJson::object();
    rec[settings.id_field] = item.item_id;
    for (auto f = item.fields.begin(); f != item.fields.end(); ++f) rec[f.key()] = f.value();
    rec["request_index"] = request_index;
    return rec;
  };

  // The response record's line (formatted outside the state lock).
  auto response_line = [&](const Job& job, const Completion& c, const std::string& endpoint,
                           std::int64_t latency_ms, int attempts, const io::OrderedJson& attempt_errors,
                           bool cached, const std::string& completed_at) {
    io::OrderedJson head = base_record(items[job.item], job.request_index);
    head["endpoint"] = cached ? io::OrderedJson() : io::OrderedJson(endpoint);
    io::OrderedJson rec = io::OrderedJson::object();  // after "request" (the exact body sent)
    rec["response"] = c.content;
    if (c.reasoning) rec["reasoning"] = *c.reasoning;
    rec["finish_reason"] = c.finish_reason;
    rec["usage"] = io::OrderedJson(c.usage);
    if (!c.timings.is_null()) rec["timings"] = io::OrderedJson(c.timings);
    rec["model"] = c.model;
    if (!c.system_fingerprint.empty()) rec["system_fingerprint"] = c.system_fingerprint;
    if (!c.simulated_fault.empty()) rec["simulated_fault"] = c.simulated_fault;
    rec["latency_ms"] = latency_ms;
    rec["attempts"] = attempts;
    rec["attempt_errors"] = attempt_errors;
    rec["cached"] = cached;
    rec["started_at"] = job.started_at;
    rec["completed_at"] = completed_at;
    rec["session"] = session_no;
    return record_line(head, job.request.body, rec);
  };

  // Workers: `concurrency` per endpoint, each with its own session (connection). Each worker takes
  // the next pending item, answers it from the cache or the server, and writes its record under
  // the state lock: no hand-off between threads per request. The main thread only shows progress
  // and syncs the files.
  const std::size_t n_endpoints = std::max<std::size_t>(1, endpoint_names.size());
  const std::size_t n_workers =
      std::min(settings.concurrency * n_endpoints, std::max<std::size_t>(1, pending.size()));
  // With an asynchronous backend, a few event-loop threads (one per core, at most) carry all the
  // requests in flight; otherwise one thread per request in flight.
  std::vector<std::unique_ptr<AsyncSession>> async_sessions;
  std::vector<std::unique_ptr<Session>> worker_sessions;
  std::size_t n_threads = n_workers;
  std::size_t slots_per_thread = 1;
  if (auto first = backend.open_async_session()) {
    const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
    n_threads = std::min(n_workers, std::min<std::size_t>(cores, 4));
    slots_per_thread = (n_workers + n_threads - 1) / n_threads;
    async_sessions.push_back(std::move(first));
    for (std::size_t t = 1; t < n_threads; ++t) async_sessions.push_back(backend.open_async_session());
  } else {
    for (std::size_t w = 0; w < n_workers; ++w) worker_sessions.push_back(backend.open_session());
  }

  std::mutex state_m;  // records, cache, summary, request indexes
  std::atomic<std::size_t> next{0};
  StopFlag stop;
  std::exception_ptr failure;
  const Rng jitter_root(settings.sampling.seed, "retry-jitter");

  auto make_job = [&](std::size_t item_index) {
    const WorkItem& item = items[item_index];
    Job job;
    job.item = item_index;
    job.request.item_id = item.item_id;
    job.request.prompt = item.prompt;
    job.request.sampling = item.sampling.apply(settings.sampling);
    job.request.body_json = build_request_body(item, settings, request_model, api);
    job.request.body = io::to_line(job.request.body_json);
    if (cache) job.cache_key = cache_key(server.identity, job.request.body_json);
    return job;
  };

  // Records an item's outcome: the line is formatted and appended outside the state lock (one
  // O_APPEND write per line: concurrent appends never interleave), then counts and cache under it.
  auto handle = [&](const Job& job, Outcome& out) {
    if (out.abandoned) return;
    const std::string& ep = endpoint_names[out.endpoint % endpoint_names.size()];
    if (out.ok) {
      responses.append(response_line(job, out.last.completion, ep, out.last.latency.count(), out.attempts,
                                     out.attempt_errors, false, out.completed_at));
      std::lock_guard lock(state_m);
      ++summary.answered;
      if (reported_model.empty() && !out.last.completion.model.empty())
        reported_model = out.last.completion.model;
      if (cache) {
        cache->put(job.cache_key, reported_model.empty() ? server.model : reported_model, server.identity,
                   out.last.completion);
      }
      return;
    }
    io::OrderedJson head = base_record(items[job.item], job.request_index);
    head["endpoint"] = ep;
    io::OrderedJson rec = io::OrderedJson::object();
    rec["error"] = out.last.error;
    rec["http_status"] =
        out.last.http_status == 0 ? io::OrderedJson() : io::OrderedJson(out.last.http_status);
    rec["attempts"] = out.attempts;
    rec["attempt_errors"] = out.attempt_errors;
    rec["started_at"] = job.started_at;
    rec["completed_at"] = out.completed_at;
    rec["session"] = session_no;
    errors.append(record_line(head, job.request.body, rec));
    std::lock_guard lock(state_m);
    ++summary.failed;
    if (settings.max_errors && summary.failed >= *settings.max_errors) {
      summary.stopped_early = true;
      stop.set();
    }
  };

  auto worker = [&](std::size_t w) {
    Rng rng = jitter_root.split(w);
    try {
      while (!stop.is_set()) {
        const std::size_t k = next.fetch_add(1);
        if (k >= pending.size()) break;
        Job job = make_job(pending[k]);
        std::optional<Completion> hit;
        {
          std::lock_guard lock(state_m);
          job.request_index = next_request_index++;
          if (cache) hit = cache->get(job.cache_key);
        }
        job.started_at = iso_now();
        if (hit) {
          responses.append(
              response_line(job, *hit, "", 0, 0, io::OrderedJson::array(), true, job.started_at));
          std::lock_guard lock(state_m);
          ++summary.answered;
          ++summary.from_cache;
          continue;
        }
        Outcome out = attempt_item(job.request, *worker_sessions[w], w % n_endpoints, n_endpoints,
                                   endpoint_names, settings.retry, rng, stop);
        handle(job, out);
      }
    } catch (...) {
      {
        std::lock_guard lock(state_m);
        if (!failure) failure = std::current_exception();
      }
      stop.set();
    }
    {
      std::lock_guard lock(stop.m);
      ++stop.workers_done;
    }
    stop.cv.notify_all();
  };

  // Takes the next pending item: its job (with request index), or nullopt when none is left.
  // Cache hits are answered here and never returned.
  auto next_job = [&]() -> std::optional<Job> {
    while (!stop.is_set()) {
      const std::size_t k = next.fetch_add(1);
      if (k >= pending.size()) return std::nullopt;
      Job job = make_job(pending[k]);
      std::optional<Completion> hit;
      {
        std::lock_guard lock(state_m);
        job.request_index = next_request_index++;
        if (cache) hit = cache->get(job.cache_key);
      }
      job.started_at = iso_now();
      if (!hit) return job;
      responses.append(response_line(job, *hit, "", 0, 0, io::OrderedJson::array(), true, job.started_at));
      std::lock_guard lock(state_m);
      ++summary.answered;
      ++summary.from_cache;
    }
    return std::nullopt;
  };

  // The event-loop worker: up to `slots_per_thread` items in flight, each with its retries.
  auto async_worker = [&](std::size_t t) {
    AsyncSession& session = *async_sessions[t];
    Rng rng = jitter_root.split(t);
    struct Slot {
      Job job;
      Outcome out;
      std::size_t home = 0;
      bool waiting = false;  // waiting for a retry at `due`
      Clock::time_point due;
    };
    std::unordered_map<std::uint64_t, Slot> slots;
    std::uint64_t next_tag = 0;
    bool exhausted = false;
    auto launch = [&](std::uint64_t tag, Slot& s) {
      s.waiting = false;
      const std::size_t ep = (s.home + static_cast<std::size_t>(s.out.attempts)) % n_endpoints;
      s.out.endpoint = ep;
      session.start(tag, s.job.request, ep);
    };
    try {
      for (;;) {
        const bool stopping = stop.is_set();
        while (!stopping && !exhausted && slots.size() < slots_per_thread) {
          std::optional<Job> job = next_job();
          if (!job) {
            exhausted = true;
            break;
          }
          const std::uint64_t tag = next_tag++;
          Slot& s = slots[tag];
          s.home = (t * slots_per_thread + static_cast<std::size_t>(tag)) % n_endpoints;
          s.job = std::move(*job);
          launch(tag, s);
        }
        // Retries that are due; abandoned when the session stops (no record: --resume retries).
        const auto now = Clock::now();
        auto soonest = now + milliseconds(100);
        for (auto it = slots.begin(); it != slots.end();) {
          Slot& s = it->second;
          if (s.waiting && stopping) {
            it = slots.erase(it);
            continue;
          }
          if (s.waiting) {
            if (s.due <= now) {
              launch(it->first, s);
            } else {
              soonest = std::min(soonest, s.due);
            }
          }
          ++it;
        }
        if (slots.empty()) break;
        const auto wait = std::chrono::duration_cast<milliseconds>(soonest - now);
        std::vector<std::pair<std::uint64_t, Attempt>> finished;
        if (session.in_flight() == 0) {
          (void)stop.sleep_for(std::max(wait, milliseconds(1)));
        } else {
          finished = session.wait(std::max(wait, milliseconds(1)));
        }
        for (auto& [tag, a] : finished) {
          auto it = slots.find(tag);
          if (it == slots.end()) continue;
          Slot& s = it->second;
          const int attempt = s.out.attempts;  // 0-based number of this attempt
          s.out.attempts = attempt + 1;
          if (a.status == Attempt::Status::kOk) {
            s.out.ok = true;
            s.out.last = std::move(a);
            s.out.completed_at = iso_now();
            handle(s.job, s.out);
            slots.erase(it);
            continue;
          }
          io::OrderedJson err = io::OrderedJson::object();
          err["attempt"] = attempt + 1;
          err["endpoint"] = endpoint_names[s.out.endpoint];
          err["error"] = a.error;
          err["http_status"] = a.http_status == 0 ? io::OrderedJson() : io::OrderedJson(a.http_status);
          err["latency_ms"] = a.latency.count();
          err["at"] = iso_now();
          const bool last_try = a.status == Attempt::Status::kFatal || attempt >= settings.retry.retries;
          if (!last_try) {
            const milliseconds delay = backoff_delay(settings.retry, attempt + 1, rng, a.retry_after_s);
            if (a.retry_after_s) err["retry_after_s"] = *a.retry_after_s;
            err["retry_in_ms"] = delay.count();
            s.out.attempt_errors.push_back(std::move(err));
            s.waiting = true;
            s.due = Clock::now() + delay;
            continue;
          }
          s.out.attempt_errors.push_back(std::move(err));
          s.out.last = std::move(a);
          s.out.completed_at = iso_now();
          handle(s.job, s.out);
          slots.erase(it);
        }
      }
    } catch (...) {
      {
        std::lock_guard lock(state_m);
        if (!failure) failure = std::current_exception();
      }
      stop.set();
    }
    {
      std::lock_guard lock(stop.m);
      ++stop.workers_done;
    }
    stop.cv.notify_all();
  };

  std::vector<std::thread> threads;
  threads.reserve(n_threads);
  for (std::size_t w = 0; w < n_threads; ++w) {
    if (async_sessions.empty()) {
      threads.emplace_back(worker, w);
    } else {
      threads.emplace_back(async_worker, w);
    }
  }
  auto last_sync = Clock::now();
  for (;;) {
    bool all_done = false;
    {
      std::unique_lock lock(stop.m);
      all_done = stop.cv.wait_for(lock, milliseconds(250), [&] { return stop.workers_done == n_threads; });
    }
    std::size_t answered = 0, failed = 0, cached = 0;
    {
      std::lock_guard lock(state_m);
      answered = summary.answered;
      failed = summary.failed;
      cached = summary.from_cache;
      if (cache && !all_done) cache->commit();
    }
    progress.update(answered, failed, cached);
    if (settings.fsync && Clock::now() - last_sync >= std::chrono::seconds(1)) {
      responses.sync();
      errors.sync();
      last_sync = Clock::now();
    }
    if (all_done) break;
  }
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
  if (cache) cache->commit();
  if (settings.fsync) {
    responses.sync();
    errors.sync();
  }
  progress.finish();

  summary.unanswered = summary.total - (summary.answered_before + summary.answered);
  summary.model = reported_model.empty() ? server.model : reported_model;
  sessions.back()["ended_at"] = iso_now();
  sessions.back()["answered"] = summary.answered;
  sessions.back()["from_cache"] = summary.from_cache;
  sessions.back()["failed"] = summary.failed;
  sessions.back()["stopped_early"] = summary.stopped_early;
  write_manifest(true);
  return summary;
}

}  // namespace numcheck::llm
