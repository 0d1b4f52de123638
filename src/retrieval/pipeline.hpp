#pragma once
// Claims retrieval end to end (docs/retrieval.md): evidence collections into documents, claims
// into queries, top-k BM25 per query (threads over queries, output in input order), re-ranking
// (built-in lexical, or cosine of embeddings from an OpenAI-compatible /v1/embeddings endpoint
// through the runner) and evidence selection as in the QuanTemp paper.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "claims/claim.hpp"
#include "io/json.hpp"
#include "retrieval/index.hpp"

namespace numcheck::retrieval {

// ---- collections ----

struct CorpusStats {
  std::size_t records = 0;     // input records read
  std::size_t documents = 0;   // documents added
  std::size_t duplicates = 0;  // snippets left out because the same text was already added
  std::size_t empty = 0;       // records with empty text (kept: an empty document matches nothing)
};

// Collects documents from inputs, de-duplicating mapping-file snippets by exact text.
class Collection {
 public:
  // JSONL ({"id", "text", other fields kept as metadata}; a missing id or text is an Error naming
  // the line; a repeated id is an Error at build time) or a QuanTemp/CheckThat mapping file (JSON
  // array of claims with evidences[].top_k_doc[]: each distinct snippet text is one document with
  // id "snippet:<first 16 hex of its SHA-256>"), chosen by the first non-blank byte ('[' = mapping).
  CorpusStats add_corpus(const std::filesystem::path& path);
  // Gold documents: every claim's justification (the `doc` field, or the `[Evidences]:` part of
  // a features column) split into windows of `words` words starting every `stride` words. Ids are
  // "<claim id>#w<n>" (claims::claim_id) (n from 0); metadata names the claim.
  CorpusStats add_gold(const std::filesystem::path& path, std::size_t words, std::size_t stride);
  [[nodiscard]] std::vector<Document>& documents() { return docs_; }
  [[nodiscard]] const std::vector<std::string>& inputs() const { return inputs_; }

 private:
  std::vector<Document> docs_;
  std::map<std::string, std::size_t> snippet_seen_;  // text hash -> document index
  std::vector<std::string> inputs_;
};

// The windows add_gold makes of one text: byte ranges of `words` whitespace-separated words every
// `stride` words (the last window may be shorter; a text of at most `words` words is one window).
[[nodiscard]] std::vector<std::pair<std::size_t, std::size_t>> word_windows(std::string_view text,
                                                                            std::size_t words,
                                                                            std::size_t stride);

// ---- queries ----

enum class QueryMode : std::uint8_t { kClaim, kQuestions, kBoth };

struct ClaimQueries {
  std::string id, claim;
  std::optional<claims::Verdict> label;
  std::optional<claims::Category> category;
  std::vector<std::string> questions;
  struct Q {
    std::string kind;  // "claim" | "question"
    std::string text;
  };
  std::vector<Q> queries;
};

// Claims from any file the claims loaders read (JSON, JSONL incl. {"id","claim"}, CSV); questions
// from the claim file itself (ClaimDecomp CSV) or from `questions_file` (the ClaimDecomp CSV or
// any claim file with questions) joined by id, else by exact claim text, else by claims::normalize_claim key.
// A claim without questions keeps only its claim query under kBoth and has no query under kQuestions (counted
// in without_questions). Load issues of the files become warnings.
struct ClaimSet {
  std::vector<ClaimQueries> claims;
  std::size_t without_questions = 0;
  std::vector<std::string> warnings;
};
[[nodiscard]] ClaimSet load_claim_queries(const std::filesystem::path& claims_file,
                                          const std::filesystem::path& questions_file, QueryMode mode,
                                          std::size_t limit = 0);

// ---- retrieval ----

struct QueryResult {
  std::string kind, text;
  std::vector<Hit> hits;
};

// Top k for every query of every claim, `threads` workers over queries; results in input order.
[[nodiscard]] std::vector<std::vector<QueryResult>> retrieve(const Searcher& s, const TokenizerOptions& tok,
                                                             const std::vector<ClaimQueries>& claims,
                                                             std::size_t k, unsigned threads);

// Gold-document recall, the regression metric of docs/retrieval.md: claim c's relevant documents
// are its own gold passages (ids "<c's id>#w<n>", made by Collection::add_gold). For each query
// kind ("claim", "question"): the number of queries, recall@k for every k in `ks` (the share of
// queries with a relevant document in the top k) and the mean reciprocal rank of the first
// relevant document within the retrieved list (0 when there is none).
struct GoldRecall {
  std::string kind;
  std::size_t queries = 0;
  std::vector<std::pair<std::size_t, double>> recall;  // (k, recall@k)
  double mrr = 0;
};
[[nodiscard]] std::vector<GoldRecall> gold_recall(const Index& ix, const std::vector<ClaimQueries>& claims,
                                                  const std::vector<std::vector<QueryResult>>& results,
                                                  const std::vector<std::size_t>& ks);

// ---- re-ranking and selection ----

struct Scored {
  std::uint32_t doc = 0;
  std::size_t rank = 0;  // BM25 rank (1-based)
  double bm25 = 0;
  double score = 0;  // re-ranking score (cosine, or the lexical score)
};
struct Selected {
  std::uint32_t doc = 0;
  std::string query;  // the query text that selected it
  double score = 0;
  std::size_t rank = 0;  // rank after re-ranking within its query (1-based)
};

// Lexical re-ranking (no model): BM25 / the list's best BM25, plus 0.5 times the share of the
// query's number terms ("#..." terms) that the snippet also has (quantity agreement). Stable:
// ties keep BM25 order.
[[nodiscard]] std::vector<Scored> rerank_lexical(const Index& ix, const TokenizerOptions& tok,
                                                 std::string_view query, const std::vector<Hit>& hits);

// Evidence selection as in the QuanTemp paper (unified setting): with question queries, per
// question the top-1 re-ranked snippet if its score exceeds `threshold` (cosine; the lexical
// re-ranker uses no threshold); with the claim query only, the top `claim_top` (3). A snippet
// already selected for an earlier query of the claim (same document number) is skipped and the
// next one taken, so one snippet is never shown twice (questions in their file order).
struct SelectionPolicy {
  std::optional<double> threshold = 0.5;
  std::size_t claim_top = 3;
};
[[nodiscard]] std::vector<Selected> select_evidence(
    const std::vector<std::pair<std::string, std::vector<Scored>>>& per_query, bool claim_only,
    const SelectionPolicy& policy);

}  // namespace numcheck::retrieval
