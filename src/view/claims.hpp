#pragma once
// Claims paged from disk: the claims of a claim-orbit file (claims.jsonl) or of an evidence file,
// each joined by id with its evidence (the evidence files found), the verdicts of every verifier
// found (predictions.jsonl), and its claim-orbit variants with the rewritten spans cut out as
// segments of the variant's text. The joins go through indexes of (hash of id, offset) per file,
// built on first use.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/json.hpp"
#include "view/catalog.hpp"

namespace numcheck::view {

// A JSONL file's records by their "id" field.
class IdIndex {
 public:
  explicit IdIndex(std::filesystem::path path) : path_(std::move(path)) {}
  // The first record with this id (built on first call).
  [[nodiscard]] std::optional<io::Json> find(std::string_view id);

 private:
  std::filesystem::path path_;
  std::mutex mutex_;
  bool built_ = false;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> entries_;
};

struct ClaimQuery {
  std::string query;  // text or id, ASCII case-insensitive
  std::uint64_t offset = 0, lines = 0;
  std::size_t limit = 20;
};

class ClaimsView {
 public:
  explicit ClaimsView(const Catalog& catalog);
  // A page of the claims of `file` (an orbits or evidence file of the catalog):
  // {"claims": [...], "next": "<offset>.<lines>" or null}. Unknown file: Error (kUsage).
  [[nodiscard]] io::OrderedJson page(std::string_view file, const ClaimQuery& q);

 private:
  io::OrderedJson claim_json(const io::Json& record, const ClaimFile& from);
  io::OrderedJson verdicts(const std::string& id);
  const Catalog& catalog_;
  std::map<std::string, std::unique_ptr<IdIndex>, std::less<>> indexes_;  // by claim file id
};

// A variant's text cut into plain and rewritten segments by its spans (byte offsets); nullopt when
// the spans do not fit the text.
[[nodiscard]] std::optional<io::OrderedJson> span_segments(const io::Json& variant);

}  // namespace numcheck::view
