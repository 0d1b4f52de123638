// Table tests for the extraction errors found by a hand check of training claims (issue 15): a
// change read as a range, ranges sharing a scale, Indian digit grouping, fraction words, units
// missing from the registry, "N times" as events vs a multiplier, numbers inside names and titles.
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "claims/segment.hpp"

namespace numcheck::claims {
namespace {

// One segment as "<text>|<key>", key = "<value> <unit>", "[lo,hi] <unit>" or "<dimension>".
std::string describe(const Segment& s) {
  const std::string unit = s.unit.empty() ? "-" : s.unit;
  if (s.kind == SegmentKind::kTemporal) return fmt::format("{}|{}/{}", s.text, s.period_start, s.period_end);
  if (s.value) return fmt::format("{}|{} {} {}", s.text, s.value->str(), unit, s.dimension);
  if (s.lo && s.hi)
    return fmt::format("{}|[{},{}] {} {}", s.text, s.lo->value.str(), s.hi->value.str(), unit, s.dimension);
  return s.text + "|?";
}

std::vector<std::string> all(std::string_view text) {
  std::vector<std::string> out;
  for (const auto& s : find_segments(text)) out.push_back(describe(s));
  return out;
}

struct ExtractionCase {
  const char* text;
  std::vector<std::string> want;
};

void check(const std::vector<ExtractionCase>& cases) {
  for (const auto& c : cases) EXPECT_EQ(all(c.text), c.want) << c.text;
}

TEST(Extraction, ChangeIsTwoValuesNotARange) {
  check({
      {"Employment increased from 391,000 to 890,000", {"391,000|391000 - count", "890,000|890000 - count"}},
      {"prices went from $3 to $5", {"$3|3 USD currency:USD", "$5|5 USD currency:USD"}},
      {"fell from 30% to 20%", {"30%|30 % dimensionless", "20%|20 % dimensionless"}},
      // Without a change word it stays an interval.
      {"prices ranged from 5 to 10 dollars", {"from 5 to 10 dollars|[5,10] USD currency:USD"}},
      {"between 10 and 20 percent", {"between 10 and 20 percent|[10,20] % dimensionless"}},
  });
}

TEST(Extraction, RangesShareAScale) {
  check({
      {"It costs Rs 7-8,000 a month", {"Rs 7-8,000|[7000,8000] INR currency:INR"}},
      {"a $5-6 million deal", {"$5-6 million|[5000000,6000000] USD currency:USD"}},
      {"Rs 7-8 lakh", {"Rs 7-8 lakh|[700000,800000] INR currency:INR"}},
      {"5-10 million people", {"5-10 million|[5000000,10000000] - count"}},
      {"10-20,000 jobs", {"10-20,000|[10000,20000] - count"}},
      // No shared scale: different digit counts with grouping, or no scale at all.
      {"5-10,000 jobs", {"5-10,000|[5,10000] - count"}},
      {"ages 5-11", {"5-11|[5,11] - count"}},
      {"1-1,000 people", {"1-1,000|[1,1000] - count"}},
  });
}

TEST(Extraction, IndianDigitGrouping) {
  check({
      {"1,20,000 jobs were created", {"1,20,000|120000 - count"}},
      {"a grant of Rs 3,50,00,000", {"Rs 3,50,00,000|35000000 INR currency:INR"}},
      {"₹1,00,000.50 paid", {"₹1,00,000.50|200001/2 INR currency:INR"}},
      // Western grouping is unchanged.
      {"14,940 jobs", {"14,940|14940 - count"}},
  });
}

TEST(Extraction, FractionWords) {
  check({
      {"half of Americans", {"half|1/2 - count"}},
      {"nearly half the people", {"nearly half|1/2 - count"}},
      {"half as many children", {"half|1/2 times ratio"}},
      {"a quarter of voters", {"a quarter|1/4 - count"}},
      {"roughly half a million people", {"roughly half a million|500000 - count"}},
      {"two-thirds of voters", {"two-thirds|2/3 - count"}},
      // Not quantities: periods, compounds, no quantity reading.
      {"the second half of the year", {}},
      {"a half-time show", {}},
      {"half true", {}},
  });
}

TEST(Extraction, UnitsAddedToTheRegistry) {
  check({
      {"It weighs 5 short tons", {"5 short tons|5 short_ton mass"}},
      {"2 long tons of coal", {"2 long tons|2 long_ton mass"}},
      {"It was 40 degrees Fahrenheit", {"40 degrees Fahrenheit|40 degF temperature:fahrenheit"}},
      {"temperatures reached 45°C", {"45°C|45 degC temperature:celsius"}},
      {"it was -3 degrees Celsius", {"-3 degrees Celsius|-3 degC temperature:celsius"}},
  });
  // Short and long tons convert exactly (2,000 and 2,240 pounds of 0.45359237 kg).
  const auto& U = num::UnitRegistry::builtin();
  EXPECT_EQ(*num::UnitRegistry::convert(num::Rational(1), *U.by_id("short_ton"), *U.by_id("lb")),
            num::Rational(2000));
  EXPECT_EQ(*num::UnitRegistry::convert(num::Rational(1), *U.by_id("long_ton"), *U.by_id("lb")),
            num::Rational(2240));
  // Temperature scales are affine: each is its own dimension, so no factor converts between them.
  EXPECT_FALSE(num::UnitRegistry::convert(num::Rational(1), *U.by_id("degC"), *U.by_id("degF")).has_value());
}

TEST(Extraction, TimesAsEventsOrMultiplier) {
  check({
      {"He voted 10 times against it", {"10 times|10 times count"}},
      {"changed his clothes four times", {"four times|4 times count"}},
      {"three times higher than before", {"three times|3 times ratio"}},
      {"20 times more reactions", {"20 times|20 times ratio"}},
      {"it increased 10 times", {"10 times|10 times ratio"}},
      {"10 times the national average", {"10 times|10 times ratio"}},
      {"a 10x increase", {"10x|10 times ratio"}},
  });
}

TEST(Extraction, NumbersInNamesAndTitles) {
  check({
      {"Part 1 of the report", {}},
      {"COVID-19 killed 500", {"500|500 - count"}},
      {"the One Nation party", {}},
      {"One Nation wants it", {}},
      {"Section 8 housing", {}},
      {"Episode 4 aired", {}},
      {"Chapter 11 bankruptcy", {}},
      {"voters backed Three Mile Island", {}},
      {"Stevie Wonder endorsed the Atari 2600 console", {}},
      {"Malaysia Airlines Flight 370 vanished", {}},
      // After an exempt capitalized word, or with a unit, it is a quantity.
      {"Texas has 254 counties, and Only 5 voted", {"254|254 - count", "Only 5|5 - count"}},
      {"Florida 500 miles away", {"500 miles|500 mi length"}},
      // A capitalized number word at a sentence start is still a number.
      {"Two people died. Three Americans were hurt", {"Two|2 - count", "Three|3 - count"}},
  });
}

}  // namespace
}  // namespace numcheck::claims
