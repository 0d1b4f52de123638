#include "test_server.hpp"

#include <httplib.h>
#include <sys/socket.h>

#include <chrono>
#include <set>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "core/prng.hpp"

namespace numcheck::testing {

std::optional<FaultKind> fault_kind_from_name(std::string_view name) {
  if (name == "429") return FaultKind::k429;
  if (name == "500") return FaultKind::k500;
  if (name == "400") return FaultKind::k400;
  if (name == "slow") return FaultKind::kSlow;
  if (name == "drop") return FaultKind::kDrop;
  if (name == "malformed") return FaultKind::kMalformed;
  if (name == "huge") return FaultKind::kHuge;
  if (name == "length") return FaultKind::kLength;
  if (name == "trickle") return FaultKind::kTrickle;
  if (name == "echo-key") return FaultKind::kEchoKey;
  if (name == "echo-key-escaped") return FaultKind::kEchoKeyEscaped;
  if (name == "echo-key-answer") return FaultKind::kEchoKeyInAnswer;
  if (name == "none") return FaultKind::kNone;
  return std::nullopt;
}

struct TestServer::Impl {
  ServerOptions opts;
  llm::SolveFn solver;
  httplib::Server svr;
  std::thread thread;
  mutable std::mutex m;
  std::condition_variable stop_cv;
  bool stopping = false;
  std::vector<FaultRule> rules;
  std::map<std::string, std::uint64_t> per_prompt;  // prompt -> requests seen
  std::vector<io::Json> bodies;
  std::map<std::string, std::string> last_headers;
  std::atomic<std::uint64_t> next_id{0};
  int listen_fd = -1;

