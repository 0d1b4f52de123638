// Regression tests through the fuzz target itself (fuzz/fuzz_num_read.cpp, which checks the
// readers' invariants and aborts on a violation): the committed seed corpus, and one named test
// per input that once broke a reader. Inputs start with the FormSet byte (0 = every form).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

// The target's entry point, compiled into this test so the corpus replays in every build.
#include "../../fuzz/fuzz_num_read.cpp"

namespace {

void run(const std::string& bytes) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}
std::string all_forms(std::string_view text) { return std::string(1, '\0') + std::string(text); }

TEST(FuzzNumRead, SeedCorpusReplays) {
  const auto dir = std::filesystem::path(NUMCHECK_SOURCE_DIR) / "fuzz" / "corpus" / "fuzz_num_read";
  std::size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream f(entry.path(), std::ios::binary);
    run(std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>()));
    ++n;
  }
  EXPECT_GE(n, 30u);
}

// A mantissa whose own digits lie below 10^-1000 but whose scientific value does not: the base
// reading was refused first and took the e-notation/times-ten readings down with it.
TEST(FuzzNumRead, LongMantissaWithExponentIsInRange) {
  const std::string mantissa = "1." + std::string(1259, '3');
  run(all_forms(mantissa + "e260"));
  run(all_forms(mantissa + " x 10^260"));
  EXPECT_TRUE(numcheck::num::read_number(mantissa + "e260"));
  EXPECT_TRUE(numcheck::num::read_number(mantissa + " \xC3\x97 10^260"));
}

// "twenty-seventh" was read as 20/7 ("twenty sevenths").
TEST(FuzzNumRead, OrdinalIsNotAFraction) {
  run(all_forms("the twenty-seventh of them"));
  EXPECT_FALSE(numcheck::num::read_number("twenty-seventh"));
  EXPECT_TRUE(numcheck::num::find_numbers("the twenty-seventh of them").empty());
}

// 10⁴⁴⁴⁴... kept every superscript digit in memory.
TEST(FuzzNumRead, LongSuperscriptExponent) {
  std::string s = "5 x 10";
  for (int i = 0; i < 200000; ++i) s += "\xE2\x81\xB4";
  run(all_forms(s));
  EXPECT_EQ(numcheck::num::read_number(s).reason, numcheck::num::RejectReason::kExponentTooLarge);
  // Leading superscript zeros do not count: 10⁰⁰⁰³ is 10^3.
  EXPECT_EQ(numcheck::num::read_number("10\xE2\x81\xB0\xE2\x81\xB0\xE2\x81\xB0\xC2\xB3").match->value,
            numcheck::num::Rational(1000));
}

// "a a a ..." re-read up to 40 words at every start (quadratic-looking slowness under ASan).
TEST(FuzzNumRead, RepeatedArticlesReadLazily) {
  std::string s;
  while (s.size() < 200000) s += "a ";
  run(all_forms(s));
  EXPECT_TRUE(numcheck::num::find_numbers(s).empty());
}

}  // namespace
