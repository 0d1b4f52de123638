// core/ascii.hpp: the one definition of whitespace and the ASCII classes every library uses.
#include "core/ascii.hpp"

#include <gtest/gtest.h>

namespace numcheck::ascii {
namespace {

TEST(Ascii, OneDefinitionOfWhitespace) {
  for (const char c : {' ', '\t', '\n', '\r', '\v', '\f'}) EXPECT_TRUE(is_space(c)) << int(c);
  for (const char c : {'a', '0', '_', '\0', '\x85', '\xA0'}) EXPECT_FALSE(is_space(c)) << int(c);
  EXPECT_TRUE(is_blank(' '));
  EXPECT_TRUE(is_blank('\t'));
  EXPECT_FALSE(is_blank('\n'));
  EXPECT_EQ(trim(" \t\v\fa b\r\n"), "a b");
  EXPECT_EQ(trim(" \n "), "");
  EXPECT_TRUE(is_blank_text("\f\v "));
}

TEST(Ascii, ClassesAreAsciiOnlyAndLocaleFree) {
  EXPECT_TRUE(is_digit('7'));
  EXPECT_FALSE(is_digit('a'));
  EXPECT_TRUE(is_alpha('Z'));
  EXPECT_FALSE(is_alpha('\xC3'));  // first byte of a UTF-8 letter
  EXPECT_TRUE(is_wordish('\xC3'));
  EXPECT_TRUE(is_word('_'));
  EXPECT_FALSE(is_wordish('_'));
  EXPECT_FALSE(is_word('-'));
  EXPECT_EQ(lower("MiXeD 42 \xC3\x89"), "mixed 42 \xC3\x89");  // non-ASCII bytes untouched
  EXPECT_EQ(to_upper('q'), 'Q');
  EXPECT_TRUE(iequals("Km/H", "km/h"));
  EXPECT_FALSE(iequals("km", "kms"));
}

}  // namespace
}  // namespace numcheck::ascii
