#pragma once
// An OpenAI-compatible embeddings test server on 127.0.0.1 (cpp-httplib): GET /v1/models and
// POST /v1/embeddings, "input" a string or an array of strings (a batch; the answer's data entries
// come in reverse order, each with its "index"). Vectors are deterministic hashed bags of words
// (each lower-cased word adds 1 to coordinate FNV-1a(word) mod dimension), so texts that share
// words have a positive cosine and equal texts cosine 1. Faults per input text (substring match):
// 429 with Retry-After and 500 (for the whole request), malformed vector (a string where numbers
// belong), wrong dimension (one coordinate too many), another model (the answer reports
// "impostor-model"), count (the text's vector left out of the answer); each for the first `times`
// requests holding a matching text (-1: always).
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace numcheck::testing {

struct EmbeddingFault {
  std::string match;
  std::string kind;  // "429", "500", "malformed", "dimension", "model", "count"
  int times = -1;
};

class EmbeddingsServer {
 public:
  explicit EmbeddingsServer(std::string model = "hash-bow-64", std::size_t dimension = 64);
  ~EmbeddingsServer();
  EmbeddingsServer(const EmbeddingsServer&) = delete;
  EmbeddingsServer& operator=(const EmbeddingsServer&) = delete;
  int start();  // ephemeral port
  void stop();
  [[nodiscard]] std::string base_url() const;
  void set_faults(std::vector<EmbeddingFault> f);
  void set_model(std::string model);
  [[nodiscard]] std::size_t post_count() const { return posts_.load(); }
  // Input texts received over all requests, and the most in one request.
  [[nodiscard]] std::size_t text_count() const { return texts_.load(); }
  [[nodiscard]] std::size_t largest_batch() const { return largest_batch_.load(); }
  // The server's vector for a text (what a test expects back).
  [[nodiscard]] std::vector<double> vector_for(const std::string& text) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<std::size_t> posts_{0};
  std::atomic<std::size_t> texts_{0};
  std::atomic<std::size_t> largest_batch_{0};
};

}  // namespace numcheck::testing
