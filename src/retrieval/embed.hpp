#pragma once
// Embeddings for re-ranking through the project's runner (src/llm): one work item per distinct
// text, POST {endpoint}/embeddings with {"model", "input"}; retries with backoff, the response
// cache keyed by the server's model identity plus the exact request (so a vector of one model is
// never served for another), errors recorded in the run directory and never cached, resume after
// a kill. The run directory is an ordinary runner directory (run.json, responses.jsonl,
// errors.jsonl; docs/runner.md).
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "llm/runner.hpp"

namespace numcheck::retrieval {

struct EmbedOptions {
  std::vector<std::string> endpoints;  // base URLs including /v1
  std::string model;
  std::string api_key;  // "" = none; never logged
  std::filesystem::path run_dir;
  bool resume = false;
  bool use_cache = true;
  std::filesystem::path cache_path;  // "" = default
  std::size_t concurrency = 4;
  int retries = 4;
  double retry_base_s = 1.0;
  double timeout_s = 120;
  llm::ProgressMode progress = llm::ProgressMode::kNone;
};

struct Embeddings {
  std::map<std::string, std::vector<double>> by_text;  // text -> vector (answered texts only)
  std::size_t dimension = 0;                           // most common dimension among answers
  std::size_t wrong_dimension = 0;                     // answers dropped: not `dimension` long
  llm::RunSummary summary;
  std::string model;  // as the server reported it
};

// The id of a text's work item: "t" + the first 32 hex digits of its SHA-256.
[[nodiscard]] std::string text_item_id(std::string_view text);

// Embeds every distinct text. Throws Error for a server that cannot be reached or a mismatching
// resume; texts whose retries ran out are missing from by_text (summary.unanswered counts them).
[[nodiscard]] Embeddings embed_texts(const std::vector<std::string>& texts, const EmbedOptions& opt);

}  // namespace numcheck::retrieval
