#pragma once
// Quantity segments and temporal expressions in claim text, built on num::find_numbers (every
// written form of a number) and num::UnitRegistry (units and currencies). A thin layer adds what
// is specific to claims: currency prefixes, attached scales ("$86k", "5bn"), Indian scale words
// ("35,000 crore"), ranges, approximators ("more than", "nearly", "20-some"), trend words
// ("doubled", "rose"), vague quantities ("hundreds of"), names that contain digits ("Boeing 737",
// "5G", "9/11"), and temporal expressions (years, dates, months, decades, "first half of 2017",
// "Q3 2019", "last year") with their normalized period. Word lists live in
// data/claims/segments.json. See docs/claims-reference.md for the exact rules.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/json.hpp"
#include "num/rational.hpp"
#include "num/units.hpp"

namespace numcheck::claims {

enum class SegmentKind : std::uint8_t { kQuantity, kTemporal };

struct Bound {
  num::Rational value;
  bool inclusive = true;
  friend bool operator==(const Bound&, const Bound&) = default;
};

struct Segment {
  SegmentKind kind = SegmentKind::kQuantity;
  std::size_t begin = 0, end = 0;  // byte range in the claim
  std::string text;                // the claim's bytes in that range

  // Quantities. `value` is the number as written in `unit` (80 for "80%", 86000 for "$86k"); a
  // range or a bound sets lo/hi (a range "5-11" has value unset). `canonical` is value (or the
  // interval's ends) times the unit's factor, in the dimension's canonical unit.
  std::optional<num::Rational> value;
  std::optional<Bound> lo, hi;
  std::string unit;  // registry id ("%", "USD", "km"), "year"/"month"/... (calendar), "times", "" = count
  std::string dimension;          // registry dimension, "calendar", "ratio" or "count"
  std::string approximator;       // as written, lower case ("more than", "-some")
  std::string approximator_kind;  // lower, lower_inclusive, upper, upper_inclusive, approximate,
                                  // approximate_below, some, exact
  std::string trend;              // trend word as written, lower case ("doubled", "rose")
  std::string trend_direction;    // "up", "down" or ""
  std::string form;               // num::form_name of the (first) number, or "vague", "trend"

  // Temporal expressions: granularity is year, years, decade, month, day, quarter, half, part
  // (early/mid/late), time, relative. Period ends are ISO dates, inclusive; an unknown year is
  // "XXXX" (EDTF); both are empty for relative expressions and clock times.
  std::string granularity;
  std::string period_start, period_end;

  [[nodiscard]] bool is_range() const { return lo.has_value() && hi.has_value() && !value.has_value(); }
};

// The word lists (data/claims/segments.json).
struct Lexicon {
  struct Approx {
    std::string phrase, kind;
  };
  std::vector<Approx> before, after;  // longest phrase first
  std::map<std::string, num::Rational> scale_words, attached_scales, multiplicative_trends, calendar_units;
  std::vector<std::string> attached_need_currency;
  struct Vague {
    std::string phrase;
    num::Rational lo, hi;
  };
  std::vector<Vague> vague;  // longest first
  std::map<std::string, std::string> multiplier_units;
  std::map<std::string, std::string> trend_direction;  // word -> up/down
  std::vector<std::string> name_prefixes, relative_temporal;
  std::vector<std::string> name_tokens;  // name_tokens and non_quantity_phrases: never segments
  std::map<std::string, int, std::less<>> months;
  int year_min = 1700, year_max = 2100;
  struct Modifier {
    std::string phrase, start_md, end_md;
  };
  std::vector<Modifier> modifiers;  // longest first
  // "rose from 391,000 to 890,000" is a change (two values), not a range: a trend word or one of
  // change_words before "from" decides.
  std::vector<std::string> change_words;
  // "N times" is a multiplier only before multiplier_followers ("three times higher") or after
  // multiplier_lead_words ("increased 10 times"); otherwise it counts events ("voted 10 times").
  std::vector<std::string> multiplier_followers, multiplier_lead_words;
  // Bare fraction words ("half"): a quantity before fraction_followers ("half of", "half the"),
  // a multiplier before fraction_multiplier_followers ("half as many"), never after
  // fraction_blocked_after ("the first half").
  std::map<std::string, num::Rational> fraction_words;
  std::vector<std::string> fraction_followers, fraction_multiplier_followers, fraction_blocked_after;
  // Capitalized words after which a plain integer is still a quantity ("In 2019", "Only 5").
  std::vector<std::string> name_exempt_before;
  // Magnitude words glued by a hyphen ("$110-billion", "5-million"), with their factor.
  std::map<std::string, num::Rational> hyphen_scales;
  // "a third", "an eighth", "one fifth" followed by a word not in ordinal_fraction_followers are
  // ordinals ("a fourth stimulus payment", "a third grade level"), not fractions.
  std::vector<std::string> ordinal_words, ordinal_fraction_followers;

  [[nodiscard]] static Lexicon parse(std::string_view json_text, std::string_view where);
  [[nodiscard]] static Lexicon load(const std::filesystem::path& path);
  [[nodiscard]] static const Lexicon& builtin();
};

// Every segment of `text`, ordered by position, non-overlapping. Never throws on any input.
[[nodiscard]] std::vector<Segment> find_segments(
    std::string_view text, const Lexicon& lex = Lexicon::builtin(),
    const num::UnitRegistry& units = num::UnitRegistry::builtin());

// The seed's numerical-claim filter (QuanTemp Sec. 3.2): a claim qualifies when it has at least
// `min_segments` quantitative segments, names with digits ("Covid-19") excluded. Temporal
// expressions count as segments (the paper's segmenter keys on CD tokens, and years are CDs).
[[nodiscard]] bool passes_numerical_filter(const std::vector<Segment>& segments,
                                           std::size_t min_segments = 1);

// JSON form of a segment (exact values as strings "p/q").
[[nodiscard]] io::OrderedJson segment_json(const Segment& s);
// One-line human form: `more than 800,000` quantity 800000 (lo > 800000) count
[[nodiscard]] std::string segment_summary(const Segment& s);

}  // namespace numcheck::claims
