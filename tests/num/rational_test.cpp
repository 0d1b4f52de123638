#include "num/rational.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

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

// assign (and so from_string) reads terms below 10^19 without GMP's string reader: it gives the
// value GMP reads from the same text, on random terms of 1 to 40 digits with leading zeros, signs
// and denominators, and reuses one value across reads (a refused text leaves a valid value).
TEST(Rational, AssignReadsWhatGmpReads) {
  std::uint64_t state = 88172645463325252ULL;
  const auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  const auto digits = [&](std::size_t n) {
    std::string d;
    for (std::size_t i = 0; i < n; ++i) d += static_cast<char>('0' + next() % 10);
    return d;
  };
  Rational reused;
  for (int i = 0; i < 20000; ++i) {
    const std::string n = digits(1 + next() % 40);
    const std::string d = digits(1 + next() % 25);
    const std::string sign = next() % 3 == 0 ? "-" : (next() % 5 == 0 ? "+" : "");
    const bool fraction = next() % 2 == 0;
    const std::string text = sign + n + (fraction ? "/" + d : "");
    const mpz_class num(n, 10), den(fraction ? d : "1", 10);
    const bool ok = reused.assign(text);
    ASSERT_EQ(ok, den != 0) << text;
    if (!ok) {
      EXPECT_EQ(reused + Rational(1) - Rational(1), reused) << "still a valid value";
      continue;
    }
    const Rational want(sign == "-" ? mpz_class(-num) : num, den);
    ASSERT_EQ(reused, want) << text;
    ASSERT_EQ(reused.str(), want.str()) << text;
    ASSERT_EQ(Rational::parse_exact(text, "x"), want) << text;
  }
  for (const char* edge : {"18446744073709551615", "18446744073709551616", "9999999999999999999",
                           "10000000000000000000", "-9999999999999999999/9999999999999999998", "0/7", "-0"}) {
    const std::string e(edge);
    const auto slash = e.find('/');
    const std::string n = e.substr(
        e[0] == '-' ? 1 : 0, slash == std::string::npos ? std::string::npos : slash - (e[0] == '-' ? 1 : 0));
    const mpz_class num(n, 10), den(slash == std::string::npos ? "1" : e.substr(slash + 1), 10);
    EXPECT_EQ(Rational::from_string(e), Rational(e[0] == '-' ? mpz_class(-num) : num, den)) << edge;
  }
}

// The text-only checks agree with the reader on every string of up to 5 characters over "0129/-+x"
// (and on longer edges): is_exact_form is from_string's acceptance, and is_canonical_form is
// from_string(s)->str() == s, except that it says false for fractions with a term of 20 digits.
TEST(Rational, FormChecksAgreeWithTheReader) {
  const std::string alphabet = "0129/-+x";
  std::vector<std::string> texts{""};
  for (std::size_t len = 1, from = 0; len <= 5; ++len) {
    const std::size_t to = texts.size();
    for (std::size_t i = from; i < to; ++i) {
      for (const char c : alphabet) texts.push_back(texts[i] + c);
    }
    from = to;
  }
  for (const char* edge :
       {"9999999999999999999/9999999999999999998", "9999999999999999998/9999999999999999996", "-6/35", "35/6",
        "36/6", "-0/7", "12345678901234567890123", "-10", "1000000000000000000/999999999999999999"}) {
    texts.emplace_back(edge);
  }
  std::size_t canonical = 0;
  for (const std::string& t : texts) {
    const auto q = Rational::from_string(t);
    ASSERT_EQ(Rational::is_exact_form(t), q.has_value()) << t;
    ASSERT_EQ(Rational::is_canonical_form(t), q && q->str() == t) << t;
    canonical += Rational::is_canonical_form(t) ? 1 : 0;
  }
  EXPECT_GT(canonical, 500U);  // the walk above meets canonical forms, not only refusals
  // A fraction in lowest terms with a 20-digit term: canonical, but not decided without GMP.
  const std::string big = "12345678901234567891/2";
  EXPECT_EQ(Rational::from_string(big)->str(), big);
  EXPECT_FALSE(Rational::is_canonical_form(big));
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
