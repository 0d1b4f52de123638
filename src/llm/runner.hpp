#pragma once
// The runner: a list of work items -> a run directory, crash-safe and resumable. Used by
// `numcheck orbit run` (one item per benchmark prompt) and `numcheck orbit consensus run` (one
// item per planned call). See docs/runner.md for the record formats and every decision.
//
// A run directory holds
//   run.json         manifest: settings, server identity, sessions, counts (rewritten atomically
//                    at the start and end of every session; never holds an API key)
//   responses.jsonl  exactly one record per answered item, appended + flushed as each completes
//   errors.jsonl     one record per item whose attempts ran out in a session (a log across
//                    sessions: an item answered later also has its earlier error records)
//
// Usage (what `orbit consensus run` does):
//
//   std::vector<llm::WorkItem> items;
//   for (const auto& call : plan.calls) {
//     llm::WorkItem it;
//     it.item_id = call.call_id;                  // unique within the run
//     it.prompt = call.prompt;
//     it.sampling.seed = call.seed;               // per-call overrides
//     it.sampling.temperature = call.temperature;
//     it.fields = {{"base_id", call.base_id}, {"arm", call.arm}, {"call", call.index}};
//     items.push_back(std::move(it));
//   }
//   llm::RunSettings s = llm::settings_from(opts);   // opts: llm::RunOptions from the CLI flags
//   s.kind = "orbit consensus run";
//   s.id_field = "call_id";
//   s.binding = {{"plan_sha256", plan_hash}};        // must match on --resume
//   auto backend = llm::make_backend(opts);          // HTTP or reference, from the same flags
//   llm::RunSummary sum = llm::run_items(items, s, *backend, out_dir);
//   // sum.unanswered > 0 -> the CLI exits 3 (ErrorCode::kIncomplete)
#include <atomic>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/json.hpp"
#include "io/json_writer.hpp"
#include "llm/backend.hpp"
#include "llm/progress.hpp"

namespace numcheck::llm {

class ResponseCache;  // llm/cache.hpp
class CacheOpening;   // below

// One unit of work: one prompt to send, one record to get back.
struct WorkItem {
  // Unique key within the run (resume skips items whose key already has a response record). It is
  // written into records under RunSettings::id_field ("prompt_id" for `orbit run`).
  std::string item_id;
  std::string prompt;  // user message (chat) / prompt text (completions)
  // Api::kEmbeddings: the texts of one batch request, sent as the "input" array (empty: `prompt`
  // is the one input, sent as a string).
  std::vector<std::string> inputs;
  std::optional<std::string> system_prompt;  // overrides RunSettings::system_prompt when set
  SamplingOverride sampling;                 // per-item overrides (seed, temperature, ...)
  // Extra fields copied into the item's response/error record right after the id field (e.g.
  // base_id, arm). Must be an object; keys must not collide with the runner's record fields.
  io::OrderedJson fields = io::OrderedJson::object();
};

struct RetryPolicy {
  int retries = 4;  // extra attempts after the first (so at most retries + 1 attempts)
  // Exponential backoff: attempt k (1-based failed attempt) waits
  //   min(max_delay, base_delay * 2^(k-1)) * (0.5 + 0.5 * u), u uniform [0, 1) from numcheck::Rng
  // or, after a 429/503 with Retry-After, max(Retry-After (capped at max_retry_after), that).
  std::chrono::milliseconds base_delay{1000};
  std::chrono::milliseconds max_delay{30000};
  std::chrono::milliseconds max_retry_after{300000};
};

struct RunSettings {
  std::string kind = "orbit run";      // run.json "kind"
  std::string id_field = "prompt_id";  // record field holding WorkItem::item_id
  std::string model;                   // model name sent in every request body ("reference" for
                                       // the reference system)

