#pragma once
// Writing numbers: the inverse of each reader form, exact or refusing. For every form and every
// value the writer accepts, read_number(write(v, form), {form}) returns v exactly.
#include <optional>
#include <string>

#include "num/read.hpp"

namespace numcheck::num {

struct WriteOptions {
  bool group_thousands = false;  // "14,940" instead of "14940" (integer, decimal, percent)
  bool unicode_times = true;     // kTimesTen: "1.494 × 10^4" (true) or "1.494 x 10^4"
};

// Writes v in the given form, or nullopt when the form cannot show v exactly:
// - kInteger: only integers. kDecimal: only finite decimals (always with a point: "3.0" is not
//   written; an integer is refused, use kInteger). kFraction: any non-integer as "p/q" in lowest
//   terms (negative as "-p/q"). kMixed: non-integers with |v| > 1 ("2 3/4").
// - kENotation / kTimesTen: finite decimals, minimal mantissa digits, exponent = digit count - 1
//   for integers ("14940" -> "1.494e4" / "1.494 × 10^4"; "5000" -> "5e3").
// - kPercent: finite-decimal v*100 ("0.75" -> "75%").
// - kWords: integers with |v| < 10^15 ("twenty-seven", "one hundred five" written with "and" as
//   British style is not used: "one hundred five"), and simple fractions with denominator 2..10
//   and |numerator| < denominator*100 ("three quarters", "two and a half").
[[nodiscard]] std::optional<std::string> write_number(const Rational& v, NumberForm form,
                                                      const WriteOptions& opts = {});

// English words for an integer ("minus forty-two"); nullopt when |v| >= 10^15.
[[nodiscard]] std::optional<std::string> integer_to_words(const mpz_class& v);

// v rounded to `places` decimal places (0..60), half away from zero, computed exactly: for display
// of exact results ("0.000069", "-0.125", "3"); never used to decide anything. A value that rounds
// to zero is written without a sign ("0.000").
[[nodiscard]] std::string fixed_decimal(const Rational& v, int places);

}  // namespace numcheck::num
