#include "claimorbit/orbit.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "claims/evidence.hpp"
#include "claims/load.hpp"
#include "claims/segment.hpp"
#include "core/ascii.hpp"
#include "core/error.hpp"
#include "core/prng.hpp"
#include "core/version.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"
#include "num/read.hpp"
#include "num/units.hpp"
#include "num/write.hpp"

namespace numcheck::claimorbit {

using num::NumberForm;
using num::Rational;

FormSpec FormSpec::parse(std::string_view json_text, std::string_view where) {
  const io::Json j = io::parse_json(json_text, where);
  FormSpec f;
  for (const auto& e : io::require(j, "forms", where)) f.forms.push_back(e.get<std::string>());
  auto pairs = [&](const char* key) {
    std::vector<std::pair<std::string, Rational>> out;
    for (const auto& e : io::require(j, key, where)) {
      if (!e.is_array() || e.size() != 2) fail("{}: '{}' entries must be [word, value]", where, key);
      out.emplace_back(e[0].get<std::string>(),
                       Rational::parse_exact(e[1].get<std::string>(), fmt::format("{}: {}", where, key)));
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return b.second < a.second; });
    return out;
  };
  f.scale_words = pairs("scale_words");
  f.scale_letters = pairs("scale_letters");
  if (j.contains("max_scale_decimals")) f.max_scale_decimals = j["max_scale_decimals"].get<int>();
  if (j.contains("max_fraction_denominator"))
    f.max_fraction_denominator = j["max_fraction_denominator"].get<long>();
  if (j.contains("max_unit_decimals")) f.max_unit_decimals = j["max_unit_decimals"].get<int>();
  if (j.contains("naturalness")) {
    const io::Json& n = j["naturalness"];
    const std::string nw = fmt::format("{}: naturalness", where);
    auto rat = [&](const io::Json& v) { return Rational::parse_exact(v.get<std::string>(), nw); };
    if (n.contains("words_integers_only")) f.words_integers_only = n["words_integers_only"].get<bool>();
    if (n.contains("words_max_significant_digits"))
      f.words_max_significant_digits = n["words_max_significant_digits"].get<int>();
    if (n.contains("scientific_min_abs")) f.scientific_min_abs = rat(n["scientific_min_abs"]);
    if (n.contains("fraction_proper_only")) f.fraction_proper_only = n["fraction_proper_only"].get<bool>();
    if (n.contains("scale_max_mantissa")) f.scale_max_mantissa = rat(n["scale_max_mantissa"]);
    if (n.contains("percent_from_forms"))
      for (const auto& e : n["percent_from_forms"]) {
        const auto name = e.get<std::string>();
        if (!num::form_from_name(name)) fail("{}: unknown number form '{}'", nw, name);
        f.percent_from_forms.push_back(name);
      }
    if (n.contains("year_like")) {
      const io::Json& y = n["year_like"];
      f.year_like = std::pair{rat(io::require(y, "min", nw)), rat(io::require(y, "max", nw))};
    }
  }
  return f;
}

void FormSpec::parse_unit_ranges(std::string_view json_text, std::string_view where) {
  const io::Json j = io::parse_json(json_text, where);
  const auto& units = io::require(j, "units", where);
  if (!units.is_object()) fail("{}: 'units' must be an object", where);
  for (const auto& [id, r] : units.items()) {
    if (num::UnitRegistry::builtin().by_id(id) == nullptr) fail("{}: unknown unit '{}'", where, id);
    if (!r.is_array() || r.size() != 2) fail("{}: unit '{}' must be [min, max]", where, id);
    const std::string w = fmt::format("{}: {}", where, id);
    const Rational lo = Rational::parse_exact(r[0].get<std::string>(), w);
    const Rational hi = Rational::parse_exact(r[1].get<std::string>(), w);
    if (lo.sign() <= 0 || hi < lo) fail("{}: unit '{}' needs 0 < min <= max", where, id);
    unit_ranges[id] = {lo, hi};
  }
}

const FormSpec& FormSpec::builtin() {
  static const FormSpec f = [] {
    const auto p = io::data_path("claims/orbit.json");
    FormSpec spec = parse(io::read_file(p), p.string());
    const auto u = io::data_path("claims/orbit_units.json");
    spec.parse_unit_ranges(io::read_file(u), u.string());
    return spec;
  }();
  return f;
}

