// Quantity segments and temporal expressions on hand-written cases, one per form.
#include "claims/segment.hpp"

#include <string>

#include <gtest/gtest.h>

#include "claims/category.hpp"

namespace numcheck::claims {
namespace {

using num::Rational;
using namespace std::string_literals;
}  // namespace
}  // namespace numcheck::claims
namespace numcheck::num {
void PrintTo(const Rational& r, std::ostream* os) { *os << r.str(); }
}  // namespace numcheck::num
namespace numcheck::claims {
namespace {
using num::Rational;

std::vector<Segment> segs(std::string_view t) { return find_segments(t); }

// By value: the vector passed in is usually a temporary.
Segment only(const std::vector<Segment>& s) {
  EXPECT_EQ(s.size(), 1u);
  return s.empty() ? Segment{} : s[0];
}

Rational q(long a, long b = 1) { return Rational(mpz_class(a), mpz_class(b)); }

TEST(Segments, NumbersInEveryWrittenForm) {
  EXPECT_EQ(*only(segs("found 39 missing children")).value, q(39));
  EXPECT_EQ(*only(segs("cost 14,940 jobs")).value, q(14940));
  EXPECT_EQ(*only(segs("grew 2.75 points")).value, q(275, 100));
  EXPECT_EQ(*only(segs("three quarters of voters")).value, q(3, 4));
  EXPECT_EQ(*only(segs("twenty-seven states")).value, q(27));
  EXPECT_EQ(*only(segs("1.5 million people")).value, q(1500000));
  EXPECT_EQ(*only(segs("ate 2 3/4 pies")).value, q(11, 4));
}

TEST(Segments, PercentUnitsAndCurrencies) {
  const auto& p = only(segs("unemployment is 7.2%"));
  EXPECT_EQ(*p.value, q(72, 10));
  EXPECT_EQ(p.unit, "%");
  EXPECT_EQ(only(segs("over 80 percent")).unit, "%");
  const auto& d = only(segs("a tax increase of $794"));
  EXPECT_EQ(d.unit, "USD");
  EXPECT_EQ(d.dimension, "currency:USD");
  EXPECT_EQ(d.trend, "increase");
  EXPECT_EQ(*only(segs("families making $86k")).value, q(86000));
  EXPECT_EQ(*only(segs("a $5.2bn deal")).value, q(5200000000));
  EXPECT_EQ(only(segs("paid \xC2\xA3"
                      "300"))
                .unit,
            "GBP");
  EXPECT_EQ(*only(segs("35,000 crore LED bulbs")).value, q(350000000000));
  const auto& k = only(segs("ran 5 km"));
  EXPECT_EQ(k.unit, "km");
  EXPECT_EQ(k.dimension, "length");
  EXPECT_EQ(only(segs("at 10 miles per hour")).unit, "mph");
  EXPECT_EQ(only(segs("jailed for 25 years")).dimension, "calendar");
  EXPECT_EQ(only(segs("in 10 seconds")).dimension, "time");
}

TEST(Segments, RangesAndApproximators) {
  const auto& r = only(segs("children aged 5-11"));
  EXPECT_TRUE(r.is_range());
  EXPECT_EQ(r.lo->value, q(5));
  EXPECT_EQ(r.hi->value, q(11));
  const auto& b = only(segs("paying between $1,300 and $1,400"));
  EXPECT_EQ(b.unit, "USD");
  EXPECT_EQ(b.lo->value, q(1300));
  EXPECT_EQ(b.hi->value, q(1400));
  EXPECT_EQ(b.text, "between $1,300 and $1,400");
  EXPECT_TRUE(only(segs("aged five to 11")).is_range());
  const auto& m = only(segs("more than 800,000 jobs"));
  EXPECT_EQ(m.approximator_kind, "lower");
  EXPECT_FALSE(m.lo->inclusive);
  EXPECT_EQ(m.lo->value, q(800000));
  EXPECT_FALSE(m.hi.has_value());
  const auto& l = only(segs("at least 12 people"));
  EXPECT_TRUE(l.lo->inclusive);
  const auto& u = only(segs("less than $2 a day"));
  EXPECT_EQ(u.hi->value, q(2));
  EXPECT_EQ(only(segs("roughly 300 cases")).approximator_kind, "approximate");
  EXPECT_EQ(only(segs("nearly 70,000 buyers")).approximator_kind, "approximate_below");
  const auto& s = only(segs("increased 20-some percent"));
  EXPECT_EQ(s.lo->value, q(21));
  EXPECT_EQ(s.hi->value, q(29));
  EXPECT_EQ(s.unit, "%");
  EXPECT_EQ(s.trend_direction, "up");
  const auto& h = only(segs("hundreds of people"));
  EXPECT_EQ(h.lo->value, q(200));
}

TEST(Segments, TrendWords) {
  const auto& d = only(segs("Sales doubled"));
  EXPECT_EQ(*d.value, q(2));
  EXPECT_EQ(d.unit, "times");
  EXPECT_EQ(d.trend, "doubled");
  EXPECT_EQ(only(segs("has been halved")).trend_direction, "down");
  EXPECT_EQ(only(segs("deaths fell 12%")).trend, "fell");
  EXPECT_EQ(only(segs("are 13 times more likely")).unit, "times");
  EXPECT_TRUE(segs("a double-wide trailer").empty());
}

TEST(Segments, NamesWithDigitsAreNotQuantities) {
  for (const char* t : {"Covid-19 vaccines", "the G7 summit", "a Boeing 737 crashed", "5G towers",
                        "after 9/11", "open 24/7", "Section 230 repeal", "the one and only", "Henry VIII",
                        "COVID 19 cases", "the 3D printer", "his 2nd term"})
    EXPECT_TRUE(segs(t).empty()) << t << " -> " << (segs(t).empty() ? "" : segs(t)[0].text);
  EXPECT_EQ(segs("Covid-19 killed 500 people").size(), 1u);
}

// Real claims the claim-orbit generator once rewrote wrongly because of these readings.
TEST(Segments, MagnitudeWordsGluedByAHyphen) {
  const auto& a = only(segs("Biden signed a $110-billion bill"));
  EXPECT_EQ(*a.value, q(110000000000));
  EXPECT_EQ(a.unit, "USD");
  EXPECT_EQ(a.text, "$110-billion");
  EXPECT_EQ(*only(segs("If we manufactured 5-million of these windmills")).value, q(5000000));
  EXPECT_EQ(*only(segs("a (a) $10-million pork project")).value, q(10000000));
}

TEST(Segments, ArticleAndOrdinalBeforeANounIsAnOrdinal) {
  EXPECT_TRUE(segs("a fourth stimulus payment applicable only to vaccinated Americans").empty());
  EXPECT_TRUE(segs("are not reading at a third grade level").empty());
  EXPECT_TRUE(segs("after a third shot it is almost unrecoverable").empty());
  EXPECT_TRUE(segs("effectively grant him a third term.").empty());
  // Fractions stay fractions: before "of", a preposition, a comparative or punctuation.
  EXPECT_EQ(*only(segs("a third of voters")).value, q(1, 3));
  EXPECT_EQ(*only(segs("prices were cut by a third.")).value, q(1, 3));
  EXPECT_EQ(*only(segs("a fifth more than last time")).value, q(1, 5));
  EXPECT_EQ(*only(segs("one-third of people")).value, q(1, 3));
}

TEST(Segments, IdentifiersAreNotQuantities) {
  for (const char* t :
       {"Retirees who have a pension, IRAs, 401k, disabled veteran benefits", "our 401(k)s lost money",
        "politically active 501(c)(4) organizations", "a 501(c)(3) charity", "call 1-800-273-8255 now",
        "call 555-123-4567 now", "the zip code 90210 is rich", "can call 9969777888 a helpline",
        "dial 911 or summon", "the F-35 jet", "H1N1 flu", "N95 masks", "the MiG-29 fighter"}) {
    const auto s = segs(t);
    EXPECT_TRUE(s.empty()) << t << ": " << (s.empty() ? "" : segment_summary(s[0]));
  }
  // A number before parentheses that do not hold a short code is still a quantity.
  // A comma ends the name: "if enough people call, 2016 election results can be overturned".
  const auto y = only(segs("if enough people call, 2016 election results can be overturned"));
  EXPECT_EQ(y.kind, SegmentKind::kTemporal);
  EXPECT_EQ(segs("4,799 from Moderna, 13,039 from Pfizer and 73 from unknown vaccines").size(), 3u);
  EXPECT_EQ(*only(segs("Under the Affordable Care Act, three states get the money")).value, q(3));
  const auto n = segs("it costs 5 (in dollars)");
  ASSERT_FALSE(n.empty());
  EXPECT_EQ(*n[0].value, q(5));
}

TEST(Segments, TemporalExpressions) {
  const auto& y = only(segs("created in 1954"));
  EXPECT_EQ(y.kind, SegmentKind::kTemporal);
  EXPECT_EQ(segs("4,799 from Moderna, 13,039 from Pfizer and 73 from unknown vaccines").size(), 3u);
  EXPECT_EQ(*only(segs("Under the Affordable Care Act, three states get the money")).value, q(3));
  EXPECT_EQ(y.period_start, "1954-01-01");
  EXPECT_EQ(y.period_end, "1954-12-31");
  const auto& d = only(segs("on June 17, 2020"));
  EXPECT_EQ(d.granularity, "day");
  EXPECT_EQ(d.period_start, "2020-06-17");
  const auto& m = only(segs("in December 2020"));
  EXPECT_EQ(m.granularity, "month");
  EXPECT_EQ(m.period_end, "2020-12-31");
  EXPECT_EQ(only(segs("in February 2020")).period_end, "2020-02-29");  // leap year
  const auto& h = only(segs("in the first half of 2017"));
  EXPECT_EQ(h.granularity, "half");
  EXPECT_EQ(h.period_start, "2017-01-01");
  EXPECT_EQ(h.period_end, "2017-06-30");
  EXPECT_EQ(only(segs("Q3 2019 results")).period_start, "2019-07-01");
  EXPECT_EQ(only(segs("by mid-2019")).granularity, "part");
  const auto& r = only(segs("from 1870 to 2020"));
  EXPECT_EQ(r.granularity, "years");
  EXPECT_EQ(r.period_start, "1870-01-01");
  EXPECT_EQ(r.period_end, "2020-12-31");
  EXPECT_EQ(only(segs("in 2014-15")).period_end, "2015-12-31");
  const auto& dec = only(segs("in the 1990s"));
  EXPECT_EQ(dec.granularity, "decade");
  EXPECT_EQ(dec.period_end, "1999-12-31");
  EXPECT_EQ(only(segs("on 12/25/2020")).period_start, "2020-12-25");
  EXPECT_EQ(only(segs("17 June 2021")).period_start, "2021-06-17");
  EXPECT_EQ(only(segs("in March")).period_start, "XXXX-03-01");
  EXPECT_EQ(only(segs("last year")).granularity, "relative");
  EXPECT_EQ(only(segs("two years ago")).granularity, "relative");
  EXPECT_EQ(only(segs("FY2019 budget")).granularity, "fiscal_year");
  EXPECT_TRUE(segs("you may go").empty());
}

TEST(Segments, FilterAndHostileInput) {
  EXPECT_FALSE(passes_numerical_filter(segs("Covid-19 is a hoax")));
  EXPECT_TRUE(passes_numerical_filter(segs("39 children")));
  EXPECT_FALSE(passes_numerical_filter(segs("39 children"), 2));
  std::string junk(5000, '9');
  junk += "\xFF\xFE$%-- to between and 1e999999 \0 x"s;
  (void)segs(junk);
  (void)segs("$");
  (void)segs("between");
  (void)segs("1-");
  (void)segs("'s");
}

TEST(Segments, JsonHasExactValues) {
  const auto j = segment_json(only(segs("over 80 percent")));
  EXPECT_EQ(j["value"], "80");
  EXPECT_EQ(j["canonical"], "4/5");
  EXPECT_EQ(j["lo"]["inclusive"], false);
}

TEST(Categories, RulesOnHandWrittenClaims) {
  EXPECT_EQ(categorize("vaccinated people are 13 times more likely to catch it").category,
            Category::kComparison);
  EXPECT_EQ(categorize("states spend more on Medicaid than on schools").category, Category::kComparison);
  EXPECT_EQ(categorize("ObamaCare will cost more than 800,000 jobs").category, Category::kStatistical);
  EXPECT_EQ(categorize("UK to stop vaccinating children aged five to 11").category, Category::kInterval);
  EXPECT_EQ(categorize("27 species went extinct between 1790 and 2010").category, Category::kInterval);
  EXPECT_EQ(categorize("Stonehenge was built in 1954").category, Category::kTemporal);
  EXPECT_EQ(categorize("match time extended by 10 minutes").category, Category::kTemporal);
  EXPECT_EQ(categorize("PCR tests cost $100 apiece").category, Category::kStatistical);
  EXPECT_EQ(categorize("no numbers here").rule, "fallback:no segment");
}

}  // namespace
}  // namespace numcheck::claims
