#pragma once
// Evidence files: the contract between retrieval (which writes them), the verifiers (which read
// them) and the claim orbits. JSONL, one claim per line:
//
//   {"id": "...", "claim": "...", "label": "True|False|Conflicting"?, "category": "temporal"?,
//    "questions": ["..."], "evidence": [{"doc_id": "...", "text": "...", "query": "..."?,
//    "score": 1.5?, "rank": 1?}], "selection": "embeddings:<model>" | "lexical" | "claim-top3" |
//    "val-top3" | "gold"}
//
// next to a manifest `<file>.manifest.json` (numcheck version, the inputs' SHA-256, counts).
// `selection` says how the evidence was chosen: re-ranked by an embedding model, by lexical
// (BM25) score alone, the top 3 BM25 snippets for the claim as query ("claim-top3"), the top 3
// snippets shipped with the QuanTemp val mapping file ("val-top3"), or the fact-checker's own
// justification ("gold").
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "claims/claim.hpp"
#include "io/json.hpp"

namespace numcheck::claims {

struct EvidenceDoc {
  std::string doc_id;
  std::string text;
  std::string query;                // the query that found it ("" = the claim itself / unknown)
  std::optional<double> score;      // retrieval or re-ranking score
  std::optional<std::size_t> rank;  // 1-based rank among this claim's evidence
};

struct EvidenceRecord {
  std::string id;
  std::string claim;
  std::optional<Verdict> label;
  std::optional<Category> category;
  std::vector<std::string> questions;
  std::vector<EvidenceDoc> evidence;
  std::string selection;
};

// True for the selection names of the contract ("embeddings:<model>" with a non-empty model).
[[nodiscard]] bool valid_selection(std::string_view selection) noexcept;

// A claim's identifier: its explicit id when the source has one, else "<file stem>:<record>".
[[nodiscard]] std::string claim_id(const Claim& c);

// One record as a JSON object in the contract's field order (optional fields left out when unset).
[[nodiscard]] io::OrderedJson evidence_json(const EvidenceRecord& r);
// Parses one record; `where` ("ev.jsonl:12") prefixes errors, which also name the field.
[[nodiscard]] EvidenceRecord evidence_from_json(const io::Json& j, std::string_view where);

// Streams an evidence file record by record (memory: one line) under the project's JSONL rule
// (io::read_jsonl: blank lines skipped, a torn last line an error); any malformed line throws
// Error naming file:line and the field, and a claim id seen on an earlier line throws Error naming
// the id and both lines.
void for_each_evidence(const std::filesystem::path& path, const std::function<void(EvidenceRecord&&)>& fn);
[[nodiscard]] std::vector<EvidenceRecord> read_evidence(const std::filesystem::path& path);

// What the manifest records.
struct EvidenceInput {
  std::string path;
  std::string sha256;
};
struct EvidenceCounts {
  std::size_t records = 0, labelled = 0, with_category = 0, documents = 0, without_evidence = 0;
  std::map<std::string, std::size_t> by_selection;
  std::map<std::string, std::size_t> by_label;
};

// Writes an evidence file and its manifest. Records are collected as they come; finish() writes
// the file atomically (readers see the old file or the new one) and then its manifest.
class EvidenceWriter {
 public:
  explicit EvidenceWriter(std::filesystem::path path);
  void add_input(const std::filesystem::path& input);  // hashes it into the manifest
  void write(const EvidenceRecord& r);
  // Writes `<file>.manifest.json` with version, inputs, counts and `extra` fields; returns counts.
  EvidenceCounts finish(const io::OrderedJson& extra = io::OrderedJson::object());

 private:
  std::filesystem::path path_;
  std::string buf_;
  std::vector<EvidenceInput> inputs_;
  EvidenceCounts counts_;
};

[[nodiscard]] std::filesystem::path evidence_manifest_path(const std::filesystem::path& evidence_file);

// Builders from what the claim loaders read:
//  - a claim with CheckThat-style evidences (the QuanTemp val mapping file): its snippets in order,
//    doc_id "<claim id>#<k>", query = the query that found them, rank 1..n, selection "val-top3";
//  - a claim with a fact-checker justification (doc; the labelled test CSV's `features`): that
//    one document, doc_id "<claim id>#gold", selection "gold";
//  - otherwise no evidence, selection given by `fallback_selection`.
// Questions carry over from ClaimDecomp sub-questions when the source has them.
[[nodiscard]] EvidenceRecord evidence_from_claim(const Claim& c,
                                                 std::string_view fallback_selection = "lexical");

}  // namespace numcheck::claims
