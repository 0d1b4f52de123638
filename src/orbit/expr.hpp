#pragma once
// Template programs as exact arithmetic expressions over named parameters: "a + b", "n * a",
// "d / t", "(a - b) * 2". Grammar: sums and differences of products and quotients of factors; a
// factor is a parameter name, a non-negative decimal or integer literal (read exactly), a
// parenthesised expression, or a unary minus. Constraints compare two expressions with one of
// < <= > >= == != and may also use the name `answer` (the program's value).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "num/rational.hpp"

namespace numcheck::orbit {

class Expr {
 public:
  // Parses `text` over the given names; throws Error("<where>: ...") naming the column at fault.
  [[nodiscard]] static Expr parse(std::string_view text, const std::vector<std::string>& names,
                                  std::string_view where);
  // Evaluates with values[i] for names[i]; nullopt on division by zero.
  [[nodiscard]] std::optional<num::Rational> eval(const std::vector<num::Rational>& values) const;
  // Indexes of the names the expression uses.
  [[nodiscard]] std::vector<std::size_t> variables() const;

  struct Node {
    enum class Op : std::uint8_t { kConst, kVar, kAdd, kSub, kMul, kDiv, kNeg };
    Op op = Op::kConst;
    num::Rational value;     // kConst
    std::size_t var = 0;     // kVar
    int lhs = -1, rhs = -1;  // children (node indexes)
  };

 private:
  std::vector<Node> nodes_;
  int root_ = -1;
  friend class ExprParser;
};

struct Constraint {
  enum class Cmp : std::uint8_t { kLt, kLe, kGt, kGe, kEq, kNe };
  Expr lhs, rhs;
  Cmp cmp = Cmp::kLt;
  // Parses "a > b"; throws Error naming `where`.
  [[nodiscard]] static Constraint parse(std::string_view text, const std::vector<std::string>& names,
                                        std::string_view where);
  // False also when either side divides by zero.
  [[nodiscard]] bool holds(const std::vector<num::Rational>& values) const;
};

}  // namespace numcheck::orbit
