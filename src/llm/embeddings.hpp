#pragma once
// The project's one embeddings client (claims retrieve's re-ranking, claims questions-quality's
// relevance), through the runner (src/llm/runner.hpp): one work item per distinct text, POST
// {endpoint}/embeddings with {"model", "input"}; retries with backoff, the response cache keyed by the
// server's model identity plus the exact request (so a vector of one model is never served for another),
// errors recorded in the run directory and never cached, resume after a kill. The run directory is an
// ordinary runner directory (run.json, responses.jsonl, errors.jsonl; docs/runner.md).
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "llm/runner.hpp"

namespace numcheck::llm {

struct EmbedOptions {
  std::string kind = "embeddings";     // the run's kind in run.json (which command asked)
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
  ProgressMode progress = ProgressMode::kNone;
};

// The text of the probe request embed_texts sends first (fresh, never cached): the dimension and
// reported model of its vector are what every other answer must have.
inline constexpr std::string_view kEmbeddingProbeText = "numcheck embedding probe: 1,000 claims checked";

struct Embeddings {
  std::map<std::string, std::vector<double>> by_text;  // text -> vector (answered texts only)
  std::size_t dimension = 0;                           // the probe's dimension, every vector's
  // Texts left without a vector because every answer for them was rejected (a vector of another
  // dimension, or from another model than the probe's): recorded in errors.jsonl, never cached.
  std::size_t rejected = 0;
  // Records in responses.jsonl that are not a vector of `dimension` (only an edited file can have
  // them: the runner records no rejected answer); never used.
  std::size_t wrong_dimension = 0;
  RunSummary summary;
  std::string model;  // as the server reported it
};

// The id of a text's work item: "t" + the first 32 hex digits of its SHA-256.
[[nodiscard]] std::string text_item_id(std::string_view text);

// Embeds every distinct text. First one probe request (kEmbeddingProbeText, fresh from the first
// endpoint) fixes the run's dimension and model; they bind the run directory (a resume against a
// server that now answers otherwise is an Error) and every answer is checked against them: a
// vector of another dimension or from another model is rejected (retried, then an error record),
// never stored in the response cache, and a cached vector that fails the check is never served
// (asked again). Throws Error for a server that cannot be reached or embed the probe, or a
// mismatching resume; texts whose retries ran out are missing from by_text (summary.unanswered
// counts them, `rejected` those whose answers were all rejected).
[[nodiscard]] Embeddings embed_texts(const std::vector<std::string>& texts, const EmbedOptions& opt);

// Cosine of two vectors, in double (0 when either is all zeros). Sizes must match (Error).
[[nodiscard]] double cosine(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace numcheck::llm
