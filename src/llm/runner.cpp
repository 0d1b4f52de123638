#include "llm/runner.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <deque>
#include <exception>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/ordered_parallel.hpp"
#include "core/prng.hpp"
#include "core/string_set.hpp"
#include "core/version.hpp"
#include "io/files.hpp"
#include "io/json_writer.hpp"
#include "llm/cache.hpp"
#include "llm/progress.hpp"
#include "llm/threaded_session.hpp"

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
  if (frequency_penalty) s.frequency_penalty = *frequency_penalty;
  if (presence_penalty) s.presence_penalty = *presence_penalty;
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
constexpr const char* kOwnedBodyFields[] = {
    "model", "messages", "prompt",     "temperature",       "top_p",
    "top_k", "seed",     "max_tokens", "frequency_penalty", "presence_penalty"};

// The most answers the cache's writer holds before committing them (it commits at every progress
// tick, 250 ms, when kEarlyWrite answers are queued, and at the end).
constexpr std::size_t kWriterBatch = 16384;
// The writer also commits, without waiting for the tick, as soon as this many answers are queued:
// a fast server answers thousands of requests a tick, and what is left unwritten when the requests
// end is written after them.
constexpr std::size_t kEarlyWrite = 2048;

// The current UTC time as "2026-12-02T09:41:05.123Z" (records carry two per request). The part up
// to the seconds is formatted once per second and thread (gmtime_r and strftime took 3% of a run's
// CPU when every call made it).
std::string iso_now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  thread_local std::time_t second = -1;
  thread_local char prefix[40] = {};
  thread_local std::size_t prefix_length = 0;
  if (t != second) {
    std::tm tm{};
    gmtime_r(&t, &tm);
    prefix_length = std::strftime(prefix, sizeof prefix, "%Y-%m-%dT%H:%M:%S", &tm);
    second = t;
  }
  std::string out(prefix, prefix_length);
  const auto m = static_cast<int>(ms < 0 ? ms + 1000 : ms);
  out += '.';
  out += static_cast<char>('0' + m / 100);
  out += static_cast<char>('0' + m / 10 % 10);
  out += static_cast<char>('0' + m % 10);
  out += 'Z';
  return out;
}

struct Job {
  std::size_t item = 0;  // index into items
  std::uint64_t request_index = 0;
  Request request;
  std::string cache_key;
  std::string request_sha256;  // for the cache's check
  std::string started_at;
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
  bool write_due = false;  // the cache's writer has a batch to write before the next tick
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

io::OrderedJson sampling_json(const Sampling& s) {
  io::OrderedJson j = io::OrderedJson::object();
  j["temperature"] = s.temperature;
  j["top_p"] = s.top_p;
  if (s.top_k) j["top_k"] = *s.top_k;
  j["seed"] = s.seed;
  j["max_tokens"] = s.max_tokens;
  if (s.frequency_penalty) j["frequency_penalty"] = *s.frequency_penalty;
  if (s.presence_penalty) j["presence_penalty"] = *s.presence_penalty;
  return j;
}

// One sampling field over a group of calls: its value when every call sent the same one, else
// the sorted distinct values (at most 8), else {"min", "max", "distinct"}.
template <typename T>
io::OrderedJson field_as_sent(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  if (v.size() == 1) return io::OrderedJson(v.front());
  if (v.size() <= 8) return io::OrderedJson(v);
  io::OrderedJson r = io::OrderedJson::object();
  r["min"] = v.front();
  r["max"] = v.back();
  r["distinct"] = v.size();
  return r;
}

// The sampling of a group of calls as sent: sampling_json's fields, each summarized by
// field_as_sent (equal to sampling_json(s) when every call sent s).
io::OrderedJson group_as_sent(const std::vector<Sampling>& g) {
  std::vector<double> temperature, top_p;
  std::vector<std::int64_t> top_k, max_tokens;
  std::vector<std::uint64_t> seed;
  std::vector<double> fp, pp;
  for (const auto& s : g) {
    temperature.push_back(s.temperature);
    top_p.push_back(s.top_p);
    if (s.top_k) top_k.push_back(*s.top_k);
    seed.push_back(s.seed);
    max_tokens.push_back(s.max_tokens);
    if (s.frequency_penalty) fp.push_back(*s.frequency_penalty);
    if (s.presence_penalty) pp.push_back(*s.presence_penalty);
  }
  io::OrderedJson j = io::OrderedJson::object();
  j["temperature"] = field_as_sent(temperature);
  j["top_p"] = field_as_sent(top_p);
  if (!top_k.empty()) j["top_k"] = field_as_sent(top_k);
  j["seed"] = field_as_sent(seed);
  j["max_tokens"] = field_as_sent(max_tokens);
  if (!fp.empty()) j["frequency_penalty"] = field_as_sent(fp);
  if (!pp.empty()) j["presence_penalty"] = field_as_sent(pp);
  return j;
}

}  // namespace

io::OrderedJson sampling_as_sent(const std::vector<WorkItem>& items, const RunSettings& settings) {
  if (items.empty()) return sampling_json(settings.sampling);
  if (settings.sampling_kind_field.empty()) {
    // Every call sent the run's sampling unless an item overrides it: one summary of one value
    // (what the summary of thousands of equal values is, without sorting them).
    if (std::all_of(items.begin(), items.end(),
                    [](const WorkItem& it) { return it.sampling == SamplingOverride{}; }))
      return group_as_sent({settings.sampling});
    std::vector<Sampling> all;
    all.reserve(items.size());
    for (const auto& it : items) all.push_back(it.sampling.apply(settings.sampling));
    return group_as_sent(all);
  }
  // Per call kind, in order of first appearance.
  std::vector<std::string> kinds;
  std::map<std::string, std::vector<Sampling>> groups;
  for (const auto& it : items) {
    auto f = it.fields.find(settings.sampling_kind_field);
    const std::string kind = f == it.fields.end() ? std::string("(none)")
                             : f->is_string()     ? f->get<std::string>()
                                                  : io::to_line(*f);
    auto [g, fresh] = groups.try_emplace(kind);
    if (fresh) kinds.push_back(kind);
    g->second.push_back(it.sampling.apply(settings.sampling));
  }
  io::OrderedJson by = io::OrderedJson::object();
  for (const auto& k : kinds) {
    io::OrderedJson g = group_as_sent(groups[k]);
    g["calls"] = groups[k].size();
    by[k] = std::move(g);
  }
  io::OrderedJson j = io::OrderedJson::object();
  j["by_" + settings.sampling_kind_field] = std::move(by);
  return j;
}

namespace {

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

}  // namespace