  Sampling sampling;  // run-wide sampling (items may override)
  // run.json "sampling" (and its binding) records the sampling as sent (sampling_as_sent). When
  // items override it per call kind (the consensus study's tiers), the WorkItem field naming the
  // kind ("tier"): the record is then {"by_tier": {"stochastic": {...}, ...}}.
  std::string sampling_kind_field;
  std::optional<std::string> system_prompt;  // run-wide system prompt
  io::Json extra_body = io::Json::object();  // merged into every request body (may not set the
                                             // fields the runner owns: model, messages/prompt,
                                             // temperature, top_p, top_k, seed, max_tokens)
  std::size_t concurrency = 1;               // requests in flight per endpoint
  RetryPolicy retry;
  std::optional<std::size_t> max_errors;  // stop the session after this many failed items
  // Stop the session when its first K finished items all failed with the same non-retryable
  // error (a set-up mistake: every request would fail the same way). 0 = never.
  std::size_t stop_after_same_errors = 5;
  // Set (e.g. by a SIGINT handler) to stop the session gracefully: no new requests, requests in
  // flight finish and are recorded, retries waiting are left for --resume. Polled every 250 ms.
  const std::atomic<bool>* interrupt = nullptr;
  // A check of every answer (empty: none), given the request it answers, returning "" for an
  // acceptable completion, else a one-line reason (e.g. an embedding of the wrong dimension or
  // from another model, or a batch answered with another number of vectors than it has texts). A fresh
  // answer that fails it is a retryable attempt error ("answer rejected: <reason>"): retried,
  // recorded in errors.jsonl when the retries run out, never cached. A cached answer that fails it
  // is never served: the item is asked again (counted in RunSummary::cache_refused).
  std::function<std::string(const Request&, const Completion&)> check_answer;
  bool use_cache = true;
  std::filesystem::path cache_path;  // the cache's database (llm/cache.hpp default_cache_path)
  // The cache's first connection, when the caller started opening it early (open_cache_ahead):
  // run_items takes it if it is for cache_path, else opens its own.
  std::shared_ptr<CacheOpening> cache_ahead;
  bool resume = false;  // continue an existing run dir (fresh dir: just start)
  ProgressMode progress = ProgressMode::kAuto;
  std::chrono::milliseconds progress_interval{10000};
  bool fsync = true;  // fdatasync responses.jsonl/errors.jsonl at most once a second and at the end
  // The backend's probe (Backend::probe) when the caller has just made it (the CLI's preflight):
  // run_items takes the server's identity from it instead of asking the endpoints again.
  std::optional<ServerInfo> server;

  // Caller's settings that must match on --resume (benchmark hashes, plan hash, ...). Together
  // with the runner's own binding settings (backend, model, api, sampling, system prompt, extra
  // body, server identity) they are compared key by key; a mismatch is an Error naming the key.
  io::OrderedJson binding = io::OrderedJson::object();
  // Caller's run.json fields that may change between sessions (selection, limit, views).
  io::OrderedJson info = io::OrderedJson::object();
  // Settings recorded in run.json that do not bind resume (timeouts, retries, endpoints shown).
  io::OrderedJson recorded = io::OrderedJson::object();
};

struct RunSummary {
  std::size_t total = 0;                // items given
  std::size_t answered_before = 0;      // items with a response record from earlier sessions
  std::size_t answered = 0;             // items answered in this session (including cache hits)
  std::size_t from_cache = 0;           // of which served from the response cache
  std::size_t failed = 0;               // items that got an error record in this session
  std::size_t unanswered = 0;           // items without a response record at the end
  bool stopped_early = false;           // --max-errors reached, or the same error K times
  bool interrupted = false;             // RunSettings::interrupt was set
  std::string stop_reason;              // why the session stopped early ("" when it did not)
  std::size_t torn_bytes_repaired = 0;  // bytes cut off torn last lines on resume
  std::size_t cache_rejected = 0;       // cache entries that failed their check (asked again)
  std::size_t cache_refused = 0;        // cached answers RunSettings::check_answer refused (asked again)
  // Why the response cache was turned off during the session ("" when it was not): a cache that
  // cannot be opened or written (a full disk, a folder that cannot be made) never stops a run; the
  // session goes on without it.
  std::string cache_warning;
  std::string model;  // model id as the server reported it
};

// The response cache's first connection, opened on a thread of its own: a new cache's database
// takes several fdatasyncs to make (7 ms on the development machine), which a caller that knows
// the cache's path before it has its items (the CLI, before the benchmark loads) overlaps with
// its own work by starting it early and handing it to run_items in RunSettings::cache_ahead. A
// cache that cannot be opened is RunSummary::cache_warning, as without it.
class CacheOpening {
 public:
  explicit CacheOpening(std::filesystem::path path);
  CacheOpening(const CacheOpening&) = delete;
  CacheOpening& operator=(const CacheOpening&) = delete;
  ~CacheOpening();  // waits for the opening, if nobody took it
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  // The connection (or the opening's error), once; nullptr when already taken.
  [[nodiscard]] std::unique_ptr<ResponseCache> take();

