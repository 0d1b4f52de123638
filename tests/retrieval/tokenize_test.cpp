// Tokenizer table tests: Unicode, numbers in every form, hyphens, URLs, apostrophes; the ASCII
// path equals ICU's UAX #29 segmentation on random ASCII text.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/prng.hpp"
#include "num/read.hpp"
#include "retrieval/tokenize.hpp"

namespace numcheck::retrieval {
namespace {

std::vector<std::string> terms_of(std::string_view text, TokenizerOptions opt = {}) {
  std::vector<std::string> out;
  for (const auto& t : words(text, opt)) out.push_back(t.term);
  return out;
}
using V = std::vector<std::string>;

TEST(Tokenize, WordTable) {
  struct Row {
    std::string text;
    V want;
  };
  const std::vector<Row> rows = {
      {"Hello, World!", {"hello", "world"}},
      {"don't can't O'Neil's", {"don't", "can't", "o'neil's"}},
      {"U.S. economy", {"u.s", "economy"}},
      {"1,000 and 1000 and 3.14", {"1,000", "and", "1000", "and", "3.14"}},
      {"covid-19 well-known", {"covid", "19", "well", "known"}},
      {"https://www.example.com/a_b?x=1", {"https", "www.example.com", "a_b", "x", "1"}},
      {"$86k or $86,000", {"86k", "or", "86,000"}},
      {"75% rise", {"75", "rise"}},
      {"snake_case__x", {"snake_case__x"}},
      {"Ünïcödé ÉTÉ straße", {"ünïcödé", "été", "strasse"}},
      {"日本語のテキスト", {"日本語", "の", "テキスト"}},
      {"", {}},
      {"  ...  ", {}},
      {"end.", {"end"}},
      {"3.5.2019", {"3.5.2019"}},
      {"a1b2", {"a1b2"}},
  };
  for (const auto& r : rows) EXPECT_EQ(terms_of(r.text), r.want) << r.text;
}

TEST(Tokenize, StemmerIsOptional) {
  EXPECT_EQ(terms_of("running claims"), (V{"running", "claims"}));
  EXPECT_EQ(terms_of("running claims", {.stem = true}), (V{"run", "claim"}));
}

TEST(Tokenize, InvalidUtf8NeverThrows) {
  const std::string bad = std::string("ab\xff\xfe cd \xc3") + "\x28" + " e\xe2\x82";
  std::vector<Token> w;
  EXPECT_NO_THROW(w = words(bad));
  EXPECT_FALSE(w.empty());
  for (const auto& t : w) EXPECT_LE(t.end, bad.size());
}

TEST(Tokenize, LongWordsAreDropped) {
  const std::string longw(300, 'a');
  EXPECT_EQ(terms_of(longw + " ok"), (V{"ok"}));
}

TEST(Tokenize, AsciiPathEqualsIcu) {
  // Random strings over the characters UAX #29 treats specially in ASCII.
  const std::string alphabet = "aZ09.,;:'_- \"/?!$%\t\n()";
  Rng rng(20260725, "tokenize-ascii-vs-icu");
  for (int n = 0; n < 3000; ++n) {
    std::string s;
    const auto len = rng.below(24);
    for (std::uint64_t i = 0; i < len; ++i) s += alphabet[rng.below(alphabet.size())];
    ASSERT_EQ(ascii_word_ranges(s), icu_word_ranges(s)) << "text: [" << s << "]";
  }
}

TEST(Tokenize, NumberTermsShareCanonicalValue) {
  EXPECT_EQ(number_terms("1,000"), (V{"#1000"}));
  EXPECT_EQ(number_terms("1000"), (V{"#1000"}));
  EXPECT_EQ(number_terms("one thousand"), (V{"#1000"}));
  EXPECT_EQ(number_terms("$86k"), (V{"#86000"}));
  EXPECT_EQ(number_terms("$86,000"), (V{"#86000"}));
  EXPECT_EQ(number_terms("1.5 million"), (V{"#1500000"}));
  EXPECT_EQ(number_terms("no numbers here"), V{});
}

// The reader runs on windows around number-like words; the result must equal one pass of
// num::find_numbers over the whole text.
TEST(Tokenize, NumberWindowsFindWhatTheWholeTextReaderFinds) {
  const std::vector<std::string> pieces = {"the",
                                           "of",
                                           "rose",
                                           "to",
                                           "a",
                                           "an",
                                           "and",
                                           "half",
                                           "minus",
                                           "four",
                                           "one",
                                           "hundred",
                                           "thousand",
                                           "twenty-seven",
                                           "1,000",
                                           "2 3/4",
                                           "3/4",
                                           "1.5",
                                           "million",
                                           "75%",
                                           "12.5 per cent",
                                           "1.494e4",
                                           "1.494 x 10^4",
                                           "-12",
                                           "covid-19",
                                           "G7",
                                           "point",
                                           "five",
                                           "(",
                                           ")",
                                           ",",
                                           ".",
                                           "$",
                                           "quarter",
                                           "1000"};
  Rng rng(20260725, "number-windows");
  for (int n = 0; n < 2000; ++n) {
    std::string s;
    const auto len = 1 + rng.below(30);
    for (std::uint64_t i = 0; i < len; ++i) {
      if (i) s += rng.below(5) == 0 ? "  " : " ";
      s += pieces[rng.below(pieces.size())];
    }
    V want;
    for (const auto& m : num::find_numbers(s)) {
      auto dec = m.value.to_decimal();
      want.push_back("#" + (dec ? *dec : m.value.str()));
    }
    ASSERT_EQ(number_terms(s), want) << "text: [" << s << "]";
  }
}

TEST(Tokenize, AnalyzeKeepsSurfaceAndCanonical) {
  const Analyzed a = analyze("Spent $86k in 2019");
  EXPECT_EQ(a.length, 4u);  // spent, 86k, in, 2019: number terms do not count
  EXPECT_NE(std::find(a.terms.begin(), a.terms.end(), "86k"), a.terms.end());
  EXPECT_NE(std::find(a.terms.begin(), a.terms.end(), "#86000"), a.terms.end());
  const Analyzed plain = analyze("Spent $86k", {.stem = false, .number_terms = false});
  EXPECT_EQ(plain.terms, (V{"spent", "86k"}));
}

}  // namespace
}  // namespace numcheck::retrieval
