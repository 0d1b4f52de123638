#pragma once
// An OpenAI-compatible test server on 127.0.0.1 (cpp-httplib): POST /v1/chat/completions and
// /v1/completions, GET /v1/models and llama-server's GET /props. It answers from the reference
// solver (llm::SolveFn, e.g. llm::benchmark_solver over a generated benchmark) in the reference
// system's words, or, without a solver, with an echo of the prompt ("You asked: ...") so tests can
// check that no answer is ever given to another prompt. It can be told to misbehave per prompt:
// 429 with Retry-After, 500, 400, slow answers, dropped connections, malformed JSON, a 50 MB body,
// finish_reason "length". It rejects (400) any request without explicit sampling fields and counts
// them, so tests can assert that none was ever sent.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "io/json.hpp"
#include "llm/reference.hpp"

namespace httplib {
class Server;
}

namespace numcheck::testing {

enum class FaultKind : std::uint8_t {
  kNone,
  k429,        // 429 with Retry-After: retry_after_s
  k500,        // 500 with an OpenAI-shaped error body
  k400,        // 400 with an OpenAI-shaped error body ("context length exceeded")
  kSlow,       // waits slow_ms, then answers normally
  kDrop,       // sends headers and part of the body, then closes the connection
  kMalformed,  // 200 with a body that is not JSON
  kHuge,       // 200 with a 50 MB body
  kLength,     // answers with a cut response and finish_reason "length"
  kTrickle,    // sends headers, then the body one byte every 200 ms (a stalled server)
  kEchoKey,    // 400 whose ~500-byte error message ends with the request's bearer token
  // The bearer token spelt with JSON escapes, as some servers' encoders write it: once with every
  // "/" as backslash-slash (PHP's default) and once with every character as a backslash-u escape.
  kEchoKeyEscaped,   // ... in a 400's ~500-byte error message
  kEchoKeyInAnswer,  // ... in a 200 answer's content (and its reasoning)
};
// "429", "500", "400", "slow", "drop", "malformed", "huge", "length", "trickle", "echo-key",
// "echo-key-escaped", "echo-key-answer"; nullopt for others.
[[nodiscard]] std::optional<FaultKind> fault_kind_from_name(std::string_view name);

struct FaultRule {
  std::string match;  // applies to prompts containing this text ("" = every prompt)
  FaultKind kind = FaultKind::kNone;
  int times = -1;  // the first `times` requests of each matching prompt (-1: every request)
  // Fraction of matching requests, deterministic: content faults (length, 400, huge) are drawn per
  // prompt (a prompt always gets the same), transport faults per (prompt, request number).
  double rate = 1.0;
  double retry_after_s = 1;
  int slow_ms = 3000;
};

struct ServerOptions {
  std::string model = "test-model";
  std::string build = "b0001-test";
  std::size_t threads = 96;  // connections served at once (httplib keeps one thread per connection)
  int delay_ms = 0;          // added to every answer
  bool props = true;         // serve llama-server's /props
  bool record = true;        // keep every POST body for requests() (off for benchmarks)
  // Personalities for set-up mistakes (the runner's preflight):
  std::string api_key;        // non-empty: every route wants "Authorization: Bearer <api_key>" (else 401)
  bool strict_model = false;  // requests naming another model get 404 "The model '...' does not exist"
  bool foreign = false;       // not an OpenAI server: every route answers a 404 HTML page
  // Canned claim-pipeline answers instead of the solver/echo (see claims_answer below); top_k is
  // then optional (every other sampling field is still required).
  bool claims = false;
  // OpenAI's own API: a body field it does not know (top_k among them) is refused with 400
  // "Unrecognized request argument supplied: <field>", and top_k is not required.
  bool openai_fields = false;
  bool echo_key = false;  // /v1/models and /props echo the request's bearer token (a leaky server)
  // A nondeterministic server (for `orbit repeat`): from the second request of a prompt on, the
  // answer depends on nondeterministic_variant(prompt): 0 the same bytes, 1 other words but the
  // same FINAL answer, 2 a different FINAL answer.
  bool nondeterministic = false;
  // Answer faults of the simulated reference system (llm::draw_fault, llm::reference_reply), drawn
  // per prompt from (the request's seed, the prompt text): a mix of correct, reformatted, wrong
  // and truncated answers, for runner-written benchmark fixtures (bench/compare.sh).
  llm::FaultRates inject;
  // A thinking model's answer: the message also has a `reasoning_content` (about 500 bytes that
  // restate the question), counted in completion_tokens, as llama-server returns it.
  bool reasoning = false;
};

// 0, 1 or 2 (FNV-1a of the prompt mod 3): how a nondeterministic server changes a repeated answer.
[[nodiscard]] int nondeterministic_variant(const std::string& prompt);

// The canned answer of the claims mode to one chat request, from the last user message:
//   decomposition (ClaimDecomp prompt ending "Questions:", ProgramFC prompt ending
//   "def program():") and verification (prompt holding "[Evidences]:"); the claim is the text
//   after the prompt's last "Claim: " / "# The claim is that " / "[Claim]:". Markers in the claim
//   choose the answer: "[malformed]" an answer in the wrong format, "[refuse]" a refusal,
//   "[true]"/"[false]"/"[conflicting]" the verdict (otherwise FNV-1a of the claim text mod 3),
//   after "Verdict:" when the prompt ends with it (Table 12), else after "Label:".
//   Well-formed answers are derived from the claim text only, so they are the same on every call.
[[nodiscard]] std::string claims_answer(const std::string& user_prompt);
// The claims mode's embedding of a text: 32 dimensions, +1 at FNV-1a(word) mod 32 for every
// lower-cased word (a deterministic bag of words; cosine is word overlap).
[[nodiscard]] std::vector<double> claims_embedding(const std::string& text);

class TestServer {
 public:
  // solver may be empty (echo answers).
  TestServer(ServerOptions options, llm::SolveFn solver);
  ~TestServer();
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  // Binds 127.0.0.1:port (0 = ephemeral) and serves in a background thread; returns the port.
  int start(int port = 0);
  void stop();
  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] std::string base_url() const;  // "http://127.0.0.1:PORT/v1"

  void set_faults(std::vector<FaultRule> rules);
  void set_model(std::string model, std::string build);

  // Every POST body received (parsed; a non-JSON body is stored as a string), in arrival order.
  [[nodiscard]] std::vector<io::Json> requests() const;
  [[nodiscard]] std::size_t post_count() const { return posts_.load(); }
  // GET /v1/models requests received (the probes).
  [[nodiscard]] std::size_t models_count() const { return models_.load(); }
  // Requests that lacked an explicit sampling field (answered with 400).
  [[nodiscard]] std::size_t missing_sampling() const { return missing_sampling_.load(); }
  // Headers of the most recent POST (lower-case names), e.g. to check Authorization.
  [[nodiscard]] std::map<std::string, std::string> last_headers() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
  std::atomic<std::size_t> posts_{0};
  std::atomic<std::size_t> models_{0};
  std::atomic<std::size_t> missing_sampling_{0};
};

}  // namespace numcheck::testing
