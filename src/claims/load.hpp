#pragma once
// Loaders for every claim file format numcheck reads. All of them produce Claim records; a
// malformed record is never dropped silently: it is reported as a LoadIssue naming the file and
// the record number (and line, for line-based formats), and the caller decides whether that is
// fatal (the CLI's --strict).
//
// Formats (chosen by ClaimFormat::kAuto from the file name and first bytes):
//   JSON array of objects   QuanTemp schema (claim, label, label_original, taxonomy_label, doc,
//                           url, country_of_origin, crawled_date, ...) and the CheckThat mapping
//                           (claim, label, evidences[{questions, top_k_doc[]}]).
//   JSONL                   one such object per line.
//   CSV                     RFC 4180 with ',' or '@' (detected from the header line). Columns:
//                           claim|claims, label|true_label|verdict, taxonomy_label|taxonomy_labels,
//                           questions (split at "Next Question:"), features ("[Claim]:...[Evidences]:..."),
//                           pred_label, id (or an unnamed first column).
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "claims/claim.hpp"

namespace numcheck::claims {

enum class ClaimFormat { kAuto, kJson, kJsonl, kCsv };

struct LoadIssue {
  std::string source;
  std::size_t record = 0;  // 1-based record number; 0 = the file as a whole / the header
  std::size_t line = 0;    // 1-based line when known, else 0
  std::string message;
  bool skipped = true;                    // the record was left out; false = loaded, but a field was ignored
  [[nodiscard]] std::string str() const;  // "file: record 12 (line 40): message"
};

// What a record's label must be for it to load.
enum class LabelPolicy {
  kOptional,  // records without a label load; an unknown label is an issue (record skipped)
  kRequired,  // a record without a (known) label is an issue
};

struct LoadOptions {
  ClaimFormat format = ClaimFormat::kAuto;
  LabelPolicy labels = LabelPolicy::kOptional;
  bool require_text = true;             // false: a record may carry only an id (predictions)
  const LabelMap* label_map = nullptr;  // nullptr = LabelMap::builtin()
  // true: a record whose label is not in the label map still loads, with no label and the label as
  // written in label_original, reported as an issue that does not skip it (predictions: `claims
  // evaluate` counts such a record as an unparseable verdict, i.e. wrong, instead of dropping it).
  bool keep_unknown_labels = false;
};

struct LoadResult {
  std::vector<Claim> claims;
  std::vector<LoadIssue> issues;
  std::string format;  // the format and schema detected: "json:quantemp", "csv:@", ...
};

// Reads and parses a file; throws Error (kIo) when it cannot be read and (kInvalidInput) when the
// file as a whole is unusable (not JSON, no claim column). Record-level problems are issues.
[[nodiscard]] LoadResult load_claims(const std::filesystem::path& path, const LoadOptions& opt = {});
// The same over bytes in memory; `name` is used in messages and as Claim::source. `name`'s
// extension decides the format under kAuto (.json, .jsonl, .csv), else the first byte.
[[nodiscard]] LoadResult parse_claims(std::string_view bytes, std::string_view name,
                                      const LoadOptions& opt = {});

// Splits "[Claim]:<claim>[Evidences]:<doc>" (the QuanTemp code's `features` column). Returns false
// when the text does not have that shape.
bool split_features(std::string_view features, std::string& claim, std::string& doc);

}  // namespace numcheck::claims
