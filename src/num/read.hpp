#pragma once
// Reading numbers from text. Each written form is a named grammar (NumberForm) that callers allow
// or forbid with a FormSet; every match reports where it was in the text and which form it was.
// Input is any byte string: invalid UTF-8, NUL bytes and megabytes of digits are handled without
// crash, hang or unbounded memory; numbers whose decimal exponent magnitude exceeds
// kMaxExponentMagnitude (1,000) are refused, so "1e999999999" cannot exhaust memory.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "num/rational.hpp"

namespace numcheck::num {

inline constexpr int kMaxExponentMagnitude = 1000;

enum class NumberForm : std::uint8_t {
  kInteger,    // "-12", "14940", "14,940" (valid comma grouping)
  kDecimal,    // "2.75", "1,234.5", ".5" is not allowed (a digit must precede the point)
  kFraction,   // "3/4", "-7/2" (integer over positive integer, no spaces)
  kMixed,      // "2 3/4"
  kENotation,  // "1.494e4", "1.494E+04", "-2e-3"
  kTimesTen,   // "1.494 × 10^4", "1.494 x 10ˆ4", "1.494×10⁴", "1.494 * 10^4"
  kPercent,    // "75%", "75 %", "75 percent", "12.5 per cent" (value is 75/100)
  kWords,      // "twenty-seven", "one hundred and five", "three quarters", "1.5 million",
               // "a half", "two and a half", "minus four"
};
inline constexpr int kNumberFormCount = 8;

// Stable names used in JSON and error messages: "integer", "decimal", "fraction", "mixed",
// "e_notation", "times_ten", "percent", "words".
[[nodiscard]] std::string_view form_name(NumberForm f) noexcept;
[[nodiscard]] std::optional<NumberForm> form_from_name(std::string_view name) noexcept;

class FormSet {
 public:
  constexpr FormSet() = default;
  constexpr FormSet(std::initializer_list<NumberForm> forms) {
    for (auto f : forms) bits_ |= bit(f);
  }
  [[nodiscard]] static constexpr FormSet all() {
    FormSet s;
    s.bits_ = (1u << kNumberFormCount) - 1;
    return s;
  }
  [[nodiscard]] constexpr bool has(NumberForm f) const { return (bits_ & bit(f)) != 0; }
  constexpr FormSet& add(NumberForm f) {
    bits_ |= bit(f);
    return *this;
  }
  constexpr FormSet& remove(NumberForm f) {
    bits_ &= ~bit(f);
    return *this;
  }

 private:
  static constexpr std::uint32_t bit(NumberForm f) { return 1u << static_cast<unsigned>(f); }
  std::uint32_t bits_ = 0;
};

// A number found in text: its value, its form, and the byte range [begin, end) it occupied.
struct NumberMatch {
  Rational value;
  NumberForm form = NumberForm::kInteger;
  std::size_t begin = 0;
  std::size_t end = 0;
};

// Why a whole-string read failed (read_number). Stable names via reject_name().
enum class RejectReason : std::uint8_t {
  kEmpty,
  kNotANumber,        // no grammar matches
  kFormNotAllowed,    // matches a grammar the FormSet forbids
  kBadGrouping,       // "12,34", "1,2345"
  kTwoPoints,         // "1.2.3"
  kZeroDenominator,   // "3/0"
  kExponentTooLarge,  // |decimal exponent| > kMaxExponentMagnitude
  kTrailingText,      // a number followed by text that is not part of it
};
[[nodiscard]] std::string_view reject_name(RejectReason r) noexcept;

struct ReadResult {
  std::optional<NumberMatch> match;                 // set on success (begin = 0, end = text size)
  RejectReason reason = RejectReason::kNotANumber;  // meaningful when !match
  [[nodiscard]] explicit operator bool() const { return match.has_value(); }
};

// Reads `text` as exactly one number in one of the allowed forms (leading/trailing ASCII
// whitespace allowed). The strict answer parser uses this with a restricted FormSet.
[[nodiscard]] ReadResult read_number(std::string_view text, FormSet allowed = FormSet::all());

// A number held in fixed-width integers: (negative ? -1 : 1) * mantissa * 10^exp10 / denominator.
// The fast path of the readers and of the grader: plain integers, decimals, fractions and
// e-notation with up to 19 significant digits are read, scaled by powers of ten and compared
// without GMP or allocation; only the final value, when one is needed, becomes a Rational.
struct SmallNumber {
  bool negative = false;
  std::uint64_t mantissa = 0;
  std::uint64_t denominator = 1;  // > 0
  int exp10 = 0;                  // |exp10| <= kMaxExponentMagnitude
  NumberForm form = NumberForm::kInteger;

  // The exact value (allocates: this is where GMP comes in).
  [[nodiscard]] Rational to_rational() const;
  // Exact comparison with a Rational in fixed width: nullopt when an intermediate product would
  // overflow 128 bits (the caller then compares the Rationals).
  [[nodiscard]] std::optional<bool> equals(const Rational& r) const;
};

// The fast path of read_number: when `text` (with leading/trailing ASCII whitespace) is exactly
// one signed integer ("-12", "14,940"), decimal ("2.75", "1,234.5"), fraction ("11/4") or
// e-notation number ("1.494e4") of an allowed form whose digits fit 64 bits, returns it; then
// read_number(text, allowed) returns the same value and form. nullopt means "not decided here"
// (a longer number, another form, a rejection): call read_number. Never allocates.
[[nodiscard]] std::optional<SmallNumber> read_small_number(std::string_view text, FormSet allowed);

// Reads the longest number at the start of `text` (after leading ASCII whitespace) and leaves the
// rest: on success match->begin is where the number starts and match->end where it stops, so a
// caller can read "2.75 L" as a number and a unit. The longest reading decides, as in read_number:
// "2 3/4 L" with kMixed forbidden is kFormNotAllowed, not "2" followed by "3/4 L".
[[nodiscard]] ReadResult read_number_prefix(std::string_view text, FormSet allowed = FormSet::all());

// Finds every number in running text, left to right, non-overlapping, longest match first
// ("2 3/4" is one mixed number, not "2" and "3/4", when kMixed is allowed). Digits that are part
// of a word ("Covid-19", "G7", "B737") are not numbers. Bounded: at most max_matches results.
[[nodiscard]] std::vector<NumberMatch> find_numbers(std::string_view text, FormSet allowed = FormSet::all(),
                                                    std::size_t max_matches = 100000);

// True when `word` (one word, any case) is a number word the kWords grammar reads ("seven",
// "thousand", "half", "quarters"), not counting the connectors "a", "an", "and", "point", "minus",
// "negative". Lets a caller skip text that cannot hold a number written in words.
[[nodiscard]] bool is_number_word(std::string_view word) noexcept;

}  // namespace numcheck::num