  // Waits ms milliseconds, or less when the server stops.
  void pause(int ms) {
    std::unique_lock lock(m);
    stop_cv.wait_for(lock, std::chrono::milliseconds(ms), [&] { return stopping; });
  }
};

namespace {

// The request body fields of OpenAI's chat and completions APIs (the openai_fields personality
// refuses any other, as that API does).
const std::set<std::string, std::less<>> kOpenAiFields = {"model",
                                                          "messages",
                                                          "prompt",
                                                          "temperature",
                                                          "top_p",
                                                          "seed",
                                                          "max_tokens",
                                                          "max_completion_tokens",
                                                          "frequency_penalty",
                                                          "presence_penalty",
                                                          "stop",
                                                          "n",
                                                          "stream",
                                                          "stream_options",
                                                          "logprobs",
                                                          "top_logprobs",
                                                          "logit_bias",
                                                          "user",
                                                          "response_format",
                                                          "tools",
                                                          "tool_choice",
                                                          "parallel_tool_calls",
                                                          "reasoning_effort",
                                                          "metadata",
                                                          "store",
                                                          "service_tier",
                                                          "modalities",
                                                          "prediction",
                                                          "audio",
                                                          "suffix",
                                                          "echo",
                                                          "best_of"};

void error_body(httplib::Response& res, int status, const std::string& message, const std::string& type) {
  res.status = status;
  const io::Json j = {{"error", {{"code", status}, {"message", message}, {"type", type}}}};
  res.set_content(j.dump(), "application/json");
}

std::string after_last(const std::string& text, const std::string& marker) {
  const auto at = text.rfind(marker);
  if (at == std::string::npos) return "";
  std::string rest = text.substr(at + marker.size());
  const auto nl = rest.find('\n');
  return nl == std::string::npos ? rest : rest.substr(0, nl);
}

// The text as a JSON string's inside with "/" written as backslash-slash (and '"', '\\' escaped).
std::string slash_escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '/' || c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// The text as a JSON string's inside with every character a backslash-u escape (ASCII text).
std::string u_escaped(const std::string& text) {
  std::string out;
  for (const char c : text) out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
  return out;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The reasoning a thinking model returns beside its answer (ServerOptions::reasoning): the
// question restated (its text before the answer-format line), then the usual steps.
std::string reasoning_text(const std::string& prompt) {
  const std::string question = prompt.substr(0, prompt.find("\nReturn "));
  return "Okay, let me read the question carefully. " + question +
         " So I need the quantity it asks for, in the unit it asks for. First I write down the given "
         "amounts and convert them to the same unit, because mixing units is the most common "
         "mistake. Then I combine them as the question describes. Let me check the result against a "
         "rough estimate to make sure the order of magnitude is right. The estimate agrees, so I can "
         "write the final line.";
}
}  // namespace

std::string claims_answer(const std::string& user_prompt) {
  const bool claimdecomp = ends_with(user_prompt, "Questions:");
  const bool programfc = ends_with(user_prompt, "def program():");
  std::string claim = claimdecomp ? after_last(user_prompt, "\nClaim: ")
                      : programfc ? after_last(user_prompt, "# The claim is that ")
                                  : after_last(user_prompt, "[Claim]:");
  if (claim.find("[refuse]") != std::string::npos) return "I'm sorry, but I can't help with that request.";
  std::string plain = claim;
  for (auto& c : plain)
    if (c == '"') c = '\'';
  while (!plain.empty() && (plain.back() == '.' || plain.back() == ' ')) plain.pop_back();
  if (claimdecomp) {
    if (claim.find("[malformed]") != std::string::npos)
      return "Sure! Here is how I would check it: look it up.";
    return fmt::format(
        "1. Is it true that {}?\n2. Are the numbers in the claim correct?\n3. Is there evidence "
        "that supports the claim?",
        plain);
  }
  if (programfc) {
    if (claim.find("[malformed]") != std::string::npos)
      return "    fact_1 = Verify(\"" + plain + "\")\n    print(fact_1)";
    return fmt::format(
        "    fact_1 = Verify(\"{}.\")\n    answer_1 = Question(\"What number does the claim state?\")\n    "
        "fact_2 = Verify(f\"{{answer_1}} is correct.\")\n    label = Predict(fact_1 and fact_2)",
        plain);
  }
  if (claim.find("[malformed]") != std::string::npos) return "The claim looks mostly right to me.";
  const char* verdict = nullptr;
  if (claim.find("[true]") != std::string::npos) verdict = "SUPPORTS";
  if (claim.find("[false]") != std::string::npos) verdict = "REFUTES";
  if (claim.find("[conflicting]") != std::string::npos) verdict = "CONFLICTING";
  if (verdict == nullptr) {
    static constexpr const char* kWords[] = {"SUPPORTS", "REFUTES", "CONFLICTING"};
    verdict = kWords[fnv1a64(claim) % 3];
  }
  // The marker the prompt asks for: Table 12's zero-shot prompt ends "Verdict:", Table 11's
  // examples end "Label:".
  const char* marker = ends_with(user_prompt, "Verdict:") ? "Verdict:" : "Label:";
  return fmt::format("The evidence was compared with the numbers in the claim.\n{} {}", marker, verdict);
}

int nondeterministic_variant(const std::string& prompt) { return static_cast<int>(fnv1a64(prompt) % 3); }

std::vector<double> claims_embedding(const std::string& text) {
  std::vector<double> v(32, 0.0);
  std::string word;
  auto flush = [&] {
    if (!word.empty()) v[fnv1a64(word) % 32] += 1.0;
    word.clear();
  };
  for (char c : text) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      word += c;
    } else if (c >= 'A' && c <= 'Z') {
      word += static_cast<char>(c - 'A' + 'a');
    } else {
      flush();
    }
  }
  flush();
  return v;
}

