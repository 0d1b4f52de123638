#pragma once
// Text embeddings through an OpenAI-compatible POST {base}/embeddings (llama-server started with
// --embeddings, vLLM serving an embedding model, hosted APIs). Used for question relevance
// (`claims questions-quality`). Batches inputs, retries connection errors, timeouts, 429 and 5xx
// with exponential backoff, and checks that every input got one vector of one common dimension.
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace numcheck::llm {

struct EmbeddingConfig {
  std::string endpoint;  // base URL including /v1
  std::string model;
  std::string api_key;  // "" = none; never logged
  std::chrono::milliseconds timeout{120000};
  int retries = 4;
  std::chrono::milliseconds retry_base_delay{1000};
  std::size_t batch = 64;  // inputs per request
  std::size_t max_response_bytes = std::size_t{256} << 20;
};

// One vector per text, in order. Throws Error (kNetwork) when a batch keeps failing and
// (kInvalidInput) for a malformed answer.
[[nodiscard]] std::vector<std::vector<double>> embed_texts(const EmbeddingConfig& cfg,
                                                           const std::vector<std::string>& texts);

// Cosine of two vectors (0 when either is all zeros). Sizes must match.
[[nodiscard]] double cosine(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace numcheck::llm
