#include "orbit/expr.hpp"

#include <gtest/gtest.h>

#include "../support/exact.hpp"
#include "core/error.hpp"

namespace numcheck::orbit {
namespace {

using num::Rational;

using numcheck::testing::R;

TEST(Expr, EvaluatesExactlyWithPrecedence) {
  const std::vector<std::string> names = {"a", "b", "n"};
  const std::vector<Rational> v = {R(11, 4), R(3, 10), R(7)};
  EXPECT_EQ(*Expr::parse("a + b", names, "t").eval(v), R(61, 20));
  EXPECT_EQ(*Expr::parse("a - b * n", names, "t").eval(v), R(11, 4) - R(21, 10));
  EXPECT_EQ(*Expr::parse("(a - b) * n", names, "t").eval(v), (R(11, 4) - R(3, 10)) * R(7));
  EXPECT_EQ(*Expr::parse("n / 3", names, "t").eval(v), R(7, 3));
  EXPECT_EQ(*Expr::parse("-a + 0.25", names, "t").eval(v), R(-5, 2));
  EXPECT_EQ(*Expr::parse("a / b / n", names, "t").eval(v), R(11, 4) / R(3, 10) / R(7));
}

TEST(Expr, DivisionByZeroIsNoValue) {
  const std::vector<std::string> names = {"d", "t"};
  EXPECT_FALSE(Expr::parse("d / t", names, "t").eval({R(5), R(0)}).has_value());
}

TEST(Expr, ReportsUnknownNamesAndSyntaxWithColumn) {
  const std::vector<std::string> names = {"a"};
  try {
    (void)Expr::parse("a + zz", names, "template X, field 'program'");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown name 'zz'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("column 5"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)Expr::parse("a +", names, "p"), Error);
  EXPECT_THROW((void)Expr::parse("(a", names, "p"), Error);
  EXPECT_THROW((void)Expr::parse("a a", names, "p"), Error);
  EXPECT_THROW((void)Expr::parse("", names, "p"), Error);
  EXPECT_THROW((void)Expr::parse("1.", names, "p"), Error);
  EXPECT_THROW((void)Expr::parse(std::string(5000, '('), names, "p"), Error);
}

TEST(Constraint, ComparesExactly) {
  const std::vector<std::string> names = {"a", "b", "answer"};
  const auto c = Constraint::parse("a > b", names, "c");
  EXPECT_TRUE(c.holds({R(2), R(1), R(0)}));
  EXPECT_FALSE(c.holds({R(1), R(1), R(0)}));
  EXPECT_TRUE(Constraint::parse("answer >= 0.5", names, "c").holds({R(0), R(0), R(1, 2)}));
  EXPECT_TRUE(Constraint::parse("a != b", names, "c").holds({R(1), R(2), R(0)}));
  EXPECT_FALSE(Constraint::parse("a / b < 1", names, "c").holds({R(1), R(0), R(0)}));
  EXPECT_THROW((void)Constraint::parse("a b", names, "c"), Error);
  EXPECT_THROW((void)Constraint::parse("a >", names, "c"), Error);
}

}  // namespace
}  // namespace numcheck::orbit
