#pragma once
// One internal claim record, whatever file it came from: the QuanTemp JSON schema, the
// CheckThat-style claim/evidence mapping, the '@'-separated CSVs or the QuanTemp code's CSVs.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "claims/labels.hpp"

namespace numcheck::claims {

// The four claim categories of the QuanTemp paper (Section 4.3, Table 10).
enum class Category : std::uint8_t { kStatistical, kTemporal, kInterval, kComparison };
inline constexpr std::array<Category, 4> kCategories = {Category::kStatistical, Category::kTemporal,
                                                        Category::kInterval, Category::kComparison};
[[nodiscard]] std::string_view category_name(Category c) noexcept;  // "statistical", ...
// Case-insensitive, surrounding whitespace ignored ("temporal   " is temporal).
[[nodiscard]] std::optional<Category> category_from_name(std::string_view name) noexcept;

// One retrieval query with the evidence snippets it found (CheckThat mapping files).
struct Evidence {
  std::string questions;
  std::vector<std::string> top_k_doc;
};

struct Claim {
  std::string source;                // file name the record came from
  std::size_t record = 0;            // 1-based record number in that file (array element, CSV row, line)
  std::string id;                    // explicit id when the source has one (JSON "id", CSV index column)
  std::string text;                  // the claim, exactly as in the source
  std::optional<Verdict> label;      // gold verdict, when the source has one
  std::string label_original;        // the label as written in the source ("Half True/False")
  std::optional<Category> category;  // taxonomy label, when the source has one
  std::string doc;                   // fact-checker's justification (gold evidence)
  std::string url, country_of_origin, crawled_date, fact_source, factchecker, lang;
  std::optional<bool> numerical;
  std::vector<Evidence> evidences;     // CheckThat mapping
  std::vector<std::string> questions;  // ClaimDecomp sub-questions
  std::string pred_label;              // an outside prediction carried in the file (gpt4o CSV)
  std::vector<std::pair<std::string, std::string>> extra;  // other fields, kept as text
};

}  // namespace numcheck::claims
