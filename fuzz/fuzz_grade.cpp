// Fuzz target for the grader: any bytes as a model response. The first byte picks the question,
// the second the finish reason, the rest is the response. Grading must never crash, hang or
// throw, and every grade must satisfy grade::consistency_error (the outcome/value/recovered/
// magnitude invariants). Crashes found here become named tests in tests/grade/hostile_test.cpp.
#include <cstdint>
#include <cstdio>
#include <string_view>

#include "grade/grade.hpp"
#include "io/json.hpp"

namespace {

struct FuzzQuestion {
  const char* expected;
  const char* unit;
};
constexpr FuzzQuestion kQuestions[] = {{"11/4", "L"}, {"14940", "L"}, {"363/100", "km"}, {"60", "km/h"},
                                       {"3/4", ""},   {"11/4", "m"},  {"-3", "L"},       {"1/3", "L"}};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace numcheck;
  static const num::UnitRegistry& units = num::UnitRegistry::builtin();
  const std::uint8_t qi = size > 0 ? data[0] : 0;
  const std::uint8_t fi = size > 1 ? data[1] : 0;
  const std::string_view response(reinterpret_cast<const char*>(data) + (size > 2 ? 2 : size),
                                  size > 2 ? size - 2 : 0);
  const FuzzQuestion& fq = kQuestions[qi % std::size(kQuestions)];
  const grade::Question q{num::Rational::parse_exact(fq.expected, "fuzz question"), fq.unit};
  const std::string_view finish = (fi % 4 == 3) ? "length" : "stop";

  const grade::Grade g = grade::grade_response(response, q, finish, units);
  if (const std::string e = grade::consistency_error(g, q); !e.empty()) {
    std::fprintf(stderr, "inconsistent grade: %s\n", e.c_str());
    __builtin_trap();
  }
  const grade::StrictResult s = grade::grade_strict(response, q, finish, units);
  if (s.outcome != g.strict.outcome || s.value != g.strict.value ||
      s.multiple_final != g.strict.multiple_final) {
    std::fprintf(stderr, "grade_strict disagrees with grade_response\n");
    __builtin_trap();
  }
  // The JSON form is always writable.
  const std::string line = io::to_line(grade::to_json(g));
  if (line.empty()) __builtin_trap();
  // The rewrite never makes the text longer and keeps its lines.
  const grade::AuditRewrite rw = grade::audit_rewrite(response);
  std::size_t nl_in = 0;
  std::size_t nl_out = 0;
  for (const char c : response) nl_in += c == '\n';
  for (const char c : rw.text) nl_out += c == '\n';
  if (nl_in != nl_out || rw.text.size() > response.size()) __builtin_trap();
  return 0;
}
