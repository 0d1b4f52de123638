#pragma once
// A run folder paged from disk: rows of responses.jsonl joined with scores.jsonl (a score record's
// `line` is the number of its response's line; `orbit score` writes them in that order), filtered
// and read forward from a cursor; and one orbit at a time through an index of base ids built on
// first use (hashes and byte offsets only).
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/json.hpp"
#include "view/catalog.hpp"

namespace numcheck::view {

// Where a page starts: the byte offset and number of lines before it in responses.jsonl, and the
// byte offset in scores.jsonl from which its scores are read. Written "<offset>.<lines>.<score offset>".
struct Cursor {
  std::uint64_t offset = 0;
  std::uint64_t lines = 0;
  std::uint64_t score_offset = 0;
  [[nodiscard]] std::string str() const;
  // Throws Error (kUsage) for text that is not a cursor.
  static Cursor parse(std::string_view text);
};

struct RowFilter {
  std::string template_id;       // "" for any
  std::string view;              // "" for any
  std::string outcome;           // a grade outcome, "wrong" (any but correct), "unscored",
                                 // "broken", "error" (the records of errors.jsonl); "" for any
  std::string layer = "strict";  // the layer `outcome` applies to: strict or audit
  std::string query;             // text or id, ASCII case-insensitive, in ids, response and prompt
};

struct PageLimits {
  std::size_t rows = 50;
  std::uint64_t scan_bytes = std::uint64_t{64} << 20;  // a page stops after reading this much
  std::size_t text_bytes = 300;                        // response text in a row, then a marker
  std::size_t line_cap = std::size_t{8} << 20;         // longest line read whole
};

// One page of rows: {"rows": [...], "next": cursor or null, "scanned_lines": n, "end": bool}.
// Throws Error (kUsage) for a bad filter value.
[[nodiscard]] io::OrderedJson run_rows(const RunSource& run, const RowFilter& filter, const Cursor& from,
                                       const PageLimits& limits = {});

// The offsets of every record of each base id, in responses.jsonl and scores.jsonl.
class OrbitIndex {
 public:
  explicit OrbitIndex(const RunSource& run) : run_(run) {}
  // The orbit of `base_id`: {"base_id", "members": [...], "index": {...}}; builds the index on the
  // first call. Members without a record are absent; an unknown base is an Error (kUsage).
  [[nodiscard]] io::Json orbit(std::string_view base_id);

 private:
  void build();
  const RunSource& run_;
  std::mutex mutex_;
  bool built_ = false;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> responses_, scores_;  // (hash of base id, offset)
  double build_ms_ = 0;
  std::uint64_t records_ = 0;
};

}  // namespace numcheck::view
