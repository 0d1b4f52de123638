#pragma once
// A rule-based claim categorizer over quantity segments (statistical, temporal, interval,
// comparison: the four categories of QuanTemp, Sec. 4.3). Rules and cue words are data
// (data/claims/categories.json); docs/claims.md states them and their measured accuracy.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "claims/claim.hpp"
#include "claims/segment.hpp"

namespace numcheck::claims {

struct CategoryRules {
  std::vector<std::string> comparison_cues, comparison_units, interval_context, interval_connectors,
      temporal_dimensions;
  Category fallback = Category::kStatistical;
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

}  // namespace numcheck::claims
