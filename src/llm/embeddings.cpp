#include "llm/embeddings.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

#include <fmt/format.h>

#include "core/error.hpp"
#include "io/json.hpp"
#include "llm/http_backend.hpp"

namespace numcheck::llm {

std::vector<std::vector<double>> embed_texts(const EmbeddingConfig& cfg,
                                             const std::vector<std::string>& texts) {
  std::string url = cfg.endpoint;
  while (!url.empty() && url.back() == '/') url.pop_back();
  url += "/embeddings";
  const std::string shown = strip_credentials(url);
  std::vector<std::vector<double>> out;
  out.reserve(texts.size());
  const std::size_t batch = std::max<std::size_t>(1, cfg.batch);
  for (std::size_t start = 0; start < texts.size(); start += batch) {
    const std::size_t end = std::min(texts.size(), start + batch);
    io::Json body = io::Json::object();
    body["model"] = cfg.model;
    body["input"] = std::vector<std::string>(texts.begin() + static_cast<std::ptrdiff_t>(start),
                                             texts.begin() + static_cast<std::ptrdiff_t>(end));
    body["encoding_format"] = "float";
    const std::string bytes = body.dump();
    HttpReply r;
    for (int attempt = 0;; ++attempt) {
      r = post_json(url, bytes, cfg.api_key, cfg.timeout, cfg.max_response_bytes);
      if (r.ok || !r.retryable || attempt >= cfg.retries) break;
      std::chrono::milliseconds delay = cfg.retry_base_delay * (std::int64_t{1} << std::min(attempt, 10));
      if (r.retry_after_s)
        delay =
            std::max(delay, std::chrono::milliseconds(static_cast<std::int64_t>(*r.retry_after_s * 1000)));
      std::this_thread::sleep_for(std::min(delay, std::chrono::milliseconds(60000)));
    }
    if (!r.ok) fail(ErrorCode::kNetwork, "{}: {}", shown, r.error);
    const auto parsed = io::try_parse_json(r.body, shown);
    if (!parsed.ok()) fail(ErrorCode::kInvalidInput, "{}", parsed.error.what());
    const io::Json& j = *parsed.value;
    if (!j.is_object() || !j.contains("data") || !j["data"].is_array())
      fail(ErrorCode::kInvalidInput, "{}: the answer has no 'data' array", shown);
    const io::Json& data = j["data"];
    if (data.size() != end - start)
      fail(ErrorCode::kInvalidInput, "{}: {} vectors for {} inputs", shown, data.size(), end - start);
    std::vector<std::vector<double>> got(end - start);
    for (std::size_t i = 0; i < data.size(); ++i) {
      const io::Json& d = data[i];
      const std::size_t index = d.is_object() && d.contains("index") && d["index"].is_number_unsigned()
                                    ? d["index"].get<std::size_t>()
                                    : i;
      if (!d.is_object() || !d.contains("embedding") || !d["embedding"].is_array() || index >= got.size() ||
          !got[index].empty())
        fail(ErrorCode::kInvalidInput, "{}: malformed data[{}]", shown, i);
      for (const auto& x : d["embedding"]) {
        if (!x.is_number()) fail(ErrorCode::kInvalidInput, "{}: data[{}] holds a non-number", shown, i);
        got[index].push_back(x.get<double>());
      }
    }
    for (auto& v : got) {
      if (v.empty() || (!out.empty() && v.size() != out.front().size()))
        fail(ErrorCode::kInvalidInput, "{}: vectors of different dimensions", shown);
      out.push_back(std::move(v));
    }
  }
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
