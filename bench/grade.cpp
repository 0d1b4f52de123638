// Grading throughput (responses per second, one core): realistic responses of a few hundred bytes
// of reasoning followed by a FINAL line. The strict path is what every response pays; the audit
// path is what a strict failure pays on top (rewrite, rerun, magnitude check). Target: three
// million responses per second per core on the mix (BM_GradeStrictResponses): the number is read,
// converted and compared in fixed-width integers (num::SmallNumber), GMP only on overflow.
//   build/release/bench/bench_grade --benchmark_min_time=2
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "grade/grade.hpp"

namespace {

using namespace numcheck;

// About 300 bytes of the kind of reasoning the benchmark's models write.
const std::string kReasoning =
    "We need the total volume of the two containers. The first container holds 1.5 L and the second "
    "holds 1,250 mL, which is 1.25 L because 1 L = 1000 mL. Adding them: 1.5 L + 1.25 L = 2.75 L. "
    "Let me double-check: 1500 mL + 1250 mL = 2750 mL = 2.75 L. So the combined volume is 2.75 L.\n\n";

struct Item {
  std::string response;
  grade::Question question;
};

std::vector<Item> strict_items() {
  const grade::Question liters{num::Rational(11) / num::Rational(4), "L"};
  const grade::Question big{num::Rational(14940), "L"};
  const grade::Question km{num::Rational(363) / num::Rational(100), "km"};
  return {
      {kReasoning + "FINAL: 2.75 L", liters},                 // correct, canonical unit
      {kReasoning + "FINAL: 2750 mL\n", liters},              // correct after conversion
      {kReasoning + "FINAL: 14,940 liters", big},             // grouping and a unit word
      {kReasoning + "FINAL: 3630 meters.", km},               // trailing period, conversion
      {kReasoning + "FINAL: 11/4 L\r\n", liters},             // fraction, CRLF
      {kReasoning + "FINAL: 1.494e4 L", big},                 // e-notation
      {kReasoning + "FINAL: 3 L", liters},                    // value_error (audit reruns)
      {kReasoning + "FINAL: 2.75 L\nFINAL: 2.75 L", liters},  // multiple FINAL lines
  };
}

std::vector<Item> audit_items() {
  const grade::Question liters{num::Rational(11) / num::Rational(4), "L"};
  const grade::Question big{num::Rational(14940), "L"};
  return {
      {kReasoning + "FINAL: 1.494 x 10\xCB\x86"
                    "4 liters",
       big},  // the seed's recovered example
      {kReasoning + "FINAL: 1.494 \xC3\x97 10^4 L", big},
      {kReasoning + "**FINAL:** 2.75 L", liters},
      {kReasoning + "Final: 275 L", liters},  // recovered line, then a magnitude drop (k = -2)
  };
}

void run(benchmark::State& state, const std::vector<Item>& items, bool full) {
  std::size_t i = 0;
  std::size_t bytes = 0;
  for (auto _ : state) {
    const Item& it = items[i];
    if (full) {
      benchmark::DoNotOptimize(grade::grade_response(it.response, it.question));
    } else {
      benchmark::DoNotOptimize(grade::grade_strict(it.response, it.question));
    }
    bytes += it.response.size();
    i = i + 1 == items.size() ? 0 : i + 1;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}

// The strict layer alone on realistic responses.
void BM_StrictPath(benchmark::State& state) { run(state, strict_items(), false); }
BENCHMARK(BM_StrictPath);

// grade_response (strict and audit) on the same responses: the audit runs only for the failures.
void BM_GradeStrictResponses(benchmark::State& state) { run(state, strict_items(), true); }
BENCHMARK(BM_GradeStrictResponses);

// grade_response on strict failures the audit rewrites: the audit path.
void BM_AuditPath(benchmark::State& state) { run(state, audit_items(), true); }
BENCHMARK(BM_AuditPath);

// JSON output of one grade (what `orbit score` writes per record).
void BM_GradeToJson(benchmark::State& state) {
  const auto items = audit_items();
  const grade::Grade g = grade::grade_response(items[0].response, items[0].question);
  for (auto _ : state) benchmark::DoNotOptimize(io::to_line(grade::to_json(g)));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_GradeToJson);

}  // namespace

BENCHMARK_MAIN();