io::Json build_request_body(const WorkItem& item, const RunSettings& settings, const std::string& model,
                            Api api) {
  const Sampling s = item.sampling.apply(settings.sampling);
  io::Json body = io::Json::object();
  body["model"] = model;
  const std::optional<std::string>& system = item.system_prompt ? item.system_prompt : settings.system_prompt;
  if (api == Api::kEmbeddings) {  // no sampling: the vector of the prompt text, or of each input
    if (item.inputs.empty()) {
      body["input"] = item.prompt;
    } else {
      body["input"] = item.inputs;
    }
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
  if (s.top_k) body["top_k"] = *s.top_k;
  body["seed"] = s.seed;
  body["max_tokens"] = s.max_tokens;
  if (s.frequency_penalty) body["frequency_penalty"] = *s.frequency_penalty;
  if (s.presence_penalty) body["presence_penalty"] = *s.presence_penalty;
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

RequestBodies::RequestBodies(const RunSettings& settings, std::string model, Api api)
    : settings_(settings), model_(std::move(model)), api_(api) {
  if (api_ != Api::kChat) return;
  // A prompt no real one is: split around its JSON string when it occurs exactly once (an
  // --extra-body holding it keeps every body on the slow path).
  WorkItem marker;
  marker.prompt = "\x01numcheck request body prompt\x02";
  std::string line;
  io::append_json(line, build_request_body(marker, settings_, model_, api_));
  std::string quoted;
  io::append_json_string(quoted, marker.prompt);
  const std::size_t at = line.find(quoted);
  if (at == std::string::npos || line.find(quoted, at + 1) != std::string::npos) return;
  before_ = line.substr(0, at);
  after_ = line.substr(at + quoted.size());
  templated_ = true;
}

void RequestBodies::append(std::string& out, const WorkItem& item) const {
  // build_request_body reads an item's prompt, system prompt and sampling overrides: only the
  // prompt may differ from the template's item.
  if (!templated_ || item.system_prompt || !(item.sampling == SamplingOverride{})) {
    io::append_json(out, build_request_body(item, settings_, model_, api_));
    return;
  }
  out.reserve(out.size() + before_.size() + item.prompt.size() + after_.size() + 16);
  out += before_;
  io::append_json_string(out, item.prompt);
  out += after_;
}

std::size_t read_records(const fs::path& path, const std::function<void(const io::Json&, std::size_t)>& fn) {
  io::JsonlOptions options;
  options.torn = io::TornTail::kAppendLog;  // the runner appends these files; repair_torn_tail cuts it
  const io::JsonlStats stats = io::read_jsonl(
      path, [&](const io::Record& rec, std::size_t line) { fn(rec.json(), line); }, options);
  return stats.torn_bytes;
}

namespace {

// ---- The stages of run_items, in the order it calls them. ----

// Stage 1: items have unique non-empty ids and fields that do not collide with the runner's.
void check_items(const std::vector<WorkItem>& items, const RunSettings& settings) {
  if (settings.concurrency == 0) fail(ErrorCode::kUsage, "--concurrency must be at least 1");
  if (settings.id_field.empty()) fail(ErrorCode::kUsage, "run settings: empty id field");
  StringViewSet ids(items.size());   // views of the items' ids, which outlive it
  std::vector<std::string> allowed;  // field names found not to be reserved
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto& it = items[i];
    if (it.item_id.empty()) fail("work item {} has an empty id", i + 1);
    if (!ids.insert(it.item_id)) fail("work item id '{}' occurs twice", it.item_id);
    if (!it.fields.is_object()) fail("work item '{}': fields must be a JSON object", it.item_id);
    for (auto f = it.fields.begin(); f != it.fields.end(); ++f) {
      // Items share their field names: each name is checked against the reserved ones once.
      if (std::find(allowed.begin(), allowed.end(), f.key()) != allowed.end()) continue;
      bool clash = f.key() == settings.id_field;
      for (const char* r : kRecordFields) clash = clash || f.key() == r;
      if (clash) fail("work item '{}': field '{}' is reserved for the runner", it.item_id, f.key());
      allowed.push_back(f.key());
    }
  }
  if (!settings.extra_body.is_object()) fail(ErrorCode::kUsage, "--extra-body must be a JSON object");
}

struct RunPaths {
  fs::path dir, run_json, responses, errors;
  explicit RunPaths(const fs::path& out)
      : dir(out),
        run_json(out / "run.json"),
        responses(out / "responses.jsonl"),
        errors(out / "errors.jsonl") {}
};

// Stage 2: the run directory: creates it, takes its lock (run.lock: a second runner on the same
// folder is refused while the first runs), refuses an existing run without resume. Returns
// whether it holds an earlier run.
bool open_run_dir(const RunPaths& p, bool resume, io::FileLock& lock) {
  std::error_code ec;
  fs::create_directories(p.dir, ec);
  if (ec) fail(ErrorCode::kIo, "cannot create {}: {}", p.dir.string(), ec.message());
  if (!lock.try_lock(p.dir / "run.lock")) {
    fail(
        "another numcheck process is running in {} (it holds {}); wait for it to end or choose another --out",
        p.dir.string(), (p.dir / "run.lock").string());
  }
  const bool existing = fs::exists(p.run_json) || fs::exists(p.responses) || fs::exists(p.errors);
  if (existing && !resume) {
    fail(ErrorCode::kUsage, "{} already holds a run; pass --resume to continue it or choose a new --out",
         p.dir.string());
  }
  if (existing && !fs::exists(p.run_json)) {
    fail(ErrorCode::kInvalidInput,
         "{} has records but no run.json; it is not a run directory numcheck can resume", p.dir.string());
  }
  return existing;
}

// What this session sends and whom to: fixed after the probe.
struct Target {
  ServerInfo server;
  Api api = Api::kChat;
  std::vector<std::string> endpoint_names;
  std::string request_model;
  [[nodiscard]] const char* api_name() const { return llm::api_name(api); }
};

// Stage 3: the settings that must match on --resume (the runner's and the caller's).
io::OrderedJson make_binding(const std::vector<WorkItem>& items, const RunSettings& settings,
                             const Backend& backend, const Target& t) {
  io::OrderedJson binding = io::OrderedJson::object();
  binding["kind"] = settings.kind;
  binding["id_field"] = settings.id_field;
  binding["backend"] = backend.kind();
  binding["api"] = t.api_name();
  binding["model_requested"] = t.request_model;
  binding["sampling"] = sampling_as_sent(items, settings);
  binding["system_prompt"] =
      settings.system_prompt ? io::OrderedJson(*settings.system_prompt) : io::OrderedJson();
  binding["extra_body"] = io::OrderedJson::parse(io::to_line(settings.extra_body));
  binding["server_identity"] = io::OrderedJson::parse(io::to_line(t.server.identity));
  for (auto it = settings.binding.begin(); it != settings.binding.end(); ++it) {
    if (binding.contains(it.key())) fail("run settings: binding key '{}' is reserved", it.key());
    binding[it.key()] = it.value();
  }
  return binding;
}

// What earlier sessions left in the run directory.
struct Prior {
  io::OrderedJson manifest;  // null for a fresh run
  std::unordered_set<std::string> answered;
  std::uint64_t next_request_index = 0;
  std::string reported_model;  // model confirmed by an answer ("" when none yet)
  io::OrderedJson sessions = io::OrderedJson::array();
  std::size_t torn_bytes = 0;
};

void note_request_index(const io::Json& rec, std::uint64_t& next) {
  if (auto ri = rec.find("request_index"); ri != rec.end() && ri->is_number_unsigned())
    next = std::max(next, ri->get<std::uint64_t>() + 1);
}

// Stage 4: checks the binding against run.json, repairs torn tails, reads the answered ids.
Prior load_prior(const RunPaths& p, const RunSettings& settings, const io::OrderedJson& binding) {
  Prior prior;
  prior.manifest = io::parse_ordered_json(io::read_file(p.run_json), p.run_json.string());
  check_binding(prior.manifest.value("binding", io::OrderedJson()), binding, p.run_json);
  if (prior.manifest.contains("sessions") && prior.manifest["sessions"].is_array())
    prior.sessions = prior.manifest["sessions"];
  if (prior.manifest.contains("model") && prior.manifest["model"].is_string() &&
      !prior.manifest.value("model_from_probe", true)) {
    prior.reported_model = prior.manifest["model"].get<std::string>();
  }
  prior.torn_bytes += io::repair_torn_tail(p.responses);
  prior.torn_bytes += io::repair_torn_tail(p.errors);
  if (fs::exists(p.responses)) {
    read_records(p.responses, [&](const io::Json& rec, std::size_t line) {
      auto id = rec.find(settings.id_field);
      if (id == rec.end() || !id->is_string())
        fail("{}:{}: missing field '{}'", p.responses.string(), line, settings.id_field);
      if (!prior.answered.insert(id->get<std::string>()).second) {
        fail("{}:{}: a second record for '{}' (the file was edited?)", p.responses.string(), line,
             id->get<std::string>());
      }
      note_request_index(rec, prior.next_request_index);
    });
  }
  if (fs::exists(p.errors)) {
    read_records(p.errors, [&](const io::Json& rec, std::size_t) {
      note_request_index(rec, prior.next_request_index);
    });
  }
  return prior;
}

// run.json: the fixed parts of this session, rewritten with the counts at its start and end.
struct Manifest {
  const RunSettings& settings;
  const Backend& backend;
  const Target& target;
  const io::OrderedJson& binding;
  const Prior& prior;
  io::OrderedJson recorded = io::OrderedJson::object();
  std::string session_started;
  fs::path path;

  Manifest(const RunSettings& s, const Backend& b, const Target& t, const io::OrderedJson& bind,
           const Prior& p, fs::path run_json)
      : settings(s),
        backend(b),
        target(t),
        binding(bind),
        prior(p),
        session_started(iso_now()),
        path(std::move(run_json)) {
    recorded["concurrency_per_endpoint"] = s.concurrency;
    recorded["retries"] = s.retry.retries;
    recorded["retry_base_delay_ms"] = s.retry.base_delay.count();
    recorded["retry_max_delay_ms"] = s.retry.max_delay.count();
    recorded["max_errors"] = s.max_errors ? io::OrderedJson(*s.max_errors) : io::OrderedJson();
    recorded["cache"] = s.use_cache ? io::OrderedJson(s.cache_path.string()) : io::OrderedJson(false);
    for (auto it = s.recorded.begin(); it != s.recorded.end(); ++it) recorded[it.key()] = it.value();
  }

  void write(const RunSummary& summary, const std::string& reported_model, const io::OrderedJson& sessions,
             bool final_write) const {
    io::OrderedJson m = io::OrderedJson::object();
    m["kind"] = settings.kind;
    m["numcheck_version"] = kVersion;
    m["simulated"] = backend.simulated();
    m["model"] = reported_model.empty() ? target.server.model : reported_model;
    m["model_from_probe"] = reported_model.empty();
    m["model_requested"] = target.request_model;
    m["system"] = backend.kind();
    m["api"] = target.api_name();
    m["endpoints"] = target.endpoint_names;
    m["sampling"] = binding["sampling"];
    m["system_prompt"] = binding["system_prompt"];
    m["extra_body"] = binding["extra_body"];
    for (auto it = settings.binding.begin(); it != settings.binding.end(); ++it) m[it.key()] = it.value();
    for (auto it = settings.info.begin(); it != settings.info.end(); ++it) m[it.key()] = it.value();
    m["settings"] = recorded;
    m["server"] = target.server.info;
    m["started_at"] = prior.manifest.is_object() && prior.manifest.contains("started_at")
                          ? prior.manifest["started_at"]
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
    io::write_file_atomic(path, io::to_pretty(m));
  }
};

// One item's attempts so far (the retry state, the same for every backend).
struct ItemAttempts {
  Job job;
  std::size_t home = 0;      // endpoint of the first attempt; attempt k goes to home + k
  std::size_t endpoint = 0;  // endpoint of the latest attempt
  int attempts = 0;
  io::OrderedJson attempt_errors = io::OrderedJson::array();
  Attempt last;
  std::string completed_at;
  bool waiting = false;  // waiting for a retry at `due`
  Clock::time_point due;
};

// The retry logic: takes the result of the item's latest attempt. Returns true when the item is
// finished (answered, or failed for good: s.last holds the final attempt); otherwise the failed
// attempt is recorded in attempt_errors and the item waits for its retry at s.due.
bool after_attempt(ItemAttempts& s, Attempt a, const RetryPolicy& policy, Rng& rng,
                   const std::vector<std::string>& endpoint_names,
                   const std::function<std::string(const Request&, const Completion&)>& check_answer) {
  const int attempt = s.attempts++;  // 0-based number of this attempt
  if (a.status == Attempt::Status::kOk && check_answer) {
    if (std::string why = check_answer(s.job.request, a.completion); !why.empty()) {
      a.status = Attempt::Status::kRetryable;  // never recorded as an answer, never cached
      a.error = "answer rejected: " + why;
      a.completion = Completion{};
      a.raw_body.clear();
    }
  }
  if (a.status != Attempt::Status::kOk) {
    io::OrderedJson err = io::OrderedJson::object();
    err["attempt"] = attempt + 1;
    err["endpoint"] = endpoint_names[s.endpoint];
    err["error"] = a.error;
    err["http_status"] = a.http_status == 0 ? io::OrderedJson() : io::OrderedJson(a.http_status);
    err["latency_ms"] = a.latency.count();
    err["at"] = iso_now();
    if (a.status == Attempt::Status::kRetryable && attempt < policy.retries) {
      const milliseconds delay = backoff_delay(policy, attempt + 1, rng, a.retry_after_s);
      if (a.retry_after_s) err["retry_after_s"] = *a.retry_after_s;
      err["retry_in_ms"] = delay.count();
      s.attempt_errors.push_back(std::move(err));
      s.waiting = true;
      s.due = Clock::now() + delay;
      return false;
    }
    s.attempt_errors.push_back(std::move(err));
  }
  s.last = std::move(a);
  s.completed_at = iso_now();
  return true;
}

// The state one session shares between its event-loop threads: the queue of pending items, the
// record files, the cache and the counts.
// The first finished items of a session, while they all failed with one non-retryable error.
struct SameErrors {
  bool disarmed = false;  // an item succeeded (or failed otherwise): the rule no longer applies
  std::size_t count = 0;
  std::string error;
  // Adds a failed item; true when the first `k` items failed alike (k = 0: never).
  bool add(bool fatal, const std::string& e, std::size_t k) {
    if (disarmed || k == 0) return false;
    if (!fatal || (count > 0 && e != error)) {
      disarmed = true;
      return false;
    }
    error = e;
    return ++count == k;
  }
};

class Dispatch {
 public:
  // An answer waiting for the cache's writer (write_cache), with the model it is stored under.
  struct QueuedPut {
    ResponseCache::Entry entry;
    std::string model;
  };

  // `first_reader`: the cache connection opened ahead (run_items), or null to open it here.
  Dispatch(const std::vector<WorkItem>& items, const RunSettings& settings, const Target& target,
           std::vector<std::size_t> pending, const Prior& prior, std::size_t session_no,
           const RunPaths& paths, RunSummary& summary, std::unique_ptr<ResponseCache> first_reader)
      : items_(items),
        settings_(settings),
        target_(target),
        pending_(std::move(pending)),
        next_request_index_(prior.next_request_index),
        reported_model_(prior.reported_model),
        session_no_(session_no),
        identity_line_(io::to_line(target.server.identity)),
        key_hasher_(identity_line_),
        bodies_(settings, target.request_model, target.api),
        responses_(paths.responses, false),
        errors_(paths.errors, false),
        summary_(summary) {
    if (settings.use_cache) {
      if (first_reader) {
        readers_.push_back(std::make_unique<Reader>());
        readers_.back()->cache = std::move(first_reader);
      }
      add_readers(1);
      writer_ = std::make_unique<ResponseCache>(settings.cache_path, ResponseCache::OnError::kGoOn);
      // write_cache commits what arrived since the last tick in one commit: one transaction,
      // whatever the batch's size.
      writer_->set_batch_size(kWriterBatch);
      puts_.reserve(std::min(kEarlyWrite, pending_.size()));
      spare_puts_.reserve(puts_.capacity());
    }
  }

  [[nodiscard]] std::size_t pending() const { return pending_.size(); }
  [[nodiscard]] const Target& target() const { return target_; }
  [[nodiscard]] const RunSettings& settings() const { return settings_; }
  StopFlag& stop() { return stop_; }

  // One cache connection for the lookups of each event loop (`lane`), so that the loops never
  // wait for each other's lookups; called before the loops start.
  void add_readers(std::size_t lanes) {
    if (!settings_.use_cache) return;
    while (readers_.size() < lanes) {
      readers_.push_back(std::make_unique<Reader>());
      readers_.back()->cache =
          std::make_unique<ResponseCache>(settings_.cache_path, ResponseCache::OnError::kGoOn);
    }
  }

  // The next pending item's job (with its request index), or nullopt when none is left or the
  // session stops. Cache hits are recorded here and never returned. `lane`: the calling event
  // loop's number (its cache connection).
  std::optional<Job> next_job(std::size_t lane) {
    while (!stop_.is_set()) {
      const std::size_t k = next_.fetch_add(1);
      if (k >= pending_.size()) return std::nullopt;
      Job job = make_job(pending_[k]);
      std::optional<Completion> hit;
      job.request_index = next_request_index_.fetch_add(1);
      if (!readers_.empty()) {
        Reader& r = *readers_[lane % readers_.size()];
        std::lock_guard lock(r.m);  // taken by the progress thread only to collect the hits
        hit = r.cache->get(job.cache_key, job.request_sha256);
        if (hit && settings_.check_answer && !settings_.check_answer(job.request, *hit).empty()) {
          hit.reset();  // an entry the caller's check refuses is never served: ask again
          ++r.refused;
        }
      }
      job.started_at = iso_now();
      if (!hit) return job;
      responses_.append_line(
          response_line(job, *hit, "", 0, 0, io::OrderedJson::array(), true, job.started_at));
      std::lock_guard lock(m_);
      ++summary_.answered;
      ++summary_.from_cache;
      same_errors_.disarmed = true;
    }
    return std::nullopt;
  }

  // Jobs made ahead (EventLoop::prepare_ahead) by a loop whose slots were all busy. They belong to
  // no loop: the first loop with a free slot sends the oldest, so a loop held up by a slow request
  // never holds back an item that another loop could send. At most `limit` jobs are made ahead or
  // waiting at once: claim_ahead() reserves one (false when the limit is reached), park() hands the
  // job made over, release_ahead() gives the reservation back when no job came of it.
  bool claim_ahead(std::size_t limit) {
    std::lock_guard lock(parked_m_);
    if (ahead_ >= limit) return false;
    ++ahead_;
    return true;
  }
  void park(Job job) {
    std::lock_guard lock(parked_m_);
    parked_.push_back(std::move(job));
  }
  void release_ahead() {
    std::lock_guard lock(parked_m_);
    --ahead_;
  }
  std::optional<Job> take_parked() {
    std::lock_guard lock(parked_m_);
    if (parked_.empty()) return std::nullopt;
    Job job = std::move(parked_.front());
    parked_.pop_front();
    --ahead_;
    return job;
  }
  // Jobs being made ahead or waiting to be sent: a loop with nothing in flight waits for them
  // before it ends (one of them may be its to send).
  [[nodiscard]] std::size_t ahead() {
    std::lock_guard lock(parked_m_);
    return ahead_;
  }

  // Records an item that failed for good: its line appended to the errors file (one O_APPEND write),
  // then the counts and the stopping rules under m_.
  void finish_failed(const ItemAttempts& s) {
    const std::string& ep = target_.endpoint_names[s.endpoint % target_.endpoint_names.size()];
    errors_.append_line(error_line(s, ep));
    std::lock_guard lock(m_);
    ++summary_.failed;
    if (settings_.max_errors && summary_.failed >= *settings_.max_errors) {
      summary_.stopped_early = true;
      if (summary_.stop_reason.empty())
        summary_.stop_reason = fmt::format("--max-errors {}", *settings_.max_errors);
      stop_.set();
    }
    if (same_errors_.add(s.last.status == Attempt::Status::kFatal, s.last.error,
                         settings_.stop_after_same_errors)) {
      summary_.stopped_early = true;
      if (summary_.stop_reason.empty()) {
        summary_.stop_reason = fmt::format("the first {} requests all failed with the same error: {}",
                                           settings_.stop_after_same_errors, s.last.error);
        // OpenAI's API refuses fields it does not know, top_k among them.
        if (settings_.sampling.top_k && s.last.error.find("top_k") != std::string::npos)
          summary_.stop_reason +=
              " (the server refuses top_k: run again with --no-top-k, or \"top_k\": null in a study "
              "file's sampling)";
      }
      stop_.set();
    }
  }

  // Records the answers one event loop received together (every one answered: EventLoop::take):
  // their lines appended in one write (AppendFile::append_lines: the same guarantee as a write per
  // line, every line in the kernel before the loop waits again), their cache entries made outside
  // the locks and queued under one lock, the counts under one. `lines` and `puts`: the loop's
  // buffers, kept between calls.
  void finish_answered(const std::vector<ItemAttempts>& answered, std::string& lines,
                       std::vector<QueuedPut>& puts) {
    if (answered.empty()) return;
    lines.clear();
    puts.clear();
    for (const auto& s : answered) {
      const std::string& ep = target_.endpoint_names[s.endpoint % target_.endpoint_names.size()];
      append_response_line(lines, s.job, s.last.completion, ep, s.last.latency.count(), s.attempts,
                           s.attempt_errors, false, s.completed_at);
      lines.push_back('\n');
    }
    responses_.append_lines(lines);
    if (writer_) {
      for (const auto& s : answered) {
        puts.push_back(QueuedPut{
            ResponseCache::make_entry(s.job.cache_key, s.job.request_sha256, s.last.completion), {}});
      }
    }
    {
      std::lock_guard lock(m_);
      summary_.answered += answered.size();
      same_errors_.disarmed = true;
      for (std::size_t i = 0; i < answered.size(); ++i) {
        const Completion& c = answered[i].last.completion;
        if (reported_model_.empty() && !c.model.empty()) reported_model_ = c.model;
        if (writer_) puts[i].model = reported_model_.empty() ? target_.server.model : reported_model_;
      }
    }
    if (!writer_) return;
    bool due = false;
    {
      std::lock_guard lock(puts_m_);
      const std::size_t before = puts_.size();
      for (auto& p : puts) puts_.push_back(std::move(p));
      due = before < kEarlyWrite && puts_.size() >= kEarlyWrite;
    }
    if (due) {
      {
        std::lock_guard lock(stop_.m);
        stop_.write_due = true;
      }
      stop_.cv.notify_all();
    }
  }

  // Stops the session because RunSettings::interrupt was set (Ctrl-C).
  void interrupt() {
    {
      std::lock_guard lock(m_);
      if (summary_.interrupted) return;
      summary_.interrupted = true;
      if (summary_.stop_reason.empty()) summary_.stop_reason = "interrupted";
    }
    stop_.set();
  }

  // A thread's failure (an I/O error writing records, a cache error): stops the session; run_items
  // rethrows the first one after every thread has ended.
  void abort_with(std::exception_ptr e) {
    {
      std::lock_guard lock(m_);
      if (!failure_) failure_ = std::move(e);
    }
    stop_.set();
  }

  // Progress counts; writes the cache's queued entries while the threads work (a cache that
  // cannot be written is turned off, the session goes on: RunSummary::cache_warning).
  std::tuple<std::size_t, std::size_t, std::size_t> counts(bool commit_cache) {
    if (writer_ && commit_cache) write_cache();
    std::lock_guard lock(m_);
    return {summary_.answered, summary_.failed, summary_.from_cache};
  }

  void sync_files() {
    responses_.sync();
    errors_.sync();
  }

  // After every thread ended: rethrows a thread's failure, then writes the cache's last answers and
  // closes it while another thread syncs the record files. The two are independent and both wait
  // (for the cache's last writes, for the disk), so the shorter one no longer adds to the end of
  // every run.
  // A failure of either is thrown once both have ended.
  std::string close() {
    if (failure_) std::rethrow_exception(failure_);
    if (!writer_) {  // nothing to do beside the sync: no thread
      if (settings_.fsync) sync_files();
      return reported_model_;
    }
    std::exception_ptr sync_error;
    std::thread sync_thread;
    if (settings_.fsync) {
      sync_thread = std::thread([this, &sync_error] {
        try {
          sync_files();
        } catch (...) {
          sync_error = std::current_exception();
        }
      });
    }
    try {
      write_cache();
      summary_.cache_warning = writer_->failure();
      for (const auto& r : readers_) {
        summary_.cache_rejected += r->cache->rejected();
        summary_.cache_refused += r->refused;
        if (summary_.cache_warning.empty()) summary_.cache_warning = r->cache->failure();
      }
      readers_.clear();
      writer_.reset();
    } catch (...) {
      if (sync_thread.joinable()) sync_thread.join();
      throw;
    }
    if (sync_thread.joinable()) sync_thread.join();
    if (sync_error) std::rethrow_exception(sync_error);
    return reported_model_;
  }

 private:
  // Writes the answers queued by finish_answered() and the hits counted by next_job() in one commit (at
  // most kWriterBatch answers each: ResponseCache::put_entry) on the writer's own connection, holding
  // no lock the event loops need: lookups (each loop's own connection) and new answers go on while it
  // commits.
  // Called by the thread that shows progress, and by close() after the event loops have ended;
  // never by two threads at once.
  void write_cache() {
    // The queue is handed over with the empty vector kept from the previous batch, and this one's
    // is kept in turn: a queue that grew from nothing every batch reallocated and moved its answers
    // into fresh memory again and again (a quarter of a run's page faults with the cache).
    std::vector<QueuedPut> puts;
    {
      std::lock_guard lock(puts_m_);
      puts.swap(puts_);
      puts_.swap(spare_puts_);
    }
    for (const auto& r : readers_) {
      std::lock_guard lock(r->m);
      writer_->add_hits(r->cache->take_hits());
    }
    writer_->reserve(puts.size());
    for (auto& p : puts) writer_->put_entry(std::move(p.entry), p.model, identity_line_);
    puts.clear();
    {
      std::lock_guard lock(puts_m_);
      if (puts.capacity() > spare_puts_.capacity()) spare_puts_.swap(puts);
    }
    writer_->commit();
  }

  Job make_job(std::size_t item_index) const {
    const WorkItem& item = items_[item_index];
    Job job;
    job.item = item_index;
    job.request.item_id = item.item_id;
    job.request.prompt = item.prompt;
    job.request.sampling = item.sampling.apply(settings_.sampling);
    bodies_.append(job.request.body, item);
    if (writer_) {
      job.cache_key = key_hasher_.key(job.request.body);
      job.request_sha256 = request_hash_from_line(job.request.body);
    }
    return job;
  }

  // A record's first members, written straight into `line` (io::JsonWriter: to_line's bytes for the
  // same record built as an OrderedJson): the id field, the item's fields, request_index, endpoint
  // (null for a cached answer) and "request" with the exact body bytes sent.
  void begin_record(io::JsonWriter& w, const Job& job, const std::string* endpoint) const {
    using namespace io::literals;
    const WorkItem& item = items_[job.item];
    w.begin_object().key(settings_.id_field).value(item.item_id);
    for (auto f = item.fields.begin(); f != item.fields.end(); ++f) w.key(f.key()).json(f.value());
    w.key("request_index"_key).value(job.request_index);
    w.key("endpoint"_key);
    if (endpoint != nullptr) {
      w.value(*endpoint);
    } else {
      w.null();
    }
    w.key("request"_key).raw(job.request.body);
  }

  std::string response_line(const Job& job, const Completion& c, const std::string& endpoint,
                            std::int64_t latency_ms, int attempts, const io::OrderedJson& attempt_errors,
                            bool cached, const std::string& completed_at) const {
    std::string line;
    line.reserve(job.request.body.size() + c.content.size() + 640);
    append_response_line(line, job, c, endpoint, latency_ms, attempts, attempt_errors, cached, completed_at);
    return line;
  }

  // response_line's bytes appended to `line` (without a "\n").
  void append_response_line(std::string& line, const Job& job, const Completion& c,
                            const std::string& endpoint, std::int64_t latency_ms, int attempts,
                            const io::OrderedJson& attempt_errors, bool cached,
                            const std::string& completed_at) const {
    using namespace io::literals;
    io::JsonWriter w(line);
    begin_record(w, job, cached ? nullptr : &endpoint);
    write_completion_fields(w, c);
    w.key("latency_ms"_key).value(latency_ms);
    w.key("attempts"_key).value(attempts);
    w.key("attempt_errors"_key).json(attempt_errors);
    w.key("cached"_key).value(cached);
    w.key("started_at"_key).value(job.started_at);
    w.key("completed_at"_key).value(completed_at);
    w.key("session"_key).value(static_cast<std::uint64_t>(session_no_));
    w.end_object();
  }

  std::string error_line(const ItemAttempts& s, const std::string& endpoint) const {
    using namespace io::literals;
    std::string line;
    io::JsonWriter w(line);
    begin_record(w, s.job, &endpoint);
    w.key("error"_key).value(s.last.error);
    w.key("http_status"_key);
    if (s.last.http_status == 0) {
      w.null();
    } else {
      w.value(static_cast<std::int64_t>(s.last.http_status));
    }
    w.key("attempts"_key).value(s.attempts);
    w.key("attempt_errors"_key).json(s.attempt_errors);
    w.key("started_at"_key).value(s.job.started_at);
    w.key("completed_at"_key).value(s.completed_at);
    w.key("session"_key).value(static_cast<std::uint64_t>(session_no_));
    w.end_object();
    return line;
  }

  const std::vector<WorkItem>& items_;
  const RunSettings& settings_;
  const Target& target_;
  const std::vector<std::size_t> pending_;
  std::atomic<std::size_t> next_{0};
  std::mutex m_;  // summary, reported model, failure
  // A cache connection for one event loop's lookups; `m` keeps the progress thread's collection
  // of the hits apart from them.
  struct Reader {
    std::mutex m;
    std::unique_ptr<ResponseCache> cache;
    std::size_t refused = 0;  // cached answers check_answer refused
  };
  std::mutex parked_m_;                // parked_, ahead_
  std::deque<Job> parked_;             // jobs made ahead, waiting for a free slot in any loop
  std::size_t ahead_ = 0;              // jobs being made ahead or parked
  std::mutex puts_m_;                  // puts_, spare_puts_
  std::vector<QueuedPut> puts_;        // answers waiting for write_cache
  std::vector<QueuedPut> spare_puts_;  // empty; the capacity write_cache hands puts_ next
  std::atomic<std::uint64_t> next_request_index_;
  std::string reported_model_;
  std::size_t session_no_;
  std::string identity_line_;  // the server identity's JSON line: part of every cache key
  CacheKeyHasher key_hasher_;  // the keys' hash up to the request body (after identity_line_)
  RequestBodies bodies_;
  io::AppendFile responses_, errors_;
  std::vector<std::unique_ptr<Reader>> readers_;  // lookups, one per event loop (none: no cache)
  std::unique_ptr<ResponseCache> writer_;         // writes (write_cache only)
  RunSummary& summary_;
  StopFlag stop_;
  std::exception_ptr failure_;
  SameErrors same_errors_;
};

// One event loop: up to `slots` items in flight on `session`, each with its retries. Items waiting
// for a retry when the session stops are abandoned (no record: --resume retries them).
class EventLoop {
 public:
  EventLoop(Dispatch& d, AsyncSession& session, std::size_t thread, std::size_t slots, std::size_t loops,
            Rng rng)
      : d_(d),
        session_(session),
        thread_(thread),
        slots_(slots),
        loops_(loops),
        rng_(rng),
        n_endpoints_(std::max<std::size_t>(1, d.target().endpoint_names.size())) {}

  void run() {
    for (;;) {
      const bool stopping = d_.stop().is_set();
      if (!stopping) fill();
      const auto soonest = relaunch_due(stopping);
      // Nothing in flight: the loop ends, unless another loop is making a job ahead that no loop
      // has taken yet (this one may be the first with a free slot when it is parked).
      if (items_.empty() && (stopping || d_.ahead() == 0)) break;
      const auto wait =
          std::max(std::chrono::duration_cast<milliseconds>(soonest - Clock::now()), milliseconds(1));
      std::vector<std::pair<std::uint64_t, Attempt>> finished = std::move(failed_starts_);
      failed_starts_.clear();
      if (finished.empty()) {
        if (session_.in_flight() == 0) {
          (void)d_.stop().sleep_for(wait);
        } else {
          prepare_ahead(stopping);
          finished = session_.wait(wait);
        }
      }
      std::vector<ItemAttempts> answered;
      for (auto& [tag, a] : finished) take(tag, std::move(a), answered);
      if (!answered.empty()) record_after_refill(answered);
    }
  }

 private:
  // While every slot is busy, makes the next item's job (its request body, cache keys and cache
  // lookup) before waiting, so that a slot freed by an answer is refilled with one send: the
  // request no longer waits for that work (with one request in flight, all of it was between an
  // answer and the next request). The job is parked in the Dispatch, not kept here: whichever loop
  // frees a slot first sends it (a loop held up by a stalled request never holds it back). At most
  // as many jobs as there are loops are made ahead at a time.
  // A failure here (a cache error, the caller's answer check throwing on a cached answer) is kept
  // and thrown where making the job would have thrown without this: in fill(), after the answers
  // that arrive meanwhile have been recorded.
  void prepare_ahead(bool stopping) {
    if (ahead_error_ || exhausted_ || stopping || items_.size() < slots_) return;
    if (!d_.claim_ahead(loops_)) return;
    try {
      std::optional<Job> job = d_.next_job(thread_);
      if (job) {
        d_.park(std::move(*job));
      } else {
        exhausted_ = true;
        d_.release_ahead();
      }
    } catch (...) {
      d_.release_ahead();
      ahead_error_ = std::current_exception();
    }
  }

  // Starts new items until every slot is busy or no item is left: jobs made ahead by any loop
  // first, then the next pending items.
  void fill() {
    while (items_.size() < slots_) {
      if (ahead_error_) std::rethrow_exception(std::exchange(ahead_error_, nullptr));
      std::optional<Job> job = d_.take_parked();
      if (job) {
        job->started_at = iso_now();  // when it is sent, not when it was made
      } else if (!exhausted_) {
        job = d_.next_job(thread_);
        if (!job) exhausted_ = true;
      }
      if (!job) return;
      const std::uint64_t tag = next_tag_++;
      ItemAttempts& s = items_[tag];
      s.home = (thread_ * slots_ + static_cast<std::size_t>(tag)) % n_endpoints_;
      s.job = std::move(*job);
      launch(tag, s);
    }
  }

  // An exception from the backend's start() is that attempt's (fatal) result, like one from send().
  void launch(std::uint64_t tag, ItemAttempts& s) {
    s.waiting = false;
    s.endpoint = (s.home + static_cast<std::size_t>(s.attempts)) % n_endpoints_;
    try {
      session_.start(tag, s.job.request, s.endpoint);
    } catch (const std::exception& e) {
      Attempt a;
      a.status = Attempt::Status::kFatal;
      a.error = std::string("internal error: ") + e.what();
      failed_starts_.emplace_back(tag, std::move(a));
    }
  }

  // Relaunches the retries that are due (drops them when stopping); returns when to look again.
  Clock::time_point relaunch_due(bool stopping) {
    const auto now = Clock::now();
    auto soonest = now + milliseconds(100);
    for (auto it = items_.begin(); it != items_.end();) {
      ItemAttempts& s = it->second;
      if (s.waiting && stopping) {
        it = items_.erase(it);
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
    return soonest;
  }

  // An attempt's result: a failed item is recorded (and counted) at once, since it may stop the
  // session before another item starts; an answered one goes to `answered`.
  void take(std::uint64_t tag, Attempt a, std::vector<ItemAttempts>& answered) {
    auto it = items_.find(tag);
    if (it == items_.end()) return;
    if (after_attempt(it->second, std::move(a), d_.settings().retry, rng_, d_.target().endpoint_names,
                      d_.settings().check_answer)) {
      if (it->second.last.status == Attempt::Status::kOk) {
        answered.push_back(std::move(it->second));
      } else {
        d_.finish_failed(it->second);
      }
      items_.erase(it);
    }
  }

  // Answered items free their slots: new items are started and sent first, and the answers are
  // recorded while those requests are in flight (with one request in flight, recording no longer
  // waits for the next round trip or the other way round). Recorded even when starting fails.
  void record_after_refill(std::vector<ItemAttempts>& answered) {
    try {
      if (!d_.stop().is_set()) fill();
      session_.send_started();
    } catch (...) {
      d_.finish_answered(answered, lines_, puts_);
      throw;
    }
    d_.finish_answered(answered, lines_, puts_);
  }

  Dispatch& d_;
  AsyncSession& session_;
  std::size_t thread_, slots_, loops_;
  Rng rng_;
  std::size_t n_endpoints_;
  std::unordered_map<std::uint64_t, ItemAttempts> items_;
  std::vector<std::pair<std::uint64_t, Attempt>> failed_starts_;
  std::uint64_t next_tag_ = 0;
  bool exhausted_ = false;
  std::string lines_;                      // the answers' lines (finish_answered), kept between calls
  std::vector<Dispatch::QueuedPut> puts_;  // their cache entries (finish_answered), kept between calls
  std::exception_ptr ahead_error_;  // what making a job ahead threw (prepare_ahead), for fill() to throw
};

// Stage 5: the sessions that carry the requests. `concurrency` requests in flight per endpoint:
// with an asynchronous backend a few event loops (one per core, at most 4) carry them all; a
// blocking backend gets one event loop over a thread per request in flight.
struct Lanes {
  std::vector<std::unique_ptr<AsyncSession>> sessions;
  std::size_t slots_per_thread = 1;
};

Lanes open_lanes(Backend& backend, std::size_t n_workers) {
  Lanes lanes;
  if (auto first = backend.open_async_session()) {
    const std::size_t cores = core::thread_count(0);
    const std::size_t n_threads = std::min(n_workers, std::min<std::size_t>(cores, 4));
    lanes.slots_per_thread = (n_workers + n_threads - 1) / n_threads;
    lanes.sessions.push_back(std::move(first));
    for (std::size_t t = 1; t < n_threads; ++t) lanes.sessions.push_back(backend.open_async_session());
  } else {
    lanes.slots_per_thread = n_workers;
    lanes.sessions.push_back(make_threaded_session(backend, n_workers));
  }
  return lanes;
}

// Stage 6: runs the event loops; the calling thread shows progress and syncs the files.
void run_lanes(Dispatch& d, Lanes& lanes, Progress& progress) {
  const std::size_t n_threads = lanes.sessions.size();
  const Rng jitter_root(d.settings().sampling.seed, "retry-jitter");
  StopFlag& stop = d.stop();
  std::vector<std::thread> threads;
  threads.reserve(n_threads);
  for (std::size_t t = 0; t < n_threads; ++t) {
    threads.emplace_back([&, t] {
      try {
        EventLoop(d, *lanes.sessions[t], t, lanes.slots_per_thread, n_threads, jitter_root.split(t)).run();
      } catch (...) {
        d.abort_with(std::current_exception());
      }
      {
        std::lock_guard lock(stop.m);
        ++stop.workers_done;
      }
      stop.cv.notify_all();
    });
  }
  auto last_sync = Clock::now();
  for (bool all_done = false; !all_done;) {
    {
      std::unique_lock lock(stop.m);
      stop.cv.wait_for(lock, milliseconds(250),
                       [&] { return stop.workers_done == n_threads || stop.write_due; });
      all_done = stop.workers_done == n_threads;
      stop.write_due = false;
    }
    // An exception must not leave this loop while the threads run (a joinable std::thread would
    // end the process): it stops the session, and run_items rethrows it after they have ended.
    try {
      const auto [answered, failed, cached] = d.counts(!all_done);
      progress.update(answered, failed, cached);
      if (d.settings().interrupt != nullptr && d.settings().interrupt->load()) d.interrupt();
      if (d.settings().fsync && Clock::now() - last_sync >= std::chrono::seconds(1)) {
        d.sync_files();
        last_sync = Clock::now();
      }
    } catch (...) {
      d.abort_with(std::current_exception());
    }
  }
  for (auto& t : threads) t.join();
}

}  // namespace

struct CacheOpening::State {
  std::future<std::unique_ptr<ResponseCache>> cache;
};

CacheOpening::CacheOpening(fs::path path) : path_(std::move(path)), state_(std::make_unique<State>()) {
  state_->cache = std::async(std::launch::async, [p = path_] {
    return std::make_unique<ResponseCache>(p, ResponseCache::OnError::kGoOn);
  });
}

CacheOpening::~CacheOpening() = default;  // the future waits for the opening

std::unique_ptr<ResponseCache> CacheOpening::take() {
  if (!state_->cache.valid()) return nullptr;
  return state_->cache.get();
}

std::shared_ptr<CacheOpening> open_cache_ahead(const fs::path& path) {
  return std::make_shared<CacheOpening>(path);
}

RunSummary run_items(const std::vector<WorkItem>& items, const RunSettings& settings, Backend& backend,
                     const fs::path& out_dir) {
  // A new cache's database takes several fdatasyncs to make: its first connection is opened on a
  // thread (unless the caller started it earlier: RunSettings::cache_ahead) while the items are
  // checked and the run folder, the binding and the manifest are prepared here (the opening is
  // waited for whatever happens).
  std::shared_ptr<CacheOpening> first_reader;
  if (settings.use_cache) {
    first_reader = settings.cache_ahead && settings.cache_ahead->path() == settings.cache_path
                       ? settings.cache_ahead
                       : open_cache_ahead(settings.cache_path);
  }
  check_items(items, settings);
  const RunPaths paths(out_dir);
  io::FileLock lock;  // held until run_items returns
  const bool existing = open_run_dir(paths, settings.resume, lock);

  Target target;
  target.server = settings.server ? *settings.server : backend.probe();
  target.api = backend.api();
  target.endpoint_names = backend.endpoints();
  target.request_model = settings.model.empty() ? target.server.model : settings.model;
  const io::OrderedJson binding = make_binding(items, settings, backend, target);
  const Prior prior = existing ? load_prior(paths, settings, binding) : Prior{};

  RunSummary summary;
  summary.total = items.size();
  summary.torn_bytes_repaired = prior.torn_bytes;
  std::vector<std::size_t> pending;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!prior.answered.empty() && prior.answered.count(items[i].item_id) != 0) {
      ++summary.answered_before;
    } else {
      pending.push_back(i);
    }
  }

  const Manifest manifest(settings, backend, target, binding, prior, paths.run_json);
  io::OrderedJson sessions = prior.sessions;
  io::OrderedJson session = io::OrderedJson::object();
  session["session"] = sessions.size() + 1;
  session["started_at"] = manifest.session_started;
  session["ended_at"] = nullptr;
  session["items"] = items.size();
  session["pending"] = pending.size();
  sessions.push_back(session);
  manifest.write(summary, prior.reported_model, sessions, false);

  Dispatch dispatch(items, settings, target, std::move(pending), prior, sessions.size(), paths, summary,
                    first_reader ? first_reader->take() : nullptr);
  const std::size_t n_endpoints = std::max<std::size_t>(1, target.endpoint_names.size());
  Lanes lanes = open_lanes(
      backend, std::min(settings.concurrency * n_endpoints, std::max<std::size_t>(1, dispatch.pending())));
  dispatch.add_readers(lanes.sessions.size());
  Progress progress(settings.progress, dispatch.pending(), settings.progress_interval);
  run_lanes(dispatch, lanes, progress);
  const std::string reported_model = dispatch.close();
  progress.finish();

  summary.unanswered = summary.total - (summary.answered_before + summary.answered);
  summary.model = reported_model.empty() ? target.server.model : reported_model;
  sessions.back()["ended_at"] = iso_now();
  sessions.back()["answered"] = summary.answered;
  sessions.back()["from_cache"] = summary.from_cache;
  sessions.back()["failed"] = summary.failed;
  sessions.back()["stopped_early"] = summary.stopped_early;
  if (!summary.stop_reason.empty()) sessions.back()["stop_reason"] = summary.stop_reason;
  manifest.write(summary, reported_model, sessions, true);
  return summary;
}

void write_completion_fields(io::JsonWriter& w, const Completion& c) {
  using namespace io::literals;
  w.key("response"_key).value(c.content);
  if (c.reasoning) w.key("reasoning"_key).value(*c.reasoning);
  w.key("finish_reason"_key).value(c.finish_reason);
  w.key("usage"_key).json(c.usage);
  if (!c.timings.is_null()) w.key("timings"_key).json(c.timings);
  w.key("model"_key).value(c.model);
  if (!c.system_fingerprint.empty()) w.key("system_fingerprint"_key).value(c.system_fingerprint);
  if (!c.simulated_fault.empty()) w.key("simulated_fault"_key).value(c.simulated_fault);
}

}  // namespace numcheck::llm
