#pragma once
// Units: a registry loaded from a data file (data/units.json by default). Each unit has a
// dimension, symbols (matched case-sensitively: "L", "mL", "km/h"), word forms (matched
// case-insensitively, singular and plural, British spellings: "litres", "kilometres per hour"),
// and an exact rational factor to its dimension's canonical unit. Conversion is exact.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "num/rational.hpp"

namespace numcheck::num {

struct Unit {
  std::string id;         // stable id, e.g. "mL", "km/h", "USD"
  std::string dimension;  // e.g. "volume", "length", "speed", "mass", "time", "currency:USD", "dimensionless"
  Rational factor;        // value in this unit * factor = value in the dimension's canonical unit
  std::vector<std::string> symbols;  // case-sensitive
  std::vector<std::string> words;    // case-insensitive; singular and plural forms
  bool prefix = false;               // written before the number ("$5"), for currency symbols
  // k when factor == 10^k exactly (set by the registry when it loads): conversions between such
  // units scale a fixed-width number's exponent instead of multiplying Rationals.
  std::optional<int> factor_exp10;
};

class UnitRegistry {
 public:
  // Loads a registry; throws Error naming the file and the field at fault.
  [[nodiscard]] static UnitRegistry load(const std::filesystem::path& path);
  // Parses registry JSON text; `where` (a file name) prefixes every error message.
  [[nodiscard]] static UnitRegistry parse(std::string_view json_text, std::string_view where);
  // The registry shipped in data/units.json (loaded once, thread-safe).
  [[nodiscard]] static const UnitRegistry& builtin();

  [[nodiscard]] const Unit* by_id(std::string_view id) const;
  // Looks a unit name up as written: symbols exactly, words case-insensitively, with inner runs of
  // whitespace folded. Returns nullptr when unknown.
  [[nodiscard]] const Unit* lookup(std::string_view written) const;
  [[nodiscard]] const std::vector<Unit>& units() const noexcept { return units_; }
  // Canonical unit id of a dimension ("volume" -> "L").
  [[nodiscard]] const Unit* canonical(std::string_view dimension) const;

  // Exact conversion of v from unit `from` to unit `to`; nullopt when the dimensions differ.
  [[nodiscard]] static std::optional<Rational> convert(const Rational& v, const Unit& from, const Unit& to);
  // v in `from` expressed in the canonical unit of its dimension (v * from.factor).
  [[nodiscard]] static Rational to_canonical(const Rational& v, const Unit& from) { return v * from.factor; }

 private:
  std::vector<Unit> units_;
  // Lookup indexes (implementation detail).
  std::vector<std::pair<std::string, std::size_t>> id_index_;
  std::vector<std::pair<std::string, std::size_t>> symbol_index_;
  std::vector<std::pair<std::string, std::size_t>> word_index_;
  std::vector<std::pair<std::string, std::size_t>> canonical_index_;
  // Hash indexes of the above for the grader's per-answer lookups (name -> index in units_).
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  using NameMap = std::unordered_map<std::string, std::size_t, NameHash, std::equal_to<>>;
  NameMap id_map_;
  NameMap symbol_map_;
  NameMap word_map_;
};

}  // namespace numcheck::num
