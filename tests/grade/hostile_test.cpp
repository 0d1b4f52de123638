// Hostile responses: huge, malformed, adversarial. Grading must return an outcome (no crash, no
// hang, no exception) and every grade must be internally consistent. Also replays the fuzz corpus
// through the fuzz target itself, and holds the named regression tests for fuzzer findings.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/prng.hpp"
#include "grade/grade.hpp"

// The fuzz target, compiled into this test so that the corpus and every crash it found replay
// here (under ASan/UBSan in CI) exactly as the fuzzer ran them.
#include "../../fuzz/fuzz_grade.cpp"  // NOLINT(bugprone-suspicious-include)

namespace numcheck::grade {
namespace {

using num::Rational;

const Question kLiters{Rational(11) / Rational(4), "L"};

Grade graded(const std::string& response, const Question& q = kLiters, std::string_view finish = "stop") {
  Grade g = grade_response(response, q, finish);
  EXPECT_EQ(consistency_error(g, q), "") << "response of " << response.size() << " bytes";
  return g;
}

TEST(Hostile, TenMegabytesOfDigits) {
  const std::string digits(10u << 20, '7');
  EXPECT_EQ(graded(digits).strict.outcome, Outcome::kFormatError);
  const Grade g = graded("FINAL: " + digits + " L");
  EXPECT_EQ(g.strict.outcome, Outcome::kParseError);  // decimal exponent magnitude far above 1,000
  EXPECT_EQ(g.audit.outcome, Outcome::kParseError);
  // Variants at 1 MB (the cost is linear; the sanitizer build runs these too).
  const std::string mb(1u << 20, '7');
  EXPECT_EQ(graded("FINAL: 1/" + mb + " L").strict.outcome, Outcome::kParseError);
  EXPECT_EQ(graded("FINAL: 0." + mb + " L").strict.outcome, Outcome::kParseError);
  EXPECT_EQ(graded("FINAL: 1.5 x 10^" + mb + " L").audit.outcome, Outcome::kParseError);
}

TEST(Hostile, HugeExponents) {
  for (const char* r : {"FINAL: 1e999999999 L", "FINAL: 1e-999999999 L", "FINAL: 1e99999999999999999999999 L",
                        "FINAL: 1.5 \xC3\x97 10^999999999 L", "FINAL: 1.5 x 10^-999999999 L"}) {
    SCOPED_TRACE(r);
    const Grade g = graded(r);
    EXPECT_EQ(g.strict.outcome, Outcome::kParseError);
    EXPECT_EQ(g.audit.outcome, Outcome::kParseError);
  }
  std::string sup = "FINAL: 1.5 \xC3\x97 10";
  for (int i = 0; i < 200000; ++i) sup += "\xE2\x81\xB9";  // ⁹ x 200,000
  EXPECT_EQ(graded(sup + " L").audit.outcome, Outcome::kParseError);
}

TEST(Hostile, ThousandsOfFinalLines) {
  std::string many;
  for (int i = 0; i < 100000; ++i) many += "FINAL: " + std::to_string(i) + " L\n";
  Grade g = graded(many + "FINAL: 2.75 L");
  EXPECT_EQ(g.strict.outcome, Outcome::kCorrect);
  EXPECT_TRUE(g.strict.multiple_final);
  g = graded(many);
  EXPECT_EQ(g.strict.outcome, Outcome::kValueError);
  EXPECT_EQ(g.strict.value, Rational(99999));
  // The audit path rewrites every line.
  std::string lower;
  for (int i = 0; i < 100000; ++i) lower += "**final:** " + std::to_string(i) + " x 10^2 L\n";
  g = graded(lower);
  EXPECT_EQ(g.strict.outcome, Outcome::kFormatError);
  EXPECT_EQ(g.audit.outcome, Outcome::kValueError);
  EXPECT_EQ(g.audit.value, Rational(9999900));
}

TEST(Hostile, InvalidUtf8AndNulBytes) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  for (int i = 0; i < 4; ++i) bytes += bytes;
  EXPECT_EQ(graded(bytes).strict.outcome, Outcome::kFormatError);
  EXPECT_EQ(graded("FINAL: \xC3\x28\xA0\xA1 L").strict.outcome, Outcome::kParseError);
  const std::string nul("FINAL:\0 2.75 L\0\nFINAL: 2.75 L\0", 30);
  const Grade g = graded(nul);
  EXPECT_EQ(g.strict.outcome, Outcome::kUnitError);  // the unit is "L\0"
  EXPECT_TRUE(g.strict.multiple_final);
  EXPECT_EQ(graded(std::string(1u << 20, '\0')).strict.outcome, Outcome::kFormatError);
}

TEST(Hostile, AdversarialAuditPatterns) {
  // Long runs that make the scientific-notation rewrite look back and forward.
  std::string blanks(1u << 20, ' ');
  EXPECT_EQ(
      graded("FINAL: 1" + blanks + "x" + blanks + "10^4 L", Question{Rational(10000), "L"}).audit.outcome,
      Outcome::kCorrect);
  std::string xs;
  for (int i = 0; i < 300000; ++i) xs += "1 x ";
  EXPECT_EQ(graded("FINAL: " + xs + "L").audit.outcome, Outcome::kParseError);
  std::string stars(1u << 20, '*');
  EXPECT_EQ(graded(stars + "FINAL: 2.75 L" + stars).audit.outcome, Outcome::kCorrect);
  std::string times;
  for (int i = 0; i < 200000; ++i)
    times +=
        "1\xC3\x97"
        "10^1";
  EXPECT_EQ(graded("final: " + times + " L").audit.outcome, Outcome::kParseError);
}

TEST(Hostile, LongUnitText) {
  const std::string letters(1u << 20, 'a');
  const Grade g = graded("FINAL: 2.75 " + letters);
  EXPECT_EQ(g.strict.outcome, Outcome::kUnitError);
  std::string words;
  for (int i = 0; i < 200000; ++i) words += "one ";
  EXPECT_NE(graded("FINAL: 2.75 " + words).strict.outcome, Outcome::kCorrect);
  EXPECT_EQ(graded("FINAL: 2.75 L" + std::string(1u << 20, ' ')).strict.outcome, Outcome::kCorrect);
}

// Property: random responses built from the tokens the grader cares about are graded
// consistently, and the strict layer agrees with grade_response.
TEST(Hostile, RandomTokenSoupIsGradedConsistently) {
  static const std::string_view kTokens[] = {"FINAL:",
                                             "final:",
                                             "Final:",
                                             " ",
                                             "\t",
                                             "\n",
                                             "\r\n",
                                             "**",
                                             "*",
                                             "`",
                                             "1",
                                             "2.75",
                                             "14,940",
                                             "12,34",
                                             ".",
                                             ",",
                                             "/",
                                             "%",
                                             "-",
                                             "+",
                                             "e",
                                             "E4",
                                             "x",
                                             "X",
                                             "\xC3\x97",
                                             "10",
                                             "^",
                                             "\xCB\x86",
                                             "\xE2\x81\xB4",
                                             "\xE2\x81\xBB",
                                             "\xC2\xB2",
                                             "\xE2\x88\x92",
                                             "L",
                                             "mL",
                                             "liters",
                                             "km",
                                             "m",
                                             "cm",
                                             "km/h",
                                             "kg",
                                             "percent",
                                             "three",
                                             "\xC2\xBE",
                                             "\xFF",
                                             std::string_view("\0", 1),
                                             "e999999999"};
  Rng rng(20260725, "grade-hostile");
  const Question questions[] = {
      kLiters, {Rational(14940), "L"}, {Rational(3) / Rational(4), ""}, {Rational(60), "km/h"}};
  for (int n = 0; n < 4000; ++n) {
    std::string r;
    const std::uint64_t len = rng.below(40);
    for (std::uint64_t i = 0; i < len; ++i) r += kTokens[rng.below(std::size(kTokens))];
    const Question& q = questions[rng.below(std::size(questions))];
    const std::string_view finish = rng.below(8) == 0 ? "length" : "stop";
    const Grade g = grade_response(r, q, finish);
    ASSERT_EQ(consistency_error(g, q), "") << r;
    const StrictResult s = grade_strict(r, q, finish);
    ASSERT_EQ(s.outcome, g.strict.outcome) << r;
    ASSERT_EQ(s.value, g.strict.value) << r;
  }
}

std::string read_bytes(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void run_fuzz_target(const std::string& bytes) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}

TEST(FuzzCorpus, EveryCorpusFileReplays) {
  const std::filesystem::path dir =
      std::filesystem::path(NUMCHECK_SOURCE_DIR) / "fuzz" / "corpus" / "fuzz_grade";
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    SCOPED_TRACE(e.path().string());
    run_fuzz_target(read_bytes(e.path()));
    ++n;
  }
  EXPECT_GE(n, 10u);
}

}  // namespace
}  // namespace numcheck::grade
