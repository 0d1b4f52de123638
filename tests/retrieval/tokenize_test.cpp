// Tokenizer table tests: Unicode, numbers in every form, hyphens, URLs, apostrophes; the ASCII
// path equals ICU's UAX #29 segmentation on random ASCII text.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fmt/format.h>
#include <unicode/unistr.h>

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

// The ASCII path must give exactly ICU's word ranges on every ASCII input. Four checks: the inputs
// libFuzzer found (control bytes, '@', punctuation), every string of one or two bytes, random
// strings over all 128 byte values, and random strings over one representative of each UAX #29
// class (where the multi-character rules WB6/7 and WB11/12 fire often).
std::string bytes_of(std::string_view s) {
  std::string out;
  for (unsigned char c : s) out += fmt::format("{:02x} ", c);
  return out;
}

TEST(Tokenize, AsciiFastPathIsOnWithThisIcu) {
  // The once-per-process check agrees with the ICU linked in; if it did not, every text would go
  // through ICU (correct, slower) and this test says so.
  EXPECT_TRUE(ascii_fast_path_enabled());
}

TEST(Tokenize, AsciiPathEqualsIcuOnFoundCases) {
  const std::vector<std::string> found = {
      std::string("P\x1e\x04\x00@`", 6),  // libFuzzer: '@' is a letter for ICU (>= 72)
      "x@y.com",
      "@handle's",
      "1@2",
      "@",
      "@@",
      "a.@",
      "1.@",
      "@1",
      "_@",
      "@.b",
      "a:b",
      "1;2",
      "__",
      "_",
      "a..b",
      "a'",
      "'a",
      std::string("a\x00b\x7f", 4),
      "a\r\nb",
      "a\x0b\x0c1",
  };
  for (const auto& s : found) EXPECT_EQ(ascii_word_ranges(s), icu_word_ranges(s)) << "bytes: " << bytes_of(s);
}

TEST(Tokenize, AsciiPathEqualsIcuOnEveryShortString) {
  for (int a = 0; a < 128; ++a) {
    const std::string one(1, static_cast<char>(a));
    ASSERT_EQ(ascii_word_ranges(one), icu_word_ranges(one)) << "bytes: " << bytes_of(one);
    for (int b = 0; b < 128; ++b) {
      const std::string two = one + static_cast<char>(b);
      ASSERT_EQ(ascii_word_ranges(two), icu_word_ranges(two)) << "bytes: " << bytes_of(two);
    }
  }
}

TEST(Tokenize, AsciiPathEqualsIcuOnRandomBytes) {
  Rng rng(20260725, "tokenize-ascii-vs-icu-bytes");
  for (int n = 0; n < 20000; ++n) {
    std::string s;
    const auto len = rng.below(40);
    for (std::uint64_t i = 0; i < len; ++i) s += static_cast<char>(rng.below(128));
    ASSERT_EQ(ascii_word_ranges(s), icu_word_ranges(s)) << "bytes: " << bytes_of(s);
  }
}

TEST(Tokenize, AsciiPathEqualsIcuOnRandomClassMixes) {
  // One or two characters of every ASCII Word_Break class (and the ones ICU tailors: ':' and '@').
  const std::string alphabet = std::string("aZ@09.,;:'_- \"/?!$%\t\n\r\x0b\x0c()`\x1e", 28) + '\0';
  Rng rng(20260725, "tokenize-ascii-vs-icu");
  for (int n = 0; n < 20000; ++n) {
    std::string s;
    const auto len = rng.below(24);
    for (std::uint64_t i = 0; i < len; ++i) s += alphabet[rng.below(alphabet.size())];
    ASSERT_EQ(ascii_word_ranges(s), icu_word_ranges(s)) << "bytes: " << bytes_of(s);
  }
}

// numcheck lower-cases a non-ASCII word with ICU's C API (loaded on first use); the tokenizer was
// written against icu::UnicodeString (fromUTF8, foldCase, toUTF8String), linked here as the
// oracle. Random words over letters that fold to longer strings (ß, ﬁ, ŉ, ΐ), letters from other
// scripts, astral code points, and ill-formed UTF-8 (stray continuation bytes, truncated sequences,
// surrogates, overlong forms), which both must read as U+FFFD the same way.
TEST(Tokenize, FoldingEqualsIcuUnicodeString) {
  const std::vector<std::string> pieces = {"A",
                                           "z",
                                           "\xc3\x9f" /* ß */,
                                           "\xef\xac\x81" /* ﬁ */,
                                           "\xc5\x89" /* ŉ */,
                                           "\xce\x90" /* ΐ */,
                                           "\xc3\x89" /* É */,
                                           "\xd0\x96" /* Ж */,
                                           "\xe1\xba\x9e" /* ẞ */,
                                           "\xf0\x90\x90\x80" /* 𐐀 */,
                                           "\xe6\x97\xa5" /* 日 */,
                                           "\xc4\xb0" /* İ */,
                                           "\xce\xa3" /* Σ */,
                                           "\xe2\x84\xaa" /* Kelvin */,
                                           "\xff",
                                           "\x80",
                                           "\xc3",
                                           "\xe2\x82",
                                           "\xed\xa0\x80" /* surrogate */,
                                           "\xc0\xaf" /* overlong */,
                                           "\xf4\x90\x80\x80" /* > U+10FFFF */,
                                           "1",
                                           "'"};
  Rng rng(20260725, "tokenize-fold-vs-unicodestring");
  std::string word;
  std::string want;
  for (int n = 0; n < 20000; ++n) {
    word.clear();
    const auto len = 1 + rng.below(8);
    for (std::uint64_t i = 0; i < len; ++i) word += pieces[rng.below(pieces.size())];
    want.clear();
    icu::UnicodeString::fromUTF8(icu::StringPiece(word.data(), static_cast<int32_t>(word.size())))
        .foldCase()
        .toUTF8String(want);
    ASSERT_EQ(fold_word(word), want) << "bytes: " << bytes_of(word);
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
  const std::vector<std::string> pieces = {
      "the", "of", "rose", "to", "a", "an", "and", "half", "minus", "four", "one", "hundred", "thousand",
      "twenty-seven", "1,000", "2 3/4", "3/4", "1.5", "million", "75%", "12.5 per cent", "1.494e4",
      "1.494 x 10^4", "-12", "covid-19", "G7", "point", "five", "(", ")", ",", ".", "$", "quarter", "1000",
      // digits glued to a word character before them are
      // never a number start (the windows skip such words)
      "eta123", "b737", "covid19", "ab1.5", "x_2", "2nd",
      // ... but after '@' (a letter for UAX #29, not for the
      // reader) or a non-ASCII byte they are
      "x@5",
      "caf\xC3\xA9"
      "5",
      "k9,000"};
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
