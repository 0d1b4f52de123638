#pragma once
// The inverted index and the BM25 scorer (our own; the layout follows PISA's ideas: per term a
// document-ordered posting list of (document number, term frequency), compressed in blocks of 128
// postings: document-number gaps and frequencies bit-packed with one width per block, and per block
// its last document number, so a cursor skips whole blocks without decoding them).
//
// Scoring is one named variant, "bm25-lucene": Lucene's / Elasticsearch's BM25
//   idf(t)      = ln(1 + (N - df + 0.5) / (df + 0.5))
//   score(d, q) = sum over query terms t (repeated terms count again) of
//                 idf(t) * f(t,d) * (k1 + 1) / (f(t,d) + k1 * (1 - b + b * dl(d) / avgdl))
// with exact document lengths (Lucene rounds them to one byte; we do not), dl = number of words
// (number terms are synonyms and do not count, like Lucene's discountOverlaps), avgdl = mean dl
// over all documents. Ties are broken by the lower document number (insertion order). Scores are
// doubles summed in query-term order, so pruned and exhaustive search give the same bits.
//
// Search is document-at-a-time MaxScore (Turtle and Flood 1995, as in PISA's maxscore_query):
// safe, i.e. its top-k equals exhaustive scoring's top-k (tested on random queries).
//
// Persistence: one file (format in docs/retrieval.md) ending with the SHA-256 of everything before
// it; load() verifies size, magic, version and checksum before reading, and bounds-checks every
// count, offset and posting block (each block is decoded and checked once), so a truncated or
// corrupt file is an Error, never a wrong ranking or a read out of bounds. A loaded index keeps the
// file's bytes and reads its strings and blocks in place. The documents' texts and metadata are
// stored in zstd-compressed blocks of about 16 KiB (consecutive documents, one dictionary trained
// on the collection); a text is decompressed when asked for (its block stays cached per thread),
// and a block that does not decompress to its recorded size and layout is an Error.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/large_array.hpp"

#include "retrieval/tokenize.hpp"

struct ZSTD_DDict_s;  // zstd's decompression dictionary (zstd.h)

namespace numcheck::retrieval {

inline constexpr std::string_view kScoringVariant = "bm25-lucene";

struct Bm25Params {
  double k1 = 1.2;
  double b = 0.75;
};

struct Document {
  std::string id;
  std::string text;
  std::string meta;  // compact JSON object of extra fields ("" = none)
};

namespace detail {
// The index builder's and reader's large arrays (core/large_array.hpp), resized
// without zero-filling (the builder sizes the 231 MB posting tables of a 423k-snippet collection
// and its placing threads touch the pages in parallel as they fill them).
using core::DefaultInitAllocator;
using core::kLargeArrayBytes;
using core::map_large;
using core::unmap_large;
using PostingVector = std::vector<std::uint32_t, DefaultInitAllocator<std::uint32_t>>;
// The bytes of a loaded index file (read without zero-filling first) or of a built index.
using Bytes = std::vector<char, DefaultInitAllocator<char>>;
}  // namespace detail

class Index {
 public:
  static constexpr std::uint32_t kBlock = 128;  // postings per block (the last one of a list: fewer)

  [[nodiscard]] std::uint32_t num_docs() const { return static_cast<std::uint32_t>(doc_len_.size()); }
  [[nodiscard]] std::size_t num_terms() const { return terms_.size(); }
  [[nodiscard]] std::uint64_t num_postings() const { return term_off_.empty() ? 0 : term_off_.back(); }
  [[nodiscard]] std::size_t num_blocks() const { return block_last_.size(); }
  // Bytes of the compressed posting blocks.
  [[nodiscard]] std::uint64_t posting_bytes() const { return block_off_.empty() ? 0 : block_off_.back(); }
  // The stored documents: compressed blocks, their bytes, their dictionary's bytes, the raw bytes.
  [[nodiscard]] std::size_t num_text_blocks() const { return text_raw_.size(); }
  [[nodiscard]] std::uint64_t text_bytes() const { return text_off_.empty() ? 0 : text_off_.back(); }
  [[nodiscard]] std::uint64_t text_dict_bytes() const { return dict_size_; }
  [[nodiscard]] std::uint64_t text_raw_bytes() const;
  [[nodiscard]] double avgdl() const { return avgdl_; }
  [[nodiscard]] const TokenizerOptions& tokenizer() const { return tok_; }
  [[nodiscard]] std::string_view doc_id(std::uint32_t d) const { return str(doc_ids_, d); }
  // A document's text and metadata, decompressed (throws Error when its block is damaged).
  [[nodiscard]] std::string doc_text(std::uint32_t d) const;
  [[nodiscard]] std::string doc_meta(std::uint32_t d) const;
  [[nodiscard]] std::uint32_t doc_length(std::uint32_t d) const { return doc_len_[d]; }
  [[nodiscard]] std::optional<std::uint32_t> doc_number(std::string_view id) const;

