#pragma once
// A rule-based claim categorizer over quantity segments (statistical, temporal, interval,
// comparison: the four categories of QuanTemp, Sec. 4.3). Rules and cue words are data
// (data/claims/categories.json); docs/claims-reference.md states them and their measured accuracy.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "claims/claim.hpp"
#include "claims/segment.hpp"
#include "doc/document.hpp"
#include "stats/classification.hpp"
#include "stats/interval.hpp"

namespace numcheck::claims {

struct CategoryRules {
  std::vector<std::string> comparison_cues, comparison_units, interval_context, interval_connectors,
      temporal_dimensions, age_nouns;
  Category fallback = Category::kStatistical;
  // The paper's category counts (QuanTemp Table 10), shown beside measured shares.
  std::vector<std::pair<Category, std::size_t>> paper_counts;
  [[nodiscard]] static CategoryRules parse(std::string_view json_text, std::string_view where);
  [[nodiscard]] static const CategoryRules& builtin();
};

struct Categorization {
  Category category = Category::kStatistical;
  std::string rule;  // which rule fired: "comparison:cue 'than'", "interval:range", ...
};

[[nodiscard]] Categorization categorize(std::string_view text, const std::vector<Segment>& segments,
                                        const CategoryRules& rules = CategoryRules::builtin());
[[nodiscard]] Categorization categorize(std::string_view text);

// A held-out split of labelled claims for measuring the categorizer on claims its rules were not
// written from: a distinct claim text is held out when the first draw of Rng(seed, text) is odd
// (about half the texts; every record of a text lands in the same part, whatever the file order).
// The rules in data/claims/categories.json were revised looking only at the other ("dev") part of
// the categorized subset under kCategorySplitSeed.
inline constexpr std::uint64_t kCategorySplitSeed = 20261130;
[[nodiscard]] bool category_heldout(std::string_view text, std::uint64_t seed = kCategorySplitSeed);

// The categorizer measured on labelled claims: accuracy with a Wilson 95% interval, macro-F1 with a
// 95% percentile interval of a bootstrap over distinct claim texts (duplicated texts move together).
struct CategoryEvaluation {
  stats::ConfusionMatrix confusion;
  stats::ClassificationReport report;
  stats::Interval accuracy_ci, macro_f1_ci;
  std::size_t distinct_texts = 0;
  std::size_t draws = 0;
  std::uint64_t seed = 0;
};
// `texts` and `gold` are parallel; the categorizer runs on each text.
[[nodiscard]] CategoryEvaluation evaluate_categorizer(const std::vector<std::string>& texts,
                                                      const std::vector<Category>& gold, std::size_t draws,
                                                      std::uint64_t seed,
                                                      const CategoryRules& rules = CategoryRules::builtin());

// A categorizer's per-category precision/recall/F1 table and its gold x predicted confusion table
// (rows gold, columns predicted), appended to `d` (figures to 4 decimals).
void add_category_tables(doc::Document& d, const stats::ClassificationReport& report,
                         const stats::ConfusionMatrix& confusion);

}  // namespace numcheck::claims
