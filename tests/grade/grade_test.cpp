// The strict parser and the audit layer, rule by rule (docs/grading.md). Each row of the tables
// names the rule or decision it pins.
#include "grade/grade.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/json.hpp"
#include "io/json_writer.hpp"
#include "num/rational.hpp"

namespace numcheck::grade {
namespace {

using num::Rational;

Rational q(std::string_view s) { return Rational::parse_exact(s, "test value"); }

struct Case {
  const char* rule;
  std::string response;
  const char* expected;  // exact "p/q"
  const char* unit;
  Outcome strict;
  const char* strict_value;  // "" for null
  Outcome audit;
  const char* audit_value;  // "" for null
  std::vector<std::string> rules = {};
  std::optional<int> k = std::nullopt;
  bool multiple = false;
  const char* finish = "stop";
};

std::string describe(const Case& c) { return fmt::format("[{}] response {:?}", c.rule, c.response); }

void check(const Case& c) {
  SCOPED_TRACE(describe(c));
  const Question question{q(c.expected), c.unit};
  const Grade g = grade_response(c.response, question, c.finish);
  EXPECT_EQ(outcome_name(g.strict.outcome), outcome_name(c.strict));
  EXPECT_EQ(g.strict.value ? g.strict.value->str() : "", c.strict_value);
  EXPECT_EQ(g.strict.multiple_final, c.multiple);
  EXPECT_EQ(outcome_name(g.audit.outcome), outcome_name(c.audit));
  EXPECT_EQ(g.audit.value ? g.audit.value->str() : "", c.audit_value);
  EXPECT_EQ(g.audit.recovered, c.strict != Outcome::kCorrect && c.audit == Outcome::kCorrect);
  EXPECT_EQ(g.audit.rules, c.rules);
  EXPECT_EQ(g.audit.magnitude_k, c.k);
  EXPECT_EQ(consistency_error(g, question), "");
  // The strict layer alone gives the same strict result.
  const StrictResult s = grade_strict(c.response, question, c.finish);
  EXPECT_EQ(s.outcome, g.strict.outcome);
  EXPECT_EQ(s.value, g.strict.value);
  EXPECT_EQ(s.multiple_final, g.strict.multiple_final);
}

constexpr auto kC = Outcome::kCorrect;
constexpr auto kT = Outcome::kTruncationError;
constexpr auto kF = Outcome::kFormatError;
constexpr auto kP = Outcome::kParseError;
constexpr auto kU = Outcome::kUnitError;
constexpr auto kV = Outcome::kValueError;

// clang-format off
TEST(StrictFinalLine, TableOfRules) {
  const std::vector<Case> cases = {
    {"plain FINAL line", "FINAL: 2.75 L", "11/4", "L", kC, "11/4", kC, "11/4"},
    {"reasoning before the FINAL line", "Add 1.5 L and 1.25 L.\nThat is 2.75 L.\nFINAL: 2.75 L", "11/4", "L", kC, "11/4", kC, "11/4"},
    {"no FINAL line: format_error in both layers", "The answer is 2.75 L.", "11/4", "L", kF, "", kF, ""},
    {"empty response", "", "11/4", "L", kF, "", kF, ""},
    {"the tag is uppercase only: lowercase is a strict format_error", "final: 2.75 L", "11/4", "L", kF, "", kC, "11/4", {"casefold_tag"}},
    {"mixed-case tag", "Final: 2.75 L", "11/4", "L", kF, "", kC, "11/4", {"casefold_tag"}},
    {"leading blanks before the tag", "   FINAL: 2.75 L", "11/4", "L", kC, "11/4", kC, "11/4"},
    {"leading tab before the tag", "\tFINAL: 2.75 L", "11/4", "L", kC, "11/4", kC, "11/4"},
    {"the tag must start the line", "So the FINAL: 2.75 L", "11/4", "L", kF, "", kF, ""},
    {"a bullet before the tag is not blank", "- FINAL: 2.75 L", "11/4", "L", kF, "", kF, ""},
    {"bold around the line is a strict format_error", "**FINAL: 2.75 L**", "11/4", "L", kF, "", kC, "11/4", {"strip_bold"}},
    {"bold tag", "**FINAL:** 2.75 L", "11/4", "L", kF, "", kC, "11/4", {"strip_bold"}},
    {"no space after the colon", "FINAL:2.75 L", "11/4", "L", kC, "11/4", kC, "11/4"},
    {"CRLF line endings", "Work.\r\nFINAL: 2.75 L\r\n", "11/4", "L", kC, "11/4", kC, "11/4"},
    {"trailing newline", "FINAL: 2.75 L\n", "11/4", "L", kC, "11/4", kC, "11/4"},
    {"a FINAL line in the middle is found", "FINAL: 2.75 L\nDone, thanks.", "11/4", "L", kC, "11/4", kC, "11/4"},
    {"last FINAL line wins (right)", "FINAL: 3 L\nwait, no\nFINAL: 2.75 L", "11/4", "L", kC, "11/4", kC, "11/4", {}, std::nullopt, true},
    {"last FINAL line wins (wrong)", "FINAL: 2.75 L\nFINAL: 3 L", "11/4", "L", kV, "3", kV, "3", {}, std::nullopt, true},
    {"last FINAL line wins even when it does not parse", "FINAL: 2.75 L\nFINAL: soon", "11/4", "L", kP, "", kP, "", {}, std::nullopt, true},
    {"a lowercase later line does not count for strict (the audit then recovers it)", "FINAL: 3 L\nfinal: 2.75 L", "11/4", "L", kV, "3", kC, "11/4", {"casefold_tag"}},
    {"NBSP is not a blank", "\xC2\xA0" "FINAL: 2.75 L", "11/4", "L", kF, "", kF, ""},
    {"a lone CR does not end a line", "x\rFINAL: 2.75 L", "11/4", "L", kF, "", kF, ""},
  };
  for (const auto& c : cases) check(c);
}

TEST(StrictNumber, TableOfRules) {
  const std::vector<Case> cases = {
    {"decimal", "FINAL: 2.75 L", "11/4", "L", kC, "11/4", kC, "11/4"},
    {"integer", "FINAL: 14940 L", "14940", "L", kC, "14940", kC, "14940"},
    {"valid comma grouping", "FINAL: 14,940 L", "14940", "L", kC, "14940", kC, "14940"},
    {"grouping with decimals", "FINAL: 1,234.5 L", "2469/2", "L", kC, "2469/2", kC, "2469/2"},
    {"malformed grouping 12,34", "FINAL: 12,34 L", "1234", "L", kP, "", kP, ""},
    {"malformed grouping 1,2345", "FINAL: 1,2345 L", "12345", "L", kP, "", kP, ""},
    {"two decimal points", "FINAL: 1.2.3 L", "11/4", "L", kP, "", kP, ""},
    {"fraction", "FINAL: 11/4 L", "11/4", "L", kC, "11/4", kC, "11/4"},
    {"fraction not in lowest terms", "FINAL: 275/100 L", "11/4", "L", kC, "11/4", kC, "11/4"},
    {"negative fraction", "FINAL: -11/4 L", "-11/4", "L", kC, "-11/4", kC, "-11/4"},
    {"zero denominator", "FINAL: 3/0 L", "11/4", "L", kP, "", kP, ""},
    {"decimal over integer is not an integer fraction", "FINAL: 5.5/2 L", "11/4", "L", kP, "", kP, ""},
    {"mixed number", "FINAL: 2 3/4 L", "11/4", "L", kP, "", kP, ""},
    {"mixed number with a vulgar fraction glyph", "FINAL: 2\xC2\xBE L", "11/4", "L", kP, "", kP, ""},
    {"e-notation", "FINAL: 1.494e4 L", "14940", "L", kC, "14940", kC, "14940"},
    {"E-notation with sign and zero padding", "FINAL: 1.494E+04 L", "14940", "L", kC, "14940", kC, "14940"},
    {"negative exponent", "FINAL: 2.75e-3 L", "11/4000", "L", kC, "11/4000", kC, "11/4000"},
    {"exponent magnitude 1000 is allowed", "FINAL: 1e1000 L", "11/4", "L", kV, nullptr, kV, nullptr},
    {"signed integer", "FINAL: -3 L", "-3", "L", kC, "-3", kC, "-3"},
    {"plus sign", "FINAL: +3 L", "3", "L", kC, "3", kC, "3"},
    {"Unicode minus sign (read_number's sign)", "FINAL: \xE2\x88\x92" "3 L", "-3", "L", kC, "-3", kC, "-3"},
    {"leading point is not a strict decimal", "FINAL: .5 L", "1/2", "L", kP, "", kP, ""},
    {"words are not strict numbers", "FINAL: twenty-seven L", "27", "L", kP, "", kP, ""},
    {"digits with a scale word are not strict", "FINAL: 1.5 million L", "1500000", "L", kP, "", kP, ""},
    {"text before the number", "FINAL: about 2.75 L", "11/4", "L", kP, "", kP, ""},
    {"no number", "FINAL: L", "11/4", "L", kP, "", kP, ""},
    {"empty answer", "FINAL:", "11/4", "L", kP, "", kP, ""},
    {"a range", "FINAL: 2.5-3 L", "11/4", "L", kP, "", kP, ""},
    {"two numbers (digits after the unit start)", "FINAL: 2.75 L (2750 mL)", "11/4", "L", kP, "", kP, ""},
    {"one trailing period", "FINAL: 2.75 L.", "11/4", "L", kC, "11/4", kC, "11/4"},
    {"one trailing period after a bare number", "FINAL: 3.", "3", "", kC, "3", kC, "3"},
    {"trailing period after blanks", "FINAL: 2.75 L .", "11/4", "L", kC, "11/4", kC, "11/4"},
    {"only one trailing period", "FINAL: 2.75 L..", "11/4", "L", kU, "", kU, ""},
    {"two trailing periods after a bare number", "FINAL: 3..", "3", "", kP, "", kP, ""},
    {"attached percent", "FINAL: 75%", "3/4", "", kC, "3/4", kC, "3/4"},
    {"attached percent on a decimal", "FINAL: 12.5%", "1/8", "", kC, "1/8", kC, "1/8"},
    {"attached percent with a trailing period", "FINAL: 75%.", "3/4", "", kC, "3/4", kC, "3/4"},
    {"detached percent sign", "FINAL: 75 %", "3/4", "", kP, "", kP, ""},
    {"percent word", "FINAL: 75 percent", "3/4", "", kP, "", kP, ""},
    {"two percent signs", "FINAL: 75%%", "3/4", "", kP, "", kP, ""},
    {"a bare percent sign", "FINAL: %", "3/4", "", kP, "", kP, ""},
    {"percent then unit", "FINAL: 50% L", "1/2", "L", kC, "1/2", kC, "1/2"},
    {"dimensionless decimal", "FINAL: 0.75", "3/4", "", kC, "3/4", kC, "3/4"},
    {"dimensionless fraction", "FINAL: 3/4", "3/4", "", kC, "3/4", kC, "3/4"},
    {"percent value compared exactly", "FINAL: 75", "3/4", "", kV, "75", kV, "75", {}, -2},
  };
  for (auto c : cases) {
    if (c.strict_value == nullptr) {  // "1e1000": the value is 10^1000
      static const std::string big = Rational::pow10(1000).str();
      c.strict_value = big.c_str();
      c.audit_value = big.c_str();
    }
    check(c);
  }
}

TEST(StrictUnit, TableOfRules) {
  const std::vector<Case> cases = {
    {"symbol", "FINAL: 2.75 L", "11/4", "L", kC, "11/4", kC, "11/4"},
    {"no space between number and unit", "FINAL: 2.75L", "11/4", "L", kC, "11/4", kC, "11/4"},
    {"several blanks", "FINAL: 2.75 \t L", "11/4", "L", kC, "11/4", kC, "11/4"},
    {"sub-unit converted exactly", "FINAL: 2750 mL", "11/4", "L", kC, "11/4", kC, "11/4"},
    {"sub-unit with grouping", "FINAL: 2,750 mL", "11/4", "L", kC, "11/4", kC, "11/4"},
    {"word", "FINAL: 2.75 liters", "11/4", "L", kC, "11/4", kC, "11/4"},
    {"British word", "FINAL: 2.75 litres", "11/4", "L", kC, "11/4", kC, "11/4"},
    {"singular word", "FINAL: 1 liter", "1", "L", kC, "1", kC, "1"},
    {"words are case-insensitive", "FINAL: 2.75 LITERS", "11/4", "L", kC, "11/4", kC, "11/4"},
    {"capitalised word", "FINAL: 2.75 Liters", "11/4", "L", kC, "11/4", kC, "11/4"},
    {"millilitres", "FINAL: 2750 millilitres", "11/4", "L", kC, "11/4", kC, "11/4"},
    {"symbols are case-sensitive: l", "FINAL: 2.75 l", "11/4", "L", kU, "", kU, ""},
    {"symbols are case-sensitive: ml", "FINAL: 2750 ml", "11/4", "L", kU, "", kU, ""},
    {"a registry symbol outside the seed list", "FINAL: 2.75 \xE2\x84\x93", "11/4", "L", kU, "", kU, ""},
    {"a registry unit outside the seed whitelist", "FINAL: 0.726 gallons", "11/4", "L", kU, "", kU, ""},
    {"missing unit", "FINAL: 2.75", "11/4", "L", kU, "", kU, ""},
    {"unknown word", "FINAL: 2.75 zorkmids", "11/4", "L", kU, "", kU, ""},
    {"extra words after the unit", "FINAL: 2.75 liters of water", "11/4", "L", kU, "", kU, ""},
    {"wrong dimension (seed unit)", "FINAL: 2.75 km", "11/4", "L", kU, "", kU, ""},
    {"wrong dimension (registry unit)", "FINAL: 2.75 kg", "11/4", "L", kU, "", kU, ""},
    {"unit before the number", "FINAL: L 2.75", "11/4", "L", kP, "", kP, ""},
    {"meters to kilometers", "FINAL: 3630 meters", "363/100", "km", kC, "363/100", kC, "363/100"},
    {"metres", "FINAL: 3630 metres", "363/100", "km", kC, "363/100", kC, "363/100"},
    {"m symbol", "FINAL: 3630 m", "363/100", "km", kC, "363/100", kC, "363/100"},
    {"kilometres", "FINAL: 3.63 kilometres", "363/100", "km", kC, "363/100", kC, "363/100"},
    {"centimeters to meters", "FINAL: 275 cm", "11/4", "m", kC, "11/4", kC, "11/4"},
    {"centimetres", "FINAL: 275 centimetres", "11/4", "m", kC, "11/4", kC, "11/4"},
    {"cm to km", "FINAL: 363000 cm", "363/100", "km", kC, "363/100", kC, "363/100"},
    {"km/h symbol", "FINAL: 60 km/h", "60", "km/h", kC, "60", kC, "60"},
    {"kilometers per hour", "FINAL: 60 kilometers per hour", "60", "km/h", kC, "60", kC, "60"},
    {"kilometres per hour, inner blanks folded", "FINAL: 60 Kilometres  per hour", "60", "km/h", kC, "60", kC, "60"},
    {"m/s is outside the whitelist", "FINAL: 50/3 m/s", "60", "km/h", kU, "", kU, ""},
    {"kph is unknown", "FINAL: 60 kph", "60", "km/h", kU, "", kU, ""},
    {"a dimensionless answer takes no unit", "FINAL: 0.75 L", "3/4", "", kU, "", kU, ""},
    {"the question's own unit outside the seed list (user specs)", "FINAL: 2.5 kg", "5/2", "kg", kC, "5/2", kC, "5/2"},
    {"its words too", "FINAL: 2.5 kilograms", "5/2", "kg", kC, "5/2", kC, "5/2"},
    {"but not other units of its dimension outside the seed list", "FINAL: 2500 g", "5/2", "kg", kU, "", kU, ""},
    {"an unknown question unit: every unit is a unit_error", "FINAL: 2.75 zorkmid", "11/4", "zorkmid", kU, "", kU, ""},
    {"NUL byte after the number", std::string("FINAL: 2.75\0 L", 14), "11/4", "L", kU, "", kU, ""},
    {"invalid UTF-8 as a unit", "FINAL: 2.75 \xFF\xFE", "11/4", "L", kU, "", kU, ""},
  };
  for (const auto& c : cases) check(c);
}

TEST(StrictPrecedence, FirstFailureThatAppliesWins) {
  const std::vector<Case> cases = {
    {"truncation beats a correct answer", "FINAL: 2.75 L", "11/4", "L", kT, "", kT, "", {}, std::nullopt, false, "length"},
    {"truncation beats format", "no tag", "11/4", "L", kT, "", kT, "", {}, std::nullopt, false, "length"},
    {"any finish reason other than stop", "FINAL: 2.75 L", "11/4", "L", kT, "", kT, "", {}, std::nullopt, false, "content_filter"},
    {"an empty finish reason", "FINAL: 2.75 L", "11/4", "L", kT, "", kT, "", {}, std::nullopt, false, ""},
    {"finish reasons are case-sensitive", "FINAL: 2.75 L", "11/4", "L", kT, "", kT, "", {}, std::nullopt, false, "STOP"},
    {"a truncated response is not inspected (no multiple flag)", "FINAL: 1 L\nFINAL: 2 L", "11/4", "L", kT, "", kT, "", {}, std::nullopt, false, "length"},
    {"a truncated response stays a failure in the audit", "**Final:** 1.494 x 10^4 L", "14940", "L", kT, "", kT, "", {}, std::nullopt, false, "length"},
    {"format beats parse", "The answer: 12,34 zorkmids", "11/4", "L", kF, "", kF, ""},
    {"parse beats unit", "FINAL: 12,34 zorkmids", "11/4", "L", kP, "", kP, ""},
    {"unit beats value", "FINAL: 3 kg", "11/4", "L", kU, "", kU, ""},
    {"missing unit beats value", "FINAL: 3", "11/4", "L", kU, "", kU, ""},
    {"value", "FINAL: 3 L", "11/4", "L", kV, "3", kV, "3"},
  };
  for (const auto& c : cases) check(c);
}

TEST(Audit, RewriteRulesAndRecovery) {
  const std::vector<Case> cases = {
    {"seed: 1.494 x 10ˆ4 liters", "FINAL: 1.494 x 10\xCB\x86" "4 liters", "14940", "L", kP, "", kC, "14940", {"sci_x", "sci_caret"}},
    {"U+00D7 and caret", "FINAL: 1.494 \xC3\x97 10^4 L", "14940", "L", kP, "", kC, "14940", {"sci_times", "sci_caret"}},
    {"U+00D7 and superscripts, no blanks", "FINAL: 1.494\xC3\x97" "10\xE2\x81\xB4 L", "14940", "L", kP, "", kC, "14940", {"sci_times", "sci_superscript"}},
    {"superscript two digits", "FINAL: 1.5 \xC3\x97 10\xC2\xB9\xC2\xB2 L", "1500000000000", "L", kP, "", kC, "1500000000000", {"sci_times", "sci_superscript"}},
    {"superscript negative exponent", "FINAL: 2.75 \xC3\x97 10\xE2\x81\xBB\xC2\xB3 L", "11/4000", "L", kP, "", kC, "11/4000", {"sci_times", "sci_superscript"}},
    {"caret negative exponent", "FINAL: 2.75 x 10^-3 L", "11/4000", "L", kP, "", kC, "11/4000", {"sci_x", "sci_caret"}},
    {"caret with U+2212", "FINAL: 2.75 x 10^\xE2\x88\x92" "3 L", "11/4000", "L", kP, "", kC, "11/4000", {"sci_x", "sci_caret"}},
    {"capital X, no blanks", "FINAL: 1.494X10^4 L", "14940", "L", kP, "", kC, "14940", {"sci_x", "sci_caret"}},
    {"x10ˆk glued to the mantissa", "FINAL: 1.494x10\xCB\x86" "4 L", "14940", "L", kP, "", kC, "14940", {"sci_x", "sci_caret"}},
    {"signed mantissa", "FINAL: -1.5 \xC3\x97 10^2 L", "-150", "L", kP, "", kC, "-150", {"sci_times", "sci_caret"}},
    {"asterisk multiplication is removed first, so not recovered", "FINAL: 1.494 * 10^4 L", "14940", "L", kP, "", kP, "", {"strip_asterisk"}},
    {"bare 10^k (no mantissa) is not rewritten", "FINAL: 10^4 L", "10000", "L", kP, "", kP, ""},
    {"braced exponent is not rewritten", "FINAL: 1.494 \xC3\x97 10^{4} L", "14940", "L", kP, "", kP, ""},
    {"a second power of ten after a rewrite stays", "FINAL: 1 x 10^2 x 10^3 L", "100000", "L", kP, "", kP, "", {"sci_x", "sci_caret"}},
    {"100^2 is not 10^k", "FINAL: 1 x 100^2 L", "10000", "L", kP, "", kP, ""},
    {"bold markers", "**FINAL: 2.75 L**", "11/4", "L", kF, "", kC, "11/4", {"strip_bold"}},
    {"italic markers", "*FINAL: 2.75 L*", "11/4", "L", kF, "", kC, "11/4", {"strip_asterisk"}},
    {"backticks", "FINAL: `2.75 L`", "11/4", "L", kP, "", kC, "11/4", {"strip_backtick"}},
    {"bold italic and case", "***Final:*** 2.75 L", "11/4", "L", kF, "", kC, "11/4", {"strip_bold", "strip_asterisk", "casefold_tag"}},
    {"everything at once", "**final:** `1.494 x 10^4` liters", "14940", "L", kF, "", kC, "14940", {"strip_bold", "strip_backtick", "casefold_tag", "sci_x", "sci_caret"}},
    {"rules count only on the graded line", "Step **one**: `x`\nfinal: 2.75 L", "11/4", "L", kF, "", kC, "11/4", {"casefold_tag"}},
    {"the audit's last FINAL line may differ from strict's", "FINAL: 1.494 x 10^4 L\n**Final:** 14940 L", "14940", "L", kP, "", kC, "14940", {"strip_bold", "casefold_tag"}},
    {"no rules when the audit finds no line", "**The answer** is 2.75 L", "11/4", "L", kF, "", kF, ""},
    {"Final Answer: is not a tag", "**Final Answer:** 2.75 L", "11/4", "L", kF, "", kF, ""},
    {"heading marks are not stripped", "### FINAL: 2.75 L", "11/4", "L", kF, "", kF, ""},
    {"strict correct: the audit repeats it without rules", "**Work** `here`\nFINAL: 2.75 L", "11/4", "L", kC, "11/4", kC, "11/4"},
    {"a rewrite that does not help", "FINAL: 1.494 x 10^3 L", "14940", "L", kP, "", kV, "1494", {"sci_x", "sci_caret"}, 1},
    {"unit errors survive the audit", "**FINAL:** 2.75 zorkmids", "11/4", "L", kF, "", kU, "", {"strip_bold"}},
  };
  for (const auto& c : cases) check(c);
}

TEST(Audit, MagnitudeDropTaggedWithK) {
  const std::vector<Case> cases = {
    {"seed: 275 L for 2.75 L gives k = -2", "FINAL: 275 L", "11/4", "L", kV, "275", kV, "275", {}, -2},
    {"2750 L for 2.75 L: k = -3", "FINAL: 2750 L", "11/4", "L", kV, "2750", kV, "2750", {}, -3},
    {"0.275 L for 2.75 L: k = 1", "FINAL: 0.275 L", "11/4", "L", kV, "11/40", kV, "11/40", {}, 1},
    {"unit slip: 2.75 mL for 2.75 L is k = 3 (after conversion)", "FINAL: 2.75 mL", "11/4", "L", kV, "11/4000", kV, "11/4000", {}, 3},
    {"seed pattern: 3630 km for 3.63 km (k = -3)", "FINAL: 3630 km", "363/100", "km", kV, "3630", kV, "3630", {}, -3},
    {"k = 15 is the largest", "FINAL: 2.75e-15 L", "11/4", "L", kV, "11/4000000000000000", kV, "11/4000000000000000", {}, 15},
    {"k = -15", "FINAL: 2.75e15 L", "11/4", "L", kV, "2750000000000000", kV, "2750000000000000", {}, -15},
    {"k = 16 is not a magnitude drop", "FINAL: 2.75e-16 L", "11/4", "L", kV, "11/40000000000000000", kV, "11/40000000000000000"},
    {"a sign flip is not a magnitude drop", "FINAL: -275 L", "11/4", "L", kV, "-275", kV, "-275"},
    {"zero is not a magnitude drop", "FINAL: 0 L", "11/4", "L", kV, "0", kV, "0"},
    {"a non-power ratio", "FINAL: 5.5 L", "11/4", "L", kV, "11/2", kV, "11/2"},
    {"near a power of ten is not one", "FINAL: 27.6 L", "11/4", "L", kV, "138/5", kV, "138/5"},
    {"the audit finds the drop after a rewrite", "FINAL: 1.494 x 10^3 L", "14940", "L", kP, "", kV, "1494", {"sci_x", "sci_caret"}, 1},
    {"a drop on a truncated response is not tagged", "FINAL: 275 L", "11/4", "L", kT, "", kT, "", {}, std::nullopt, false, "length"},
    {"nor on a unit_error", "FINAL: 275 kg", "11/4", "L", kU, "", kU, ""},
  };
  for (const auto& c : cases) check(c);
}
// clang-format on

TEST(StrictNumber, ExponentBeyondOneThousandIsAParseError) {
  for (const char* r :
       {"FINAL: 1e1001 L", "FINAL: 1e-1001 L", "FINAL: 1e999999999 L", "FINAL: 1.5E+999999999999999999 L"}) {
    SCOPED_TRACE(r);
    const Grade g = grade_response(r, Question{q("11/4"), "L"});
    EXPECT_EQ(g.strict.outcome, Outcome::kParseError);
    EXPECT_EQ(g.audit.outcome, Outcome::kParseError);
  }
}

TEST(Audit, MagnitudeExponentDirectly) {
  EXPECT_EQ(magnitude_exponent(q("275"), q("11/4")), -2);
  EXPECT_EQ(magnitude_exponent(q("11/400"), q("11/4")), 2);
  EXPECT_EQ(magnitude_exponent(q("11/4"), q("11/4")), std::nullopt);  // k = 0 is excluded
  EXPECT_EQ(magnitude_exponent(q("0"), q("11/4")), std::nullopt);
  EXPECT_EQ(magnitude_exponent(q("3"), q("0")), std::nullopt);
  EXPECT_EQ(magnitude_exponent(q("-3"), q("-30")), 1);
  EXPECT_EQ(magnitude_exponent(q("3"), q("-30")), std::nullopt);
  EXPECT_EQ(magnitude_exponent(q("1"), q("1000000000000000")), 15);
  EXPECT_EQ(magnitude_exponent(q("1"), q("10000000000000000")), std::nullopt);
  EXPECT_EQ(magnitude_exponent(q("3"), q("60")), std::nullopt);
}

TEST(Audit, RewriteKeepsTheRawResponseAndReportsRulesAnywhere) {
  const std::string raw = "**Work:** 2 * 3 = `6`\nfinal: 1.494 \xC3\x97 10^4 L";
  const std::string copy = raw;
  const AuditRewrite rw = audit_rewrite(raw);
  EXPECT_EQ(raw, copy);
  EXPECT_EQ(rw.text, "Work: 2  3 = 6\nFINAL: 1.494e4 L");
  EXPECT_EQ(rw.rules, (std::vector<std::string>{"strip_bold", "strip_asterisk", "strip_backtick",
                                                "casefold_tag", "sci_times", "sci_caret"}));
  // The graded line had only the last three.
  const Grade g = grade_response(raw, Question{q("14940"), "L"});
  EXPECT_EQ(g.audit.rules, (std::vector<std::string>{"casefold_tag", "sci_times", "sci_caret"}));
  EXPECT_TRUE(g.audit.recovered);
}

TEST(Audit, RewriteDoesNotCrossLines) {
  EXPECT_EQ(audit_rewrite("1.5 x\n10^3").text, "1.5 x\n10^3");
  EXPECT_EQ(audit_rewrite("1.5\nx 10^3").text, "1.5\nx 10^3");
  EXPECT_EQ(audit_rewrite("a\r\nb").text, "a\r\nb");
  EXPECT_TRUE(audit_rewrite("plain text, no rules").rules.empty());
}

TEST(Json, ShapeAndValues) {
  const Grade g = grade_response("FINAL: 1.494 x 10^3 L", Question{q("14940"), "L"});
  EXPECT_EQ(
      io::to_line(to_json(g)),
      R"({"strict":{"outcome":"parse_error","value":null,"multiple_final":false},)"
      R"("audit":{"outcome":"value_error","value":"1494","recovered":false,"rules":["sci_x","sci_caret"],)"
      R"("magnitude_k":1}})");
  const Grade ok = grade_response("FINAL: 2750 mL\nFINAL: 2.75 L", Question{q("11/4"), "L"});
  EXPECT_EQ(
      io::to_line(to_json(ok)),
      R"({"strict":{"outcome":"correct","value":"11/4","multiple_final":true},)"
      R"("audit":{"outcome":"correct","value":"11/4","recovered":false,"rules":[],"magnitude_k":null}})");
}

TEST(Outcome, StableNames) {
  EXPECT_EQ(outcome_name(Outcome::kCorrect), "correct");
  EXPECT_EQ(outcome_name(Outcome::kTruncationError), "truncation_error");
  EXPECT_EQ(outcome_name(Outcome::kFormatError), "format_error");
  EXPECT_EQ(outcome_name(Outcome::kParseError), "parse_error");
  EXPECT_EQ(outcome_name(Outcome::kUnitError), "unit_error");
  EXPECT_EQ(outcome_name(Outcome::kValueError), "value_error");
}

TEST(Consistency, DetectsBrokenGrades) {
  const Question question{q("11/4"), "L"};
  Grade g = grade_response("FINAL: 275 L", question);
  ASSERT_EQ(consistency_error(g, question), "");
  Grade bad = g;
  bad.audit.magnitude_k = 2;
  EXPECT_NE(consistency_error(bad, question), "");
  bad = g;
  bad.audit.magnitude_k.reset();
  EXPECT_NE(consistency_error(bad, question), "");
  bad = g;
  bad.strict.value.reset();
  EXPECT_NE(consistency_error(bad, question), "");
  bad = g;
  bad.audit.recovered = true;
  EXPECT_NE(consistency_error(bad, question), "");
}

}  // namespace
}  // namespace numcheck::grade

namespace numcheck::grade {
namespace {

// The direct writer of a grade (write_json_members, what score lines use) writes each value
// exactly as the DOM does, on both sides of the 64-bit fast path: zero, signs, fractions, the
// int64 limits and one past them, and values GMP alone can hold.
TEST(Json, DirectWriterMatchesTheDomOnBothSidesOfThe64BitPath) {
  for (const char* text :
       {"0", "1", "-1", "64/5", "-7/3", "9223372036854775807", "-9223372036854775807", "-9223372036854775808",
        "9223372036854775808", "-9223372036854775809", "1/9223372036854775807", "-1/9223372036854775808",
        "123456789012345678901234567890/7", "-98765432109876543210987654321"}) {
    Grade g;
    g.strict.outcome = Outcome::kValueError;
    g.strict.value = num::Rational::parse_exact(text, "value");
    g.audit.outcome = Outcome::kValueError;
    g.audit.value = num::Rational::parse_exact(text, "value") * num::Rational(3);
    std::string line;
    io::JsonWriter w(line);
    w.begin_object();
    write_json_members(w, g);
    w.end_object();
    EXPECT_EQ(line, io::to_line(to_json(g))) << text;
  }
}

}  // namespace
}  // namespace numcheck::grade
