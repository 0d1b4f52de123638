#include "llm/embeddings.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "core/error.hpp"
#include "io/json.hpp"
#include "io/sha256.hpp"
#include "llm/cache.hpp"
#include "llm/http_backend.hpp"

namespace numcheck::llm {

namespace fs = std::filesystem;

std::string text_item_id(std::string_view text) { return "t" + io::sha256_hex(text).substr(0, 32); }

namespace {

// The vector a completion carries (content is the JSON array the HTTP backend extracted), or
// nullopt when it is not an array of numbers.
std::optional<std::vector<double>> vector_of(const std::string& content) {
  const io::Json v = io::Json::parse(content, nullptr, false);
  if (!v.is_array()) return std::nullopt;
  std::vector<double> out;
  out.reserve(v.size());
  for (const auto& x : v) {
    if (!x.is_number()) return std::nullopt;
    out.push_back(x.get<double>());
  }
  return out;
}

// One embedding of a fixed text, fresh from endpoint 0 (never cached, retried like any request):
// its dimension and reported model are what every answer of the run must have.
Completion probe_embedding(Backend& backend, const RunSettings& s, const EmbedOptions& opt) {
  WorkItem item;
  item.item_id = "probe";
  item.prompt = std::string(kEmbeddingProbeText);
  Request req;
  req.item_id = item.item_id;
  req.prompt = item.prompt;
  req.body = io::to_line(build_request_body(item, s, opt.model, Api::kEmbeddings));
  auto session = backend.open_session();
  Attempt a;
  for (int attempt = 0;; ++attempt) {
    a = session->send(req, 0);
    if (a.status == Attempt::Status::kOk) {
      if (!vector_of(a.completion.content)) {
        a.status = Attempt::Status::kRetryable;
        a.error = "the vector is not an array of numbers";
      } else {
        return a.completion;
      }
    }
    if (a.status != Attempt::Status::kRetryable || attempt >= opt.retries) break;
    double delay = opt.retry_base_s * static_cast<double>(1u << std::min(attempt, 6));
    if (a.retry_after_s) delay = std::max(delay, std::min(*a.retry_after_s, 60.0));
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(delay, 60.0)));
  }
  fail(ErrorCode::kNetwork,
       "{}: the embedding probe (one fixed text, to learn the model's dimension) failed: {}",
       backend.endpoints().front(), a.error);
}

}  // namespace

Embeddings embed_texts(const std::vector<std::string>& texts, const EmbedOptions& opt) {
  if (opt.endpoints.empty()) fail(ErrorCode::kUsage, "embeddings: no endpoint given");
  std::map<std::string, std::string> id_to_text;
  for (const auto& t : texts) id_to_text.emplace(text_item_id(t), t);
  std::vector<WorkItem> items;
  items.reserve(id_to_text.size());
  for (const auto& [id, t] : id_to_text) {
    WorkItem it;
    it.item_id = id;
    it.prompt = t;
    items.push_back(std::move(it));
  }
  HttpConfig cfg;
  cfg.endpoints = opt.endpoints;
  cfg.model = opt.model;
  cfg.api_key = opt.api_key;
  cfg.api = Api::kEmbeddings;
  cfg.timeout = std::chrono::milliseconds(static_cast<long long>(opt.timeout_s * 1000));
  auto backend = make_http_backend(cfg);
  RunSettings s;
  s.kind = opt.kind;
  s.id_field = "text_id";
  s.model = opt.model;
  s.concurrency = opt.concurrency;
  s.retry.retries = opt.retries;
  s.retry.base_delay = std::chrono::milliseconds(static_cast<long long>(opt.retry_base_s * 1000));
  s.use_cache = opt.use_cache;
  s.cache_path = opt.cache_path.empty() ? default_cache_path() : opt.cache_path;
  s.resume = opt.resume;
  s.progress = opt.progress;

  // Every answer must be a vector of the probe's dimension from the probe's model: any other is
  // rejected by the runner (retried, recorded as an error, never cached) and a cached one is never
  // served. Both bind the run directory, so a resume against a server that changed is an error.
  Embeddings out;
  const Completion probe = probe_embedding(*backend, s, opt);
  out.dimension = vector_of(probe.content)->size();
  out.model = probe.model;
  s.binding["embedding_dimension"] = out.dimension;
  s.binding["embedding_model"] = probe.model;
  s.check_answer = [dim = out.dimension, model = probe.model](const Completion& c) -> std::string {
    if (!model.empty() && c.model != model)
      return fmt::format("an embedding from model '{}', not '{}' (the probe's)", c.model, model);
    const auto v = vector_of(c.content);
    if (!v) return "the vector is not an array of numbers";
    if (v->size() != dim)
      return fmt::format("a vector of dimension {}, not {} (the probe's)", v->size(), dim);
    return "";
  };
  out.summary = run_items(items, s, *backend, opt.run_dir);
  if (!out.summary.model.empty()) out.model = out.summary.model;
  (void)read_records(opt.run_dir / "responses.jsonl", [&](const io::Json& rec, std::size_t) {
    auto id = rec.find("text_id");
    auto resp = rec.find("response");
    if (id == rec.end() || !id->is_string() || resp == rec.end() || !resp->is_string()) return;
    auto text = id_to_text.find(id->get<std::string>());
    if (text == id_to_text.end()) return;  // an item of an earlier, different text list
    auto v = vector_of(resp->get<std::string>());
    // The runner's check passed every answer it recorded; a record that is not a vector of the
    // run's dimension (an edited file) is still never used.
    if (!v || v->size() != out.dimension) {
      ++out.wrong_dimension;
      return;
    }
    out.by_text[text->second] = std::move(*v);
  });
  // Texts whose every answer was rejected (wrong dimension or another model): errors, no vector.
  std::set<std::string> rejected;
  if (fs::exists(opt.run_dir / "errors.jsonl"))
    (void)read_records(opt.run_dir / "errors.jsonl", [&](const io::Json& rec, std::size_t) {
      auto id = rec.find("text_id");
      auto err = rec.find("error");
      if (id == rec.end() || !id->is_string() || err == rec.end() || !err->is_string()) return;
      auto text = id_to_text.find(id->get<std::string>());
      if (text != id_to_text.end() && !out.by_text.count(text->second) &&
          err->get<std::string>().starts_with("answer rejected: "))
        rejected.insert(text->first);
    });
  out.rejected = rejected.size();
  return out;
}

double cosine(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) fail("cosine: vectors of dimensions {} and {}", a.size(), b.size());
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  if (na == 0 || nb == 0) return 0.0;
  return dot / (std::sqrt(na) * std::sqrt(nb));
}

}  // namespace numcheck::llm
