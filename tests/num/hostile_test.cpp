// Hostile input: any bytes, any length. No crash, no hang, bounded memory, and refusals where the
// grammar says so. (No timing assertions: a hang shows up as the CTest timeout.) Inputs found by
// the fuzzer are at the bottom, one named test each.
#include <gtest/gtest.h>

#include <string>

#include "core/prng.hpp"
#include "num/read.hpp"
#include "num/write.hpp"

namespace numcheck::num {
namespace {

constexpr std::size_t kTenMB = std::size_t{10} << 20;

// Everything the readers offer, on one input; returns the number of matches found.
std::size_t exercise(std::string_view text) {
  (void)read_number(text);
  (void)read_number_prefix(text);
  (void)read_number(text, FormSet{NumberForm::kInteger, NumberForm::kDecimal});
  return find_numbers(text).size();
}

TEST(Hostile, TenMegabytesOfDigitsAreRefusedNotParsed) {
  const std::string digits(kTenMB, '7');
  EXPECT_EQ(read_number(digits).reason, RejectReason::kExponentTooLarge);
  EXPECT_TRUE(find_numbers(digits).empty());
  EXPECT_EQ(read_number_prefix(digits).reason, RejectReason::kExponentTooLarge);
  // As a fraction or decimal part too.
  EXPECT_EQ(read_number("1/" + digits).reason, RejectReason::kExponentTooLarge);
  EXPECT_EQ(read_number("0." + digits).reason, RejectReason::kExponentTooLarge);
  EXPECT_EQ(read_number(digits + "%").reason, RejectReason::kExponentTooLarge);
  // Zeros are not digits of the value: ten megabytes of leading zeros still read as 5.
  const std::string zeros(kTenMB, '0');
  EXPECT_EQ(read_number(zeros + "5").match->value, Rational(5));
  EXPECT_EQ(read_number("5." + zeros).match->value, Rational(5));
}

TEST(Hostile, HugeExponentsAreRefused) {
  for (const char* text :
       {"1e999999999", "1E+999999999", "1e-999999999", "9.99e1001", "1 x 10^99999999999999999999",
        "1 \xC3\x97 10^-1001", "10^1001", "7.5 million e5"}) {
    SCOPED_TRACE(text);
    const auto r = read_number(text);
    if (std::string_view(text) == "7.5 million e5") {
      EXPECT_EQ(r.reason, RejectReason::kTrailingText);
    } else {
      EXPECT_EQ(r.reason, RejectReason::kExponentTooLarge);
    }
  }
  std::string sup = "2 x 10";
  for (int i = 0; i < 100000; ++i) sup += "\xC2\xB9";  // 10¹¹¹¹...
  EXPECT_EQ(read_number(sup).reason, RejectReason::kExponentTooLarge);
  std::string exp_digits = "1e" + std::string(kTenMB, '9');
  EXPECT_EQ(read_number(exp_digits).reason, RejectReason::kExponentTooLarge);
  EXPECT_TRUE(find_numbers(exp_digits).empty());
  // Leading zeros in an exponent are harmless.
  EXPECT_EQ(read_number("1e" + std::string(100000, '0') + "3").match->value, Rational(1000));
}

TEST(Hostile, RandomBytes) {
  Rng rng(20261130, "hostile-bytes");
  for (int round = 0; round < 200; ++round) {
    std::string s(static_cast<std::size_t>(rng.between(0, 4000)), '\0');
    for (auto& c : s) c = static_cast<char>(rng.below(256));
    (void)exercise(s);
  }
  // Random text over the readers' own alphabet hits the grammar far more often.
  const std::string alphabet[] = {"0",
                                  "1",
                                  "5",
                                  "9",
                                  ",",
                                  ".",
                                  "/",
                                  "-",
                                  "+",
                                  " ",
                                  "e",
                                  "E",
                                  "x",
                                  "^",
                                  "%",
                                  "\xC3\x97",
                                  "\xCB\x86",
                                  "\xE2\x81\xB4",
                                  "\xE2\x81\xBB",
                                  "\xC2\xBD",
                                  "\xE2\x88\x92",
                                  "one ",
                                  "hundred ",
                                  "and ",
                                  "a ",
                                  "half",
                                  "million ",
                                  "point ",
                                  "minus ",
                                  "twenty-",
                                  "percent",
                                  "10",
                                  "\xE2",
                                  "\xC2",
                                  "\x81"};
  std::size_t total = 0;
  for (int round = 0; round < 2000; ++round) {
    std::string s;
    const auto n = rng.between(0, 40);
    for (int i = 0; i < n; ++i) s += alphabet[rng.below(std::size(alphabet))];
    total += exercise(s);
    for (const auto& m : find_numbers(s)) {
      const auto alone = read_number(std::string_view(s).substr(m.begin, m.end - m.begin));
      ASSERT_TRUE(alone) << "'" << s << "'";
      ASSERT_EQ(alone.match->value, m.value) << "'" << s << "'";
    }
  }
  EXPECT_GT(total, 1000u);  // the alphabet really does produce numbers
}

TEST(Hostile, InvalidAndTruncatedUtf8) {
  for (const char* text :
       {"\xC3", "1 \xC3", "1 \xC3\x97", "1 \xC3\x97 10", "1 \xC3\x97 10\xE2\x81", "10\xE2\x81\xBB", "10\xE2",
        "\xE2\x88", "\xE2\x88\x92", "\xC2\xBD\xC2", "2\xC2", "\xFF\xFE 5 \xFF",
        "\xED\xA0\x80"
        "7",
        "\xC0\xAF"
        "9"}) {
    SCOPED_TRACE(text);
    (void)exercise(text);
  }
  EXPECT_EQ(read_number("1 \xC3\x97 10").reason, RejectReason::kTrailingText);
  EXPECT_EQ(read_number("10\xE2\x81\xBB").reason, RejectReason::kTrailingText);  // 10⁻ without digits
  EXPECT_EQ(find_numbers("\xFF\xFE 5 \xFF").size(), 1u);
  const std::string nul(
      "3\0"
      "4",
      3);
  EXPECT_EQ(find_numbers(nul).size(), 2u);
  EXPECT_EQ(read_number(nul).reason, RejectReason::kTrailingText);
}

TEST(Hostile, LongRunsStayLinear) {
  // Each of these is ten megabytes (or close) of one pattern; the scanner must not rescan.
  auto repeat = [](std::string_view unit, std::size_t size = kTenMB) {
    std::string s;
    s.reserve(size + unit.size());
    while (s.size() < size) s += unit;
    return s;
  };
  constexpr std::size_t kOneMB = std::size_t{1} << 20;      // word patterns: every word is a start
  EXPECT_TRUE(find_numbers(repeat("1.")).empty());          // 1.1.1.1... is one bad token
  EXPECT_TRUE(find_numbers(repeat("1/")).empty());          // 1/1/1/1... is a date-like token
  EXPECT_TRUE(find_numbers(repeat("1,")).empty());          // bad grouping
  EXPECT_TRUE(find_numbers("1" + repeat(",000")).empty());  // valid grouping, but out of range
  EXPECT_EQ(find_numbers(repeat("-")).size(), 0u);
  EXPECT_EQ(find_numbers(repeat(" ")).size(), 0u);
  EXPECT_EQ(find_numbers(repeat("a")).size(), 0u);
  EXPECT_EQ(find_numbers(repeat("\xE2\x81")).size(), 0u);
  EXPECT_EQ(find_numbers("1" + repeat(" ") + "%").size(), 1u);
  // Repeated words: bounded by max_matches, and each start reads a bounded number of words.
  EXPECT_EQ(find_numbers(repeat("one ", kOneMB), FormSet::all(), 100000).size(), 100000u);
  EXPECT_EQ(find_numbers(repeat("one ", 4 * kOneMB)).size(), 100000u);  // the default bound
  EXPECT_EQ(find_numbers(repeat("hundred ", kOneMB)).size(), 0u);
  EXPECT_EQ(find_numbers(repeat("minus ", kOneMB)).size(), 0u);
  EXPECT_EQ(find_numbers(repeat("a ", kOneMB)).size(), 0u);
  EXPECT_EQ(find_numbers(repeat("one thousand ", kOneMB), FormSet::all(), 10).size(), 10u);
  EXPECT_EQ(read_number(repeat("one ", kOneMB)).reason, RejectReason::kTrailingText);
  EXPECT_EQ(find_numbers(repeat("7 "), FormSet::all(), 50).size(), 50u);
}

TEST(Hostile, WritersRefuseHugeValuesInsteadOfExploding) {
  const Rational huge = Rational::pow10(5000) + Rational(1);
  for (int i = 0; i < kNumberFormCount; ++i) {
    EXPECT_FALSE(write_number(huge, static_cast<NumberForm>(i))) << form_name(static_cast<NumberForm>(i));
  }
  const Rational tiny(mpz_class(1), mpz_class(3) * Rational::pow10(5000).numerator());
  for (int i = 0; i < kNumberFormCount; ++i) {
    EXPECT_FALSE(write_number(tiny, static_cast<NumberForm>(i))) << form_name(static_cast<NumberForm>(i));
  }
}

}  // namespace
}  // namespace numcheck::num
