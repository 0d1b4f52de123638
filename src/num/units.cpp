#include "num/units.hpp"

#include <algorithm>
#include <set>

#include "core/ascii.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "io/json.hpp"

namespace numcheck::num {

namespace {

using ascii::is_space;
using ascii::trim;

// Word key: ASCII lower case, outer whitespace removed, inner whitespace runs folded to one space.
std::string word_key(std::string_view s) {
  s = trim(s);
  std::string out;
  out.reserve(s.size());
  bool in_space = false;
  for (char c : s) {
    if (is_space(c)) {
      in_space = true;
      continue;
    }
    if (in_space) out.push_back(' ');
    in_space = false;
    out.push_back(ascii::to_lower(c));
  }
  return out;
}

const Unit* find_in(const std::vector<std::pair<std::string, std::size_t>>& index,
                    const std::vector<Unit>& units, std::string_view key) {
  auto it = std::lower_bound(index.begin(), index.end(), key,
                             [](const auto& e, std::string_view k) { return std::string_view(e.first) < k; });
  if (it == index.end() || it->first != key) return nullptr;
  return &units[it->second];
}

std::vector<std::string> string_list(const io::Json& obj, std::string_view key, const std::string& where) {
  std::vector<std::string> out =
      io::Record::of(obj, where).opt_strings(key).value_or(std::vector<std::string>{});
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (trim(out[i]).empty()) fail("{}.{}[{}]: must not be empty", where, key, i);
  }
  return out;
}

// k when r == 10^k (|k| <= 30), read off its canonical text "1000" or "1/1000".
std::optional<int> power_of_ten_exponent(const Rational& r) {
  const std::string s = r.str();
  const bool inverse = s.rfind("1/", 0) == 0;
  const std::string_view digits = inverse ? std::string_view(s).substr(2) : std::string_view(s);
  if (digits.empty() || digits.size() > 31 || digits[0] != '1') return std::nullopt;
  if (digits.find_first_not_of('0', 1) != std::string_view::npos) return std::nullopt;
  const int k = static_cast<int>(digits.size()) - 1;
  return inverse ? -k : k;
}

// One entry of the registry's "units" list ("where" names it); its dimension must be declared.
Unit read_unit(const io::Json& j, const std::string& where,
               const std::vector<std::pair<std::string, std::string>>& dim_canon) {
  Unit u;
  u.id = io::require_string(j, "id", where);
  if (trim(u.id).empty()) fail("{}.id: must not be empty", where);
  const std::string uw = fmt::format("{} ('{}')", where, u.id);
  u.dimension = io::require_string(j, "dimension", uw);
  if (std::none_of(dim_canon.begin(), dim_canon.end(),
                   [&](const auto& d) { return d.first == u.dimension; })) {
    fail("{}.dimension: '{}' is not declared in 'dimensions'", uw, u.dimension);
  }
  const io::Json& factor = io::require(j, "factor", uw);
  if (!factor.is_string()) fail("{}.factor: must be a string such as \"1/1000\" (exact rational)", uw);
  auto f = Rational::from_string(factor.get<std::string>());
  if (!f)
    fail("{}.factor: '{}' is not an exact rational (expected an integer or p/q)", uw,
         factor.get<std::string>());
  if (f->sign() <= 0) fail("{}.factor: '{}' must be positive", uw, factor.get<std::string>());
  u.factor = *f;
  u.factor_exp10 = power_of_ten_exponent(u.factor);
  u.symbols = string_list(j, "symbols", uw);
  u.words = string_list(j, "words", uw);
  if (auto p = j.find("prefix"); p != j.end()) {
    if (!p->is_boolean()) fail("{}.prefix: must be true or false", uw);
    u.prefix = p->get<bool>();
  }
  return u;
}

}  // namespace