namespace {

// Decimal places of a finite decimal, or nullopt when v is not one (1/3).
std::optional<int> decimals(const Rational& v) {
  mpz_class d = v.denominator();
  int twos = 0, fives = 0;
  while (d % 2 == 0) d /= 2, ++twos;
  while (d % 5 == 0) d /= 5, ++fives;
  if (d != 1) return std::nullopt;
  return std::max(twos, fives);
}

std::optional<std::string> plain(const Rational& v, bool group) {
  num::WriteOptions o;
  o.group_thousands = group;
  return num::write_number(v, v.is_integer() ? NumberForm::kInteger : NumberForm::kDecimal, o);
}

const num::Unit* registry_unit(const std::string& id) {
  return id.empty() ? nullptr : num::UnitRegistry::builtin().by_id(id);
}

std::string segment_key(const claims::Segment& s) {
  if (s.kind == claims::SegmentKind::kTemporal)
    return fmt::format("t|{}|{}/{}", s.granularity, s.period_start, s.period_end);
  const num::Unit* u = registry_unit(s.unit);
  const Rational f = u != nullptr ? u->factor : Rational(1);
  const std::string cls = s.dimension == "dimensionless" || s.dimension == "count" ? "number" : s.dimension;
  auto bound = [&](const std::optional<claims::Bound>& b) {
    return b ? fmt::format("{}{}", (b->value * f).str(), b->inclusive ? "]" : ")") : std::string("-");
  };
  return fmt::format("q|{}|{}|{}|{}|{}|{}|{}", cls, u != nullptr ? "" : s.unit,
                     s.value ? (*s.value * f).str() : "-", bound(s.lo), bound(s.hi), s.approximator_kind,
                     s.trend_direction);
}

// A number inside a segment that a form may rewrite: [begin, end) in the claim, the exact value it
// states, whether it is written as a percentage, whether a currency symbol stands before it.
struct Slot {
  std::size_t begin = 0, end = 0;
  Rational value;
  bool percent = false, currency_prefix = false;
  bool bare_percent = false;     // "10" in "between 10 and 20 percent": a percentage without its sign
  std::size_t prefix_begin = 0;  // where the currency symbol starts (currency_prefix)
  bool attached_after = false;   // a symbol or letters follow without a space ("45°C")
  NumberForm form = NumberForm::kInteger;  // how the number is written
};

struct Rewritable {
  std::size_t index = 0;  // segment index
  const claims::Segment* seg = nullptr;
  std::vector<Slot> slots;
  bool unit_at_end = false;  // the segment ends with its unit written after the (single) number
  std::size_t unit_end = 0;
};

// Scale words the claims layer applies after a number ("35,000 crore", "5 bn") or attached ("86k").
std::size_t extend_scale(std::string_view t, std::size_t e, std::size_t limit, Rational& factor) {
  const auto& lex = claims::Lexicon::builtin();
  if (e + 1 < limit && t[e] == '-' && ascii::is_alpha(t[e + 1])) {  // "$110-billion"
    std::size_t he = e + 1;
    while (he < limit && ascii::is_alpha(t[he])) ++he;
    std::string w(t.substr(e + 1, he - e - 1));
    for (char& c : w)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (auto it = lex.hyphen_scales.find(w); it != lex.hyphen_scales.end()) {
      factor = it->second;
      return he;
    }
    return e;
  }
  std::size_t le = e;
  while (le < limit && ascii::is_alpha(t[le])) ++le;
  if (le > e) {
    if (auto it = lex.attached_scales.find(std::string(t.substr(e, le - e)));
        it != lex.attached_scales.end()) {
      factor = it->second;
      return le;
    }
    return e;
  }
  std::size_t p = e;
  while (p < limit && t[p] == ' ') ++p;
  if (p == e) return e;
  std::string best;
  for (const auto& [w, f] : lex.scale_words) {
    if (p + w.size() > limit || w.size() <= best.size()) continue;
    std::string low(t.substr(p, w.size()));
    for (char& c : low)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (low == w && (p + w.size() == limit || !ascii::is_alpha(t[p + w.size()]))) best = w;
  }
  if (best.empty()) return e;
  factor = lex.scale_words.at(best);
  return p + best.size();
}

std::optional<std::string> why_not(const claims::Segment& s, const GenerateOptions& opt) {
  if (s.kind == claims::SegmentKind::kTemporal) return "temporal";
  if (s.form == "vague") return "vague";
  if (s.form == "trend") return "trend_word";
  if (s.dimension == "calendar") return "calendar";
  if (!opt.rewrite_approximate && !s.approximator.empty()) return "approximator";
  if (!opt.rewrite_approximate && !s.trend.empty()) return "trend";
  return std::nullopt;
}

// Finds the numbers of a quantity segment and checks that they state the segment's values.
std::optional<Rewritable> slots_of(std::string_view claim, const claims::Segment& s, std::string& reason) {
  Rewritable r;
  r.seg = &s;
  const std::string_view st = claim.substr(s.begin, s.end - s.begin);
  const auto ms = num::find_numbers(st);
  std::vector<Rational> want;
  if (s.is_range()) {
    want = {s.lo->value, s.hi->value};
  } else if (s.value) {
    want = {*s.value};
  }
  if (want.empty() || ms.size() != want.size()) {
    reason = "unsupported_shape";
    return std::nullopt;
  }
  const bool pct_unit = s.unit == "%";
  const num::Unit* u = registry_unit(s.unit);
  for (std::size_t k = 0; k < ms.size(); ++k) {
    const auto& m = ms[k];
    Slot sl;
    sl.begin = s.begin + m.begin;
    Rational factor(1);
    sl.end = s.begin + extend_scale(st, m.end, st.size(), factor);
    sl.percent = m.form == NumberForm::kPercent;
    sl.form = m.form;
    Rational expect = want[k];
    if (pct_unit) {
      if (!sl.percent && !(s.is_range() && k == 0 && ms.size() == 2 && ms[1].form == NumberForm::kPercent)) {
        reason = "unsupported_shape";
        return std::nullopt;
      }
      sl.bare_percent = !sl.percent;
      expect /= Rational(100);
    }
    const Rational read = sl.bare_percent ? m.value * factor / Rational(100) : m.value * factor;
    if (read != expect) {
      // The first end of a range may share the second end's scale ("Rs 7-8,000").
      const bool shared = s.is_range() && k == 0 && read.sign() > 0 && (expect / read).is_integer();
      if (!shared) {
        reason = "unsupported_shape";
        return std::nullopt;
      }
    }
    sl.value = expect;
    const std::size_t after = sl.end - s.begin;
    sl.attached_after = after < st.size() && st[after] != ' ' && st[after] != ',' && st[after] != '-' &&
                        st[after] != '.' && st[after] != ')';
    if (u != nullptr && u->prefix && m.begin > 0) {
      std::size_t p = m.begin;
      if (p > 0 && st[p - 1] == ' ') --p;
      for (const auto& sym : u->symbols)
        if (p >= sym.size() && st.substr(p - sym.size(), sym.size()) == sym && !sl.currency_prefix) {
          sl.currency_prefix = true;
          sl.prefix_begin = s.begin + p - sym.size();
        }
    }
    r.slots.push_back(sl);
  }
  // A unit written after the single number, ending the segment ("5 km", "40 degrees Fahrenheit").
  if (u != nullptr && !u->prefix && r.slots.size() == 1 && !pct_unit) {
    std::size_t p = r.slots[0].end;
    while (p < s.end && claim[p] == ' ') ++p;
    const std::string_view rest = claim.substr(p, s.end - p);
    if (!rest.empty() && num::UnitRegistry::builtin().lookup(rest) == u) {
      r.unit_at_end = true;
      r.unit_end = s.end;
    }
  }
  return r;
}

// Naturalness (FormSpec): number words only for integers with few significant digits.
bool natural_words(const Rational& v, const FormSpec& spec) {
  if (!v.is_integer()) return !spec.words_integers_only;
  if (spec.words_max_significant_digits <= 0) return true;
  mpz_class x = v.numerator();
  if (x < 0) x = -x;
  if (x == 0) return true;
  while (x % 10 == 0) x /= 10;
  return x.get_str().size() <= static_cast<std::size_t>(spec.words_max_significant_digits);
}

// A fraction p/q only for a ratio strictly between 0 and 1 (with fraction_proper_only).
bool proper_enough(const Rational& v, const FormSpec& spec) {
  return !spec.fraction_proper_only || (v.sign() > 0 && v < Rational(1));
}

// Quantities never rewritten whatever the form: a plain four-digit integer that may be a year ("In
// 1527"), a number joined by a hyphen to another number (a score or tally, "228-197"), a number
// that is all of a quotation, and the "a half" of "a year and a half".
std::optional<std::string> never_rewritten(std::string_view claim, const claims::Segment& s,
                                           const FormSpec& spec) {
  if (s.kind != claims::SegmentKind::kQuantity) return std::nullopt;
  auto dash_at = [&](std::size_t p) {
    return p < claim.size() && (claim[p] == '-' || claim.compare(p, 3, "\xE2\x80\x93") == 0);
  };
  if (s.begin >= 2 && ascii::is_digit(claim[s.begin - 2]) && claim[s.begin - 1] == '-') return "joined";
  if (s.begin >= 4 && ascii::is_digit(claim[s.begin - 4]) &&
      claim.compare(s.begin - 3, 3, "\xE2\x80\x93") == 0)
    return "joined";
  if (dash_at(s.end)) {
    const std::size_t d = claim[s.end] == '-' ? s.end + 1 : s.end + 3;
    if (d < claim.size() && ascii::is_digit(claim[d])) return "joined";
  }
  // A number that is all of a quotation ('starting "19"') is a quoted string, not a quantity.
  {
    auto quote_before = [&](std::size_t p) {
      return (p >= 1 && (claim[p - 1] == '"' || claim[p - 1] == '\'')) ||
             (p >= 3 &&
              (claim.compare(p - 3, 3, "\xE2\x80\x9C") == 0 || claim.compare(p - 3, 3, "\xE2\x80\x98") == 0));
    };
    auto quote_after = [&](std::size_t p) {
      return (p < claim.size() && (claim[p] == '"' || claim[p] == '\'')) ||
             claim.compare(p, 3, "\xE2\x80\x9D") == 0 || claim.compare(p, 3, "\xE2\x80\x99") == 0;
    };
    if (quote_before(s.begin) && quote_after(s.end)) return "quoted";
  }
  // "his first year and a half": the quantity is a year and a half; "a half" alone is not it.
  {
    std::string low = s.text;
    for (char& c : low)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    std::size_t p = s.begin;
    while (p > 0 && claim[p - 1] == ' ') --p;
    if ((low == "a half" || low == "half" || low == "one half") && p >= 4 &&
        claim.compare(p - 3, 3, "and") == 0 && (p == 3 || !ascii::is_alpha(claim[p - 4])))
      return "joined";
  }
  if (spec.year_like && s.unit.empty() && s.value && s.value->is_integer() && !s.is_range() &&
      spec.year_like->first <= *s.value && *s.value <= spec.year_like->second) {
    const auto ms = num::find_numbers(s.text);
    if (ms.size() == 1 && ms[0].form == NumberForm::kInteger && ms[0].end - ms[0].begin == 4)
      return "year_like";
  }
  return std::nullopt;
}

// The slot written in `form`, or nullopt when the form does not apply or cannot write it exactly.
std::optional<std::string> write_slot(const Slot& sl, const claims::Segment& s, std::string_view original,
                                      const std::string& form, const FormSpec& spec) {
  if (sl.bare_percent) {
    // The first end of "between 10 and 20 percent": written as a bare number in percent, or (in the
    // fraction form, with the other end a fraction too) as the ratio itself.
    if (form == "fraction") {
      if (sl.value.is_integer() || sl.value.denominator() > spec.max_fraction_denominator ||
          !proper_enough(sl.value, spec))
        return std::nullopt;
      return num::write_number(sl.value, NumberForm::kFraction);
    }
    if (form == "percent") return std::string(original);
    Slot plain_slot = sl;
    plain_slot.bare_percent = false;
    plain_slot.value = sl.value * Rational(100);
    claims::Segment count_seg;
    count_seg.dimension = "count";
    return write_slot(plain_slot, count_seg, original, form, spec);
  }
  const Rational& v = sl.value;
  const Rational abs = v.sign() < 0 ? -v : v;
  const bool number_class = s.dimension == "count" || s.dimension == "dimensionless";
  if ((form == "words" || form == "scientific") && sl.attached_after) return std::nullopt;  // "forty-five°C"
  if (form == "digits") {
    if (sl.percent) {  // the percent sign or word stays as written
      const auto d = plain(v * Rational(100), false);
      if (!d) return std::nullopt;
      return original.find('%') != std::string_view::npos ? num::write_number(v, NumberForm::kPercent)
                                                          : std::optional<std::string>(*d + " percent");
    }
    return plain(v, false);
  }
  if (form == "grouped") {
    if (sl.percent || abs < Rational(1000)) return std::nullopt;
    return plain(v, true);
  }
  if (form == "words") {
    if (!natural_words(sl.percent ? v * Rational(100) : v, spec)) return std::nullopt;
    if (sl.percent) {
      const auto w = num::write_number(v * Rational(100), NumberForm::kWords);
      return w ? std::optional<std::string>(*w + " percent") : std::nullopt;
    }
    return num::write_number(v, NumberForm::kWords);
  }
  if (form == "scientific") {
    if (sl.percent || abs < Rational(1000) || abs < spec.scientific_min_abs) return std::nullopt;
    return num::write_number(v, NumberForm::kENotation);
  }
  if (form == "percent") {
    if (sl.percent) {
      if (original.find('%') != std::string_view::npos) {
        const auto d = plain(v * Rational(100), false);
        return d ? std::optional<std::string>(*d + " percent") : std::nullopt;
      }
      return num::write_number(v, NumberForm::kPercent);
    }
    const bool ratio_form = spec.percent_from_forms.empty() ||
                            std::find(spec.percent_from_forms.begin(), spec.percent_from_forms.end(),
                                      num::form_name(sl.form)) != spec.percent_from_forms.end();
    if (number_class && s.unit.empty() && v.sign() > 0 && v < Rational(1) && ratio_form)
      return num::write_number(v, NumberForm::kPercent);
    return std::nullopt;
  }
  if (form == "fraction") {
    if (!(sl.percent || (number_class && s.unit.empty())) || v.is_integer()) return std::nullopt;
    if (v.denominator() > spec.max_fraction_denominator || !proper_enough(v, spec)) return std::nullopt;
    return num::write_number(v, NumberForm::kFraction);
  }
  if (form == "scale_word" || form == "scale_letter") {
    if (sl.percent || !(abs >= Rational(1000))) return std::nullopt;
    if (form == "scale_letter" && !sl.currency_prefix) return std::nullopt;
    const auto& scales = form == "scale_word" ? spec.scale_words : spec.scale_letters;
    for (const auto& [w, f] : scales) {
      if (abs < f) continue;
      const Rational m = v / f;
      if (spec.scale_max_mantissa && !((m.sign() < 0 ? -m : m) < *spec.scale_max_mantissa)) continue;
      const auto d = decimals(m);
      if (!d || *d > spec.max_scale_decimals) continue;
      const auto digits = plain(m, false);
      if (!digits) continue;
      return form == "scale_word" ? *digits + " " + w : *digits + w;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

struct Edit {
  std::size_t begin = 0, end = 0;  // in the original claim
  std::string text;
  Rational value;
};

std::string apply(std::string_view claim, std::vector<Edit> edits, std::vector<Span>* spans) {
  std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
  std::string out;
  std::size_t at = 0;
  for (const auto& e : edits) {
    out.append(claim.substr(at, e.begin - at));
    if (spans != nullptr)
      spans->push_back({out.size(), out.size() + e.text.size(), e.value,
                        std::string(claim.substr(e.begin, e.end - e.begin)), e.text});
    out += e.text;
    at = e.end;
  }
  out.append(claim.substr(at));
  return out;
}

// The unit form: the number and its unit word converted exactly into another unit of the dimension.
std::optional<Edit> unit_edit(const Rewritable& r, const FormSpec& spec, std::uint64_t seed,
                              std::string_view id) {
  if (!r.unit_at_end) return std::nullopt;
  const claims::Segment& s = *r.seg;
  const num::Unit* from = registry_unit(s.unit);
  if (from == nullptr || from->dimension == "dimensionless" || from->dimension.rfind("currency:", 0) == 0)
    return std::nullopt;
  std::vector<std::string> candidates;
  for (const auto& to : num::UnitRegistry::builtin().units()) {
    if (to.dimension != from->dimension || to.id == from->id || to.words.empty()) continue;
    const auto range = spec.unit_ranges.find(to.id);
    if (!spec.unit_ranges.empty() && range == spec.unit_ranges.end()) continue;
    const auto c = num::UnitRegistry::convert(r.slots[0].value, *from, to);
    if (!c) continue;
    if (range != spec.unit_ranges.end()) {
      const Rational a = c->sign() < 0 ? -*c : *c;
      if (a < range->second.first || range->second.second < a) continue;  // not what a writer would use
    }
    const auto d = decimals(*c);
    if (!d || *d > spec.max_unit_decimals) continue;
    const auto digits = plain(*c, false);
    if (!digits || digits->size() > 15) continue;
    const std::string& word = *c == Rational(1) || to.words.size() < 2 ? to.words[0] : to.words[1];
    candidates.push_back(*digits + " " + word);
  }
  if (candidates.empty()) return std::nullopt;
  Rng rng(seed, fmt::format("{}#{}", id, r.index));
  const auto& pick = candidates[static_cast<std::size_t>(rng.below(candidates.size()))];
  return Edit{r.slots[0].begin, r.unit_end, pick, r.slots[0].value};
}

// The bytes around segment i that its read-back re-reads: kContext bytes on each side, widened so
// that no segment is cut and the window starts and ends at a space (or the claim's ends). The
// segmenter looks only a few words around a number (approximators, trend words, units, range
// connectors), so the window reads a rewrite as the whole claim would; the variant with every
// accepted rewrite is still read back whole. Re-reading only the window keeps generation linear in
// the claim's length (re-reading the whole claim per segment made it quadratic and worse).
std::pair<std::size_t, std::size_t> context_window(std::string_view claim,
                                                   const std::vector<claims::Segment>& segs, std::size_t i) {
  constexpr std::size_t kContext = 96;
  std::size_t b = segs[i].begin > kContext ? segs[i].begin - kContext : 0;
  std::size_t e = std::min(claim.size(), segs[i].end + kContext);
  // Segments are sorted and disjoint: widen over the ones the window's ends fall into.
  auto first_ending_after = [&](std::size_t p) {
    return std::partition_point(segs.begin(), segs.end(),
                                [&](const claims::Segment& s) { return s.end <= p; });
  };
  if (auto it = first_ending_after(b); it != segs.end() && it->begin < b) b = it->begin;
  if (e > 0)
    if (auto it = first_ending_after(e - 1); it != segs.end() && it->begin < e) e = std::max(e, it->end);
  while (b > 0 && claim[b - 1] != ' ') --b;
  while (e < claim.size() && claim[e] != ' ') ++e;
  return {b, e};
}

}  // namespace

namespace {
thread_local std::size_t t_bytes_read = 0;
}  // namespace

std::size_t segmenter_bytes_read() noexcept { return t_bytes_read; }

std::vector<std::string> quantity_keys(std::string_view text) {
  t_bytes_read += text.size();
  std::vector<std::string> k;
  for (const auto& s : claims::find_segments(text)) k.push_back(segment_key(s));
  return k;
}

namespace {

// The edits that write one rewritable segment in `form` (none when a slot has no exact form; an
// edit that changes nothing, or only letter case, is dropped).
std::vector<Edit> segment_edits(std::string_view id, std::string_view claim, const Rewritable& r,
                                const std::string& form, const GenerateOptions& opt, const FormSpec& spec) {
  std::vector<Edit> edits;
  if (form == "unit") {
    if (auto e = unit_edit(r, spec, opt.seed, id)) edits.push_back(std::move(*e));
  } else {
    for (const auto& sl : r.slots) {
      const std::string_view orig = claim.substr(sl.begin, sl.end - sl.begin);
      const auto w = write_slot(sl, *r.seg, orig, form, spec);
      if (!w) {
        edits.clear();
        break;
      }
      // "$86k" in words: "eighty-six thousand dollars" (the currency moves after the number).
      const num::Unit* cur = registry_unit(r.seg->unit);
      if (form == "words" && sl.currency_prefix && r.slots.size() == 1 && cur != nullptr &&
          !cur->words.empty()) {
        const std::string& word =
            sl.value == Rational(1) || cur->words.size() < 2 ? cur->words[0] : cur->words[1];
        edits.push_back({sl.prefix_begin, sl.end, *w + " " + word, sl.value});
      } else {
        edits.push_back({sl.begin, sl.end, *w, sl.value});
      }
    }
  }
  // An edit that changes nothing, or only letter case ("FOUR" -> "four"), is no rewrite.
  std::erase_if(edits, [&](const Edit& e) {
    const std::string_view o = claim.substr(e.begin, e.end - e.begin);
    return o.size() == e.text.size() && std::equal(o.begin(), o.end(), e.text.begin(), [](char a, char b) {
             auto low = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
             return low(a) == low(b);
           });
  });
  return edits;
}

}  // namespace

ClaimOrbit generate_orbit(std::string_view id, std::string_view claim, const GenerateOptions& opt,
                          const FormSpec& spec) {
  ClaimOrbit o;
  o.id = std::string(id);
  o.claim = std::string(claim);
  t_bytes_read += claim.size();
  const auto segs = claims::find_segments(claim);
  std::vector<std::string> keys;
  keys.reserve(segs.size());
  for (const auto& s : segs) keys.push_back(segment_key(s));
  std::vector<Rewritable> rw;
  std::vector<std::string> reasons(segs.size());
  for (std::size_t i = 0; i < segs.size(); ++i) {
    if (auto why = why_not(segs[i], opt)) {
      reasons[i] = *why;
      continue;
    }
    if (auto why = never_rewritten(claim, segs[i], spec)) {
      reasons[i] = *why;
      continue;
    }
    std::string reason;
    if (auto r = slots_of(claim, segs[i], reason)) {
      r->index = i;
      rw.push_back(std::move(*r));
    } else {
      reasons[i] = reason;
    }
  }
  std::vector<bool> rewritten(segs.size(), false);
  // Per rewritable segment: its context window and the quantities read there before any rewrite.
  std::vector<std::pair<std::size_t, std::size_t>> windows;
  std::vector<std::vector<std::string>> window_keys;
  windows.reserve(rw.size());
  window_keys.reserve(rw.size());
  for (const auto& r : rw) {
    windows.push_back(context_window(claim, segs, r.index));
    window_keys.push_back(
        quantity_keys(claim.substr(windows.back().first, windows.back().second - windows.back().first)));
  }
  const auto& forms = opt.forms.empty() ? spec.forms : opt.forms;
  for (const auto& form : forms) {
    std::vector<Edit> accepted;
    std::vector<std::size_t> accepted_segs;
    for (std::size_t ri = 0; ri < rw.size(); ++ri) {
      const Rewritable& r = rw[ri];
      std::vector<Edit> edits = segment_edits(id, claim, r, form, opt, spec);
      if (edits.empty()) continue;
      // Read back: with only this segment rewritten, its context window states exactly the same
      // quantities.
      const auto [wb, we] = windows[ri];
      std::vector<Edit> local = edits;
      for (auto& e : local) e.begin -= wb, e.end -= wb;
      if (quantity_keys(apply(claim.substr(wb, we - wb), std::move(local), nullptr)) != window_keys[ri])
        continue;
      accepted.insert(accepted.end(), edits.begin(), edits.end());
      accepted_segs.push_back(r.index);
    }
    if (accepted.empty()) continue;
    Variant v;
    v.id = fmt::format("{}#{}", id, form);
    v.form = form;
    v.text = apply(claim, accepted, &v.spans);
    if (quantity_keys(v.text) != keys) continue;  // the rewrites interact: no variant of this form
    for (auto i : accepted_segs) rewritten[i] = true;
    o.variants.push_back(std::move(v));
  }
  for (std::size_t i = 0; i < segs.size(); ++i) {
    if (rewritten[i]) continue;
    o.skipped.push_back({segs[i].text, reasons[i].empty() ? "no_exact_form" : reasons[i]});
  }
  return o;
}

io::OrderedJson orbit_json(const ClaimOrbit& o) {
  io::OrderedJson j;
  j["id"] = o.id;
  j["claim"] = o.claim;
  j["variants"] = io::OrderedJson::array();
  for (const auto& v : o.variants) {
    io::OrderedJson vj;
    vj["id"] = v.id;
    vj["form"] = v.form;
    vj["text"] = v.text;
    vj["spans"] = io::OrderedJson::array();
    for (const auto& s : v.spans)
      vj["spans"].push_back({{"begin", s.begin},
                             {"end", s.end},
                             {"value", s.value.str()},
                             {"original", s.original},
                             {"rewritten", s.rewritten}});
    j["variants"].push_back(std::move(vj));
  }
  j["skipped"] = io::OrderedJson::array();
  for (const auto& s : o.skipped) j["skipped"].push_back({{"segment", s.segment}, {"reason", s.reason}});
  return j;
}

ClaimOrbit orbit_from_json(const io::Json& j, std::string_view where) {
  ClaimOrbit o;
  o.id = io::require_string(j, "id", where);
  o.claim = io::require_string(j, "claim", where);
  const auto& vs = io::require(j, "variants", where);
  if (!vs.is_array()) fail("{}: 'variants' must be an array", where);
  for (const auto& vj : vs) {
    Variant v;
    v.id = io::require_string(vj, "id", where);
    v.form = io::require_string(vj, "form", where);
    v.text = io::require_string(vj, "text", where);
    for (const auto& sj : io::require(vj, "spans", where)) {
      Span s;
      s.begin = io::require(sj, "begin", where).get<std::size_t>();
      s.end = io::require(sj, "end", where).get<std::size_t>();
      s.value = Rational::parse_exact(io::require_string(sj, "value", where), where);
      s.original = io::require_string(sj, "original", where);
      s.rewritten = io::require_string(sj, "rewritten", where);
      if (s.begin > s.end || s.end > v.text.size())
        fail("{}: span [{}, {}) outside the variant text", where, s.begin, s.end);
      v.spans.push_back(std::move(s));
    }
    o.variants.push_back(std::move(v));
  }
  if (j.contains("skipped"))
    for (const auto& sj : j["skipped"])
      o.skipped.push_back(
          {io::require_string(sj, "segment", where), io::require_string(sj, "reason", where)});
  return o;
}

std::vector<ClaimOrbit> read_orbits(const std::filesystem::path& path) {
  std::vector<ClaimOrbit> out;
  io::for_each_line(path, [&](const io::Line& l) {
    if (l.text.find_first_not_of(" \t\r") == std::string_view::npos) return;
    const std::string where = fmt::format("{}:{}", path.string(), l.number);
    out.push_back(orbit_from_json(io::parse_json(l.text, where), where));
  });
  return out;
}

GenerateSummary generate_to_dir(const std::filesystem::path& claims_file,
                                const std::filesystem::path& out_dir, const GenerateOptions& opt) {
  const auto& spec = FormSpec::builtin();
  for (const auto& f : opt.forms)
    if (std::find(spec.forms.begin(), spec.forms.end(), f) == spec.forms.end())
      throw Error(ErrorCode::kUsage,
                  fmt::format("unknown form '{}' (forms: {})", f, fmt::join(spec.forms, ", ")));
  const auto loaded = claims::load_claims(claims_file);
  GenerateSummary sum;
  for (const auto& is : loaded.issues) sum.warnings.push_back(is.str());
  std::string out;
  for (const auto& c : loaded.claims) {
    const auto o = generate_orbit(claims::claim_id(c), c.text, opt, spec);
    ++sum.claims;
    sum.variants += o.variants.size();
    sum.claims_with_variants += o.variants.empty() ? 0 : 1;
    for (const auto& v : o.variants) {
      ++sum.variants_by_form[v.form];
      sum.spans_by_form[v.form] += v.spans.size();
    }
    for (const auto& sk : o.skipped) ++sum.skipped_by_reason[sk.reason];
    out += io::to_line(orbit_json(o));
    out += '\n';
  }
  std::filesystem::create_directories(out_dir);
  io::write_file_atomic(out_dir / "claims.jsonl", out);
  io::OrderedJson m;
  m["format"] = "numcheck-claim-orbits";
  m["version"] = 1;
  m["numcheck_version"] = kVersion;
  m["input"] = {{"path", claims_file.filename().string()},
                {"sha256", io::sha256_file(claims_file)},
                {"format", loaded.format}};
  m["forms_spec_sha256"] = io::sha256_file(io::data_path("claims/orbit.json"));
  m["segments_lexicon_sha256"] = io::sha256_file(io::data_path("claims/segments.json"));
  m["units_sha256"] = io::sha256_file(io::data_path("units.json"));
  m["unit_ranges_sha256"] = io::sha256_file(io::data_path("claims/orbit_units.json"));
  m["forms"] = opt.forms.empty() ? spec.forms : opt.forms;
  m["seed"] = opt.seed;
  m["rewrite_approximate"] = opt.rewrite_approximate;
  m["claims_jsonl_sha256"] = io::sha256_hex(out);
  m["claims"] = sum.claims;
  m["claims_with_variants"] = sum.claims_with_variants;
  m["variants"] = sum.variants;
  m["variants_by_form"] = io::OrderedJson::object();
  for (const auto& f : spec.forms)
    if (sum.variants_by_form.count(f) != 0) m["variants_by_form"][f] = sum.variants_by_form[f];
  m["spans_by_form"] = io::OrderedJson::object();
  for (const auto& f : spec.forms)
    if (sum.spans_by_form.count(f) != 0) m["spans_by_form"][f] = sum.spans_by_form[f];
  m["skipped_by_reason"] = io::OrderedJson::object();
  for (const auto& [r, k] : sum.skipped_by_reason) m["skipped_by_reason"][r] = k;
  m["malformed_records"] = sum.warnings.size();
  io::write_file_atomic(out_dir / "manifest.json", io::to_pretty(m) + "\n");
  return sum;
}

}  // namespace numcheck::claimorbit
