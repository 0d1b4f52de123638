// Property: for every form, write then read returns the same rational, for thousands of random
// values per form (fixed seeds). Also: the read form is the written form, and the number is found
// as exactly one match inside running text.
#include <gtest/gtest.h>

#include <string>

#include "core/prng.hpp"
#include "num/read.hpp"
#include "num/write.hpp"

namespace numcheck::num {
namespace {

constexpr int kPerForm = 5000;

// A random non-negative integer with 1..max_digits digits (leading digit may be anything).
mpz_class random_integer(Rng& rng, int max_digits) {
  const int digits = static_cast<int>(rng.between(1, max_digits));
  std::string s;
  for (int i = 0; i < digits; ++i) s.push_back(static_cast<char>('0' + rng.below(10)));
  return mpz_class(s, 10);
}

// Magnitudes: mostly small, some medium, a few near the readers' 10^1000 limit.
mpz_class random_magnitude(Rng& rng) {
  const auto r = rng.below(100);
  if (r < 60) return random_integer(rng, 6);
  if (r < 95) return random_integer(rng, 40);
  return random_integer(rng, 1000);
}

mpz_class pow_ui(unsigned long base, unsigned long e) {
  mpz_class p;
  mpz_ui_pow_ui(p.get_mpz_t(), base, e);
  return p;
}

Rational with_sign(Rng& rng, const Rational& v) { return rng.below(3) == 0 ? -v : v; }

// A finite decimal: integer / (2^a 5^b).
Rational random_finite_decimal(Rng& rng) {
  const bool big = rng.below(50) == 0;
  const auto a = rng.below(big ? 900 : 25);
  const auto b = rng.below(big ? 900 : 25);
  return with_sign(rng, Rational(random_magnitude(rng), pow_ui(2, a) * pow_ui(5, b)));
}

Rational generate(Rng& rng, NumberForm form) {
  switch (form) {
    case NumberForm::kInteger:
      return with_sign(rng, Rational(random_magnitude(rng)));
    case NumberForm::kDecimal:
    case NumberForm::kENotation:
    case NumberForm::kTimesTen:
      return random_finite_decimal(rng);
    case NumberForm::kPercent:
      return random_finite_decimal(rng) / Rational(100);
    case NumberForm::kFraction:
    case NumberForm::kMixed: {
      mpz_class den =
          rng.below(4) == 0 ? random_magnitude(rng) : mpz_class(static_cast<long>(rng.between(2, 1000)));
      if (den == 0) den = 7;
      return with_sign(rng, Rational(random_magnitude(rng), den));
    }
    case NumberForm::kWords: {
      if (rng.below(2) == 0) {
        const auto digits = static_cast<int>(rng.between(1, 15));
        return with_sign(rng, Rational(random_integer(rng, digits)));
      }
      const long den = static_cast<long>(rng.between(2, 10));
      return with_sign(
          rng, Rational(mpz_class(static_cast<long>(rng.below(static_cast<std::uint64_t>(den) * 100))),
                        mpz_class(den)));
    }
  }
  return Rational(0);
}

class RoundTrip : public ::testing::TestWithParam<NumberForm> {};

TEST_P(RoundTrip, WriteThenReadIsIdentity) {
  const NumberForm form = GetParam();
  Rng rng(20261130, form_name(form));
  int written = 0;
  int attempts = 0;
  while (written < kPerForm) {
    ASSERT_LT(++attempts, kPerForm * 4) << "the generator rarely yields writable values";
    const Rational v = generate(rng, form);
    WriteOptions opts;
    opts.group_thousands = rng.below(2) == 0;
    opts.unicode_times = rng.below(2) == 0;
    const auto text = write_number(v, form, opts);
    if (!text) continue;
    ++written;
    const ReadResult r = read_number(*text, FormSet{form});
    ASSERT_TRUE(r) << v.str() << " written as '" << *text << "' rejected: " << reject_name(r.reason);
    ASSERT_EQ(r.match->value, v) << "'" << *text << "' read as " << r.match->value.str();
    // Unambiguous: with every form allowed it is still read as this form.
    const ReadResult any = read_number(*text);
    ASSERT_TRUE(any) << *text;
    ASSERT_EQ(form_name(any.match->form), form_name(form)) << *text;
    // In running text it is exactly one number with the same value and extent.
    const std::string sentence = "Answer: " + *text + " units.";
    const auto found = find_numbers(sentence);
    ASSERT_EQ(found.size(), 1u) << sentence;
    ASSERT_EQ(found[0].value, v) << sentence;
    ASSERT_EQ(found[0].begin, 8u) << sentence;
    ASSERT_EQ(found[0].end, 8 + text->size()) << sentence;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryForm, RoundTrip,
                         ::testing::Values(NumberForm::kInteger, NumberForm::kDecimal, NumberForm::kFraction,
                                           NumberForm::kMixed, NumberForm::kENotation, NumberForm::kTimesTen,
                                           NumberForm::kPercent, NumberForm::kWords),
                         [](const ::testing::TestParamInfo<NumberForm>& info) {
                           return std::string(form_name(info.param));
                         });

// The writers refuse exactly what they document.
TEST(RoundTripRefusals, WritersRefuseWhatTheyCannotShow) {
  Rng rng(7, "refusals");
  for (int i = 0; i < 2000; ++i) {
    const Rational v(random_magnitude(rng), mpz_class(static_cast<long>(rng.between(1, 60))));
    const bool fin = v.has_finite_decimal();
    EXPECT_EQ(write_number(v, NumberForm::kInteger).has_value(), v.is_integer()) << v.str();
    EXPECT_EQ(write_number(v, NumberForm::kDecimal).has_value(), fin && !v.is_integer()) << v.str();
    EXPECT_EQ(write_number(v, NumberForm::kENotation).has_value(), fin) << v.str();
    EXPECT_EQ(write_number(v, NumberForm::kFraction).has_value(), !v.is_integer()) << v.str();
    EXPECT_EQ(write_number(v, NumberForm::kMixed).has_value(), !v.is_integer() && v.abs() > Rational(1))
        << v.str();
  }
}

}  // namespace
}  // namespace numcheck::num
