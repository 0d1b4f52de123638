#pragma once
// What the runner talks to: a Backend answers one request at a time per Session. Two backends
// exist: the OpenAI-compatible HTTP backend (llm/http_backend.hpp: llama-server, vLLM, Ollama,
// hosted APIs) and the built-in simulated reference system (llm/reference.hpp). The runner owns
// retries, caching, records and concurrency; a backend only performs single attempts and says
// whether a failed attempt is worth retrying.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/json.hpp"

namespace numcheck::llm {

// Sampling settings. Every one of them is sent explicitly with every request (servers' defaults
// differ: llama-server samples at temperature 0.8, top_k 40), top_k only when set. Defaults are
// the seed's greedy settings; max_tokens is the generation cap. top_k is unset for runs that
// follow a paper's sampling where the paper's API has no top_k (the claim stages: a top_k of 1
// there would make the paper's temperature do nothing on llama.cpp and vLLM), and for runs with
// --no-top-k (OpenAI's API refuses the field).
struct Sampling {
  double temperature = 0.0;
  double top_p = 1.0;
  std::optional<std::int64_t> top_k = 1;  // unset: not sent (the server's own default applies)
  std::uint64_t seed = 20260725;
  std::int64_t max_tokens = 1024;
  // OpenAI's repetition penalties, sent only when set (the QuanTemp paper's ClaimDecomp settings
  // use frequency 0.6 and presence 0.8); unset, the request and its cache key are as before.
  std::optional<double> frequency_penalty;
  std::optional<double> presence_penalty;
};

// Per-item overrides of the run's sampling settings (the consensus study varies seed and
// temperature per call). Unset fields keep the run's value.
struct SamplingOverride {
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<std::int64_t> top_k;
  std::optional<std::uint64_t> seed;
  std::optional<std::int64_t> max_tokens;
  std::optional<double> frequency_penalty;
  std::optional<double> presence_penalty;
  [[nodiscard]] Sampling apply(Sampling s) const;
  // Every field compared: SamplingOverride{} is "nothing overridden", whatever fields join later.
  friend bool operator==(const SamplingOverride&, const SamplingOverride&) = default;
};

// Which OpenAI route the HTTP backend posts to. kEmbeddings (POST /embeddings, body {"model",
// "input"}, no sampling fields) answers with the vector as Completion::content: a compact JSON
// array of numbers (claims retrieval's re-ranking).
enum class Api : std::uint8_t {
  kChat,
  kCompletions,
  kEmbeddings
};  // /chat/completions, /completions, /embeddings
// "chat", "completions", "embeddings" (records, run.json, resume binding).
[[nodiscard]] inline const char* api_name(Api api) {
  return api == Api::kChat ? "chat" : (api == Api::kCompletions ? "completions" : "embeddings");
}

// One request, ready to send: the exact JSON body (also what the record stores and what the cache
// key hashes) plus the context the simulated backend needs.
struct Request {
  std::string item_id;
  std::string body;    // the exact bytes POSTed (compact JSON)
  std::string prompt;  // user prompt text (for the reference system)
  Sampling sampling;   // effective sampling settings (already in body)
};

// The parts of a successful answer that records keep.
struct Completion {
  std::string content;                   // message content ("response" in records)
  std::optional<std::string> reasoning;  // reasoning_content / reasoning, when sent separately
  std::string finish_reason;             // "stop", "length", ... ("" if the server sent none)
  io::Json usage;                        // server "usage" object, or null
  io::Json timings;                      // llama-server "timings" object, or null
  std::string model;                     // "model" field of the response ("" when absent)
  std::string system_fingerprint;        // "" when absent
  std::string simulated_fault;           // reference system only: the injected fault ("none", ...)
  friend bool operator==(const Completion&, const Completion&) = default;
};

// The result of one attempt.
struct Attempt {
  enum class Status : std::uint8_t {
    kOk,         // completion is set
    kRetryable,  // connection error, timeout, 429, 5xx, malformed body: try again after a delay
    kFatal,      // 4xx other than 429, oversized body, unsolvable prompt: fail the item now
  };
  Status status = Status::kFatal;
  Completion completion;
  std::string raw_body;                 // response body as received (kOk only; for the cache)
  std::string error;                    // one line, never contains the API key
  long http_status = 0;                 // 0 when no HTTP response arrived
  std::optional<double> retry_after_s;  // server's Retry-After, when given
  std::chrono::milliseconds latency{0};
};

// What the backend learned about the server(s) before the run. `identity` goes into the cache key
// and the resume check; `info` goes into run.json as is.
struct ServerInfo {
  std::string model;     // model id as the server reports it (best knowledge before any answer)
  io::Json identity;     // model identity + build: equal identities give equal answers
  io::OrderedJson info;  // everything probed (per endpoint: /v1/models, /props, ...)
};

// A session is one worker's connection(s). Sessions are used from one thread at a time.
class Session {
 public:
  virtual ~Session() = default;
  // Performs one attempt against endpoint number `endpoint` (0-based, < Backend::endpoints()).
  [[nodiscard]] virtual Attempt send(const Request& request, std::size_t endpoint) = 0;
};

// Optional asynchronous sessions: many attempts in flight from one thread (the HTTP backend uses
// the libcurl multi interface). The runner prefers them when a backend offers one: on a 2-core
// machine 64 blocking threads spend their time switching, one event loop does not.
class AsyncSession {
 public:
  virtual ~AsyncSession() = default;
  // Starts one attempt; `tag` comes back with its result. The request is copied.
  virtual void start(std::uint64_t tag, const Request& request, std::size_t endpoint) = 0;
  // Waits up to `timeout` for attempts to finish and returns the finished ones (possibly none).
  [[nodiscard]] virtual std::vector<std::pair<std::uint64_t, Attempt>> wait(
      std::chrono::milliseconds timeout) = 0;
  [[nodiscard]] virtual std::size_t in_flight() const = 0;
  // Sends what start() has queued, without waiting for anything (finished attempts stay for the
  // next wait). The runner calls it before it records the items that just finished, so that their
  // records are written while the new requests are on their way.
  virtual void send_started() {}
};

class Backend {
 public:
  virtual ~Backend() = default;
  // "openai" or "reference".
  [[nodiscard]] virtual std::string kind() const = 0;
  [[nodiscard]] virtual bool simulated() const = 0;
  // Endpoint display names for records (URLs without credentials), at least one.
  [[nodiscard]] virtual std::vector<std::string> endpoints() const = 0;
  // Contacts the server(s) once before the run. Throws Error (kNetwork) when a server cannot be
  // reached or does not serve the model; the message names the endpoint.
  [[nodiscard]] virtual ServerInfo probe() = 0;
  [[nodiscard]] virtual std::unique_ptr<Session> open_session() = 0;
  // nullptr when the backend has no asynchronous interface (the runner then uses one thread per
  // request in flight).
  [[nodiscard]] virtual std::unique_ptr<AsyncSession> open_async_session() { return nullptr; }
  // The route requests go to, for records ("/v1/chat/completions").
  [[nodiscard]] virtual Api api() const = 0;
};

}  // namespace numcheck::llm
