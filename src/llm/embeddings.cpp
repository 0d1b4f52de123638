#include "llm/embeddings.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/utf8.hpp"
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
  const std::string_view shown = utf8::prefix(text, 60);
  return fmt::format("{} \"{}{}\"", id, shown, shown.size() < text.size() ? "..." : "");
}

}  // namespace

namespace {

// One embed_texts call: the steps below share the texts, the run settings and the result.
class EmbedRun {
 public:
  EmbedRun(const std::vector<std::string>& texts, const EmbedOptions& opt) : opt_(opt) {
    for (const auto& t : texts) id_to_text_.emplace(text_item_id(t), t);
    HttpConfig cfg;
    cfg.endpoints = opt.endpoints;
    cfg.model = opt.model;
    cfg.api_key = opt.api_key;
    cfg.api = Api::kEmbeddings;
    cfg.timeout = std::chrono::milliseconds(static_cast<long long>(opt.timeout_s * 1000));
    backend_ = make_http_backend(cfg);
    s_.kind = opt.kind;
    s_.id_field = "batch_id";
    s_.model = opt.model;
    s_.concurrency = opt.concurrency;
    s_.retry.retries = opt.retries;
    s_.retry.base_delay = std::chrono::milliseconds(static_cast<long long>(opt.retry_base_s * 1000));
    s_.use_cache = false;  // the cache is per text, below: a text is never asked again in another batch
    s_.resume = opt.resume;
    s_.progress = opt.progress;
  }

  Embeddings run() {
    bind_to_probe();
    // 1. A resumed run keeps what its records hold (from any batch size).
    if (opt_.resume) harvest(nullptr);
    const std::size_t answered_before = out_.by_text.size();
    // 2. The response cache, one entry per text (the key of a request of that text alone).
    if (opt_.use_cache) serve_from_cache();
    // 3. The rest, in batches.
    ask_missing();
    // 4. Every new vector goes into the cache under its text's own key.
    if (cache_) fill_cache();
    out_.summary.total = id_to_text_.size();
    out_.summary.answered_before = answered_before;
    out_.summary.answered = out_.by_text.size() - answered_before;
    out_.summary.unanswered = id_to_text_.size() - out_.by_text.size();
    if (out_.summary.model.empty()) out_.summary.model = out_.model;
    if (!out_.summary.model.empty()) out_.model = out_.summary.model;
    out_.rejected = count_rejected();
    return std::move(out_);
  }

 private:
  // Every vector must have the probe's dimension and come from the probe's model: any other
  // answer is rejected by the runner (retried, recorded as an error, never cached) and a cached
  // one is never served. Both bind the run directory, so a resume against a server that changed
  // is an error.
  void bind_to_probe() {
    const Completion probe = probe_embedding(*backend_, s_, opt_);
    out_.dimension = vector_of(probe.content)->size();
    out_.model = probe.model;
    model_ = probe.model;
    s_.binding["embedding_dimension"] = out_.dimension;
    s_.binding["embedding_model"] = probe.model;
    s_.server = backend_->probe();  // the server's identity: part of every cache key
    s_.check_answer = [this](const Request& req, const Completion& c) { return answer_problem(req, c); };
  }

  // "" when `v` is a vector this run may use.
  [[nodiscard]] std::string vector_problem(const std::vector<double>& v) const {
    if (v.size() != out_.dimension)
      return fmt::format("a vector of dimension {}, not {} (the probe's)", v.size(), out_.dimension);
    return "";
  }

  // The runner's answer check: "" when the answer holds one good vector per text of its batch.
  [[nodiscard]] std::string answer_problem(const Request& req, const Completion& c) const {
    if (!model_.empty() && c.model != model_)
      return fmt::format("an embedding from model '{}', not '{}' (the probe's)", c.model, model_);
    const auto b = batch_texts_.find(req.item_id);
    const std::size_t n = b == batch_texts_.end() ? 1 : b->second.size();
    const auto v = vectors_of(c.content);
    if (!v) return "the vector is not an array of numbers";
    auto name = [&](std::size_t k) {
      if (b == batch_texts_.end() || k >= b->second.size()) return std::string("the text");
      const std::string& id = b->second[k];
      return "text " + text_name(id, id_to_text_.at(id));
    };
    if (v->size() != n)
      return fmt::format("{} vectors for a batch of {} texts (first: {})", v->size(), n, name(0));
    for (std::size_t k = 0; k < n; ++k)
      if (std::string why = vector_problem((*v)[k]); !why.empty())
        return n == 1 ? why : fmt::format("{} for {}", why, name(k));
    return "";
  }

