#include "num/read.hpp"
#include "../support/exact.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace numcheck::num {
namespace {

using numcheck::testing::q;

// ---- Accepted: text, form, exact value ------------------------------------------------------

struct Accept {
  const char* text;
  NumberForm form;
  const char* value;  // exact p/q
};

const std::vector<Accept> kAccepted = {
    // integers
    {"0", NumberForm::kInteger, "0"},
    {"-12", NumberForm::kInteger, "-12"},
    {"+12", NumberForm::kInteger, "12"},
    {"\xE2\x88\x92"
     "12",
     NumberForm::kInteger, "-12"},  // U+2212 minus
    {"14940", NumberForm::kInteger, "14940"},
    {"14,940", NumberForm::kInteger, "14940"},
    {"1,234,567", NumberForm::kInteger, "1234567"},
    {"007", NumberForm::kInteger, "7"},
    {"  42 \n", NumberForm::kInteger, "42"},
    // decimals
    {"2.75", NumberForm::kDecimal, "11/4"},
    {"-0.125", NumberForm::kDecimal, "-1/8"},
    {"1,234.5", NumberForm::kDecimal, "2469/2"},
    {"3.0", NumberForm::kDecimal, "3"},
    {"0.000", NumberForm::kDecimal, "0"},
    // fractions
    {"3/4", NumberForm::kFraction, "3/4"},
    {"-7/2", NumberForm::kFraction, "-7/2"},
    {"6/8", NumberForm::kFraction, "3/4"},
    {"5/1", NumberForm::kFraction, "5"},
    {"\xC2\xBE", NumberForm::kWords, "3/4"},        // ¾ (a glyph: read as words)
    {"-\xE2\x85\x93", NumberForm::kWords, "-1/3"},  // -⅓
    // mixed
    {"2 3/4", NumberForm::kMixed, "11/4"},
    {"-2 3/4", NumberForm::kMixed, "-11/4"},
    {"2\xC2\xBD", NumberForm::kMixed, "5/2"},   // 2½
    {"2 \xC2\xBD", NumberForm::kMixed, "5/2"},  // 2 ½
    // e-notation
    {"1.494e4", NumberForm::kENotation, "14940"},
    {"1.494E+04", NumberForm::kENotation, "14940"},
    {"-2e-3", NumberForm::kENotation, "-1/500"},
    {"15e0", NumberForm::kENotation, "15"},
    // times-ten
    {"1.494 \xC3\x97 10^4", NumberForm::kTimesTen, "14940"},  // ×
    {"1.494 x 10\xCB\x86"
     "4",
     NumberForm::kTimesTen, "14940"},  // ˆ
    {"1.494\xC3\x97"
     "10\xE2\x81\xB4",
     NumberForm::kTimesTen, "14940"},  // ×10⁴
    {"1.494 * 10^4", NumberForm::kTimesTen, "14940"},
    {"1.494 X 10**4", NumberForm::kTimesTen, "14940"},
    {"2.5 x 10^-3", NumberForm::kTimesTen, "1/400"},
    {"2.5\xC2\xB7"
     "10^{-3}",
     NumberForm::kTimesTen, "1/400"},                                       // ·10^{-3}
    {"3 \xC3\x97 10\xE2\x81\xBB\xC2\xB2", NumberForm::kTimesTen, "3/100"},  // 10⁻²
    {"10^6", NumberForm::kTimesTen, "1000000"},
    {"10\xC2\xB3", NumberForm::kTimesTen, "1000"},                     // 10³
    {"10\xC2\xB9\xE2\x81\xB0", NumberForm::kTimesTen, "10000000000"},  // 10¹⁰
    // percent
    {"75%", NumberForm::kPercent, "3/4"},
    {"75 %", NumberForm::kPercent, "3/4"},
    {"75 percent", NumberForm::kPercent, "3/4"},
    {"12.5 per cent", NumberForm::kPercent, "1/8"},
    {"-5%", NumberForm::kPercent, "-1/20"},
    {"1,250.5%", NumberForm::kPercent, "2501/200"},
    {"75 Percent", NumberForm::kPercent, "3/4"},
    // words
    {"twenty-seven", NumberForm::kWords, "27"},
    {"Twenty seven", NumberForm::kWords, "27"},
    {"one hundred and five", NumberForm::kWords, "105"},
    {"one hundred five", NumberForm::kWords, "105"},
    {"three quarters", NumberForm::kWords, "3/4"},
    {"three-quarters", NumberForm::kWords, "3/4"},
    {"a half", NumberForm::kWords, "1/2"},
    {"one half", NumberForm::kWords, "1/2"},
    {"a third", NumberForm::kWords, "1/3"},
    {"two thirds", NumberForm::kWords, "2/3"},
    {"two and a half", NumberForm::kWords, "5/2"},
    {"one and three quarters", NumberForm::kWords, "7/4"},
    {"minus four", NumberForm::kWords, "-4"},
    {"negative four", NumberForm::kWords, "-4"},
    {"minus two and a half", NumberForm::kWords, "-5/2"},
    {"zero", NumberForm::kWords, "0"},
    {"a hundred", NumberForm::kWords, "100"},
    {"a thousand", NumberForm::kWords, "1000"},
    {"a million", NumberForm::kWords, "1000000"},
    {"fifteen hundred", NumberForm::kWords, "1500"},
    {"two thousand and twelve", NumberForm::kWords, "2012"},
    {"one million two hundred thousand and three", NumberForm::kWords, "1200003"},
    {"twenty-seven thousand four hundred and twelve", NumberForm::kWords, "27412"},
    {"nine hundred ninety-nine trillion nine hundred ninety-nine billion nine hundred ninety-nine million "
     "nine hundred ninety-nine thousand nine hundred ninety-nine",
     NumberForm::kWords, "999999999999999"},
    {"two point five", NumberForm::kWords, "5/2"},
    {"zero point zero five", NumberForm::kWords, "1/20"},
    {"two point five million", NumberForm::kWords, "2500000"},
    {"1.5 million", NumberForm::kWords, "1500000"},
    {"2 billion", NumberForm::kWords, "2000000000"},
    {"-3 thousand", NumberForm::kWords, "-3000"},
    {"1,200 million", NumberForm::kWords, "1200000000"},
    {"5 hundred", NumberForm::kWords, "500"},
    {"a hundred thousand", NumberForm::kWords, "100000"},
};

TEST(ReadNumber, AcceptsEachGrammar) {
  for (const auto& c : kAccepted) {
    SCOPED_TRACE(c.text);
    const ReadResult r = read_number(c.text);
    ASSERT_TRUE(r) << "rejected as " << reject_name(r.reason);
    EXPECT_EQ(form_name(r.match->form), form_name(c.form));
    EXPECT_EQ(r.match->value, q(c.value)) << r.match->value.str();
    EXPECT_EQ(r.match->begin, 0u);
    EXPECT_EQ(r.match->end, std::string_view(c.text).size());
    // Only its own form is needed.
    EXPECT_TRUE(read_number(c.text, FormSet{c.form}));
    EXPECT_EQ(read_number(c.text, FormSet::all().remove(c.form)).reason, RejectReason::kFormNotAllowed);
  }
}

TEST(ReadNumber, LargeExponentBoundary) {
  const auto r = read_number("1e1000");
  ASSERT_TRUE(r);
  EXPECT_EQ(r.match->value, Rational::pow10(1000));
  EXPECT_EQ(read_number("1e-1000").match->value, Rational::pow10(-1000));
  EXPECT_EQ(read_number("1e1001").reason, RejectReason::kExponentTooLarge);
  EXPECT_EQ(read_number("1e-1001").reason, RejectReason::kExponentTooLarge);
  EXPECT_EQ(read_number("10e1000").reason, RejectReason::kExponentTooLarge);   // value 10^1001
  EXPECT_EQ(read_number("0.1e1001").reason, RejectReason::kExponentTooLarge);  // the written exponent counts
  EXPECT_TRUE(read_number(std::string(1001, '9')));                            // 1,001 digits
  EXPECT_EQ(read_number(std::string(1002, '9')).reason, RejectReason::kExponentTooLarge);
  EXPECT_TRUE(read_number("0." + std::string(999, '0') + "1"));  // 10^-1000
  EXPECT_EQ(read_number("0." + std::string(1000, '0') + "1").reason, RejectReason::kExponentTooLarge);
  EXPECT_TRUE(read_number(std::string(100000, '0') + "7"));   // leading zeros do not count
  EXPECT_TRUE(read_number("1." + std::string(100000, '0')));  // nor trailing fraction zeros
}

// ---- Rejected: every reason, shown --------------------------------------------------------

struct Reject {
  const char* text;
  RejectReason reason;
};

const std::vector<Reject> kRejected = {
    {"", RejectReason::kEmpty},
    {"   \t\n", RejectReason::kEmpty},
    {"abc", RejectReason::kNotANumber},
    {".5", RejectReason::kNotANumber},  // a digit must precede the point
    {"-.5", RejectReason::kNotANumber},
    {"--5", RejectReason::kNotANumber},
    {"- 5", RejectReason::kNotANumber},
    {"half", RejectReason::kNotANumber},
    {"a", RejectReason::kNotANumber},
    {"and", RejectReason::kNotANumber},
    {"1/2/3", RejectReason::kNotANumber},  // a date, not a fraction
    {"11/30/2026", RejectReason::kNotANumber},
    {"12,34", RejectReason::kBadGrouping},
    {"1,2345", RejectReason::kBadGrouping},
    {"1234,567", RejectReason::kBadGrouping},
    {"1,234,56", RejectReason::kBadGrouping},
    {"1,23.5", RejectReason::kBadGrouping},
    {"1.2.3", RejectReason::kTwoPoints},
    {"1,234.5.6", RejectReason::kTwoPoints},
    {"3/0", RejectReason::kZeroDenominator},
    {"-3/00", RejectReason::kZeroDenominator},
    {"2 3/0", RejectReason::kZeroDenominator},
    {"1e999999999", RejectReason::kExponentTooLarge},
    {"1e1001", RejectReason::kExponentTooLarge},
    {"1.494E+99999999999999999999", RejectReason::kExponentTooLarge},
    {"1 \xC3\x97 10^1001", RejectReason::kExponentTooLarge},
    {"2 x 10\xC2\xB9\xC2\xB9\xC2\xB9\xC2\xB9", RejectReason::kExponentTooLarge},  // 10¹¹¹¹
    {"10^-5000", RejectReason::kExponentTooLarge},
    {"1.5 x 10^{2000}", RejectReason::kExponentTooLarge},
    {"5.", RejectReason::kTrailingText},
    {"5 apples", RejectReason::kTrailingText},
    {"2 5/4", RejectReason::kTrailingText},    // not a proper fraction, so not a mixed number
    {"1,234e5", RejectReason::kTrailingText},  // grouped mantissas have no exponent
    {"3 / 4", RejectReason::kTrailingText},
    {"one and two", RejectReason::kTrailingText},
    {"twenty-seventh", RejectReason::kTrailingText},  // no ordinals
    {"the fifth", RejectReason::kNotANumber},
    {"three fifth", RejectReason::kTrailingText},  // singular fraction words take "a"/"one"
    {"75 percentage", RejectReason::kTrailingText},
    {"1.5 millions", RejectReason::kTrailingText},
};

TEST(ReadNumber, RejectsWithReason) {
  for (const auto& c : kRejected) {
    SCOPED_TRACE(c.text);
    const ReadResult r = read_number(c.text);
    EXPECT_FALSE(r);
    EXPECT_EQ(reject_name(r.reason), reject_name(c.reason));
  }
}

TEST(ReadNumber, FormNotAllowedForTheStrictGrammar) {
  // The orbit strict parser's grammar: integer, decimal, fraction, e-notation (percent is split off
  // by the grader).
  const FormSet strict{NumberForm::kInteger, NumberForm::kDecimal, NumberForm::kFraction,
                       NumberForm::kENotation};
  for (const char* text : {"2 3/4", "1.494 \xC3\x97 10^4",
                           "1.494 x 10\xCB\x86"
                           "4",
                           "twenty-seven", "75%", "1.5 million", "\xC2\xBE"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(read_number(text, strict).reason, RejectReason::kFormNotAllowed);
  }
  for (const char* text : {"-12", "1,234.5", "3/4", "1.494E+04"}) {
    SCOPED_TRACE(text);
    EXPECT_TRUE(read_number(text, strict));
  }
}

TEST(ReadNumber, NamesAreStable) {
  for (int i = 0; i < kNumberFormCount; ++i) {
    const auto f = static_cast<NumberForm>(i);
    EXPECT_EQ(form_from_name(form_name(f)), f);
  }
  EXPECT_EQ(form_name(NumberForm::kENotation), "e_notation");
  EXPECT_EQ(form_name(NumberForm::kTimesTen), "times_ten");
  EXPECT_FALSE(form_from_name("roman"));
  EXPECT_EQ(reject_name(RejectReason::kBadGrouping), "bad_grouping");
  EXPECT_EQ(reject_name(RejectReason::kExponentTooLarge), "exponent_too_large");
}

// ---- Prefix reading (number then unit) ----------------------------------------------------

TEST(ReadNumberPrefix, StopsAtTheUnit) {
  auto r = read_number_prefix("  2.75 L");
  ASSERT_TRUE(r);
  EXPECT_EQ(r.match->value, q("11/4"));
  EXPECT_EQ(r.match->begin, 2u);
  EXPECT_EQ(r.match->end, 6u);
  r = read_number_prefix("1,250mL");
  ASSERT_TRUE(r);
  EXPECT_EQ(r.match->end, 5u);
  r = read_number_prefix("1.494e4 kilometres per hour");
  ASSERT_TRUE(r);
  EXPECT_EQ(r.match->value, Rational(14940));
  const FormSet strict{NumberForm::kInteger, NumberForm::kDecimal, NumberForm::kFraction,
                       NumberForm::kENotation};
  EXPECT_EQ(read_number_prefix("2 3/4 L", strict).reason, RejectReason::kFormNotAllowed);
  EXPECT_EQ(read_number_prefix("12,34 km", strict).reason, RejectReason::kBadGrouping);
  EXPECT_EQ(read_number_prefix("L 5", strict).reason, RejectReason::kNotANumber);
  EXPECT_EQ(read_number_prefix("", strict).reason, RejectReason::kEmpty);
}

}  // namespace
}  // namespace numcheck::num
