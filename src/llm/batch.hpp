#pragma once
// Batch runs: the runner's requests written as an OpenAI Batch API input file, and a batch's
// output file turned back into a run directory (docs/batch.md). OpenAI's Batch API and vLLM's
// offline runner (`python -m vllm.entrypoints.openai.run_batch`) read and write the same shapes:
//
//   input line:  {"custom_id": ID, "method": "POST", "url": "/v1/chat/completions", "body": BODY}
//   output line: {"id": ..., "custom_id": ID, "response": {"status_code": 200, "request_id": ...,
//                 "body": COMPLETION} | null, "error": null | {"code": ..., "message": ...}}
//
// BODY is the exact request body run_items sends (RequestBodies), and ID is
// "<item id>#<the first 16 hex digits of the body's SHA-256>": an output line names the request
// it answers and the body that was sent, so an answer to a request made with other settings (a
// model, a sampling field, a prompt that changed since the export) is refused, never imported.
//
// The import writes the run directory run_items would have written (responses.jsonl, errors.jsonl,
// run.json with the same fields and binding), deterministically: the same output files give the
// same bytes, so a second import of them changes nothing. Its records carry no timestamps of
// their own ("started_at" null, "completed_at" from the completion's "created").
//
//   std::vector<llm::WorkItem> items = ...;          // the same items the live run would send
//   llm::RunSettings s = llm::settings_from(opts);   // model, sampling, system prompt, extra body
//   llm::BatchRequests req = llm::batch_requests(items, s, llm::Api::kChat);
//   io::write_file_atomic("in.jsonl", req.lines);
//   ... the batch runs ...
//   llm::BatchImport r = llm::import_batch(items, s, llm::Api::kChat, {"out.jsonl"}, {}, "run");
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "io/json.hpp"
#include "llm/backend.hpp"
#include "llm/runner.hpp"

namespace numcheck::llm {

// The route a batch line names ("/v1/chat/completions" or "/v1/completions").
[[nodiscard]] std::string batch_url(Api api);

// "<item_id>#<first 16 hex digits of sha256(body)>".
[[nodiscard]] std::string batch_custom_id(std::string_view item_id, std::string_view body);

struct BatchRequests {
  std::string lines;                    // the input file's bytes, one line per item, items' order
  std::vector<std::string> custom_ids;  // in the items' order
};

// The batch input file of `items`: each body exactly as run_items builds it for settings.model
// (which must be set) on `api` (chat or completions). Throws Error for duplicate or empty item ids.
[[nodiscard]] BatchRequests batch_requests(const std::vector<WorkItem>& items, const RunSettings& settings,
                                           Api api);

struct BatchImport {
  std::size_t items = 0;             // work items
  std::size_t lines = 0;             // output lines read (records)
  std::size_t answered = 0;          // items with an answer
  std::size_t error_lines = 0;       // lines kept as error records (errors.jsonl)
  std::size_t unanswered = 0;        // items without an answer (an error line, or no line at all)
  std::vector<std::string> missing;  // ids of items no output line names, items' order
  std::vector<std::string> models;   // models the completions name, in order of first appearance
};

// Checks every line of the output files and writes out_dir (created when missing) as a run
// directory of run_items's shape: kind, id field, binding and info from `settings` as run_items
// records them, backend "batch", and run.json "batch" = {"custom_id", "input_sha256",
// "outputs": [{"file", "sha256", "lines"}], "models"} plus the members of `provenance`.
//
// A line is refused when it is not a JSON object, has no string custom_id, names no item, names
// an item with another body hash (made with other settings), or is a second answer for an item
// (an item may have any number of error lines and one answer: a retried batch's output may be
// given beside the first one's). Any refused line is an Error (kInvalidInput, exit 1) listing
// them, and nothing is written. An error line (error set, status_code not 200, or a body that is
// not a completion) is kept as an error record. out_dir may not hold a run other than a batch
// import (Error kUsage); a batch import there is replaced.
[[nodiscard]] BatchImport import_batch(const std::vector<WorkItem>& items, const RunSettings& settings,
                                       Api api, const std::vector<std::filesystem::path>& outputs,
                                       const io::OrderedJson& provenance,
                                       const std::filesystem::path& out_dir);

// The one-line summary of an import, and the Error (kIncomplete, exit 3) when items are
// unanswered, naming how many had error lines and how many had no line. `noun`: "prompts".
[[nodiscard]] std::string batch_summary(const BatchImport& r, const std::filesystem::path& out_dir,
                                        std::string_view noun);
void check_batch_complete(const BatchImport& r, const std::filesystem::path& out_dir, std::string_view noun);

}  // namespace numcheck::llm
