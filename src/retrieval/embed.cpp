#include "retrieval/embed.hpp"

#include <algorithm>
#include <chrono>
#include <set>

#include "core/error.hpp"
#include "io/json.hpp"
#include "io/sha256.hpp"
#include "llm/cache.hpp"
#include "llm/http_backend.hpp"

namespace numcheck::retrieval {

std::string text_item_id(std::string_view text) { return "t" + io::sha256_hex(text).substr(0, 32); }

Embeddings embed_texts(const std::vector<std::string>& texts, const EmbedOptions& opt) {
  std::map<std::string, std::string> id_to_text;
  for (const auto& t : texts) id_to_text.emplace(text_item_id(t), t);
  std::vector<llm::WorkItem> items;
  items.reserve(id_to_text.size());
  for (const auto& [id, t] : id_to_text) {
    llm::WorkItem it;
    it.item_id = id;
    it.prompt = t;
    items.push_back(std::move(it));
  }
  llm::HttpConfig cfg;
  cfg.endpoints = opt.endpoints;
  cfg.model = opt.model;
  cfg.api_key = opt.api_key;
  cfg.api = llm::Api::kEmbeddings;
  cfg.timeout = std::chrono::milliseconds(static_cast<long long>(opt.timeout_s * 1000));
  auto backend = llm::make_http_backend(cfg);
  llm::RunSettings s;
  s.kind = "claims retrieve embeddings";
  s.id_field = "text_id";
  s.model = opt.model;
  s.concurrency = opt.concurrency;
  s.retry.retries = opt.retries;
  s.retry.base_delay = std::chrono::milliseconds(static_cast<long long>(opt.retry_base_s * 1000));
  s.use_cache = opt.use_cache;
  s.cache_path = opt.cache_path.empty() ? llm::default_cache_path() : opt.cache_path;
  s.resume = opt.resume;
  s.progress = opt.progress;
  Embeddings out;
  out.summary = llm::run_items(items, s, *backend, opt.run_dir);
  out.model = out.summary.model;
  std::map<std::string, std::vector<double>> by_id;
  (void)llm::read_records(opt.run_dir / "responses.jsonl", [&](const io::Json& rec, std::size_t) {
    auto id = rec.find("text_id");
    auto resp = rec.find("response");
    if (id == rec.end() || !id->is_string() || resp == rec.end() || !resp->is_string()) return;
    if (!id_to_text.count(id->get<std::string>())) return;  // an item of an earlier, different text list
    io::Json v = io::Json::parse(resp->get<std::string>(), nullptr, false);
    if (!v.is_array()) return;
    std::vector<double> vec;
    vec.reserve(v.size());
    for (const auto& x : v) {
      if (!x.is_number()) return;
      vec.push_back(x.get<double>());
    }
    by_id[id->get<std::string>()] = std::move(vec);
  });
  // The dimension most answers have; any other length is a fault of the server (dropped, counted).
  std::map<std::size_t, std::size_t> dims;
  for (const auto& [id, v] : by_id) ++dims[v.size()];
  for (const auto& [d, n] : dims)
    if (out.dimension == 0 || n > dims[out.dimension]) out.dimension = d;
  for (auto& [id, v] : by_id) {
    if (v.size() != out.dimension) {
      ++out.wrong_dimension;
      continue;
    }
    out.by_text[id_to_text[id]] = std::move(v);
  }
  return out;
}

}  // namespace numcheck::retrieval
