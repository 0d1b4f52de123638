#include "orbit/spec.hpp"

#include <algorithm>
#include <mutex>
#include <set>

#include "core/ascii.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"
#include "num/read.hpp"
#include "orbit/benchmark.hpp"

namespace numcheck::orbit {

namespace {

using Json = io::Json;

constexpr std::size_t kMaxBasesPerTemplate = 10'000'000;
constexpr std::uint64_t kMaxDomainSize = std::uint64_t{1} << 62;

// Error context: the source name, the raw text (for line numbers) and the current template.
class Ctx {
 public:
  Ctx(std::string_view where, std::string_view text) : where_(where), text_(text) {}

  void enter_template(std::string id, std::size_t index) {
    template_id_ = std::move(id);
    template_index_ = index;
    template_pos_ = std::string_view::npos;
    if (!template_id_.empty()) {
      // The line of the template: the first `"id": "<id>"` in the text.
      const std::string needle = "\"" + template_id_ + "\"";
      for (std::size_t p = text_.find(needle); p != std::string_view::npos; p = text_.find(needle, p + 1)) {
        const std::size_t k = text_.rfind("\"id\"", p);
        if (k != std::string_view::npos && p - k < 16) {
          template_pos_ = k;
          break;
        }
      }
    }
  }

  // "<file>:<line>: template CV (templates[0]), field 'params[1].domain.step': <message>"
  template <typename... Args>
  [[noreturn]] void error(std::string_view field, fmt::format_string<Args...> f, Args&&... args) const {
    const std::string msg = fmt::format(f, std::forward<Args>(args)...);
    std::string loc(where_);
    const std::size_t line = line_of(field);
    if (line > 0) loc += fmt::format(":{}", line);
    if (template_index_ != std::string::npos) {
      fail("{}: template {}(templates[{}]), field '{}': {}", loc,
           template_id_.empty() ? "" : template_id_ + " ", template_index_, field, msg);
    }
    fail("{}: field '{}': {}", loc, field, msg);
  }

 private:
  // Line of the field's last path component after the template's position (0 when not found).
  std::size_t line_of(std::string_view field) const {
    std::string_view key = field;
    if (auto dot = key.rfind('.'); dot != std::string_view::npos) key = key.substr(dot + 1);
    if (auto br = key.find('['); br != std::string_view::npos) key = key.substr(0, br);
    const std::size_t from = template_pos_ == std::string_view::npos ? 0 : template_pos_;
    std::size_t pos = key.empty() ? std::string_view::npos : text_.find("\"" + std::string(key) + "\"", from);
    if (pos == std::string_view::npos) pos = template_pos_;
    if (pos == std::string_view::npos) return 0;
    return static_cast<std::size_t>(
               std::count(text_.begin(), text_.begin() + static_cast<std::ptrdiff_t>(pos), '\n')) +
           1;
  }