  // Takes the vectors the run's records hold; counts in *bad the records (or vectors) not used.
  void harvest(std::size_t* bad) {
    const fs::path responses = opt_.run_dir / "responses.jsonl";
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
        auto text = id_to_text_.find((*ids)[k].get<std::string>());
        if (text == id_to_text_.end()) continue;  // a text of an earlier, different text list
        if (!vector_problem((*v)[k]).empty()) {
          if (bad != nullptr) ++*bad;
          continue;
        }
        out_.by_text[text->second] = (*v)[k];
      }
    });
  }

  // The request line of one text alone: its cache key.
  [[nodiscard]] std::string single_body(const std::string& text) const {
    WorkItem it;
    it.prompt = text;
    std::string line;
    bodies_.append(line, it);
    return line;
  }

  void serve_from_cache() {
    cache_ = std::make_unique<ResponseCache>(opt_.cache_path.empty() ? default_cache_path() : opt_.cache_path,
                                             ResponseCache::OnError::kGoOn);
    hasher_.emplace(io::to_line(s_.server->identity));
    for (const auto& [id, text] : id_to_text_) {
      if (out_.by_text.count(text) != 0) continue;
      const std::string line = single_body(text);
      const auto hit = cache_->get(hasher_->key(line), request_hash_from_line(line));
      if (!hit) continue;
      const auto v = vectors_of(hit->content);
      if ((!model_.empty() && hit->model != model_) || !v || v->size() != 1 ||
          !vector_problem(v->front()).empty()) {
        ++out_.summary.cache_refused;  // never served: asked again
        continue;
      }
      out_.by_text[text] = v->front();
      ++out_.summary.from_cache;
    }
  }

  // Work items of `size` texts each (in the given order); a batch's id is a hash of its text ids.
  std::vector<WorkItem> make_items(const std::vector<std::string>& ids, std::size_t size) {
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
        it.prompt = id_to_text_.at(part.front());
      } else {
        for (const auto& id : part) it.inputs.push_back(id_to_text_.at(id));
      }
      it.fields["text_ids"] = part;
      batch_texts_[it.item_id] = part;
      items.push_back(std::move(it));
    }
    return items;
  }

  void run_batch(const std::vector<WorkItem>& items) {
    const RunSummary r = run_items(items, s_, *backend_, opt_.run_dir);
    s_.resume = true;  // a second pass continues the same run directory
    auto& sum = out_.summary;
    sum.cache_warning = r.cache_warning;
    sum.stopped_early = sum.stopped_early || r.stopped_early;
    sum.interrupted = sum.interrupted || r.interrupted;
    if (!r.stop_reason.empty()) sum.stop_reason = r.stop_reason;
    sum.torn_bytes_repaired += r.torn_bytes_repaired;
    if (!r.model.empty()) sum.model = r.model;
    sum.failed += r.failed;
  }

  // The texts without a vector, in batches of opt.batch_size (in text id order); texts of a batch
  // that got no good answer are asked once more one by one, so that one bad text never costs the
  // others.
  void ask_missing() {
    for (const auto& [id, text] : id_to_text_)
      if (out_.by_text.count(text) == 0) missing_.push_back(id);
    run_batch(make_items(missing_, opt_.batch_size));
    std::size_t bad = 0;
    harvest(&bad);
    out_.wrong_dimension = bad;
    if (opt_.batch_size <= 1 || out_.summary.interrupted) return;
    std::vector<std::string> again;
    for (const auto& id : missing_)
      if (out_.by_text.count(id_to_text_.at(id)) == 0) again.push_back(id);
    if (again.empty()) return;
    run_batch(make_items(again, 1));
    bad = 0;
    harvest(&bad);
    out_.wrong_dimension = bad;
  }

  void fill_cache() {
    for (const auto& id : missing_) {
      const std::string& text = id_to_text_.at(id);
      auto v = out_.by_text.find(text);
      if (v == out_.by_text.end()) continue;
      Completion c;
      c.content = io::Json(v->second).dump();
      c.finish_reason = "stop";
      c.model = model_;
      const std::string line = single_body(text);
      cache_->put(hasher_->key(line), request_hash_from_line(line), model_, s_.server->identity, c);
    }
    cache_->commit();
    out_.summary.cache_rejected = cache_->rejected();
    if (!cache_->failure().empty() && out_.summary.cache_warning.empty())
      out_.summary.cache_warning = cache_->failure();
  }

  // Texts whose every answer was rejected (wrong dimension or another model): errors, no vector.
  std::size_t count_rejected() const {
    std::set<std::string> rejected;
    if (!fs::exists(opt_.run_dir / "errors.jsonl")) return 0;
    (void)read_records(opt_.run_dir / "errors.jsonl", [&](const io::Json& rec, std::size_t) {
      auto ids = rec.find("text_ids");
      auto err = rec.find("error");
      if (ids == rec.end() || !ids->is_array() || err == rec.end() || !err->is_string()) return;
      if (!err->get<std::string>().starts_with("answer rejected: ")) return;
      for (const auto& x : *ids) {
        if (!x.is_string()) continue;
        auto text = id_to_text_.find(x.get<std::string>());
        if (text != id_to_text_.end() && !out_.by_text.count(text->second)) rejected.insert(text->first);
      }
    });
    return rejected.size();
  }

  const EmbedOptions& opt_;
  std::map<std::string, std::string> id_to_text_;
  std::unique_ptr<Backend> backend_;
  RunSettings s_;
  RequestBodies bodies_{s_, opt_.model, Api::kEmbeddings};  // reads s_ at each append
  Embeddings out_;
  std::string model_;                                            // the probe's model
  std::map<std::string, std::vector<std::string>> batch_texts_;  // batch id -> text ids
  std::vector<std::string> missing_;                             // text ids asked this call
  std::unique_ptr<ResponseCache> cache_;
  std::optional<CacheKeyHasher> hasher_;
};

}  // namespace

Embeddings embed_texts(const std::vector<std::string>& texts, const EmbedOptions& opt) {
  if (opt.endpoints.empty()) fail(ErrorCode::kUsage, "embeddings: no endpoint given");
  if (opt.batch_size == 0) fail(ErrorCode::kUsage, "embeddings: the batch size must be at least 1");
  return EmbedRun(texts, opt).run();
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
