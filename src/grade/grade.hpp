#pragma once
// Grading one model response against an exact expected answer: the strict parser (the
// measurement instrument, docs/grading.md) and the audit layer `audit_v2`, applied only to strict
// failures. Grading never throws on any input bytes; it returns outcomes.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/json.hpp"
#include "num/rational.hpp"
#include "num/read.hpp"
#include "num/units.hpp"

namespace numcheck::io {
class JsonWriter;
}

namespace numcheck::grade {

// The one outcome type of numcheck. The grader's six outcomes in failure precedence order (the first
// that applies wins), then kMissing, which the grader never returns: a benchmark prompt with no
// score record (the report counts it as a failure, never as a drop).
enum class Outcome : std::uint8_t {
  kCorrect,
  kTruncationError,  // finish reason other than "stop"
  kFormatError,      // no line starting with the uppercase tag "FINAL:"
  kParseError,       // the FINAL line's number does not parse under the strict grammar
  kUnitError,        // missing, unknown or wrong-dimension unit
  kValueError,       // parsed and converted, but not equal to the expected value
  kMissing,          // no score record (reports only)
};
inline constexpr std::size_t kOutcomeCount = 7;
inline constexpr std::array<std::string_view, kOutcomeCount> kOutcomeNames = {
    "correct", "truncation_error", "format_error", "parse_error", "unit_error", "value_error", "missing"};
// "correct", "truncation_error", "format_error", "parse_error", "unit_error", "value_error", "missing".
[[nodiscard]] std::string_view outcome_name(Outcome o) noexcept;
// The grader's outcomes by name ("missing" is never read from a file: nullopt).
[[nodiscard]] std::optional<Outcome> outcome_from_name(std::string_view name) noexcept;

// The two scoring layers: the strict parser and the audit layer.
enum class Layer : std::uint8_t { kStrict = 0, kAudit = 1 };
inline constexpr std::array<std::string_view, 2> kLayerNames = {"strict", "audit"};
[[nodiscard]] constexpr std::string_view layer_name(Layer l) noexcept {
  return kLayerNames[static_cast<std::size_t>(l)];
}

struct StrictResult {
  Outcome outcome = Outcome::kFormatError;
  std::optional<num::Rational> value;  // parsed value converted to the canonical unit
  bool multiple_final = false;         // more than one FINAL line (the last one was graded)
};

struct AuditResult {
  Outcome outcome = Outcome::kFormatError;
  std::optional<num::Rational> value;
  bool recovered = false;          // strict failed, audit correct
  std::vector<std::string> rules;  // audit rewrite rules that fired, in order
  std::optional<int> magnitude_k;  // parsed * 10^k == expected, 0 < |k| <= 15
};

struct Grade {
  StrictResult strict;
  AuditResult audit;
};

struct Question {
  num::Rational expected;      // in the canonical unit
  std::string canonical_unit;  // "" for dimensionless
};

// Grades one response. finish_reason defaults to "stop" (anything else is a truncation_error).
[[nodiscard]] Grade grade_response(std::string_view response, const Question& q,
                                   std::string_view finish_reason = "stop",
                                   const num::UnitRegistry& units = num::UnitRegistry::builtin());

// {"strict": {"outcome", "value", "multiple_final"}, "audit": {"outcome", "value", "recovered",
//  "rules", "magnitude_k"}} with values as exact "p/q" strings or null.
[[nodiscard]] io::OrderedJson to_json(const Grade& g);
// The members "strict" and "audit" of to_json(g), written into an open object: the bytes to_line
// gives for them (score lines are written this way, without a DOM per record).
void write_json_members(io::JsonWriter& w, const Grade& g);

// ---------------------------------------------------------------------------------------------
// Building blocks of grade_response, exposed for tests, the fuzzer, the benchmark and the CLI.

// The strict number grammar: signed integer, decimal with valid comma grouping, integer fraction
// a/b, e-notation. Multiplication-form scientific notation, mixed numbers, words are rejected.
inline constexpr num::FormSet kStrictForms{num::NumberForm::kInteger, num::NumberForm::kDecimal,
                                           num::NumberForm::kFraction, num::NumberForm::kENotation};

// The seed's unit registry (Appendix B) as registry ids: the strict parser accepts only these
// units, written as this symbol or any of the unit's registered words (case-insensitive, singular
// or plural, British spellings), plus the question's own canonical unit when it is not one of them
// (for user specs). A dimensionless question accepts no unit at all (only an attached "%").
inline constexpr std::string_view kStrictUnitIds[] = {"L", "mL", "km", "m", "cm", "km/h"};

// The strict layer alone (the first half of grade_response).
[[nodiscard]] StrictResult grade_strict(std::string_view response, const Question& q,
                                        std::string_view finish_reason = "stop",
                                        const num::UnitRegistry& units = num::UnitRegistry::builtin());

// The audit_v2 rewrite of a whole response (the raw response is never changed; this is a copy)
// and the names of the rules that changed anything anywhere in it, in rule order. grade_response
// records only the rules that changed the graded FINAL line.
struct AuditRewrite {
  std::string text;
  std::vector<std::string> rules;
};
[[nodiscard]] AuditRewrite audit_rewrite(std::string_view response);

// Rule names in application order: "strip_bold" (**), "strip_asterisk" (*), "strip_backtick" (`),
// "casefold_tag" (final: -> FINAL:), "sci_times" (U+00D7), "sci_x" (x or X), "sci_caret" (^ or
// U+02C6 exponent), "sci_superscript" (Unicode superscript exponent).
inline constexpr std::string_view kAuditRules[] = {"strip_bold",   "strip_asterisk", "strip_backtick",
                                                   "casefold_tag", "sci_times",      "sci_x",
                                                   "sci_caret",    "sci_superscript"};

// k with parsed * 10^k == expected for an integer 0 < |k| <= 15, else nullopt.
[[nodiscard]] std::optional<int> magnitude_exponent(const num::Rational& parsed,
                                                    const num::Rational& expected);

// The question's unit as the registry knows it (by id, then by written name); nullptr when
// unknown. "" (dimensionless) also gives nullptr: check `unit.empty()` first.
[[nodiscard]] const num::Unit* resolve_unit(std::string_view unit, const num::UnitRegistry& units);

// Empty when `g` is consistent with itself and with q (used by the fuzzer and the tests), else a
// description of the first broken invariant: a value exactly when the outcome is correct or
// value_error (equal to q.expected exactly when correct); truncation in both layers or neither;
// when strict is correct the audit repeats it; `recovered` exactly when strict failed and the
// audit is correct; magnitude_k only on an audit value_error, with 0 < |k| <= 15 and
// value * 10^k == expected; no audit rules when strict was correct.
[[nodiscard]] std::string consistency_error(const Grade& g, const Question& q);

}  // namespace numcheck::grade
