#include "orbit/render.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "num/read.hpp"
#include "num/write.hpp"

namespace numcheck::orbit {

namespace {

using num::NumberForm;

// Digits as the canonical view writes them: an integer or a finite decimal, grouped by thousands.
std::optional<std::string> canonical_number(const num::Rational& v) {
  num::WriteOptions o;
  o.group_thousands = true;
  return num::write_number(v, v.is_integer() ? NumberForm::kInteger : NumberForm::kDecimal, o);
}

bool in_list(const std::vector<std::string>& l, std::string_view s) {
  return std::find(l.begin(), l.end(), s) != l.end();
}

}  // namespace

std::string render_quantity(const OrbitSpec& spec, const TemplateSpec& t, std::size_t param,
                            const num::Rational& value, std::string_view view,
                            const num::UnitRegistry& units) {
  const ParamSpec& p = t.params.at(param);
  const ViewSpec* vs = t.view(view);
  const bool rewritten = vs && in_list(vs->params, p.name);
  num::Rational shown = value;
  std::string unit = p.unit;
  std::optional<std::string> text;
  const std::string family = rewritten ? vs->family : std::string("canonical");
  if (!rewritten) {
    text = canonical_number(shown);
  } else if (family == "fraction") {
    text = num::write_number(shown, NumberForm::kFraction);
  } else if (family == "scientific") {
    if (shown.is_integer()) text = num::write_number(shown, NumberForm::kTimesTen);
  } else if (family == "percent") {
    text = num::write_number(shown, NumberForm::kPercent);
  } else if (family == "words") {
    if (shown.is_integer()) text = num::write_number(shown, NumberForm::kWords);
  } else if (family == "unit") {
    const num::Unit* from = units.by_id(p.unit);
    const num::Unit* to = units.by_id(vs->unit);
    if (!from || !to) fail("template {}, view unit: unit {} or {} is not registered", t.id, p.unit, vs->unit);
    auto converted = num::UnitRegistry::convert(shown, *from, *to);
    if (!converted) fail("template {}, view unit: cannot convert {} to {}", t.id, p.unit, vs->unit);
    shown = *converted;
    unit = vs->unit;
    text = canonical_number(shown);
  }
  if (!text)
    fail(
        "template {}, view {}, parameter {}: the value {} has no exact {} form; adjust the parameter's "
        "domain",
        t.id, view, p.name, value.str(), family);
  if (unit.empty()) return *text;
  return *text + " " + spec.unit_word(unit, shown);
}

void render_prompt_into(std::string& out, const OrbitSpec& spec, const TemplateSpec& t, std::string_view view,
                        const std::vector<num::Rational>& values, const std::vector<std::string>* canonical,
                        const num::UnitRegistry& units) {
  const Skeleton& sk = t.skeleton(view);
  const ViewSpec* vs = t.view(view);
  for (std::size_t i = 0; i < sk.order.size(); ++i) {
    out += sk.pieces[i];
    const std::size_t p = sk.order[i];
    if (canonical && !(vs && in_list(vs->params, t.params[p].name))) {
      out += canonical->at(p);
    } else {
      out += render_quantity(spec, t, p, values.at(p), view, units);
    }
  }
  out += sk.pieces.back();
  out += '\n';
  out += spec.instruction;
}

std::string render_prompt(const OrbitSpec& spec, const TemplateSpec& t, std::string_view view,
                          const std::vector<num::Rational>& values, const num::UnitRegistry& units) {
  std::string out;
  render_prompt_into(out, spec, t, view, values, nullptr, units);
  return out;
}

}  // namespace numcheck::orbit
