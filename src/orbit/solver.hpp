#pragma once
// The reference solver: derives a prompt's answer from its text alone. It finds the quantities in
// whatever written form the view uses (digits, grouped digits, decimals, fractions, percent,
// "m × 10^k", English number words) with num::find_numbers, reads the unit written after each
// quantity through the unit registry and converts it exactly to the parameter's unit, then applies
// the template's program. A prompt whose text does not determine its label (a missing, extra or
// unreadable quantity, an unknown or wrong-dimension unit) yields an error, never a guess.
#include <optional>
#include <string>
#include <string_view>

#include "num/rational.hpp"
#include "num/units.hpp"
#include "orbit/benchmark.hpp"
#include "orbit/spec.hpp"

namespace numcheck::orbit {

struct SolveResult {
  std::optional<num::Rational> value;  // the answer in the template's canonical unit
  std::string error;                   // why there is no value ("" when value is set)
  [[nodiscard]] explicit operator bool() const { return value.has_value(); }
};

// Solves one prompt of template `t`. `view` selects the skeleton whose quantity order the solver
// expects ("paraphrase1"/"paraphrase2" their own, any other view the template's prompt); the
// prompt must end with `instruction` (the spec's instruction line), which is not searched.
[[nodiscard]] SolveResult solve_prompt(const TemplateSpec& t, std::string_view view,
                                       std::string_view prompt_text, std::string_view instruction,
                                       const num::UnitRegistry& units = num::UnitRegistry::builtin());

// The spec a benchmark was generated from: the copy embedded in its manifest.json ("spec"), or
// the default spec when the manifest has none. Cached per manifest; thread-safe.
[[nodiscard]] const OrbitSpec& benchmark_spec(const Benchmark& b);

// Solves one view of a loaded benchmark with the benchmark's own spec.
[[nodiscard]] SolveResult solve_view(const Benchmark& b, const View& v);

}  // namespace numcheck::orbit
