// numcheck orbit grade: grades one model response (stdin) against an exact expected answer and
// prints the strict and audit results as one JSON object (docs/grading.md).
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/core.h>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "grade/grade.hpp"
#include "io/json.hpp"

namespace numcheck::cli {
namespace {

// A response larger than this is refused with an error rather than read into memory.
constexpr std::size_t kMaxResponseBytes = std::size_t{64} << 20;

struct GradeArgs {
  std::string expected;
  std::string unit;
  std::string finish_reason = "stop";
};

std::string read_stdin_bounded() {
  std::string in;
  char buf[1 << 16];
  for (;;) {
    const std::size_t n = std::fread(buf, 1, sizeof buf, stdin);
    if (n > 0) {
      if (in.size() + n > kMaxResponseBytes) {
        fail(ErrorCode::kInvalidInput, "the response on stdin is larger than {} MiB; refusing to grade it",
             kMaxResponseBytes >> 20);
      }
      in.append(buf, n);
    }
    if (n < sizeof buf) {
      if (std::ferror(stdin) != 0) fail(ErrorCode::kIo, "error while reading the response from stdin");
      break;
    }
  }
  return in;
}

void setup(CLI::App& app) {
  auto args = std::make_shared<GradeArgs>();
  app.add_option("--expected", args->expected,
                 "Exact expected answer in the canonical unit (integer, decimal, a/b or e-notation)")
      ->required();
  app.add_option("--unit", args->unit,
                 "Canonical unit of the answer (\"\" for dimensionless), e.g. L, km, km/h")
      ->required();
  app.add_option("--finish-reason", args->finish_reason,
                 "The server's finish reason; anything other than 'stop' is a truncation_error")
      ->capture_default_str();
  app.footer(
      "Reads one response from stdin (at most 64 MiB) and prints {\"strict\": {...}, \"audit\": {...}}. "
      "See docs/grading.md for the grammar, the outcomes and the audit rules.");
  app.callback([args] {
    const num::ReadResult expected = num::read_number(args->expected, grade::kStrictForms);
    if (!expected) {
      fail(ErrorCode::kUsage,
           "--expected '{}' is not an exact number (integer, decimal, a/b or e-notation): {}", args->expected,
           num::reject_name(expected.reason));
    }
    const auto& units = num::UnitRegistry::builtin();
    if (!args->unit.empty() && grade::resolve_unit(args->unit, units) == nullptr) {
      fail(ErrorCode::kUsage, "--unit '{}' is not a unit the registry knows", args->unit);
    }
    const std::string response = read_stdin_bounded();
    const grade::Grade g = grade::grade_response(response, grade::Question{expected.match->value, args->unit},
                                                 args->finish_reason, units);
    fmt::print("{}\n", io::to_line(grade::to_json(g)));
  });
}

const CommandRegistration reg{
    {"orbit",
     "grade",
     "Grade one response from stdin with the strict parser and the audit layer",
     setup,
     "echo 'The tank holds 12.5 L.' | numcheck orbit grade --expected 12.5 --unit L",
     {"graded (whatever the outcome)"}}};

}  // namespace
}  // namespace numcheck::cli
