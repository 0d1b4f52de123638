#include "num/rational.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace numcheck::num {
namespace {

TEST(Rational, NormalizesToLowestTerms) {
  EXPECT_EQ(Rational(mpz_class(6), mpz_class(-4)).str(), "-3/2");
  EXPECT_EQ(Rational(mpz_class(10), mpz_class(5)).str(), "2");
  EXPECT_EQ(Rational().str(), "0");
}

TEST(Rational, ZeroDenominatorIsAnError) {
  EXPECT_THROW(Rational(mpz_class(1), mpz_class(0)), Error);
  EXPECT_THROW((void)(Rational(1) / Rational(0)), Error);
  EXPECT_FALSE(Rational::from_string("1/0"));
}

TEST(Rational, FromStringAcceptsOnlyExactForms) {
  EXPECT_EQ(Rational::from_string("-12")->str(), "-12");
  EXPECT_EQ(Rational::from_string("14/4")->str(), "7/2");
  for (const char* bad : {"", "1.5", " 1", "1/", "/2", "1/2/3", "--1", "1e3", "x"}) {
    EXPECT_FALSE(Rational::from_string(bad)) << bad;
  }
  EXPECT_THROW((void)Rational::parse_exact("1.5", "answer"), Error);
}

TEST(Rational, ArithmeticIsExact) {
  const Rational tenth = *Rational::from_string("1/10");
  Rational sum;
  for (int i = 0; i < 10; ++i) sum += tenth;
  EXPECT_EQ(sum, Rational(1));
  EXPECT_EQ((Rational(3) / Rational(4) * Rational(4)).str(), "3");
  EXPECT_LT(*Rational::from_string("1/3"), *Rational::from_string("1/2"));
}

TEST(Rational, PowersOfTen) {
  EXPECT_EQ(Rational::pow10(3).str(), "1000");
  EXPECT_EQ(Rational::pow10(-2).str(), "1/100");
  EXPECT_EQ(Rational::pow10(0).str(), "1");
  EXPECT_EQ(Rational(mpz_class(2), mpz_class(3)).pow(-2).str(), "9/4");
  EXPECT_THROW((void)Rational(0).pow(-1), Error);
}

TEST(Rational, DecimalFormIsExactOrRefused) {
  EXPECT_EQ(*Rational::from_string("11/4")->to_decimal(), "2.75");
  EXPECT_EQ(*Rational::from_string("-1/8")->to_decimal(), "-0.125");
  EXPECT_EQ(*Rational::from_string("1/1000")->to_decimal(), "0.001");
  EXPECT_EQ(*Rational(14940).to_decimal(), "14940");
  EXPECT_FALSE(Rational::from_string("1/3")->to_decimal());
  EXPECT_TRUE(Rational::from_string("7/80")->has_finite_decimal());
  EXPECT_FALSE(Rational::from_string("1/6")->has_finite_decimal());
}

}  // namespace
}  // namespace numcheck::num
