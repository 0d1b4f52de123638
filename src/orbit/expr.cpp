#include "orbit/expr.hpp"

#include <algorithm>

#include "core/ascii.hpp"
#include "core/error.hpp"

namespace numcheck::orbit {

class ExprParser {
 public:
  ExprParser(std::string_view text, const std::vector<std::string>& names, std::string_view where)
      : text_(text), names_(names), where_(where) {}

  Expr parse_all() {
    Expr e;
    out_ = &e;
    e.root_ = parse_sum();
    skip_space();
    if (pos_ != text_.size()) error("unexpected '{}'", text_.substr(pos_, 1));
    return e;
  }

  // Parses an expression up to (not including) a comparison operator.
  Expr parse_until_cmp() {
    Expr e;
    out_ = &e;
    e.root_ = parse_sum();
    return e;
  }

  std::size_t pos() const { return pos_; }
  void set_pos(std::size_t p) { pos_ = p; }
  void skip_space() {
    while (pos_ < text_.size() && ascii::is_blank(text_[pos_])) ++pos_;
  }

  template <typename... Args>
  [[noreturn]] void error(fmt::format_string<Args...> f, Args&&... args) {
    fail("{}: in '{}' at column {}: {}", where_, text_, pos_ + 1,
         fmt::format(f, std::forward<Args>(args)...));
  }

 private:
  int add(Expr::Node n) {
    if (out_->nodes_.size() > 10000) error("expression too long");
    out_->nodes_.push_back(std::move(n));
    return static_cast<int>(out_->nodes_.size() - 1);
  }

  int parse_sum() {
    int lhs = parse_product();
    for (;;) {
      skip_space();
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) {
        const char c = text_[pos_++];
        const int rhs = parse_product();
        Expr::Node n;
        n.op = c == '+' ? Expr::Node::Op::kAdd : Expr::Node::Op::kSub;
        n.lhs = lhs;
        n.rhs = rhs;
        lhs = add(std::move(n));
      } else {
        return lhs;
      }
    }
  }

  int parse_product() {
    int lhs = parse_factor();
    for (;;) {
      skip_space();
      if (pos_ < text_.size() && (text_[pos_] == '*' || text_[pos_] == '/')) {
        const char c = text_[pos_++];
        const int rhs = parse_factor();
        Expr::Node n;
        n.op = c == '*' ? Expr::Node::Op::kMul : Expr::Node::Op::kDiv;
        n.lhs = lhs;
        n.rhs = rhs;
        lhs = add(std::move(n));
      } else {
        return lhs;
      }
    }
  }

  int parse_factor() {
    if (++depth_ > 100) error("expression nested too deeply");
    skip_space();
    if (pos_ >= text_.size()) error("expected a name, a number or '('");
    const char c = text_[pos_];
    int result = -1;
    if (c == '(') {
      ++pos_;
      result = parse_sum();
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != ')') error("expected ')'");
      ++pos_;
    } else if (c == '-') {
      ++pos_;
      Expr::Node n;
      n.op = Expr::Node::Op::kNeg;
      n.lhs = parse_factor();
      result = add(std::move(n));
    } else if (ascii::is_digit(c)) {
      const std::size_t start = pos_;
      while (pos_ < text_.size() && ascii::is_digit(text_[pos_])) ++pos_;
      std::size_t frac_digits = 0;
      if (pos_ < text_.size() && text_[pos_] == '.') {
        ++pos_;
        while (pos_ < text_.size() && ascii::is_digit(text_[pos_])) {
          ++pos_;
          ++frac_digits;
        }
        if (frac_digits == 0) error("a decimal point must be followed by digits");
      }
      if (pos_ - start > 200) error("number literal too long");
      std::string digits;
      for (std::size_t i = start; i < pos_; ++i)
        if (text_[i] != '.') digits.push_back(text_[i]);
      Expr::Node n;
      n.op = Expr::Node::Op::kConst;
      n.value = num::Rational(mpz_class(digits, 10)) / num::Rational::pow10(static_cast<int>(frac_digits));
      result = add(std::move(n));
    } else if (ascii::is_alpha(c) || c == '_') {
      const std::size_t start = pos_;
      while (pos_ < text_.size() && ascii::is_word(text_[pos_])) ++pos_;
      const std::string_view name = text_.substr(start, pos_ - start);
      auto it = std::find(names_.begin(), names_.end(), name);
      if (it == names_.end()) {
        pos_ = start;
        error("unknown name '{}'", name);
      }
      Expr::Node n;
      n.op = Expr::Node::Op::kVar;
      n.var = static_cast<std::size_t>(it - names_.begin());
      result = add(std::move(n));
    } else {
      error("unexpected '{}'", text_.substr(pos_, 1));
    }
    --depth_;
    return result;
  }

  std::string_view text_;
  const std::vector<std::string>& names_;
  std::string_view where_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  Expr* out_ = nullptr;
};

