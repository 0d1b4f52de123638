// find_numbers over running text: positions, forms, and what is not a number.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "num/read.hpp"

namespace numcheck::num {
namespace {

// "text|form:value@written" summaries make the table easy to read and the failures easy to see.
std::string summary(std::string_view text, FormSet allowed = FormSet::all()) {
  std::string out;
  for (const auto& m : find_numbers(text, allowed)) {
    if (!out.empty()) out += " ";
    out += std::string(form_name(m.form)) + ":" + m.value.str() + "@" +
           std::string(text.substr(m.begin, m.end - m.begin));
  }
  return out;
}

struct Case {
  const char* text;
  const char* expected;
};

const std::vector<Case> kCases = {
    {"", ""},
    {"no numbers here", ""},
    {"A tank holds 2.75 L and loses 1,250 mL.", "decimal:11/4@2.75 integer:1250@1,250"},
    {"Mix 2 3/4 cups with 1/2 cup.", "mixed:11/4@2 3/4 fraction:1/2@1/2"},
    {"about 1.494 \xC3\x97 10^4 liters", "times_ten:14940@1.494 \xC3\x97 10^4"},
    {"about 1.494 x 10\xCB\x86"
     "4 liters",
     "times_ten:14940@1.494 x 10\xCB\x86"
     "4"},
    {"about 1.494\xC3\x97"
     "10\xE2\x81\xB4 liters",
     "times_ten:14940@1.494\xC3\x97"
     "10\xE2\x81\xB4"},
    {"or 1.494e4 or 1.494E+04", "e_notation:14940@1.494e4 e_notation:14940@1.494E+04"},
    {"75% of 80 percent", "percent:3/4@75% percent:4/5@80 percent"},
    {"twenty-seven people and one hundred and five cars",
     "words:27@twenty-seven words:105@one hundred and five"},
    {"three quarters of a million", "words:3/4@three quarters words:1000000@a million"},
    {"spent $1.5 million on it", "words:1500000@1.5 million"},
    {"two and a half hours", "words:5/2@two and a half"},
    {"it fell to minus four degrees", "words:-4@minus four"},
    {"a half and a third", "words:1/2@a half words:1/3@a third"},
    {"It was -5 and then +3", "integer:-5@-5 integer:3@+3"},
    {"in 5-10 years", "integer:5@5 integer:10@10"},
    {"rose 50%-60%", "percent:1/2@50% percent:3/5@60%"},
    {"from 1 000 to 2", "integer:1@1 integer:0@000 integer:2@2"},  // no space grouping
    // Words with digits are not numbers.
    {"Covid-19 cases", ""},
    {"COVID-19 and SARS-CoV-2", ""},
    {"the G7 summit", ""},
    {"a B737 and an A320neo", ""},
    {"MP3 files, x86_64, F-16 jets", ""},
    {"the 19th century, 1st place, 22nd, 3rd", ""},
    {"a 4x4 truck, 0x1F", ""},
    // Attached units are fine.
    {"ran 5km in 30min", "integer:5@5 integer:30@30"},
    {"costs \xE2\x82\xAC"
     "5 or \xC2\xA3"
     "7",
     "integer:5@5 integer:7@7"},
    {"$20", "integer:20@20"},
    // Invalid numerals are skipped whole, not split.
    {"version 1.2.3 and 12,34 and 3/0 then 8", "integer:8@8"},
    {"on 11/30/2026 at 9", "integer:9@9"},
    {"1e999999999 then 2", "integer:2@2"},
    {"a .5 share and 7", "integer:7@7"},
    // Sentence punctuation.
    {"It is 5. Then 6, then 7.", "integer:5@5 integer:6@6 integer:7@7"},
    {"(3/4), [2], \"9\"", "fraction:3/4@3/4 integer:2@2 integer:9@9"},
    {"someone gave none to everyone", ""},
    {"One day, zero nights", "words:1@One words:0@zero"},
    {"twenty-seventh in line", ""},
    {"\xE2\x88\x92"
     "12 degrees",
     "integer:-12@\xE2\x88\x92"
     "12"},
    {"2\xC2\xBD cups", "mixed:5/2@2\xC2\xBD"},
};

TEST(FindNumbers, RunningText) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(summary(c.text), c.expected);
  }
}

TEST(FindNumbers, PositionsAreByteOffsets) {
  const std::string text = "x = 14,940 km; y = 3/4";
  const auto m = find_numbers(text);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].begin, 4u);
  EXPECT_EQ(m[0].end, 10u);
  EXPECT_EQ(m[1].begin, 19u);
  EXPECT_EQ(m[1].end, 22u);
}

TEST(FindNumbers, LongestAllowedMatch) {
  // Without kMixed, "2 3/4" is "2" and "3/4".
  EXPECT_EQ(summary("2 3/4", FormSet::all().remove(NumberForm::kMixed)), "integer:2@2 fraction:3/4@3/4");
  // Without kPercent, "75%" is 75.
  EXPECT_EQ(summary("75%", FormSet{NumberForm::kInteger}), "integer:75@75");
  // Without kWords, "1.5 million" is 1.5, and number words are not found.
  EXPECT_EQ(summary("1.5 million and twenty", FormSet::all().remove(NumberForm::kWords)), "decimal:3/2@1.5");
  // Without kENotation, "1.5e3" is not 1.5 followed by junk: it is skipped.
  EXPECT_EQ(summary("1.5e3", FormSet{NumberForm::kDecimal}), "");
}

TEST(FindNumbers, MaxMatchesBoundsTheResult) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "7 ";
  EXPECT_EQ(find_numbers(text).size(), 1000u);
  EXPECT_EQ(find_numbers(text, FormSet::all(), 10).size(), 10u);
  EXPECT_TRUE(find_numbers(text, FormSet::all(), 0).empty());
}

}  // namespace
}  // namespace numcheck::num