UnitRegistry UnitRegistry::parse(std::string_view json_text, std::string_view where_sv) {
  const std::string file(where_sv);
  const io::Json doc = io::parse_json(json_text, file);
  if (!doc.is_object()) fail("{}: expected a JSON object at the top level", file);
  if (auto f = doc.find("format");
      f != doc.end() && (!f->is_string() || f->get<std::string>() != "numcheck-units")) {
    fail("{}: field 'format' must be \"numcheck-units\"", file);
  }

  // Dimensions and their canonical unit ids.
  const io::Json& dims = io::require(doc, "dimensions", file);
  if (!dims.is_array() || dims.empty()) fail("{}: field 'dimensions' must be a non-empty array", file);
  std::vector<std::pair<std::string, std::string>> dim_canon;  // dimension -> canonical unit id
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::string where = fmt::format("{}: dimensions[{}]", file, i);
    const std::string name = io::require_string(dims[i], "name", where);
    const std::string canon = io::require_string(dims[i], "canonical", where);
    if (trim(name).empty()) fail("{}.name: must not be empty", where);
    for (const auto& [n, c] : dim_canon) {
      if (n == name) fail("{}.name: dimension '{}' is declared twice", where, name);
    }
    dim_canon.emplace_back(name, canon);
  }

  UnitRegistry reg;
  const io::Json& units = io::require(doc, "units", file);
  if (!units.is_array() || units.empty()) fail("{}: field 'units' must be a non-empty array", file);
  for (std::size_t i = 0; i < units.size(); ++i) {
    const std::string where = fmt::format("{}: units[{}]", file, i);
    Unit u = read_unit(units[i], where, dim_canon);
    for (const auto& other : reg.units_) {
      if (other.id == u.id) fail("{}.id: unit '{}' is declared twice", where, u.id);
    }
    reg.units_.push_back(std::move(u));
  }

  // Indexes; a name may belong to one unit only.
  for (std::size_t i = 0; i < reg.units_.size(); ++i) {
    const Unit& u = reg.units_[i];
    reg.id_index_.emplace_back(u.id, i);
    for (std::size_t k = 0; k < u.symbols.size(); ++k) reg.symbol_index_.emplace_back(u.symbols[k], i);
    for (std::size_t k = 0; k < u.words.size(); ++k) reg.word_index_.emplace_back(word_key(u.words[k]), i);
  }
  auto check_unique = [&](std::vector<std::pair<std::string, std::size_t>>& idx, std::string_view field) {
    std::sort(idx.begin(), idx.end());
    for (std::size_t k = 1; k < idx.size(); ++k) {
      if (idx[k].first == idx[k - 1].first && idx[k].second != idx[k - 1].second) {
        fail("{}: units[{}] ('{}').{}: '{}' is already used by unit '{}'", file, idx[k].second,
             reg.units_[idx[k].second].id, field, idx[k].first, reg.units_[idx[k - 1].second].id);
      }
    }
    idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
  };
  check_unique(reg.symbol_index_, "symbols");
  check_unique(reg.word_index_, "words");

  for (std::size_t i = 0; i < dim_canon.size(); ++i) {
    const std::string& name = dim_canon[i].first;
    const std::string& canon = dim_canon[i].second;
    auto it =
        std::find_if(reg.units_.begin(), reg.units_.end(), [&](const Unit& u) { return u.id == canon; });
    if (it == reg.units_.end())
      fail("{}: dimensions[{}].canonical: unit '{}' is not declared", file, i, canon);
    if (it->dimension != name) {
      fail("{}: dimensions[{}].canonical: unit '{}' has dimension '{}', not '{}'", file, i, canon,
           it->dimension, name);
    }
    if (it->factor != Rational(1)) {
      fail("{}: dimensions[{}].canonical: unit '{}' must have factor \"1\"", file, i, canon);
    }
    reg.canonical_index_.emplace_back(name, static_cast<std::size_t>(it - reg.units_.begin()));
  }
  std::sort(reg.canonical_index_.begin(), reg.canonical_index_.end());
  std::sort(reg.id_index_.begin(), reg.id_index_.end());
  for (const auto& [name, i] : reg.id_index_) reg.id_map_.emplace(name, i);
  for (const auto& [name, i] : reg.symbol_index_) reg.symbol_map_.emplace(name, i);
  for (const auto& [name, i] : reg.word_index_) reg.word_map_.emplace(name, i);
  return reg;
}

UnitRegistry UnitRegistry::load(const std::filesystem::path& path) {
  return parse(io::read_file(path, std::size_t{64} << 20), path.string());
}

const UnitRegistry& UnitRegistry::builtin() {
  static const UnitRegistry reg = load(io::data_path("units.json"));
  return reg;
}

const Unit* UnitRegistry::by_id(std::string_view id) const {
  const auto it = id_map_.find(id);
  return it == id_map_.end() ? nullptr : &units_[it->second];
}

const Unit* UnitRegistry::lookup(std::string_view written) const {
  written = trim(written);
  if (written.empty()) return nullptr;
  if (const auto it = symbol_map_.find(written); it != symbol_map_.end()) return &units_[it->second];
  if (written.size() > 256) return nullptr;  // no unit name is that long; keeps hostile input cheap
  // Most written words are their own key (lower case, no blanks): no copy then.
  const bool is_key = std::none_of(written.begin(), written.end(),
                                   [](char c) { return is_space(c) || (c >= 'A' && c <= 'Z'); });
  const auto it = is_key ? word_map_.find(written) : word_map_.find(word_key(written));
  return it == word_map_.end() ? nullptr : &units_[it->second];
}

const Unit* UnitRegistry::canonical(std::string_view dimension) const {
  return find_in(canonical_index_, units_, dimension);
}

std::optional<Rational> UnitRegistry::convert(const Rational& v, const Unit& from, const Unit& to) {
  if (from.dimension != to.dimension) return std::nullopt;
  return v * from.factor / to.factor;
}

}  // namespace numcheck::num