  std::string_view where_;
  std::string_view text_;
  std::string template_id_;
  std::size_t template_index_ = std::string::npos;
  std::size_t template_pos_ = std::string_view::npos;
};

const Json& field(const Ctx& c, const Json& obj, const std::string& prefix, std::string_view key) {
  auto it = obj.find(key);
  if (it == obj.end()) c.error(prefix + std::string(key), "missing");
  return *it;
}

std::string get_string(const Ctx& c, const Json& obj, const std::string& prefix, std::string_view key,
                       bool allow_empty = false) {
  const Json& v = field(c, obj, prefix, key);
  if (!v.is_string()) c.error(prefix + std::string(key), "must be a string");
  std::string s = v.get<std::string>();
  if (!allow_empty && s.empty()) c.error(prefix + std::string(key), "must not be empty");
  return s;
}

std::int64_t get_int(const Ctx& c, const Json& obj, const std::string& prefix, std::string_view key,
                     std::int64_t lo, std::int64_t hi) {
  const Json& v = field(c, obj, prefix, key);
  if (!v.is_number_integer()) c.error(prefix + std::string(key), "must be an integer");
  const std::int64_t x = v.get<std::int64_t>();
  if (x < lo || x > hi) c.error(prefix + std::string(key), "must be between {} and {}, got {}", lo, hi, x);
  return x;
}

// A rational written as a string: "0.05", "3/4", "12".
num::Rational get_rational(const Ctx& c, const Json& v, const std::string& name) {
  if (!v.is_string()) c.error(name, "must be a string holding an exact number (\"0.05\", \"3/4\", \"12\")");
  const std::string s = v.get<std::string>();
  if (auto r = num::Rational::from_string(s)) return *r;
  const auto rr = num::read_number(
      s, num::FormSet{num::NumberForm::kInteger, num::NumberForm::kDecimal, num::NumberForm::kFraction});
  if (!rr) c.error(name, "'{}' is not an exact number (use \"0.05\", \"3/4\" or \"12\")", s);
  return rr.match->value;
}

std::vector<std::string> get_string_list(const Ctx& c, const Json& obj, const std::string& prefix,
                                         std::string_view key) {
  const Json& v = field(c, obj, prefix, key);
  const std::string name = prefix + std::string(key);
  if (!v.is_array()) c.error(name, "must be a list of strings");
  std::vector<std::string> out;
  for (const auto& e : v) {
    if (!e.is_string()) c.error(name, "must be a list of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

Domain parse_domain(const Ctx& c, const Json& d, const std::string& prefix) {
  if (!d.is_object()) c.error(prefix.substr(0, prefix.size() - 1), "must be an object");
  Domain dom;
  const std::string type = get_string(c, d, prefix, "type");
  if (type == "grid") {
    dom.kind = Domain::Kind::kGrid;
    dom.min = get_rational(c, field(c, d, prefix, "min"), prefix + "min");
    dom.max = get_rational(c, field(c, d, prefix, "max"), prefix + "max");
    dom.step = get_rational(c, field(c, d, prefix, "step"), prefix + "step");
    if (auto it = d.find("integers"); it != d.end()) {
      if (!it->is_boolean()) c.error(prefix + "integers", "must be true or false");
      dom.integers = it->get<bool>();
    }
    if (dom.step.sign() <= 0) c.error(prefix + "step", "must be positive");
    if (!dom.min.has_finite_decimal() || !dom.step.has_finite_decimal())
      c.error(prefix + "step",
              "min and step must be finite decimals, so that every value has an exact decimal form");
    if (dom.max < dom.min) c.error(prefix + "max", "must not be below min");
    const num::Rational n = (dom.max - dom.min) / dom.step;
    if (!n.is_integer()) c.error(prefix + "step", "(max - min) must be a whole number of steps");
    const mpz_class count = n.numerator() + 1;
    if (count > mpz_class(static_cast<unsigned long>(kMaxDomainSize)))
      c.error(prefix + "step", "the grid has too many points");
    dom.size = count.get_ui();
  } else if (type == "set") {
    dom.kind = Domain::Kind::kSet;
    const Json& vals = field(c, d, prefix, "values");
    if (!vals.is_array() || vals.empty()) c.error(prefix + "values", "must be a non-empty list of numbers");
    std::set<num::Rational> seen;
    for (std::size_t i = 0; i < vals.size(); ++i) {
      const auto v = get_rational(c, vals[i], fmt::format("{}values[{}]", prefix, i));
      if (!seen.insert(v).second)
        c.error(fmt::format("{}values[{}]", prefix, i), "duplicate value {}", v.str());
      if (!v.has_finite_decimal())
        c.error(fmt::format("{}values[{}]", prefix, i), "{} has no exact decimal form", v.str());
      dom.values.push_back(v);
    }
    dom.size = dom.values.size();
  } else if (type == "scaled") {
    dom.kind = Domain::Kind::kScaled;
    dom.mantissa_min = get_int(c, d, prefix, "mantissa_min", 1, 999'999'999'999);
    dom.mantissa_max = get_int(c, d, prefix, "mantissa_max", dom.mantissa_min, 999'999'999'999);
    dom.exponent_min = get_int(c, d, prefix, "exponent_min", 0, 30);
    dom.exponent_max = get_int(c, d, prefix, "exponent_max", dom.exponent_min, 30);
    dom.size = static_cast<std::uint64_t>(dom.mantissa_max - dom.mantissa_min + 1) *
               static_cast<std::uint64_t>(dom.exponent_max - dom.exponent_min + 1);
  } else {
    c.error(prefix + "type", "must be \"grid\", \"set\" or \"scaled\", got \"{}\"", type);
  }
  return dom;
}

// Whether some value of the domain may be an integer (a grid without "integers": false, a set with
// an integer, any scaled domain).
bool domain_may_be_integer(const Domain& d) {
  switch (d.kind) {
    case Domain::Kind::kGrid:
      return d.integers;
    case Domain::Kind::kSet:
      return std::any_of(d.values.begin(), d.values.end(),
                         [](const num::Rational& v) { return v.is_integer(); });
    case Domain::Kind::kScaled:
      return true;
  }
  return true;
}

bool domain_all_integers(const Domain& d) {
  switch (d.kind) {
    case Domain::Kind::kGrid:
      return d.integers && d.min.is_integer() && d.step.is_integer();
    case Domain::Kind::kSet:
      return std::all_of(d.values.begin(), d.values.end(),
                         [](const num::Rational& v) { return v.is_integer(); });
    case Domain::Kind::kScaled:
      return true;
  }
  return false;
}

Skeleton parse_skeleton(const Ctx& c, const std::string& text, const std::string& name,
                        const std::vector<ParamSpec>& params) {
  Skeleton s;
  s.text = text;
  std::string piece;
  std::vector<int> used(params.size(), 0);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch == '}') c.error(name, "unmatched '}}' at character {}", i + 1);
    if (ch == '\n' || ch == '\r') c.error(name, "must be one line (the instruction line is added after it)");
    if (ch != '{') {
      piece.push_back(ch);
      continue;
    }
    const std::size_t close = text.find('}', i);
    if (close == std::string::npos) c.error(name, "unmatched '{{' at character {}", i + 1);
    const std::string pname = text.substr(i + 1, close - i - 1);
    auto it = std::find_if(params.begin(), params.end(), [&](const ParamSpec& p) { return p.name == pname; });
    if (it == params.end()) c.error(name, "placeholder {{{}}} names no parameter", pname);
    const auto idx = static_cast<std::size_t>(it - params.begin());
    if (++used[idx] > 1) c.error(name, "placeholder {{{}}} appears more than once", pname);
    s.pieces.push_back(piece);
    piece.clear();
    s.order.push_back(idx);
    i = close;
  }
  s.pieces.push_back(piece);
  for (std::size_t k = 0; k < params.size(); ++k)
    if (!used[k]) c.error(name, "placeholder {{{}}} is missing", params[k].name);
  // The text around the placeholders must not itself read as a number, or the prompt would not
  // determine its label (the reference solver would see an extra quantity).
  for (const auto& p : s.pieces) {
    const auto found = num::find_numbers(p, num::FormSet::all(), 1);
    if (!found.empty())
      c.error(name,
              "the text \"{}\" reads as a number; skeleton text must not contain numbers or number words",
              p.substr(found[0].begin, found[0].end - found[0].begin));
  }
  return s;
}

constexpr const char* kViewFamilies[] = {"fraction", "scientific", "percent", "words", "unit"};

// The template's parameters; returns their names in order.
std::vector<std::string> parse_params(Ctx& c, const Json& t, TemplateSpec& ts, const OrbitSpec& spec,
                                      const num::UnitRegistry& units) {
  const Json& params = field(c, t, "", "params");
  if (!params.is_array() || params.empty()) c.error("params", "must be a non-empty list");
  std::vector<std::string> names;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::string prefix = fmt::format("params[{}].", i);
    const Json& p = params[i];
    if (!p.is_object()) c.error(prefix.substr(0, prefix.size() - 1), "must be an object");
    ParamSpec ps;
    ps.name = get_string(c, p, prefix, "name");
    if (!ascii::is_alpha(ps.name[0]) || ps.name == "answer" ||
        !std::all_of(ps.name.begin(), ps.name.end(), [](char ch) { return ascii::is_word(ch); }))
      c.error(prefix + "name", "\"{}\" must be a name (a letter, then letters, digits, '_'; not 'answer')",
              ps.name);
    if (std::find(names.begin(), names.end(), ps.name) != names.end())
      c.error(prefix + "name", "duplicate parameter \"{}\"", ps.name);
    ps.unit = get_string(c, p, prefix, "unit", true);
    if (!ps.unit.empty()) {
      if (!units.by_id(ps.unit)) c.error(prefix + "unit", "\"{}\" is not a registered unit id", ps.unit);
      if (!spec.unit_words.count(ps.unit))
        c.error(prefix + "unit", "\"{}\" has no entry in the spec's unit_words", ps.unit);
    }
    ps.domain = parse_domain(c, field(c, p, prefix, "domain"), prefix + "domain.");
    names.push_back(ps.name);
    ts.params.push_back(std::move(ps));
  }

  return names;
}

// The program and the constraints over the parameters (and "answer").
void parse_program(Ctx& c, const Json& t, TemplateSpec& ts, const std::vector<std::string>& names) {
  ts.program_text = get_string(c, t, "", "program");
  {
    const std::string where = fmt::format("template {}, field 'program'", ts.id);
    try {
      ts.program = Expr::parse(ts.program_text, names, where);
    } catch (const Error& e) {
      c.error("program", "{}", e.what());
    }
  }
  std::vector<std::string> cnames = names;
  cnames.push_back("answer");
  ts.constraint_texts = get_string_list(c, t, "", "constraints");
  for (std::size_t i = 0; i < ts.constraint_texts.size(); ++i) {
    try {
      ts.constraints.push_back(Constraint::parse(ts.constraint_texts[i], cnames, "constraint"));
    } catch (const Error& e) {
      c.error(fmt::format("constraints[{}]", i), "{}", e.what());
    }
  }
  if (auto it = t.find("answer_finite_decimal"); it != t.end()) {
    if (!it->is_boolean()) c.error("answer_finite_decimal", "must be true or false");
    ts.answer_finite_decimal = it->get<bool>();
  }
}

// One view family of the template ("views.<fam>."), checked against its parameters.
ViewSpec parse_view(Ctx& c, const Json& v, const char* fam, const std::string& prefix, const TemplateSpec& ts,
                    const OrbitSpec& spec, const num::UnitRegistry& units) {
  ViewSpec vs;
  vs.family = fam;
  vs.quota = static_cast<std::size_t>(get_int(c, v, prefix, "quota", 0, kMaxBasesPerTemplate));
  if (vs.quota > ts.bases)
    c.error(prefix + "quota", "{} exceeds the template's {} bases", vs.quota, ts.bases);
  vs.params = get_string_list(c, v, prefix, "params");
  if (vs.params.empty()) c.error(prefix + "params", "must name at least one parameter");
  for (const auto& pn : vs.params) {
    auto idx = ts.param_index(pn);
    if (!idx) c.error(prefix + "params", "\"{}\" is not a parameter", pn);
    const ParamSpec& ps = ts.params[*idx];
    const std::string fam_s = fam;
    if (fam_s == "fraction" && domain_may_be_integer(ps.domain))
      c.error(prefix + "params",
              "parameter \"{}\" can be an integer, which has no fraction form; use a grid with "
              "\"integers\": false",
              pn);
    if ((fam_s == "scientific" || fam_s == "words") && !domain_all_integers(ps.domain))
      c.error(prefix + "params", "parameter \"{}\" must take only integer values for the {} view", pn, fam_s);
    if (fam_s == "unit" && ps.unit.empty())
      c.error(prefix + "params", "parameter \"{}\" has no unit to restate", pn);
  }
  if (vs.family == "unit") {
    vs.unit = get_string(c, v, prefix, "unit");
    const num::Unit* u = units.by_id(vs.unit);
    if (!u) c.error(prefix + "unit", "\"{}\" is not a registered unit id", vs.unit);
    if (!spec.unit_words.count(vs.unit))
      c.error(prefix + "unit", "\"{}\" has no entry in the spec's unit_words", vs.unit);
    for (const auto& pn : vs.params) {
      const num::Unit* pu = units.by_id(ts.params[*ts.param_index(pn)].unit);
      if (pu->dimension != u->dimension)
        c.error(prefix + "unit", "\"{}\" ({}) cannot restate parameter \"{}\" ({})", vs.unit, u->dimension,
                pn, pu->dimension);
      if (pu->id == u->id) c.error(prefix + "unit", "parameter \"{}\" is already in \"{}\"", pn, vs.unit);
    }
  }
  return vs;
}

void parse_consensus(Ctx& c, const Json& t, TemplateSpec& ts) {
  const Json& cons = field(c, t, "", "consensus");
  if (!cons.is_object()) c.error("consensus", "must be an object {{\"bases\": N, \"views\": [...]}}");
  ts.consensus_bases =
      static_cast<std::size_t>(get_int(c, cons, "consensus.", "bases", 0, kMaxBasesPerTemplate));
  ts.consensus_views = get_string_list(c, cons, "consensus.", "views");
  for (const auto& f : ts.consensus_views) {
    const ViewSpec* v = ts.view(f);
    if (!v) c.error("consensus.views", "\"{}\" is not one of this template's views", f);
    if (v->quota < ts.consensus_bases)
      c.error("consensus.views", "view \"{}\" has quota {} < consensus bases {}", f, v->quota,
              ts.consensus_bases);
  }
  if (ts.consensus_bases > ts.bases) c.error("consensus.bases", "exceeds the template's {} bases", ts.bases);
}

TemplateSpec parse_template(Ctx& c, const Json& t, std::size_t index, const OrbitSpec& spec,
                            const num::UnitRegistry& units) {
  TemplateSpec ts;
  c.enter_template("", index);
  if (!t.is_object()) c.error("templates[" + std::to_string(index) + "]", "must be an object");
  ts.id = get_string(c, t, "", "id");
  c.enter_template(ts.id, index);
  for (char ch : ts.id)
    if (!ascii::is_word(ch))
      c.error("id", "must contain only letters, digits and '_' (it is part of base ids), got \"{}\"", ts.id);
  ts.name = get_string(c, t, "", "name");
  ts.canonical_unit = get_string(c, t, "", "canonical_unit");
  const num::Unit* cu = units.by_id(ts.canonical_unit);
  if (!cu) c.error("canonical_unit", "\"{}\" is not a registered unit id", ts.canonical_unit);
  ts.dimension = cu->dimension;
  if (!spec.unit_words.count(ts.canonical_unit))
    c.error("canonical_unit", "\"{}\" has no entry in the spec's unit_words", ts.canonical_unit);
  ts.bases = static_cast<std::size_t>(get_int(c, t, "", "bases", 1, kMaxBasesPerTemplate));

  const std::vector<std::string> names = parse_params(c, t, ts, spec, units);
  parse_program(c, t, ts, names);

  const Json& views = field(c, t, "", "views");
  if (!views.is_object()) c.error("views", "must be an object keyed by family");
  for (const auto& item : views.items()) {
    const std::string& fam = item.key();
    if (std::find_if(std::begin(kViewFamilies), std::end(kViewFamilies),
                     [&](const char* f) { return fam == f; }) == std::end(kViewFamilies))
      c.error("views." + fam, "unknown family (use fraction, scientific, percent, words, unit)");
  }
  for (const char* fam : kViewFamilies) {
    auto it = views.find(fam);
    if (it == views.end()) continue;
    const std::string prefix = fmt::format("views.{}.", fam);
    if (!it->is_object()) c.error(prefix.substr(0, prefix.size() - 1), "must be an object");
    ts.views.push_back(parse_view(c, *it, fam, prefix, ts, spec, units));
  }

  parse_consensus(c, t, ts);

  ts.prompt = parse_skeleton(c, get_string(c, t, "", "prompt"), "prompt", ts.params);
  const Json& para = field(c, t, "", "paraphrases");
  if (!para.is_array() || para.size() != 2 || !para[0].is_string() || !para[1].is_string())
    c.error("paraphrases", "must be a list of exactly two prompt skeletons");
  for (std::size_t i = 0; i < 2; ++i)
    ts.paraphrases[i] =
        parse_skeleton(c, para[i].get<std::string>(), fmt::format("paraphrases[{}]", i), ts.params);
  if (ts.paraphrases[0].text == ts.prompt.text || ts.paraphrases[1].text == ts.prompt.text ||
      ts.paraphrases[0].text == ts.paraphrases[1].text)
    c.error("paraphrases", "the prompt and the two paraphrases must all differ");

  // Enough distinct argument tuples for the requested bases (an upper bound; generation reports the
  // exact shortfall if constraints reject too many).
  {
    mpz_class tuples = 1;
    for (const auto& p : ts.params) tuples *= static_cast<unsigned long>(p.domain.size);
    if (tuples < static_cast<unsigned long>(ts.bases))
      c.error("bases", "{} bases need {} distinct argument tuples, but the domains allow only {}", ts.bases,
              ts.bases, tuples.get_str());
  }
  return ts;
}

}  // namespace

const ViewSpec* TemplateSpec::view(std::string_view family) const {
  for (const auto& v : views)
    if (v.family == family) return &v;
  return nullptr;
}

std::optional<std::size_t> TemplateSpec::param_index(std::string_view name) const {
  for (std::size_t i = 0; i < params.size(); ++i)
    if (params[i].name == name) return i;
  return std::nullopt;
}

const Skeleton& TemplateSpec::skeleton(std::string_view view) const {
  if (view == "paraphrase1") return paraphrases[0];
  if (view == "paraphrase2") return paraphrases[1];
  return prompt;
}

const TemplateSpec* OrbitSpec::find(std::string_view template_id) const {
  for (const auto& t : templates)
    if (t.id == template_id) return &t;
  return nullptr;
}

const std::string& OrbitSpec::unit_word(const std::string& unit, const num::Rational& value) const {
  const auto& w = unit_words.at(unit);
  return value == num::Rational(1) ? w[0] : w[1];
}

OrbitSpec parse_spec(std::string_view text, std::string_view where, const num::UnitRegistry& units) {
  const Json j = io::parse_json(text, where);
  Ctx c(where, text);
  if (!j.is_object()) c.error("(top level)", "must be a JSON object");
  OrbitSpec spec;
  spec.name = std::filesystem::path(std::string(where)).filename().string();
  if (auto it = j.find("format"); it != j.end() && *it != "numcheck-orbit-spec")
    c.error("format", "must be \"numcheck-orbit-spec\"");
  get_int(c, j, "", "spec_version", 1, 1);
  spec.prompt_version = get_string(c, j, "", "prompt_version");
  spec.instruction = get_string(c, j, "", "instruction");
  if (spec.instruction.find('\n') != std::string::npos) c.error("instruction", "must be one line");
  // The instruction may contain number words ("exactly one"): the solver never reads it.

  const Json& uw = field(c, j, "", "unit_words");
  if (!uw.is_object()) c.error("unit_words", "must be an object: unit id -> [singular, plural]");
  for (const auto& [id, words] : uw.items()) {
    const std::string name = "unit_words." + id;
    const num::Unit* u = units.by_id(id);
    if (!u) c.error(name, "\"{}\" is not a registered unit id", id);
    if (!words.is_array() || words.size() != 2 || !words[0].is_string() || !words[1].is_string())
      c.error(name, "must be [singular, plural]");
    for (const auto& w : words) {
      const num::Unit* found = units.lookup(w.get<std::string>());
      if (found != u)
        c.error(name, "the unit registry reads \"{}\" as {}, not {}", w.get<std::string>(),
                found ? found->id : std::string("an unknown unit"), id);
    }
    spec.unit_words[id] = {words[0].get<std::string>(), words[1].get<std::string>()};
  }

  const Json& templates = field(c, j, "", "templates");
  if (!templates.is_array() || templates.empty()) c.error("templates", "must be a non-empty list");
  for (std::size_t i = 0; i < templates.size(); ++i) {
    TemplateSpec t = parse_template(c, templates[i], i, spec, units);
    if (spec.find(t.id)) c.error("id", "duplicate template id \"{}\"", t.id);
    spec.templates.push_back(std::move(t));
  }
  spec.canonical_json = io::to_line(j);
  spec.sha256 = io::sha256_hex(spec.canonical_json);
  return spec;
}

OrbitSpec load_spec(const std::filesystem::path& path, const num::UnitRegistry& units) {
  if (!std::filesystem::exists(path)) fail(ErrorCode::kIo, "{}: spec file not found", path.string());
  return parse_spec(io::read_file(path, std::size_t{64} << 20), path.string(), units);
}

std::filesystem::path default_spec_path() { return io::data_path("orbit/default_spec.json"); }

const OrbitSpec& default_spec() {
  static std::once_flag once;
  static std::unique_ptr<OrbitSpec> spec;
  std::call_once(once, [] { spec = std::make_unique<OrbitSpec>(load_spec(default_spec_path())); });
  return *spec;
}

}  // namespace numcheck::orbit
