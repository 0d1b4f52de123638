#pragma once
// Grading one model response against an exact expected answer: the strict parser (the
// measurement instrument, docs/grading.md) and the audit layer `audit_v2`, applied only to strict
// failures. Grading never throws on any input bytes; it returns outcomes.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/json.hpp"
#include "num/rational.hpp"
#include "num/units.hpp"

namespace numcheck::grade {

// In failure precedence order: the first that applies wins.
enum class Outcome : std::uint8_t {
  kCorrect,
  kTruncationError,  // finish reason other than "stop"
  kFormatError,      // no line starting with the uppercase tag "FINAL:"
  kParseError,       // the FINAL line's number does not parse under the strict grammar
  kUnitError,        // missing, unknown or wrong-dimension unit
  kValueError,       // parsed and converted, but not equal to the expected value
};
// "correct", "truncation_error", "format_error", "parse_error", "unit_error", "value_error".
[[nodiscard]] std::string_view outcome_name(Outcome o) noexcept;

struct StrictResult {
  Outcome outcome = Outcome::kFormatError;
  std::optional<num::Rational> value;  // parsed value converted to the canonical unit
  bool multiple_final = false;         // more than one FINAL line (the last one was graded)
};

struct AuditResult {
  Outcome outcome = Outcome::kFormatError;
  std::optional<num::Rational> value;
  bool recovered = false;           // strict failed, audit correct
  std::vector<std::string> rules;   // audit rewrite rules that fired, in order
  std::optional<int> magnitude_k;   // parsed * 10^k == expected, 0 < |k| <= 15
};

struct Grade {
  StrictResult strict;
  AuditResult audit;
};

struct Question {
  num::Rational expected;        // in the canonical unit
  std::string canonical_unit;    // "" for dimensionless
};

// Grades one response. finish_reason defaults to "stop" (anything else is a truncation_error).
[[nodiscard]] Grade grade_response(std::string_view response, const Question& q,
                                   std::string_view finish_reason = "stop",
                                   const num::UnitRegistry& units = num::UnitRegistry::builtin());

// {"strict": {"outcome", "value", "multiple_final"}, "audit": {"outcome", "value", "recovered",
//  "rules", "magnitude_k"}} with values as exact "p/q" strings or null.
[[nodiscard]] io::OrderedJson to_json(const Grade& g);

}  // namespace numcheck::grade
