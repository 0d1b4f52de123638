#pragma once
// The built-in simulated system (`--system reference`): it answers every prompt from the reference
// solver (reads only the prompt text), optionally with injected faults at given rates, so the
// whole pipeline (run, score, report) can be dry-run without a model. Runs made with it are marked
// "simulated": true and "model": "reference" in run.json. The OpenAI-compatible test server
// (tests/support) answers with the same function, so tests and the simulated system agree.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "io/json.hpp"
#include "llm/backend.hpp"
#include "num/rational.hpp"
#include "orbit/benchmark.hpp"

namespace numcheck::llm {

// Fault rates; each in [0, 1], their sum at most 1. The faults are exclusive: one draw per item.
struct FaultRates {
  double times_ten = 0;   // "FINAL: 1.494 × 10^4 L" (multiplication-form scientific notation)
  double markdown = 0;    // "**FINAL: 2.75 L**"
  double unit_slip = 0;   // value in the sub-unit, labelled with the asked unit ("2750 L" for 2.75 L)
  double truncation = 0;  // finish_reason "length", response cut before the FINAL line
  [[nodiscard]] bool any() const { return times_ten + markdown + unit_slip + truncation > 0; }
};
// Parses "times_ten=0.05,markdown=0.03,unit_slip=0.02,truncation=0.01" (any subset, any order;
// "" = no faults). Throws Error (kUsage) naming the bad entry.
[[nodiscard]] FaultRates parse_fault_rates(std::string_view spec);
[[nodiscard]] io::OrderedJson to_json(const FaultRates& r);

enum class Fault : std::uint8_t { kNone, kTimesTen, kMarkdown, kUnitSlip, kTruncation };
[[nodiscard]] std::string_view fault_name(Fault f) noexcept;  // "none", "times_ten", ...

// The fault for one item, deterministic in (seed, item_id): one uniform draw u from
// numcheck::Rng(seed, item_id) compared with the cumulative rates in the order
// times_ten, markdown, unit_slip, truncation.
[[nodiscard]] Fault draw_fault(const FaultRates& rates, std::uint64_t seed, std::string_view item_id);

// What the solver reads from a prompt: the exact answer in the unit the question asks for.
struct SolvedAnswer {
  num::Rational value;
  std::string unit;  // unit symbol as written after the number ("L", "km/h"); "" dimensionless
};
// A solver: the answer to (item_id, prompt text), or nullopt with a reason in *why.
using SolveFn = std::function<std::optional<SolvedAnswer>(std::string_view item_id, std::string_view prompt,
                                                          std::string* why)>;
// The orbit reference solver (src/orbit/solver.hpp, solve_view) over a loaded benchmark: the
// prompt text is looked up among the benchmark's views (exact text), else the item id as a
// prompt_id, and that view is solved from its text. A prompt that is in neither is unsolvable.
[[nodiscard]] SolveFn benchmark_solver(std::shared_ptr<const orbit::Benchmark> bench);

// The reference system's reply to one solved prompt with a given fault.
struct ReferenceReply {
  std::string content;
  std::string finish_reason;           // "stop", or "length" for kTruncation
  Fault applied = Fault::kNone;        // kNone when the fault could not apply (e.g. times_ten on 1/3)
  std::int64_t completion_tokens = 0;  // simulated: ceil(bytes / 4), max_tokens when truncated
};
[[nodiscard]] ReferenceReply reference_reply(const SolvedAnswer& answer, Fault fault,
                                             std::int64_t max_tokens);

// "2.75", "14940", "1/3": the exact plain form the reference system writes.
[[nodiscard]] std::string plain_number(const num::Rational& v);
// "1.494 × 10^4"; nullopt for zero or values without a finite decimal expansion.
[[nodiscard]] std::optional<std::string> times_ten_number(const num::Rational& v);

[[nodiscard]] std::unique_ptr<Backend> make_reference_backend(const FaultRates& rates, SolveFn solver);

}  // namespace numcheck::llm
