#pragma once
// The project's one embeddings client (claims retrieve's re-ranking, claims questions-quality's
// relevance), through the runner (src/llm/runner.hpp): the distinct texts in batches, one work item
// (POST {endpoint}/embeddings with {"model", "input": [texts]}) per batch of batch_size texts, a
// lone text sent as {"model", "input": "text"}; retries with backoff, the response cache per text
// (keyed by the server's model identity plus the request of that text alone, so a vector of one
// model is never served for another and a text cached from one batch is never asked again in
// another), errors recorded in the run directory and never cached, resume after a kill. The run
// directory is an ordinary runner directory (run.json, responses.jsonl, errors.jsonl;
// docs/runner.md); its records are keyed by "batch_id" and name their texts in "text_ids".
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
  // Texts per request (the OpenAI "input" array). 64 keeps a request of claim-length texts far
  // below the servers' limits (OpenAI takes 2,048 inputs; llama-server embeds a batch in one pass).
  std::size_t batch_size = 64;
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
  // Counts per distinct text (total, answered_before: from a resumed run's records, from_cache,
  // cache_refused, answered, unanswered) and the runner's session facts (cache_warning,
  // stopped_early, interrupted, failed: batch items that got an error record).
  RunSummary summary;
  std::string model;  // as the server reported it
};

// The id of a text (and of the work item of a request of that text alone): "t" + the first 32 hex
// digits of its SHA-256. A batch's item id is "b" + 32 hex digits of SHA-256 over its text ids.
[[nodiscard]] std::string text_item_id(std::string_view text);

// Embeds every distinct text. First one probe request (kEmbeddingProbeText, fresh from the first
// endpoint) fixes the run's dimension and model; they bind the run directory (a resume against a
// server that now answers otherwise is an Error) and every answer is checked against them, vector
// by vector: a batch answered with another number of vectors than it has texts, or holding a
// vector of another dimension, or from another model, is rejected (retried, then an error record
// naming the text), never stored in the response cache, and a cached vector that fails the check
// is never served (asked again). The texts of a batch that got no good answer are asked once more
// one by one, so one bad text leaves only itself without a vector. A resumed run first takes the
// vectors its records hold, then the cache's, and asks only for the rest. Throws Error for a server that
// cannot be reached or embed the probe, or a mismatching resume; texts whose retries ran out are missing from
// by_text (summary.unanswered counts them, `rejected` those whose answers were all rejected).
[[nodiscard]] Embeddings embed_texts(const std::vector<std::string>& texts, const EmbedOptions& opt);

// Cosine of two vectors, in double (0 when either is all zeros). Sizes must match (Error).
[[nodiscard]] double cosine(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace numcheck::llm
