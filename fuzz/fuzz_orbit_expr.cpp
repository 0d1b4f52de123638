// Fuzz target for the template expression parser (orbit/expr.hpp): any bytes as a program and as
// a constraint over the names a, b, n. Parsing either succeeds or throws numcheck::Error; a parsed
// expression evaluates (exactly, or nullopt on division by zero) without crashing, and only uses
// the names it was given.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "orbit/expr.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace numcheck;
  if (size > 4096) return 0;  // deep nesting is bounded by the spec files' size, not tested here
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  static const std::vector<std::string> names = {"a", "b", "n"};
  static const std::vector<std::string> with_answer = {"a", "b", "n", "answer"};
  const std::vector<num::Rational> values = {num::Rational(3), num::Rational(0), num::Rational(-7)};
  const std::vector<num::Rational> values4 = {num::Rational(3), num::Rational(0), num::Rational(-7),
                                              num::Rational(2)};
  try {
    const orbit::Expr e = orbit::Expr::parse(text, names, "fuzz");
    for (const std::size_t v : e.variables()) {
      if (v >= names.size()) __builtin_trap();
    }
    (void)e.eval(values);
  } catch (const Error&) {  // NOLINT(bugprone-empty-catch): a refused program is the expected outcome
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "Expr::parse threw a non-Error exception: %s\n", ex.what());
    __builtin_trap();
  }
  try {
    const orbit::Constraint c = orbit::Constraint::parse(text, with_answer, "fuzz");
    (void)c.holds(values4);
  } catch (const Error&) {  // NOLINT(bugprone-empty-catch): a refused constraint is the expected outcome
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "Constraint::parse threw a non-Error exception: %s\n", ex.what());
    __builtin_trap();
  }
  return 0;
}
