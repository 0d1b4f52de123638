#pragma once
// The orbit benchmark's templates as data: a spec file (data/orbit/default_spec.json by default,
// format in docs/orbit.md) names each template's program, parameter domains, canonical unit,
// prompt skeleton, two paraphrase skeletons, the views it supports with their quotas, and the
// consensus (H3) subset. Loading checks everything generation and the reference solver rely on
// and throws Error naming the file, the template, the field and (where it can) the line.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/json.hpp"
#include "num/rational.hpp"
#include "num/units.hpp"
#include "orbit/expr.hpp"

namespace numcheck::orbit {

// Where a parameter's values come from. Every value is an exact rational.
struct Domain {
  enum class Kind : std::uint8_t {
    kGrid,    // min + k * step for k = 0, 1, ... while <= max; optionally without integers
    kSet,     // an explicit list of values
    kScaled,  // m * 10^e for integers m in [mantissa_min, mantissa_max], e in [exponent_min, exponent_max]
  };
  Kind kind = Kind::kGrid;
  num::Rational min, max, step;       // kGrid
  bool integers = true;               // kGrid: false rejects integer values (for fraction views)
  std::vector<num::Rational> values;  // kSet
  std::int64_t mantissa_min = 0, mantissa_max = 0, exponent_min = 0, exponent_max = 0;  // kScaled
  // Number of grid points / set values / (mantissa, exponent) pairs (an upper bound on distinct values).
  std::uint64_t size = 0;
};

struct ParamSpec {
  std::string name;
  std::string unit;  // registered unit id of the quantity ("L"), "" for a pure number (a count, a fraction)
  Domain domain;
};

// One transformed view a template supports.
struct ViewSpec {
  std::string family;               // "fraction", "scientific", "percent", "words", "unit"
  std::size_t quota = 0;            // number of bases that get this view
  std::vector<std::string> params;  // parameters the view rewrites
  std::string unit;                 // "unit" family: the sub-unit the params are restated in ("mL")
};

// A prompt skeleton: literal text with one {name} placeholder per parameter.
struct Skeleton {
  std::string text;
  // Pieces: text[i] then the value of params[i]; the last text piece has no parameter after it.
  std::vector<std::string> pieces;
  std::vector<std::size_t> order;  // parameter indexes in order of appearance
};

struct TemplateSpec {
  std::string id;    // "CV"
  std::string name;  // "Combined Volume"
  std::string program_text;
  Expr program;
  std::vector<std::string> constraint_texts;
  std::vector<Constraint> constraints;
  bool answer_finite_decimal = false;  // reject draws whose answer has no finite decimal
  std::string canonical_unit;          // "L"
  std::string dimension;               // from the unit registry: "volume"
  std::size_t bases = 0;
  std::vector<ParamSpec> params;
  std::vector<ViewSpec> views;  // in family order (kFamilies)
  std::size_t consensus_bases = 0;
  std::vector<std::string> consensus_views;  // families the first consensus_bases bases must have
  Skeleton prompt;
  Skeleton paraphrases[2];

  [[nodiscard]] const ViewSpec* view(std::string_view family) const;
  [[nodiscard]] std::optional<std::size_t> param_index(std::string_view name) const;
  // The skeleton a view is rendered from: paraphrase1/2 use their own, every other view the prompt.
  [[nodiscard]] const Skeleton& skeleton(std::string_view view) const;
};

struct OrbitSpec {
  std::string name;                                            // file name or "default"
  std::string prompt_version;                                  // "p1"
  std::string instruction;                                     // the line every prompt ends with
  std::map<std::string, std::vector<std::string>> unit_words;  // unit id -> {singular, plural}
  std::vector<TemplateSpec> templates;
  std::string canonical_json;  // the spec as compact JSON with sorted keys (what spec_sha256 hashes)
  std::string sha256;          // SHA-256 of canonical_json

  [[nodiscard]] const TemplateSpec* find(std::string_view template_id) const;
  // The unit word for a value: singular when the value is exactly 1, plural otherwise.
  [[nodiscard]] const std::string& unit_word(const std::string& unit, const num::Rational& value) const;
};

// Parses a spec from JSON text; `where` names the source in errors ("default_spec.json").
[[nodiscard]] OrbitSpec parse_spec(std::string_view text, std::string_view where,
                                   const num::UnitRegistry& units = num::UnitRegistry::builtin());
[[nodiscard]] OrbitSpec load_spec(const std::filesystem::path& path,
                                  const num::UnitRegistry& units = num::UnitRegistry::builtin());
// data/orbit/default_spec.json (loaded once).
[[nodiscard]] const OrbitSpec& default_spec();
[[nodiscard]] std::filesystem::path default_spec_path();

}  // namespace numcheck::orbit
