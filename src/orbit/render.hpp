#pragma once
// The renderer: writes one view of a base as a prompt, per the exactness rules of
// docs/orbit.md. Canonical numbers are digits (thousands grouped with commas, finite decimals);
// the fraction view writes its parameters as p/q in lowest terms, the scientific view as
// "m × 10^k" (integers only, minimal mantissa), the percent view as "75%", the words view in
// English words, and the unit view restates quantities in a registered sub-unit by its exact factor.
// `numcheck orbit validate` reads every prompt back with the reference solver.
#include <string>
#include <string_view>
#include <vector>

#include "num/rational.hpp"
#include "num/units.hpp"
#include "orbit/spec.hpp"

namespace numcheck::orbit {

// One parameter's value as written in `view` ("canonical", a family, "paraphrase1/2"), with its
// unit word when it has a unit. Throws Error naming template, view and parameter when the value has
// no exact written form in that view (e.g. 1/3 in the canonical view).
[[nodiscard]] std::string render_quantity(const OrbitSpec& spec, const TemplateSpec& t, std::size_t param,
                                          const num::Rational& value, std::string_view view,
                                          const num::UnitRegistry& units);

// The whole prompt: the view's skeleton with every placeholder filled, a newline, and the spec's
// instruction line.
[[nodiscard]] std::string render_prompt(const OrbitSpec& spec, const TemplateSpec& t, std::string_view view,
                                        const std::vector<num::Rational>& values,
                                        const num::UnitRegistry& units);

// Appends the prompt to `out`. `canonical` may hold the canonical rendering of every parameter
// (render_quantity(..., "canonical")) to reuse for parameters the view does not rewrite.
void render_prompt_into(std::string& out, const OrbitSpec& spec, const TemplateSpec& t, std::string_view view,
                        const std::vector<num::Rational>& values, const std::vector<std::string>* canonical,
                        const num::UnitRegistry& units);

}  // namespace numcheck::orbit
