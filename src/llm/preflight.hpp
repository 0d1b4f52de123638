#pragma once
// Fail fast on set-up mistakes (docs/runner.md "Before the run"): before the benchmark is sent,
// `GET /models` on every endpoint (through Backend::probe) and one real request with the run's
// settings (the first item's prompt, capped at 1 generated token). A missing or wrong API key
// (401/403), a model the server does not serve (404 naming the model), a base URL without /v1 or
// a server that is not OpenAI-compatible (404/405 on the route, a /models answer that is not an
// OpenAI model list, a 200 that is not a completion) stop at once with the server's own message
// and a hint, instead of sending thousands of failing requests. Transient failures (5xx, 429,
// timeouts) and 400s (which may belong to one prompt) do not stop: the runner retries and counts
// them. The probe request is not recorded and never cached.
#include <optional>
#include <string>

#include "llm/backend.hpp"
#include "llm/runner.hpp"

namespace numcheck::llm {

// Checks the backend (a no-op for the simulated reference system). Throws Error(kNetwork) with
// "<what happened>: <server message>. Hint: <what to do>" on a set-up mistake. Returns the probe
// it made (nullopt for the reference system), for RunSettings::server.
[[nodiscard]] std::optional<ServerInfo> preflight(Backend& backend, const RunSettings& settings,
                                                  const WorkItem& first_item);

// The hint for an HTTP status on the probe request (exposed for tests): "" when the status is not
// a set-up mistake. `message` is the server's error message, `endpoint` the base URL.
[[nodiscard]] std::string setup_hint(long http_status, const std::string& message,
                                     const std::string& endpoint, const std::string& model);

}  // namespace numcheck::llm
