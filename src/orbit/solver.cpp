#include "orbit/solver.hpp"

#include <map>
#include <memory>
#include <mutex>

#include "core/ascii.hpp"
#include "core/error.hpp"
#include "io/json.hpp"
#include "num/read.hpp"

namespace numcheck::orbit {

namespace {

// Letters and '/' (unit words such as "km/h"); not ascii::is_word, which has digits and '_'.
bool is_unit_char(char c) { return ascii::is_alpha(c) || c == '/'; }

// The unit written right after a quantity: the longest run of up to four space-separated words
// (letters and '/') the registry knows, e.g. "kilometers per hour" before "kilometers".
const num::Unit* unit_after(std::string_view text, std::size_t pos, const num::UnitRegistry& units,
                            std::string_view& written) {
  while (pos < text.size() && text[pos] == ' ') ++pos;
  std::vector<std::size_t> ends;
  std::size_t p = pos;
  while (ends.size() < 4 && p < text.size() && is_unit_char(text[p])) {
    while (p < text.size() && is_unit_char(text[p])) ++p;
    ends.push_back(p);
    if (p + 1 < text.size() && text[p] == ' ' && is_unit_char(text[p + 1])) {
      ++p;
    } else {
      break;
    }
  }
  for (auto it = ends.rbegin(); it != ends.rend(); ++it) {
    const std::string_view cand = text.substr(pos, *it - pos);
    if (const num::Unit* u = units.lookup(cand)) {
      written = cand;
      return u;
    }
  }
  return nullptr;
}

SolveResult failure(std::string why) { return SolveResult{std::nullopt, std::move(why)}; }

}  // namespace

SolveResult solve_prompt(const TemplateSpec& t, std::string_view view, std::string_view prompt_text,
                         std::string_view instruction, const num::UnitRegistry& units) {
  // The instruction line is part of the contract, not of the problem: it must be there, last.
  const std::string tail = "\n" + std::string(instruction);
  if (prompt_text.size() < tail.size() || prompt_text.substr(prompt_text.size() - tail.size()) != tail)
    return failure("the prompt does not end with the instruction line");
  const std::string_view body = prompt_text.substr(0, prompt_text.size() - tail.size());

  const Skeleton& sk = t.skeleton(view);
  const auto found = num::find_numbers(body, num::FormSet::all(), 64);
  if (found.size() != sk.order.size()) {
    std::string list;
    for (const auto& m : found) {
      if (!list.empty()) list += ", ";
      list += "'" + std::string(body.substr(m.begin, m.end - m.begin)) + "'";
    }
    return failure(fmt::format("found {} quantities ({}) where template {} needs {}", found.size(),
                               list.empty() ? "none" : list, t.id, sk.order.size()));
  }
  std::vector<num::Rational> values(t.params.size());
  for (std::size_t i = 0; i < found.size(); ++i) {
    const ParamSpec& p = t.params[sk.order[i]];
    const std::string_view written = body.substr(found[i].begin, found[i].end - found[i].begin);
    num::Rational v = found[i].value;
    if (!p.unit.empty()) {
      std::string_view unit_text;
      const num::Unit* u = unit_after(body, found[i].end, units, unit_text);
      if (!u) return failure(fmt::format("no known unit after the quantity '{}' ({})", written, p.name));
      const num::Unit* target = units.by_id(p.unit);
      if (!target) return failure(fmt::format("parameter {} has an unregistered unit '{}'", p.name, p.unit));
      auto converted = num::UnitRegistry::convert(v, *u, *target);
      if (!converted)
        return failure(fmt::format("the unit '{}' after '{}' is a {}, but {} is a {}", unit_text, written,
                                   u->dimension, p.name, target->dimension));
      v = *converted;
    }
    values[sk.order[i]] = v;
  }
  auto answer = t.program.eval(values);
  if (!answer) return failure("the program divides by zero");
  return SolveResult{std::move(answer), ""};
}

const OrbitSpec& benchmark_spec(const Benchmark& b) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<OrbitSpec>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(b.manifest_json);
  if (it != cache.end()) return *it->second;
  const std::string where = (b.dir / "manifest.json").string();
  const io::Json m = io::parse_json(b.manifest_json, where);
  std::unique_ptr<OrbitSpec> spec;
  if (auto s = m.find("spec"); s != m.end() && s->is_object()) {
    spec = std::make_unique<OrbitSpec>(parse_spec(io::to_line(*s), where + " (field 'spec')"));
  } else {
    spec = std::make_unique<OrbitSpec>(default_spec());
  }
  return *cache.emplace(b.manifest_json, std::move(spec)).first->second;
}

SolveResult solve_view(const Benchmark& b, const View& v) {
  const OrbitSpec& spec = benchmark_spec(b);
  const TemplateSpec* t = spec.find(v.template_id);
  if (!t) return failure(fmt::format("template '{}' is not in the benchmark's spec", v.template_id));
  return solve_prompt(*t, v.view, v.prompt, spec.instruction);
}

}  // namespace numcheck::orbit