Expr Expr::parse(std::string_view text, const std::vector<std::string>& names, std::string_view where) {
  ExprParser p(text, names, where);
  return p.parse_all();
}

std::optional<num::Rational> Expr::eval(const std::vector<num::Rational>& values) const {
  // Nodes are stored children-first, so one forward pass evaluates them all.
  std::vector<num::Rational> v(nodes_.size());
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    switch (n.op) {
      case Node::Op::kConst:
        v[i] = n.value;
        break;
      case Node::Op::kVar:
        if (n.var >= values.size()) return std::nullopt;
        v[i] = values[n.var];
        break;
      case Node::Op::kAdd:
        v[i] = v[n.lhs] + v[n.rhs];
        break;
      case Node::Op::kSub:
        v[i] = v[n.lhs] - v[n.rhs];
        break;
      case Node::Op::kMul:
        v[i] = v[n.lhs] * v[n.rhs];
        break;
      case Node::Op::kDiv:
        if (v[n.rhs].is_zero()) return std::nullopt;
        v[i] = v[n.lhs] / v[n.rhs];
        break;
      case Node::Op::kNeg:
        v[i] = -v[n.lhs];
        break;
    }
  }
  if (root_ < 0) return std::nullopt;
  return v[root_];
}

std::vector<std::size_t> Expr::variables() const {
  std::vector<std::size_t> out;
  for (const auto& n : nodes_)
    if (n.op == Node::Op::kVar && std::find(out.begin(), out.end(), n.var) == out.end()) out.push_back(n.var);
  return out;
}

Constraint Constraint::parse(std::string_view text, const std::vector<std::string>& names,
                             std::string_view where) {
  ExprParser p(text, names, where);
  Constraint c;
  c.lhs = p.parse_until_cmp();
  p.skip_space();
  const std::string_view rest = text.substr(p.pos());
  static constexpr std::pair<std::string_view, Cmp> kOps[] = {{"<=", Cmp::kLe}, {">=", Cmp::kGe},
                                                              {"==", Cmp::kEq}, {"!=", Cmp::kNe},
                                                              {"<", Cmp::kLt},  {">", Cmp::kGt}};
  bool found = false;
  for (const auto& [tok, cmp] : kOps) {
    if (rest.substr(0, tok.size()) == tok) {
      c.cmp = cmp;
      p.set_pos(p.pos() + tok.size());
      found = true;
      break;
    }
  }
  if (!found) p.error("expected a comparison (<, <=, >, >=, ==, !=)");
  const std::size_t rhs_start = p.pos();
  ExprParser q(text.substr(rhs_start), names, where);
  c.rhs = q.parse_all();
  return c;
}

bool Constraint::holds(const std::vector<num::Rational>& values) const {
  const auto a = lhs.eval(values);
  const auto b = rhs.eval(values);
  if (!a || !b) return false;
  switch (cmp) {
    case Cmp::kLt:
      return *a < *b;
    case Cmp::kLe:
      return *a <= *b;
    case Cmp::kGt:
      return *a > *b;
    case Cmp::kGe:
      return *a >= *b;
    case Cmp::kEq:
      return *a == *b;
    case Cmp::kNe:
      return *a != *b;
  }
  return false;
}

}  // namespace numcheck::orbit
