#pragma once
// The one comparison of claim texts (docs/claims-reference.md, "Claim matching"): every place that
// asks whether two claims are the same claim (a claim is never its own few-shot example, folds
// grouped by claim, duplicate counts, joins by text) compares normalize_claim keys, and
// near-duplicates across splits are found by near_duplicates.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace numcheck::claims {

// The claim's comparison key: Unicode NFKC with case folding (ICU's NFKC_Casefold: compatibility
// forms, full-width letters and ligatures read as their plain letters, upper and lower case equal,
// invisible format characters dropped), every quotation mark (straight, curly, low-9, primes,
// guillemets, backtick) as '"', every dash and hyphen (U+2010..U+2015, minus sign, small and
// full-width forms) as '-', every run of Unicode white space as one space, and surrounding spaces
// and quotation marks removed. Ill-formed UTF-8 is read as U+FFFD. The key is for comparing only,
// never shown.
[[nodiscard]] std::string normalize_claim(std::string_view text);

// The words of a claim for near-duplicate detection: maximal runs of letters and digits (ICU's
// u_isalnum) of normalize_claim(text), as a sorted set.
[[nodiscard]] std::vector<std::string> claim_words(std::string_view text);

// Two claims are near-duplicates when their normalize_claim keys are equal, or when the Jaccard
// overlap of their word sets (|A and B| / |A or B|) is at least kNearDuplicateJaccardNum /
// kNearDuplicateJaccardDen, compared exactly in integers. 3/5 is set from the QuanTemp data: read
// by a person, every test-val and test-train pair at or above 0.6 is the same claim reworded ("Al
// Gore predicted that Earth's "ice caps" would melt away by 2014." / "Al Gore said that the ice
// caps would melt by 2014.", 0.600), and the highest pair below it is another claim ("Video shows
// Narendra Modi criticising Pakistan government in 2023" / "Video shows Pakistan minister Ahsan
// Iqbal criticising government in 2023", 0.583). Within val, 37 pairs reach 0.6; the lowest
// (0.625, non-vegetarian food / alcohol to be avoided for two weeks after a COVID-19 vaccine) is
// two claims of one template. The threshold leans to inclusion on purpose: a false pair costs one
// training claim or puts two claims in one fold, a missed one leaks a label.
inline constexpr std::size_t kNearDuplicateJaccardNum = 3;
inline constexpr std::size_t kNearDuplicateJaccardDen = 5;

struct NearDuplicate {
  std::size_t left = 0, right = 0;  // indices into the two lists
  bool same_text = false;           // equal normalize_claim keys
  std::size_t common = 0;           // |A and B| (word sets)
  std::size_t words = 0;            // |A or B|
  [[nodiscard]] double jaccard() const noexcept {
    return words == 0 ? 1.0 : static_cast<double>(common) / static_cast<double>(words);
  }
};

// Whether two claim texts are near-duplicates (the rule above).
[[nodiscard]] bool is_near_duplicate(std::string_view a, std::string_view b);

// Every near-duplicate pair between two lists of claim texts, ordered by (left, right). Fast on
// whole splits (prefix filtering over words ordered rarest first: only pairs sharing a word of
// both prefixes are compared). Within one list (the same vector passed twice) each unordered pair
// of distinct positions is reported once, left < right.
[[nodiscard]] std::vector<NearDuplicate> near_duplicates(const std::vector<std::string>& left,
                                                         const std::vector<std::string>& right);
[[nodiscard]] std::vector<NearDuplicate> near_duplicates_within(const std::vector<std::string>& texts);

// Groups of claims that must stay together (one fold, one side of a train/test split): the
// connected components of near-duplicate pairs within `texts`. Returns one group id per text,
// numbered by first appearance (texts without a near-duplicate are groups of one).
[[nodiscard]] std::vector<std::size_t> near_duplicate_groups(const std::vector<std::string>& texts);

// Positions in `texts` of the claims that are near-duplicates of some claim of `others` (sorted):
// the training claims to leave out when `others` are the claims being scored.
[[nodiscard]] std::vector<std::size_t> near_duplicates_of(const std::vector<std::string>& texts,
                                                          const std::vector<std::string>& others);

}  // namespace numcheck::claims
