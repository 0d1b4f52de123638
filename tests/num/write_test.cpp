#include "num/write.hpp"

#include <gtest/gtest.h>

#include <string>

#include "../support/exact.hpp"
#include "core/error.hpp"
#include "core/prng.hpp"

namespace numcheck::num {
namespace {

using numcheck::testing::q;
std::string w(const char* v, NumberForm f, WriteOptions o = {}) {
  return write_number(q(v), f, o).value_or("<refused>");
}

TEST(WriteNumber, Examples) {
  WriteOptions grouped;
  grouped.group_thousands = true;
  WriteOptions ascii;
  ascii.unicode_times = false;
  EXPECT_EQ(w("14940", NumberForm::kInteger), "14940");
  EXPECT_EQ(w("14940", NumberForm::kInteger, grouped), "14,940");
  EXPECT_EQ(w("-1234567", NumberForm::kInteger, grouped), "-1,234,567");
  EXPECT_EQ(w("999", NumberForm::kInteger, grouped), "999");
  EXPECT_EQ(w("11/4", NumberForm::kDecimal), "2.75");
  EXPECT_EQ(w("-1/8", NumberForm::kDecimal), "-0.125");
  EXPECT_EQ(w("2469/2", NumberForm::kDecimal, grouped), "1,234.5");
  EXPECT_EQ(w("3/4", NumberForm::kFraction), "3/4");
  EXPECT_EQ(w("-7/2", NumberForm::kFraction), "-7/2");
  EXPECT_EQ(w("11/4", NumberForm::kMixed), "2 3/4");
  EXPECT_EQ(w("-11/4", NumberForm::kMixed), "-2 3/4");
  EXPECT_EQ(w("14940", NumberForm::kENotation), "1.494e4");
  EXPECT_EQ(w("5000", NumberForm::kENotation), "5e3");
  EXPECT_EQ(w("3/2000", NumberForm::kENotation), "1.5e-3");
  EXPECT_EQ(w("0", NumberForm::kENotation), "0e0");
  EXPECT_EQ(w("-7", NumberForm::kENotation), "-7e0");
  EXPECT_EQ(w("14940", NumberForm::kTimesTen), "1.494 \xC3\x97 10^4");
  EXPECT_EQ(w("14940", NumberForm::kTimesTen, ascii), "1.494 x 10^4");
  EXPECT_EQ(w("1/400", NumberForm::kTimesTen), "2.5 \xC3\x97 10^-3");
  EXPECT_EQ(w("3/4", NumberForm::kPercent), "75%");
  EXPECT_EQ(w("1/8", NumberForm::kPercent), "12.5%");
  EXPECT_EQ(w("25", NumberForm::kPercent, grouped), "2,500%");
  EXPECT_EQ(w("27", NumberForm::kWords), "twenty-seven");
  EXPECT_EQ(w("105", NumberForm::kWords), "one hundred five");
  EXPECT_EQ(w("-42", NumberForm::kWords), "minus forty-two");
  EXPECT_EQ(w("0", NumberForm::kWords), "zero");
  EXPECT_EQ(w("1200003", NumberForm::kWords), "one million two hundred thousand three");
  EXPECT_EQ(w("3/4", NumberForm::kWords), "three quarters");
  EXPECT_EQ(w("1/2", NumberForm::kWords), "one half");
  EXPECT_EQ(w("5/2", NumberForm::kWords), "two and a half");
  EXPECT_EQ(w("-7/3", NumberForm::kWords), "minus two and a third");
  EXPECT_EQ(w("999/10", NumberForm::kWords), "ninety-nine and nine tenths");
  EXPECT_EQ(
      w("999999999999999", NumberForm::kWords),
      "nine hundred ninety-nine trillion nine hundred ninety-nine billion nine hundred ninety-nine million "
      "nine hundred ninety-nine thousand nine hundred ninety-nine");
}

TEST(WriteNumber, Refusals) {
  EXPECT_FALSE(write_number(q("1/2"), NumberForm::kInteger));
  EXPECT_FALSE(write_number(q("3"), NumberForm::kDecimal));    // integers are kInteger
  EXPECT_FALSE(write_number(q("1/3"), NumberForm::kDecimal));  // no finite decimal
  EXPECT_FALSE(write_number(q("1/3"), NumberForm::kENotation));
  EXPECT_FALSE(write_number(q("1/3"), NumberForm::kTimesTen));
  EXPECT_FALSE(write_number(q("1/3"), NumberForm::kPercent));  // 33.33...%
  EXPECT_FALSE(write_number(q("4"), NumberForm::kFraction));   // an integer is not a fraction
  EXPECT_FALSE(write_number(q("3/4"), NumberForm::kMixed));    // |v| <= 1
  EXPECT_FALSE(write_number(q("-1/2"), NumberForm::kMixed));
  EXPECT_FALSE(write_number(q("7"), NumberForm::kMixed));
  EXPECT_FALSE(write_number(q("1/11"), NumberForm::kWords));   // denominator > 10
  EXPECT_FALSE(write_number(q("201/2"), NumberForm::kWords));  // |v| >= 100
  EXPECT_FALSE(write_number(Rational::pow10(15), NumberForm::kWords));
  EXPECT_FALSE(integer_to_words(mpz_class("-1000000000000000")));
  // Outside the readers' range (digits beyond 10^1000 or 10^-1000).
  EXPECT_FALSE(write_number(Rational::pow10(1001), NumberForm::kInteger));
  EXPECT_TRUE(write_number(Rational::pow10(1000), NumberForm::kInteger));
  EXPECT_FALSE(write_number(Rational::pow10(-1001), NumberForm::kDecimal));
  EXPECT_TRUE(write_number(Rational::pow10(-1000), NumberForm::kDecimal));
  EXPECT_FALSE(write_number(Rational::pow10(1001), NumberForm::kENotation));
  EXPECT_FALSE(write_number(Rational::pow10(-1001), NumberForm::kTimesTen));
  EXPECT_FALSE(write_number(Rational::pow10(-1003), NumberForm::kPercent));  // 10^-1001 %
  EXPECT_TRUE(write_number(Rational::pow10(-1002), NumberForm::kPercent));   // 10^-1000 %
}

TEST(FixedDecimal, RoundsExactlyHalfAwayFromZero) {
  EXPECT_EQ(fixed_decimal(q("985/987"), 3), "0.998");
  EXPECT_EQ(fixed_decimal(q("1/8"), 2), "0.13");  // 0.125: half away from zero
  EXPECT_EQ(fixed_decimal(q("-1/8"), 2), "-0.13");
  EXPECT_EQ(fixed_decimal(q("-1/1000"), 2), "0.00");  // rounds to zero: no sign
  EXPECT_EQ(fixed_decimal(q("7"), 0), "7");
  EXPECT_EQ(fixed_decimal(q("7/2"), 0), "4");
  EXPECT_EQ(fixed_decimal(q("69/1000000"), 6), "0.000069");
  EXPECT_EQ(fixed_decimal(q("12345/2"), 1), "6172.5");
  // A 70-digit denominator is no problem and the result is exact, not a double's.
  const Rational tiny = Rational(mpz_class(1), mpz_class("1" + std::string(70, '0')));
  EXPECT_EQ(fixed_decimal(tiny * Rational(5) * Rational::pow10(69), 9), "0.500000000");
  EXPECT_EQ(fixed_decimal(tiny * Rational(5) * Rational::pow10(61), 9), "0.000000005");
  EXPECT_THROW((void)fixed_decimal(q("1"), 61), Error);
  EXPECT_THROW((void)fixed_decimal(q("1"), -1), Error);
}

// Integers and decimals whose numerator and denominator fit in 64 bits are written without GMP;
// the text must be Rational::to_decimal's (GMP) for every value, at the edges of the fast path
// (numerators near 2^63, denominators 2^63 and 5^27, scaled digits beyond 128 bits) and across it.
TEST(WriteNumber, FixedWidthPathWritesWhatGmpWrites) {
  Rng rng(20261201, "write-number");
  const mpz_class two63 = mpz_class(1) << 63;
  std::vector<mpz_class> nums = {0,      1,     -1,         7,
                                 -7,     1000,  -999999,    two63 - 1,
                                 -two63, two63, -two63 - 1, mpz_class("123456789012345678901234567890")};
  std::vector<mpz_class> dens = {1, 2, 4, 5, 8, 10, 16, 25, 125, 1000, 1024, 3, 6, 12, 7, 640};
  mpz_class p2 = 1, p5 = 1;
  for (int i = 0; i < 64; ++i, p2 *= 2) dens.push_back(p2);
  for (int i = 0; i < 28; ++i, p5 *= 5) dens.push_back(p5);
  for (int i = 0; i < 3000; ++i) {
    mpz_class n(static_cast<unsigned long>(rng.next() >> rng.below(64)));
    if (rng.below(2) != 0) n = -n;
    nums.push_back(n);
  }
  for (const auto& n : nums) {
    for (const auto& d : dens) {
      const Rational v(n, d);
      const auto dec = write_number(v, NumberForm::kDecimal);
      if (v.is_integer()) {
        EXPECT_FALSE(dec.has_value());
        EXPECT_EQ(write_number(v, NumberForm::kInteger).value_or("<refused>"), v.numerator().get_str());
      } else {
        EXPECT_EQ(dec.value_or("<refused>"), v.to_decimal().value_or("<refused>")) << v.str();
      }
    }
  }
}

}  // namespace
}  // namespace numcheck::num
