#include "llm/preflight.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/ascii.hpp"
#include "core/error.hpp"

namespace numcheck::llm {

namespace {

bool ends_with_v1(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url.size() >= 3 && url.compare(url.size() - 3, 3, "/v1") == 0;
}

std::string no_v1_hint(const std::string& endpoint) {
  return ends_with_v1(endpoint) ? std::string()
                                : fmt::format(" The base URL must include /v1 (e.g. {}/v1).", endpoint);
}

// The model ids GET /models listed on endpoint i ("" when none).
std::string listed_models(const io::OrderedJson& info) {
  std::string ids;
  if (!info.contains("models") || !info["models"].is_object()) return ids;
  const auto& data = info["models"].value("data", io::OrderedJson::array());
  for (const auto& m : data) {
    if (m.is_object() && m.contains("id") && m["id"].is_string()) {
      ids += (ids.empty() ? "" : ", ") + m["id"].get<std::string>();
    }
  }
  return ids;
}

}  // namespace

std::string setup_hint(long status, const std::string& message, const std::string& endpoint,
                       const std::string& model) {
  const std::string m = ascii::lower(message);
  if (status == 401 || status == 403) {
    return "Hint: the server wants an API key: put it in an environment variable and pass its name with "
           "--api-key-env VAR (NUMCHECK_API_KEY_ENV for make run), or check that the key is valid.";
  }
  if (status == 404 && m.find("model") != std::string::npos) {
    return fmt::format(
        "Hint: the server does not serve model '{}'; pass a model id it lists (GET {}/models).", model,
        endpoint);
  }
  if (status == 404 || status == 405) {
    return fmt::format(
        "Hint: this is not an OpenAI-compatible route.{} Try --api completions if the server only "
        "serves /completions.",
        no_v1_hint(endpoint));
  }
  return "";
}

std::optional<ServerInfo> preflight(Backend& backend, const RunSettings& settings,
                                    const WorkItem& first_item) {
  if (backend.simulated()) return std::nullopt;
  const std::vector<std::string> endpoints = backend.endpoints();
  ServerInfo server;
  try {
    server = backend.probe();
  } catch (const Error& e) {
    const std::string what = e.what();
    std::string hint;
    if (what.find("refused the credentials") != std::string::npos) {
      hint = setup_hint(401, what, "", settings.model);
    } else if (what.find("cannot reach") != std::string::npos) {
      hint = "Hint: is the server running, and are the host and port right?";
    }
    if (hint.empty()) throw;
    throw Error(e.code(), fmt::format("{} {}", what, hint));
  }
  // GET /models: a 404 or an answer that is not an OpenAI model list.
  const io::OrderedJson& per = server.info.value("endpoints", io::OrderedJson::array());
  for (std::size_t i = 0; i < per.size() && i < endpoints.size(); ++i) {
    const auto& info = per[i];
    if (!info.contains("models")) continue;
    const auto& models = info["models"];
    if (models.is_string()) {
      const std::string text = models.get<std::string>();
      const bool missing = text.rfind("HTTP 404", 0) == 0 || text.rfind("HTTP 405", 0) == 0;
      // Other statuses ("HTTP 500: ...") are transient: the run's retries deal with them.
      if (text.rfind("HTTP ", 0) == 0 && !missing) continue;
      const std::string v1 = no_v1_hint(endpoints[i]);
      fail(ErrorCode::kNetwork,
           "endpoint {}: GET {}/models answered {}{}: this is not an OpenAI-compatible API. Hint:{}",
           endpoints[i], endpoints[i],
           missing ? "" : "something other than a model list: ", text.substr(0, 300),
           v1.empty() ? " check the URL (an OpenAI-compatible base URL such as http://host:8080/v1)." : v1);
    }
    if (models.is_object() && !models.contains("data")) {
      fail(ErrorCode::kNetwork,
           "endpoint {}: GET {}/models answered without a 'data' list, so this is not an OpenAI-compatible "
           "API. "
           "Hint: check the URL.{}",
           endpoints[i], endpoints[i], no_v1_hint(endpoints[i]));
    }
  }
  // One real request per endpoint, with the run's settings and a 1-token cap.
  WorkItem probe = first_item;
  probe.sampling.max_tokens = 1;
  Request req;
  req.item_id = probe.item_id;
  req.prompt = probe.prompt;
  req.sampling = probe.sampling.apply(settings.sampling);
  req.body = io::to_line(build_request_body(probe, settings, settings.model, backend.api()));
  auto session = backend.open_session();
  const std::string route = backend.api() == Api::kChat ? "/chat/completions" : "/completions";
  for (std::size_t ep = 0; ep < endpoints.size(); ++ep) {
    Attempt a = session->send(req, ep);
    // A 200 that is not a completion may be a glitch: ask twice more before calling it a foreign server.
    for (int again = 0; again < 2 && a.status == Attempt::Status::kRetryable && a.http_status == 200;
         ++again) {
      a = session->send(req, ep);
    }
    if (a.status == Attempt::Status::kOk) continue;
    if (a.status == Attempt::Status::kRetryable && a.http_status == 200) {
      fail(
          ErrorCode::kNetwork,
          "endpoint {}: POST {}{} answered HTTP 200 but not with an OpenAI completion ({}). Hint: is this an "
          "OpenAI-compatible server?{}",
          endpoints[ep], endpoints[ep], route, a.error, no_v1_hint(endpoints[ep]));
    }
    std::string hint = setup_hint(a.http_status, a.error, endpoints[ep], settings.model);
    if (hint.empty()) continue;  // transient or possibly prompt-specific: the runner retries and counts
    if (a.http_status == 404 && hint.find("does not serve model") != std::string::npos && ep < per.size()) {
      const std::string ids = listed_models(per[ep]);
      if (!ids.empty()) hint += fmt::format(" It lists: {}.", ids);
    }
    fail(ErrorCode::kNetwork, "endpoint {}: POST {}{} failed before the run: {}. {}", endpoints[ep],
         endpoints[ep], route, a.error, hint);
  }
  return server;
}

}  // namespace numcheck::llm