TestServer::TestServer(ServerOptions options, llm::SolveFn solver) : impl_(std::make_unique<Impl>()) {
  impl_->opts = std::move(options);
  impl_->solver = std::move(solver);
  Impl* im = impl_.get();
  const std::size_t threads = im->opts.threads;
  im->svr.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  im->svr.set_keep_alive_max_count(1000000);
  im->svr.set_tcp_nodelay(true);
  // httplib listens with a backlog of 5 (compiled into Debian's library): 16 or 64 clients
  // connecting at once would see dropped SYNs and 1 s retransmits. Remember the listening socket
  // and raise its backlog after bind (listen(2) may be called again on a listening socket).
  im->svr.set_socket_options([im](int sock) {
    httplib::default_socket_options(sock);
    if (im->listen_fd < 0) im->listen_fd = sock;
  });
  im->svr.set_keep_alive_timeout(10);
  im->svr.set_payload_max_length(std::size_t{64} << 20);

  im->svr.set_pre_routing_handler([im](const httplib::Request& req, httplib::Response& res) {
    if (im->opts.foreign) {
      res.status = 404;
      res.set_content(
          "<!DOCTYPE html><html><head><title>404 Not Found</title></head><body><h1>Not Found</h1>"
          "<p>The requested URL was not found on this server.</p></body></html>",
          "text/html");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!im->opts.api_key.empty() && req.get_header_value("Authorization") != "Bearer " + im->opts.api_key) {
      error_body(res, 401,
                 "Incorrect API key provided. You can find your API key at https://example.invalid/keys.",
                 "invalid_request_error");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  im->svr.Get("/v1/models", [this, im](const httplib::Request& req, httplib::Response& res) {
    ++models_;
    std::string model;
    bool echo = false;
    {
      std::lock_guard lock(im->m);
      model = im->opts.model;
      echo = im->opts.echo_key;
    }
    const auto now =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    const io::Json j = {{"object", "list"},
                        {"data",
                         {{{"id", model},
                           {"object", "model"},
                           {"created", now},
                           {"owned_by", "numcheck-test"},
                           {"meta", {{"n_params", 1234}, {"n_ctx_train", 4096}}}}}}};
    io::Json out = j;
    if (echo) out["data"][0]["seen_authorization"] = req.get_header_value("Authorization");
    res.set_content(out.dump(), "application/json");
  });
  im->svr.Get("/props", [im](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(im->m);
    if (!im->opts.props) {
      error_body(res, 404, "File Not Found", "not_found_error");
      return;
    }
    const io::Json j = {{"build_info", im->opts.build},
                        {"model_path", "/models/" + im->opts.model + ".gguf"},
                        {"total_slots", im->opts.threads}};
    io::Json out = j;
    if (im->opts.echo_key) out["seen_authorization"] = req.get_header_value("Authorization");
    res.set_content(out.dump(), "application/json");
  });

  auto complete = [this, im](const httplib::Request& req, httplib::Response& res, bool chat) {
    ++posts_;
    io::Json body = io::Json::parse(req.body, nullptr, false);
    {
      std::lock_guard lock(im->m);
      if (im->opts.record) im->bodies.push_back(body.is_discarded() ? io::Json(req.body) : body);
      im->last_headers.clear();
      for (const auto& [k, v] : req.headers) {
        std::string key = k;
        for (auto& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        im->last_headers[key] = v;
      }
    }
    if (body.is_discarded() || !body.is_object()) {
      error_body(res, 400, "request body is not a JSON object", "invalid_request_error");
      return;
    }
    if (im->opts.openai_fields) {
      for (const auto& [k, v] : body.items()) {
        if (!kOpenAiFields.contains(k)) {
          error_body(res, 400, fmt::format("Unrecognized request argument supplied: {}", k),
                     "invalid_request_error");
          return;
        }
      }
    }
    for (const char* f : {"model", "temperature", "top_p", "top_k", "seed", "max_tokens"}) {
      // The claim stages send top_k only when the user or the prompt file sets one; OpenAI's API
      // has none.
      if ((im->opts.claims || im->opts.openai_fields) && std::string_view(f) == "top_k" && !body.contains(f))
        continue;
      if (!body.contains(f) ||
          !(body[f].is_number() || (std::string_view(f) == "model" && body[f].is_string()))) {
        ++missing_sampling_;
        error_body(res, 400, fmt::format("request lacks an explicit '{}'", f), "invalid_request_error");
        return;
      }
    }
    if (im->opts.strict_model && body["model"].get<std::string>() != im->opts.model) {
      error_body(res, 404, fmt::format("The model '{}' does not exist", body["model"].get<std::string>()),
                 "not_found_error");
      return;
    }
    std::string prompt;
    if (chat) {
      const auto& msgs = body.value("messages", io::Json::array());
      for (const auto& m : msgs) {
        if (m.is_object() && m.value("role", "") == "user" && m.contains("content") &&
            m["content"].is_string()) {
          prompt = m["content"].get<std::string>();
        }
      }
    } else if (body.contains("prompt") && body["prompt"].is_string()) {
      prompt = body["prompt"].get<std::string>();
    }
    const std::int64_t max_tokens =
        body["max_tokens"].is_number_integer() ? body["max_tokens"].get<std::int64_t>() : 0;

    // Which fault, if any.
    FaultRule rule;
    bool repeated = false;  // an earlier request had the same prompt
    std::string model;
    std::string build;
    {
      std::lock_guard lock(im->m);
      const std::uint64_t n = im->per_prompt[prompt]++;
      repeated = n > 0;
      for (const auto& r : im->rules) {
        if (!r.match.empty() && prompt.find(r.match) == std::string::npos) continue;
        if (r.times >= 0 && n >= static_cast<std::uint64_t>(r.times)) continue;
        if (r.rate < 1.0) {
          // Content faults (length, 400, huge) stick to a prompt, as a deterministic model's would;
          // transport faults are drawn per request, so retries can get through.
          const bool sticky =
              r.kind == FaultKind::kLength || r.kind == FaultKind::k400 || r.kind == FaultKind::kHuge;
          Rng rng(fnv1a64(prompt), sticky ? std::string("fault") : fmt::format("fault#{}", n));
          if (rng.unit() >= r.rate) continue;
        }
        rule = r;
        break;
      }
      model = im->opts.model;
      build = im->opts.build;
    }
    if (im->opts.delay_ms > 0) im->pause(im->opts.delay_ms);
    switch (rule.kind) {
      case FaultKind::k429:
        res.set_header("Retry-After", fmt::format("{}", rule.retry_after_s));
        error_body(res, 429, "rate limit reached (injected)", "rate_limit_error");
        return;
      case FaultKind::k500:
        error_body(res, 500, "internal server error (injected)", "server_error");
        return;
      case FaultKind::k400:
        error_body(res, 400, "the request exceeds the available context size (injected)",
                   "invalid_request_error");
        return;
      case FaultKind::kSlow:
        im->pause(rule.slow_ms);
        break;
      case FaultKind::kDrop: {
        // Promise a body, send a piece of it, then fail: the connection closes mid-response.
        res.set_content_provider(1000, "application/json",
                                 [](std::size_t offset, std::size_t, httplib::DataSink& sink) {
                                   if (offset == 0) {
                                     sink.write("{\"choices\": [", 13);
                                     return true;
                                   }
                                   return false;
                                 });
        return;
      }
      case FaultKind::kMalformed:
        res.set_content("{\"choices\": [{\"message\": {\"content\": \"FINAL: 1", "application/json");
        return;
      case FaultKind::kHuge: {
        constexpr std::size_t kSize = std::size_t{50} << 20;
        res.set_content_provider(kSize, "application/json",
                                 [](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
                                   static const std::string chunk(65536, 'x');
                                   const std::size_t n = std::min(length, chunk.size());
                                   if (offset == 0) {
                                     std::string p = "{\"choices\": [{\"message\": {\"content\": \"";
                                     p += chunk.substr(0, n - std::min(n, p.size()));
                                     return sink.write(p.data(), p.size());
                                   }
                                   return sink.write(chunk.data(), n);
                                 });
        return;
      }
      case FaultKind::kTrickle:
        res.set_chunked_content_provider("application/json", [im](std::size_t, httplib::DataSink& sink) {
          for (int i = 0; i < 300; ++i) {  // at most a minute
            if (!sink.write(" ", 1)) return false;
            im->pause(200);
          }
          sink.done();
          return true;
        });
        return;
      case FaultKind::kEchoKey: {
        std::string auth = req.get_header_value("Authorization");
        if (auth.rfind("Bearer ", 0) == 0) auth = auth.substr(7);
        error_body(res, 400, std::string(485, 'x') + " key=" + auth, "invalid_request_error");
        return;
      }
      case FaultKind::kEchoKeyEscaped: {
        std::string auth = req.get_header_value("Authorization");
        if (auth.rfind("Bearer ", 0) == 0) auth = auth.substr(7);
        res.status = 400;
        res.set_content(R"({"error":{"code":400,"message":")" + std::string(440, 'x') +
                            " key=" + slash_escaped(auth) + " again=" + u_escaped(auth) +
                            R"(","type":"invalid_request_error"}})",
                        "application/json");
        return;
      }
      case FaultKind::kEchoKeyInAnswer: {
        std::string auth = req.get_header_value("Authorization");
        if (auth.rfind("Bearer ", 0) == 0) auth = auth.substr(7);
        const std::string said =
            "Your key is " + slash_escaped(auth) + ", or " + u_escaped(auth) + ". FINAL: 1";
        res.set_content(R"({"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant",)"
                        R"("content":")" +
                            said + R"(","reasoning_content":")" + said +
                            R"("}}],"model":"test-model","usage":{"prompt_tokens":1,"completion_tokens":1}})",
                        "application/json");
        return;
      }
      case FaultKind::kNone:
      case FaultKind::kLength:
        break;
    }

    // The answer.
    std::string content;
    std::string finish = "stop";
    std::int64_t completion_tokens = 0;
    std::string why;
    std::optional<llm::SolvedAnswer> ans;
    if (im->solver && !im->opts.claims) ans = im->solver("", prompt, &why);
    if (im->opts.claims) {
      content = claims_answer(prompt);
      completion_tokens = static_cast<std::int64_t>(content.size() / 4 + 1);
    } else if (ans) {
      const std::uint64_t seed = body["seed"].is_number_unsigned() ? body["seed"].get<std::uint64_t>() : 0;
      const llm::Fault fault =
          im->opts.inject.any() ? llm::draw_fault(im->opts.inject, seed, prompt) : llm::Fault::kNone;
      const llm::ReferenceReply r = llm::reference_reply(*ans, fault, max_tokens);
      content = r.content;
      finish = r.finish_reason;
      completion_tokens = r.completion_tokens;
    } else if (im->solver) {
      content = "I cannot determine the answer from the question.";
      completion_tokens = 10;
    } else {
      content = "You asked: " + prompt;
      completion_tokens = static_cast<std::int64_t>(content.size() / 4 + 1);
    }
    if (im->opts.nondeterministic && repeated) {
      const int variant = nondeterministic_variant(prompt);
      if (variant == 1) content = "Checked once more. " + content;
      const auto fin = content.rfind("FINAL: ");
      if (variant == 2 && fin != std::string::npos) content.insert(fin + 7, "1");
    }
    if (rule.kind == FaultKind::kLength) {
      content = content.substr(0, content.size() / 3);
      finish = "length";
      completion_tokens = max_tokens;
    }
    const std::int64_t prompt_tokens = static_cast<std::int64_t>(prompt.size() / 4 + 1);
    io::Json choice = {{"index", 0}, {"finish_reason", finish}};
    if (chat) {
      choice["message"] = {{"role", "assistant"}, {"content", content}};
      if (im->opts.reasoning) {
        const std::string thought = reasoning_text(prompt);
        choice["message"]["reasoning_content"] = thought;
        completion_tokens += static_cast<std::int64_t>(thought.size() / 4 + 1);
      }
    } else {
      choice["text"] = content;
    }
    const io::Json out = {{"id", fmt::format("chatcmpl-{}", im->next_id++)},
                          {"object", chat ? "chat.completion" : "text_completion"},
                          {"created", 0},
                          {"model", model},
                          {"system_fingerprint", "fp_" + build},
                          {"choices", io::Json::array({choice})},
                          {"usage",
                           {{"prompt_tokens", prompt_tokens},
                            {"completion_tokens", completion_tokens},
                            {"total_tokens", prompt_tokens + completion_tokens}}},
                          {"timings", {{"prompt_n", prompt_tokens}, {"predicted_n", completion_tokens}}}};
    res.set_content(out.dump(), "application/json");
  };
  im->svr.Post("/v1/embeddings", [this, im](const httplib::Request& req, httplib::Response& res) {
    ++posts_;
    io::Json body = io::Json::parse(req.body, nullptr, false);
    {
      std::lock_guard lock(im->m);
      if (im->opts.record) im->bodies.push_back(body.is_discarded() ? io::Json(req.body) : body);
    }
    if (body.is_discarded() || !body.is_object() || !body.contains("input") || !body.contains("model")) {
      error_body(res, 400, "an embeddings request needs 'model' and 'input'", "invalid_request_error");
      return;
    }
    std::vector<std::string> inputs;
    if (body["input"].is_string()) {
      inputs.push_back(body["input"].get<std::string>());
    } else if (body["input"].is_array()) {
      for (const auto& x : body["input"]) {
        if (!x.is_string()) {
          error_body(res, 400, "'input' must be a string or an array of strings", "invalid_request_error");
          return;
        }
        inputs.push_back(x.get<std::string>());
      }
    }
    io::Json data = io::Json::array();
    for (std::size_t i = 0; i < inputs.size(); ++i)
      data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", claims_embedding(inputs[i])}});
    std::string model;
    {
      std::lock_guard lock(im->m);
      model = im->opts.model;
    }
    const io::Json out = {
        {"object", "list"}, {"data", data}, {"model", model}, {"usage", {{"prompt_tokens", 0}}}};
    res.set_content(out.dump(), "application/json");
  });
  im->svr.Post("/v1/chat/completions",
               [complete](const httplib::Request& req, httplib::Response& res) { complete(req, res, true); });
  im->svr.Post("/v1/completions", [complete](const httplib::Request& req, httplib::Response& res) {
    complete(req, res, false);
  });
}

