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
#include "llm/runner.hpp"

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

namespace {

// The vectors a completion carries: one vector (a request of one text), or an array of vectors
// (a batch). nullopt when it is neither.
std::optional<std::vector<std::vector<double>>> vectors_of(const std::string& content) {
  const io::Json v = io::Json::parse(content, nullptr, false);
  if (!v.is_array() || v.empty()) return std::nullopt;
  auto one = [](const io::Json& a) -> std::optional<std::vector<double>> {
    if (!a.is_array()) return std::nullopt;
    std::vector<double> out;
    out.reserve(a.size());
    for (const auto& x : a) {
      if (!x.is_number()) return std::nullopt;
      out.push_back(x.get<double>());
    }
    return out;
  };
  std::vector<std::vector<double>> out;
  if (v.front().is_array()) {
    for (const auto& a : v) {
      auto x = one(a);
      if (!x) return std::nullopt;
      out.push_back(std::move(*x));
    }
  } else {
    auto x = one(v);
    if (!x) return std::nullopt;
    out.push_back(std::move(*x));
  }
  return out;
}

// A text as errors name it: its item id and its first 60 bytes.
std::string text_name(const std::string& id, const std::string& text) {
  std::size_t end = std::min<std::size_t>(text.size(), 60);
  while (end > 0 && end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return fmt::format("{} \"{}{}\"", id, text.substr(0, end), end < text.size() ? "..." : "");
}

}  // namespace

Embeddings embed_texts(const std::vector<std::string>& texts, const EmbedOptions& opt) {
  if (opt.endpoints.empty()) fail(ErrorCode::kUsage, "embeddings: no endpoint given");
  if (opt.batch_size == 0) fail(ErrorCode::kUsage, "embeddings: the batch size must be at least 1");
  std::map<std::string, std::string> id_to_text;
  for (const auto& t : texts) id_to_text.emplace(text_item_id(t), t);
  HttpConfig cfg;
  cfg.endpoints = opt.endpoints;
  cfg.model = opt.model;
  cfg.api_key = opt.api_key;
  cfg.api = Api::kEmbeddings;
  cfg.timeout = std::chrono::milliseconds(static_cast<long long>(opt.timeout_s * 1000));
  auto backend = make_http_backend(cfg);
  RunSettings s;
  s.kind = opt.kind;
  s.id_field = "batch_id";
  s.model = opt.model;
  s.concurrency = opt.concurrency;
  s.retry.retries = opt.retries;
  s.retry.base_delay = std::chrono::milliseconds(static_cast<long long>(opt.retry_base_s * 1000));
  s.use_cache = false;  // the cache is per text, below: a text is never asked again in another batch
  s.resume = opt.resume;
  s.progress = opt.progress;

  // Every vector must have the probe's dimension and come from the probe's model: any other
  // answer is rejected by the runner (retried, recorded as an error, never cached) and a cached
  // one is never served. Both bind the run directory, so a resume against a server that changed
  // is an error.
  Embeddings out;
  const Completion probe = probe_embedding(*backend, s, opt);
  out.dimension = vector_of(probe.content)->size();
  out.model = probe.model;
  s.binding["embedding_dimension"] = out.dimension;
  s.binding["embedding_model"] = probe.model;
  s.server = backend->probe();  // the server's identity: part of every cache key

  // Texts per batch item (filled below), for the check and for reading the records.
  std::map<std::string, std::vector<std::string>> batch_texts;  // batch id -> text ids
  const std::size_t dim = out.dimension;
  const std::string model = probe.model;
  // "" when `v` is a vector this run may use.
  auto vector_problem = [dim](const std::vector<double>& v) -> std::string {
    if (v.size() != dim) return fmt::format("a vector of dimension {}, not {} (the probe's)", v.size(), dim);
    return "";
  };
  s.check_answer = [&](const Request& req, const Completion& c) -> std::string {
    if (!model.empty() && c.model != model)
      return fmt::format("an embedding from model '{}', not '{}' (the probe's)", c.model, model);
    const auto b = batch_texts.find(req.item_id);
    const std::size_t n = b == batch_texts.end() ? 1 : b->second.size();
    const auto v = vectors_of(c.content);
    if (!v) return "the vector is not an array of numbers";
    auto name = [&](std::size_t k) {
      if (b == batch_texts.end() || k >= b->second.size()) return std::string("the text");
      const std::string& id = b->second[k];
      return "text " + text_name(id, id_to_text.at(id));
    };
    if (v->size() != n)
      return fmt::format("{} vectors for a batch of {} texts (first: {})", v->size(), n, name(0));
    for (std::size_t k = 0; k < n; ++k)
      if (std::string why = vector_problem((*v)[k]); !why.empty())
        return n == 1 ? why : fmt::format("{} for {}", why, name(k));
    return "";
  };

  // 1. A resumed run keeps what its records hold (from any batch size).
  const fs::path responses = opt.run_dir / "responses.jsonl";
  auto harvest = [&](std::size_t* bad) {
    if (!fs::exists(responses)) return;
    (void)read_records(responses, [&](const io::Json& rec, std::size_t) {
      auto ids = rec.find("text_ids");
      auto resp = rec.find("response");
      if (ids == rec.end() || !ids->is_array() || resp == rec.end() || !resp->is_string()) return;
      const auto v = vectors_of(resp->get<std::string>());
      // The runner's check passed every answer it recorded; a record that does not hold one vector
      // of the run's dimension per text (an edited file) is never used.
      if (!v || v->size() != ids->size()) {
        if (bad != nullptr) ++*bad;
        return;
      }
      for (std::size_t k = 0; k < v->size(); ++k) {
        if (!(*ids)[k].is_string()) continue;
        auto text = id_to_text.find((*ids)[k].get<std::string>());
        if (text == id_to_text.end()) continue;  // a text of an earlier, different text list
        if (!vector_problem((*v)[k]).empty()) {
          if (bad != nullptr) ++*bad;
          continue;
        }
        out.by_text[text->second] = (*v)[k];
      }
    });
  };
  if (opt.resume) harvest(nullptr);
  std::size_t answered_before = out.by_text.size();

  // 2. The response cache, one entry per text (the key of a request of that text alone).
  std::unique_ptr<ResponseCache> cache;
  std::optional<CacheKeyHasher> hasher;
  RequestBodies bodies(s, opt.model, Api::kEmbeddings);
  auto single_body = [&](const std::string& text) {
    WorkItem it;
    it.prompt = text;
    std::string line;
    bodies.append(line, it);
    return line;
  };
  const std::string identity_line = io::to_line(s.server->identity);
  if (opt.use_cache) {
    cache = std::make_unique<ResponseCache>(opt.cache_path.empty() ? default_cache_path() : opt.cache_path,
                                            ResponseCache::OnError::kGoOn);
    hasher.emplace(identity_line);
    for (const auto& [id, text] : id_to_text) {
      if (out.by_text.count(text) != 0) continue;
      const std::string line = single_body(text);
      const auto hit = cache->get(hasher->key(line), request_hash_from_line(line));
      if (!hit) continue;
      const auto v = vectors_of(hit->content);
      if ((!model.empty() && hit->model != model) || !v || v->size() != 1 ||
          !vector_problem(v->front()).empty()) {
        ++out.summary.cache_refused;  // never served: asked again
        continue;
      }
      out.by_text[text] = v->front();
      ++out.summary.from_cache;
    }
  }

  // 3. The rest in batches of opt.batch_size texts (in text id order); texts of a batch that got
  // no good answer are asked once more one by one, so that one bad text never costs the others.
  std::vector<std::string> missing;
  for (const auto& [id, text] : id_to_text)
    if (out.by_text.count(text) == 0) missing.push_back(id);
  auto make_items = [&](const std::vector<std::string>& ids, std::size_t size) {
    std::vector<WorkItem> items;
    for (std::size_t at = 0; at < ids.size(); at += size) {
      const std::vector<std::string> part(
          ids.begin() + static_cast<std::ptrdiff_t>(at),
          ids.begin() + static_cast<std::ptrdiff_t>(std::min(ids.size(), at + size)));
      WorkItem it;
      std::string joined;
      for (const auto& id : part) joined += id + "\n";
      it.item_id = part.size() == 1 ? part.front() : "b" + io::sha256_hex(joined).substr(0, 32);
      if (part.size() == 1) {
        it.prompt = id_to_text.at(part.front());
      } else {
        for (const auto& id : part) it.inputs.push_back(id_to_text.at(id));
      }
      it.fields["text_ids"] = part;
      batch_texts[it.item_id] = part;
      items.push_back(std::move(it));
    }
    return items;
  };
  auto run = [&](const std::vector<WorkItem>& items) {
    const RunSummary r = run_items(items, s, *backend, opt.run_dir);
    s.resume = true;  // a second pass continues the same run directory
    out.summary.cache_warning = r.cache_warning;
    out.summary.stopped_early = out.summary.stopped_early || r.stopped_early;
    out.summary.interrupted = out.summary.interrupted || r.interrupted;
    if (!r.stop_reason.empty()) out.summary.stop_reason = r.stop_reason;
    out.summary.torn_bytes_repaired += r.torn_bytes_repaired;
    if (!r.model.empty()) out.summary.model = r.model;
    out.summary.failed += r.failed;
  };
  {
    run(make_items(missing, opt.batch_size));
    std::size_t bad = 0;
    harvest(&bad);
    out.wrong_dimension = bad;
    if (opt.batch_size > 1 && !out.summary.interrupted) {
      std::vector<std::string> again;
      for (const auto& id : missing)
        if (out.by_text.count(id_to_text.at(id)) == 0) again.push_back(id);
      if (!again.empty()) {
        run(make_items(again, 1));
        bad = 0;
        harvest(&bad);
        out.wrong_dimension = bad;
      }
    }
  }

  // 4. Every new vector goes into the cache under its text's own key.
  if (cache) {
    for (const auto& id : missing) {
      const std::string& text = id_to_text.at(id);
      auto v = out.by_text.find(text);
      if (v == out.by_text.end()) continue;
      Completion c;
      c.content = io::Json(v->second).dump();
      c.finish_reason = "stop";
      c.model = model;
      const std::string line = single_body(text);
      cache->put(hasher->key(line), request_hash_from_line(line), model, s.server->identity, c);
    }
    cache->commit();
    out.summary.cache_rejected = cache->rejected();
    if (!cache->failure().empty() && out.summary.cache_warning.empty())
      out.summary.cache_warning = cache->failure();
  }
  out.summary.total = id_to_text.size();
  out.summary.answered_before = answered_before;
  out.summary.answered = out.by_text.size() - answered_before;
  out.summary.unanswered = id_to_text.size() - out.by_text.size();
  if (out.summary.model.empty()) out.summary.model = out.model;
  if (!out.summary.model.empty()) out.model = out.summary.model;

  // Texts whose every answer was rejected (wrong dimension or another model): errors, no vector.
  std::set<std::string> rejected;
  if (fs::exists(opt.run_dir / "errors.jsonl"))
    (void)read_records(opt.run_dir / "errors.jsonl", [&](const io::Json& rec, std::size_t) {
      auto ids = rec.find("text_ids");
      auto err = rec.find("error");
      if (ids == rec.end() || !ids->is_array() || err == rec.end() || !err->is_string()) return;
      if (!err->get<std::string>().starts_with("answer rejected: ")) return;
      for (const auto& x : *ids) {
        if (!x.is_string()) continue;
        auto text = id_to_text.find(x.get<std::string>());
        if (text != id_to_text.end() && !out.by_text.count(text->second)) rejected.insert(text->first);
      }
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