  // Term number, or nullopt when the term is not in the index.
  [[nodiscard]] std::optional<std::uint32_t> term(std::string_view t) const;
  [[nodiscard]] std::string_view term_text(std::uint32_t t) const { return str(terms_, t); }
  [[nodiscard]] std::uint32_t df(std::uint32_t t) const { return term_off_[t + 1] - term_off_[t]; }

  // Term t's blocks are first_block(t) .. end_block(t) - 1 (at least one).
  [[nodiscard]] std::uint32_t first_block(std::uint32_t t) const { return term_block_[t]; }
  [[nodiscard]] std::uint32_t end_block(std::uint32_t t) const { return term_block_[t + 1]; }
  // The last (largest) document number in block b.
  [[nodiscard]] std::uint32_t block_last(std::uint32_t b) const { return block_last_[b]; }
  // Decodes block b of term t into docs and tfs (room for kBlock values each); returns the count.
  std::uint32_t decode_block(std::uint32_t t, std::uint32_t b, std::uint32_t* docs, std::uint32_t* tfs) const;
  // Term t's whole posting list, decoded (tests and tools; queries decode block by block).
  struct PostingList {
    std::vector<std::uint32_t> docs, tfs;
  };
  [[nodiscard]] PostingList postings(std::uint32_t t) const;
  // Whether document d has term t (decodes at most one block).
  [[nodiscard]] bool contains(std::uint32_t t, std::uint32_t d) const;

  // Writes the index file (atomically). Throws Error (kIo).
  void save(const std::filesystem::path& path) const;
  // Reads an index file. verify_checksum=false is for the fuzz target only (every structural
  // check still runs). Throws Error naming the file for any problem.
  [[nodiscard]] static Index load(const std::filesystem::path& path);
  [[nodiscard]] static Index parse(std::string_view bytes, std::string_view name,
                                   bool verify_checksum = true);
  // The file's bytes (what save writes).
  [[nodiscard]] std::string serialize() const;