 private:
  std::filesystem::path path_;
  struct State;
  std::unique_ptr<State> state_;
};
[[nodiscard]] std::shared_ptr<CacheOpening> open_cache_ahead(const std::filesystem::path& path);

// Runs the items into out_dir (created if missing). Throws Error for a mismatching resume, an
// existing run dir without resume, unreadable/corrupt records, duplicate item ids, or a backend
// probe failure. Failed items are not exceptions: they are counted in the summary.
[[nodiscard]] RunSummary run_items(const std::vector<WorkItem>& items, const RunSettings& settings,
                                   Backend& backend, const std::filesystem::path& out_dir);

// Builds the exact request body for an item (what run_items sends and records): model, messages
// (system then user) or prompt, every sampling field, then extra_body merged in.
[[nodiscard]] io::Json build_request_body(const WorkItem& item, const RunSettings& settings,
                                          const std::string& model, Api api);

// The request bodies' bytes (io::append_json of build_request_body: what is sent, recorded and
// hashed into the cache key), for many items: on the chat route, the body of an item without its
// own sampling or system prompt differs from the others only in the prompt, so it is written as a
// prefix and a suffix serialized once around the prompt's JSON string; any other item is built
// as a JSON object. `settings` must outlive it.
class RequestBodies {
 public:
  RequestBodies(const RunSettings& settings, std::string model, Api api);
  // Appends the item's body to `out`.
  void append(std::string& out, const WorkItem& item) const;
  // Whether items without their own settings take the template (the chat route, unless
  // --extra-body holds the template's marker).
  [[nodiscard]] bool templated() const noexcept { return templated_; }

 private:
  const RunSettings& settings_;
  std::string model_;
  Api api_;
  bool templated_ = false;
  std::string before_, after_;
};

// The sampling the items are sent with (each item's overrides applied to the run's settings), as
// run.json records it: with no kind field, sampling_json's fields (temperature, top_p, top_k when set, seed,
// max_tokens, penalties when set), each the value every item sent, else the sorted distinct values
// (up to 8), else {"min", "max", "distinct"}; with settings.sampling_kind_field = F,
// {"by_F": {kind: {the same fields, "calls": n}}} in order of first appearance.
[[nodiscard]] io::OrderedJson sampling_as_sent(const std::vector<WorkItem>& items,
                                               const RunSettings& settings);

// Reads a responses.jsonl (or errors.jsonl) file: calls fn(record, line_number) for every record,
// under io's JSONL rule with TornTail::kAppendLog (io/json.hpp): blank lines are skipped, a
// malformed line is an Error naming file:line, a torn last line is skipped and its length in bytes
// returned.
std::size_t read_records(const std::filesystem::path& path,
                         const std::function<void(const io::Json&, std::size_t)>& fn);

// A completion's fields of a response record ("response" through "simulated_fault"), in the order
// every record has them: the runner and the batch import write the same bytes through it.
void write_completion_fields(io::JsonWriter& w, const Completion& c);

}  // namespace numcheck::llm