TestServer::~TestServer() { stop(); }

int TestServer::start(int port) {
  Impl* im = impl_.get();
  if (port == 0) {
    port_ = im->svr.bind_to_any_port("127.0.0.1");
  } else {
    port_ = im->svr.bind_to_port("127.0.0.1", port) ? port : -1;
  }
  if (port_ <= 0) throw std::runtime_error("test server: cannot bind 127.0.0.1");
  if (im->listen_fd >= 0) ::listen(im->listen_fd, 4096);
  im->thread = std::thread([im] { im->svr.listen_after_bind(); });
  // Wait until the accept loop runs.
  for (int i = 0; i < 2000 && !im->svr.is_running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return port_;
}

void TestServer::stop() {
  Impl* im = impl_.get();
  {
    std::lock_guard lock(im->m);
    im->stopping = true;
  }
  im->stop_cv.notify_all();
  if (im->thread.joinable()) {
    im->svr.stop();
    im->thread.join();
  }
}

std::string TestServer::base_url() const { return fmt::format("http://127.0.0.1:{}/v1", port_); }

void TestServer::set_faults(std::vector<FaultRule> rules) {
  std::lock_guard lock(impl_->m);
  impl_->rules = std::move(rules);
  impl_->per_prompt.clear();
}

void TestServer::set_model(std::string model, std::string build) {
  std::lock_guard lock(impl_->m);
  impl_->opts.model = std::move(model);
  impl_->opts.build = std::move(build);
}

std::vector<io::Json> TestServer::requests() const {
  std::lock_guard lock(impl_->m);
  return impl_->bodies;
}

std::map<std::string, std::string> TestServer::last_headers() const {
  std::lock_guard lock(impl_->m);
  return impl_->last_headers;
}

}  // namespace numcheck::testing
