// The fixed-width fast path (read_small_number, SmallNumber) against the GMP scanner it shortcuts:
// wherever the fast path answers, read_number's scanner must give the same form and value, and
// SmallNumber::equals must agree with Rational equality. Random inputs from numcheck::Rng: near
// misses of the grammar (stray commas, points, signs, letters, overflowing digit runs) and
// well-formed numbers of every strict form. A longer run is the fuzz target fuzz/fuzz_num_read.cpp.
#include <gtest/gtest.h>

#include <string>

#include "core/prng.hpp"
#include "num/read.hpp"
#include "num/read_detail.hpp"

namespace numcheck::num {
namespace {

// Sanitizer builds run fewer inputs so that the test stays a few seconds there too.
#if defined(NUMCHECK_SANITIZED)
constexpr int kRounds = 200'000;
#else
constexpr int kRounds = 2'000'000;
#endif

std::string digits(Rng& rng, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s.push_back(static_cast<char>('0' + rng.below(10)));
  return s;
}

// A run of digits whose length is usually short and sometimes past 64 bits.
std::size_t digit_count(Rng& rng) {
  const std::uint64_t r = rng.below(10);
  if (r < 6) return 1 + rng.below(4);
  if (r < 9) return 1 + rng.below(12);
  return 15 + rng.below(12);
}

std::string sign(Rng& rng) {
  switch (rng.below(6)) {
    case 0:
      return "-";
    case 1:
      return "+";
    case 2:
      return "\xE2\x88\x92";  // U+2212
    default:
      return "";
  }
}

// A well-formed number of one of the strict forms (sometimes grouped, sometimes with a percent
// sign or blanks around it, which the fast path must leave alone or handle identically).
std::string well_formed(Rng& rng) {
  std::string s = sign(rng);
  const std::uint64_t kind = rng.below(5);
  if (kind == 0 && rng.below(2) == 0) {  // grouped integer part
    s += digits(rng, 1 + rng.below(3));
    for (std::uint64_t g = 1 + rng.below(5); g > 0; --g) s += "," + digits(rng, 3);
  } else {
    s += digits(rng, digit_count(rng));
  }
  if (kind == 1 || kind == 3) s += "." + digits(rng, digit_count(rng));
  if (kind == 2) s += "/" + digits(rng, digit_count(rng));
  if (kind == 3 || kind == 4) {
    s += rng.below(2) == 0 ? "e" : "E";
    s += sign(rng);
    s += rng.below(20) == 0 ? digits(rng, 4) : std::to_string(rng.below(40));
  }
  if (rng.below(10) == 0) s = " " + s + "\t";
  return s;
}

// Grammar pieces joined at random: mostly near misses.
std::string near_miss(Rng& rng) {
  static const char* const kPieces[] = {
      "1",  "0",  "12", "345",          "9999999999", ",", ",", ".",  ".",   "/",    "e",
      "E",  "+",  "-",  "\xE2\x88\x92", " ",          "%", "x", "10", "000", ",000", "1,234",
      "\t", "e-", "a",  "\xC2\xBD"};
  std::string s;
  for (std::uint64_t n = 1 + rng.below(7); n > 0; --n) s += kPieces[rng.below(std::size(kPieces))];
  return s;
}

FormSet random_forms(Rng& rng) {
  if (rng.below(2) == 0) return FormSet::all();
  FormSet f;
  for (int i = 0; i < kNumberFormCount; ++i) {
    if (rng.below(3) != 0) f.add(static_cast<NumberForm>(i));
  }
  return f;
}

TEST(SmallNumber, AgreesWithTheScannerOnRandomInputs) {
  Rng rng(20260725);
  std::size_t fast = 0;
  std::size_t equal_checks = 0;
  for (int round = 0; round < kRounds; ++round) {
    const std::string text = rng.below(2) == 0 ? well_formed(rng) : near_miss(rng);
    const FormSet allowed = random_forms(rng);
    const ReadResult slow = detail::read_number_scan(text, allowed);
    const ReadResult full = read_number(text, allowed);
    // read_number (fast path first) and the scanner alone agree on everything.
    ASSERT_EQ(full.match.has_value(), slow.match.has_value()) << text;
    if (!slow) {
      ASSERT_EQ(full.reason, slow.reason) << text;
      ASSERT_FALSE(read_small_number(text, allowed).has_value()) << text;
      continue;
    }
    ASSERT_TRUE(full.match->value == slow.match->value)
        << text << ": " << full.match->value.str() << " vs " << slow.match->value.str();
    ASSERT_EQ(full.match->form, slow.match->form) << text;
    const auto small = read_small_number(text, allowed);
    if (!small) continue;
    ++fast;
    ASSERT_EQ(small->form, slow.match->form) << text;
    ASSERT_TRUE(small->to_rational() == slow.match->value)
        << text << ": " << small->to_rational().str() << " vs " << slow.match->value.str();
    // Fixed-width equality against the value itself, a neighbour, a power-of-ten slip and a
    // random fraction.
    const Rational& v = slow.match->value;
    const Rational others[] = {v,
                               v + Rational(1),
                               v * Rational(10),
                               v / Rational(100),
                               -v,
                               Rational(static_cast<long long>(rng.below(1000))) /
                                   Rational(static_cast<long long>(1 + rng.below(64)))};
    for (const Rational& r : others) {
      if (const auto eq = small->equals(r)) {
        ++equal_checks;
        ASSERT_EQ(*eq, v == r) << text << " vs " << r.str();
      }
    }
  }
  // The test means something only when the fast path answered often.
  EXPECT_GT(fast, static_cast<std::size_t>(kRounds) / 5);
  EXPECT_GT(equal_checks, fast * 3);
}

TEST(SmallNumber, ReadsTheStrictForms) {
  const FormSet all = FormSet::all();
  struct Case {
    const char* text;
    NumberForm form;
    const char* value;
  };
  const Case cases[] = {
      {"2.75", NumberForm::kDecimal, "11/4"},
      {"14,940", NumberForm::kInteger, "14940"},
      {"-0.125", NumberForm::kDecimal, "-1/8"},
      {"\xE2\x88\x92"
       "3",
       NumberForm::kInteger, "-3"},
      {"275/100", NumberForm::kFraction, "11/4"},
      {"1.494E+04", NumberForm::kENotation, "14940"},
      {"2.75e-3", NumberForm::kENotation, "11/4000"},
      {" 007 ", NumberForm::kInteger, "7"},
      {"-0", NumberForm::kInteger, "0"},
      {"18446744073709551615", NumberForm::kInteger, "18446744073709551615"},
  };
  for (const auto& c : cases) {
    const auto n = read_small_number(c.text, all);
    ASSERT_TRUE(n.has_value()) << c.text;
    EXPECT_EQ(n->form, c.form) << c.text;
    EXPECT_EQ(n->to_rational(), *Rational::from_string(c.value)) << c.text;
  }
}

TEST(SmallNumber, LeavesEverythingElseToTheScanner) {
  for (const char* text : {"", "3.", ".5", "1.2.3", "12,34", "1,2345", "3/0", "1/2/3", "2 3/4", "75%", "1e",
                           "1,234e5", "1.5/2", "18446744073709551616", "1e401", "x", "1 x 10^4"}) {
    EXPECT_FALSE(read_small_number(text, FormSet::all()).has_value()) << text;
  }
  // A form the caller does not allow is the scanner's to report.
  EXPECT_FALSE(read_small_number("3/4", FormSet{NumberForm::kInteger}).has_value());
}

TEST(SmallNumber, EqualsGivesUpInsteadOfOverflowing) {
  const auto big = read_small_number("1e300", FormSet::all());
  ASSERT_TRUE(big.has_value());
  EXPECT_FALSE(big->equals(Rational(7)).has_value());
  EXPECT_EQ(big->to_rational(), Rational::pow10(300));
  const auto tiny = read_small_number("5e-3", FormSet::all());
  ASSERT_TRUE(tiny.has_value());
  EXPECT_EQ(tiny->equals(*Rational::from_string("1/200")), std::optional<bool>(true));
  EXPECT_EQ(tiny->equals(*Rational::from_string("-1/200")), std::optional<bool>(false));
}

}  // namespace
}  // namespace numcheck::num