 private:
  friend class IndexBuilder;
  // A string table: string i is store_[base + off[i], base + off[i + 1]).
  struct Strings {
    std::uint64_t base = 0;
    std::vector<std::uint64_t> off;  // count + 1 (empty: no strings)
    [[nodiscard]] std::size_t size() const { return off.empty() ? 0 : off.size() - 1; }
  };
  [[nodiscard]] std::string_view str(const Strings& s, std::size_t i) const {
    return {store_.data() + s.base + s.off[i], static_cast<std::size_t>(s.off[i + 1] - s.off[i])};
  }
  TokenizerOptions tok_;
  // The bytes the string tables and posting blocks live in: a loaded file's own bytes (read in
  // place), or what the builder assembled. At least 8 bytes follow the last block (the decoder
  // reads 8 bytes at a time).
  detail::Bytes store_;
  Strings doc_ids_;
  std::vector<std::uint32_t> doc_len_;
  // The documents' texts and metadata: text block k holds documents text_first_[k] ..
  // text_first_[k + 1] - 1, compressed in store_[text_base_ + text_off_[k], .. + text_off_[k + 1]),
  // text_raw_[k] bytes decompressed: per document its text and metadata lengths (two u32), then per
  // document its text and metadata bytes. The dictionary is store_[dict_base_, + dict_size_).
  std::vector<std::uint32_t> text_first_;  // blocks + 1 (the last: num_docs)
  std::vector<std::uint32_t> text_raw_;
  std::vector<std::uint64_t> text_off_;  // blocks + 1
  std::uint64_t text_base_ = 0, dict_base_ = 0, dict_size_ = 0;
  std::shared_ptr<ZSTD_DDict_s> ddict_;  // null: no dictionary
  std::uint64_t serial_ = 0;             // names this index's contents in the per-thread block cache
  [[nodiscard]] std::pair<std::string_view, std::string_view> doc_fields(std::uint32_t d) const;
  double avgdl_ = 1.0;
  Strings terms_;                                    // sorted (byte order)
  std::vector<std::uint32_t> term_off_;              // size terms + 1: posting counts before each term
  std::vector<std::uint32_t> term_block_;            // size terms + 1: blocks before each term
  std::vector<std::uint32_t> block_last_;            // per block: its last document number
  std::vector<std::uint64_t> block_off_;             // size blocks + 1: byte offsets from blocks_base_
  std::uint64_t blocks_base_ = 0;                    // where the blocks start in store_
  std::vector<std::uint32_t> id_order_;              // document numbers sorted by id (for doc_number)
  void finish();                                     // avgdl, id order; throws on duplicate ids
  void finish(std::vector<std::uint32_t> id_order);  // the same with the id order given
  void derive_blocks();                              // term_block_ from term_off_
  [[nodiscard]] static Index parse_owned(detail::Bytes file, std::string_view name, bool verify_checksum);
  template <class Reader>
  static void read_texts(Index& ix, Reader& in);
  template <class Sink>
  void write_body(Sink& sink) const;  // the file's bytes before the checksum, in pieces
};

// Builds an index from documents added in order (document number = order of add). Duplicate
// document ids are an Error (the CLI de-duplicates snippets before adding them).
class IndexBuilder {
 public:
  explicit IndexBuilder(TokenizerOptions tok = {}) : tok_(tok) {}
  void add(Document d) { docs_.push_back(std::move(d)); }
  void reserve(std::size_t n) { docs_.reserve(n); }
  [[nodiscard]] std::size_t size() const { return docs_.size(); }
  // Tokenizes with `threads` threads (0 = hardware concurrency) and builds. Consumes the builder.
  [[nodiscard]] Index build(unsigned threads = 0);

 private:
  TokenizerOptions tok_;
  std::vector<Document, detail::DefaultInitAllocator<Document>> docs_;
};

struct Hit {
  std::uint32_t doc = 0;
  double score = 0;
};

// A query: distinct terms with their repeat counts, in first-occurrence order.
struct Query {
  std::vector<std::string> terms;
  std::vector<std::uint32_t> counts;
};
[[nodiscard]] Query make_query(std::string_view text, const TokenizerOptions& tok);
[[nodiscard]] Query make_query_from_terms(const std::vector<std::string>& terms);

class Searcher {
 public:
  Searcher(const Index& index, Bm25Params params);
  [[nodiscard]] const Bm25Params& params() const { return p_; }
  [[nodiscard]] double idf(std::uint32_t term) const;
  // Top k by score (ties: lower document number first) with MaxScore pruning.
  [[nodiscard]] std::vector<Hit> search(const Query& q, std::size_t k) const;
  // The same by scoring every posting of every query term (reference for tests and benchmarks).
  [[nodiscard]] std::vector<Hit> search_exhaustive(const Query& q, std::size_t k) const;
  // One document's score for a query (0 when it has none of the terms).
  [[nodiscard]] double score(const Query& q, std::uint32_t doc) const;

 private:
  const Index& ix_;
  Bm25Params p_;
  std::vector<double> norm_;         // per document: k1 * (1 - b + b * dl / avgdl)
  std::vector<double> max_ratio_;    // per term: max over postings of f / (f + norm)
  std::vector<double> block_ratio_;  // per block: the same over the block's postings
};

}  // namespace numcheck::retrieval
