#include "verify/features.hpp"

#include <algorithm>
#include <set>
#include <unordered_set>

#include <fmt/format.h>

#include "claims/category.hpp"
#include "core/error.hpp"
#include "core/string_set.hpp"
#include "core/utf8.hpp"
#include "io/files.hpp"
#include "num/units.hpp"

namespace numcheck::verify {

std::string_view number_mode_name(NumberMode m) noexcept {
  return m == NumberMode::kCanonical ? "canonical" : "surface";
}

NumberMode number_mode_from_name(std::string_view name) {
  if (name == "canonical") return NumberMode::kCanonical;
  if (name == "surface") return NumberMode::kSurface;
  fail(ErrorCode::kUsage, "numbers: '{}' is neither canonical nor surface", name);
}

namespace {

bool word_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80 || c == '\'';
}
bool digit(char c) { return c >= '0' && c <= '9'; }

// Surface tokens of text[b, e): runs of word bytes (a ',' or '.' between digits stays inside),
// '%' and '$' on their own; ASCII lower-cased.
void surface_tokens(std::string_view text, std::size_t b, std::size_t e, std::vector<std::string>& out) {
  std::size_t i = b;
  while (i < e) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '%' || c == '$') {
      out.emplace_back(1, static_cast<char>(c));
      ++i;
      continue;
    }
    if (!word_byte(c) || c == '\'') {
      ++i;
      continue;
    }
    // The token is text[start, i): its bytes are kept (a ',' or '.' only between digits), so it is
    // found first and copied once.
    const std::size_t start = i;
    while (i < e) {
      const auto d = static_cast<unsigned char>(text[i]);
      if (word_byte(d) ||
          ((d == ',' || d == '.') && i + 1 < e && i > start && digit(text[i - 1]) && digit(text[i + 1])))
        ++i;
      else
        break;
    }
    std::size_t end = i;
    while (end > start && text[end - 1] == '\'') --end;
    if (end == start) continue;
    std::string& tok = out.emplace_back(text.substr(start, end - start));
    for (char& ch : tok)
      if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  }
}

num::Rational to_canon(const num::Rational& v, const std::string& unit) {
  if (unit.empty()) return v;
  const num::Unit* u = num::UnitRegistry::builtin().by_id(unit);
  return u == nullptr ? v : num::UnitRegistry::to_canonical(v, *u);
}

// What a quantity is a number of, whatever unit it is written in: "" for a plain number (a count,
// or a dimensionless unit such as "%": 80% and 4/5 are the same number), the canonical unit of a
// registered dimension ("m" for km and miles, "s" for weeks and hours, "USD"), else the dimension
// and unit as the segmenter names them ("calendar:year", "ratio:times" for "three times higher",
// "count:times" for "voted 10 times").
std::string quantity_class(const claims::Segment& s) {
  if (s.unit.empty()) return s.dimension == "count" ? "" : s.dimension;
  const auto& reg = num::UnitRegistry::builtin();
  const num::Unit* u = reg.by_id(s.unit);
  if (u == nullptr) return s.dimension + ":" + s.unit;
  if (u->dimension == "dimensionless") return "";
  const num::Unit* c = reg.canonical(u->dimension);
  return c == nullptr ? s.unit : c->id;
}

// One token per quantity segment from its exact canonical value(s): "<m 5000>" for "5 km" and
// "5,000 meters", "<4/5>" for "80%", "4/5" and "0.8".
std::string quantity_token(const claims::Segment& s) {
  std::string t = "<";
  if (const auto cls = quantity_class(s); !cls.empty()) t += cls + " ";
  if (s.value)
    t += to_canon(*s.value, s.unit).str();
  else if (s.lo && s.hi)
    t += to_canon(s.lo->value, s.unit).str() + ".." + to_canon(s.hi->value, s.unit).str();
  else if (s.lo)
    t += ">" + to_canon(s.lo->value, s.unit).str();
  else if (s.hi)
    t += "<" + to_canon(s.hi->value, s.unit).str();
  else
    t += s.form.empty() ? "?" : s.form;
  return t + ">";
}

// The quantity's shape, for the n-gram stream: "<#prop>" for a proportion (a plain number strictly
// between 0 and 1, however written), "<#num>" for another plain number, "<#CLASS>" otherwise
// ("<#USD>", "<#m>", "<#calendar:year>"). It lets "<#prop> of" generalize across values; the exact
// value is its own feature (quantity_token).
std::string shape_token(const claims::Segment& s) {
  const auto cls = quantity_class(s);
  if (!cls.empty()) return "<#" + cls + ">";
  const num::Rational v = s.value ? to_canon(*s.value, s.unit)
                          : s.lo  ? to_canon(s.lo->value, s.unit)
                          : s.hi  ? to_canon(s.hi->value, s.unit)
                                  : num::Rational(0);
  return v.sign() > 0 && v < num::Rational(1) ? "<#prop>" : "<#num>";
}

std::string temporal_token(const claims::Segment& s) {
  if (!s.period_start.empty()) return fmt::format("<t:{}/{}>", s.period_start, s.period_end);
  return fmt::format("<t:{}>", s.granularity);
}

}  // namespace

std::vector<std::string> tokenize(std::string_view text, NumberMode mode,
                                  const std::vector<claims::Segment>* segs,
                                  std::vector<std::string>* values) {
  std::vector<std::string> out;
  if (mode == NumberMode::kSurface) {
    surface_tokens(text, 0, text.size(), out);
    return out;
  }
  std::vector<claims::Segment> own;
  if (segs == nullptr) {
    own = claims::find_segments(text);
    segs = &own;
  }
  std::size_t pos = 0;
  for (const auto& s : *segs) {
    if (s.begin < pos || s.end > text.size()) continue;
    surface_tokens(text, pos, s.begin, out);
    if (s.kind == claims::SegmentKind::kTemporal) {
      out.push_back(temporal_token(s));
    } else {
      if (!s.approximator_kind.empty() && s.approximator_kind != "exact")
        out.push_back("<approx:" + s.approximator_kind + ">");
      if (!s.trend_direction.empty()) out.push_back("<trend:" + s.trend_direction + ">");
      if (values != nullptr) {
        out.push_back(shape_token(s));
        values->push_back(quantity_token(s));
      } else {
        out.push_back(quantity_token(s));
      }
    }
    pos = s.end;
  }
  surface_tokens(text, pos, text.size(), out);
  return out;
}

namespace {

// The claim's words as the cue lists see them. kSurface: every word as written. kCanonical: the
// words outside quantity segments as written, and for each quantity segment its approximator's
// words ("more than", "nearly": the rewrites keep them) and its one canonical token, so the cues,
// the length bucket and nothing else see how a number is spelled ("zero", "half", "eighty-six
// thousand dollars" are one quantity each, as "0", "1/2" and "$86,000" are). Vague quantities and
// multiplicative trend words ("thousands of", "doubled") keep their words.
std::vector<std::string> cue_words(std::string_view text, NumberMode mode,
                                   const std::vector<claims::Segment>& segs) {
  std::vector<std::string> out;
  if (mode == NumberMode::kSurface) {
    surface_tokens(text, 0, text.size(), out);
    return out;
  }
  std::size_t pos = 0;
  for (const auto& s : segs) {
    if (s.begin < pos || s.end > text.size()) continue;
    if (s.kind == claims::SegmentKind::kTemporal || s.form == "vague" || s.form == "trend") continue;
    surface_tokens(text, pos, s.begin, out);
    surface_tokens(s.approximator, 0, s.approximator.size(), out);
    out.push_back(quantity_token(s));
    pos = s.end;
  }
  surface_tokens(text, pos, text.size(), out);
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Alignment

namespace {

struct Q {
  const claims::Segment* seg;
  std::string cls;                      // quantity_class: what it is a number of
  std::optional<num::Rational> point;   // canonical value
  std::optional<num::Rational> lo, hi;  // canonical bounds
  bool lo_incl = true, hi_incl = true;
  bool proportion = false;  // a plain number strictly between 0 and 1 (80%, 4/5, 0.8, "a quarter")
  [[nodiscard]] const num::Rational& representative() const { return point ? *point : (lo ? *lo : *hi); }
};

std::optional<Q> quantity(const claims::Segment& s) {
  if (s.kind != claims::SegmentKind::kQuantity) return std::nullopt;
  Q q{&s, quantity_class(s), {}, {}, {}, true, true, false};
  if (s.value) q.point = to_canon(*s.value, s.unit);
  if (s.lo) {
    q.lo = to_canon(s.lo->value, s.unit);
    q.lo_incl = s.lo->inclusive;
  }
  if (s.hi) {
    q.hi = to_canon(s.hi->value, s.unit);
    q.hi_incl = s.hi->inclusive;
  }
  if (!q.point && !q.lo && !q.hi) return std::nullopt;
  const num::Rational& v = q.representative();
  q.proportion = q.cls.empty() && v.sign() > 0 && v < num::Rational(1);
  return q;
}

// |a - b| * den <= |a| * num
// How close b is to a, exactly: 1 when |a - b| <= |a| / 100, 2 when |a - b| <= |a| / 10, else 3.
int closeness(const num::Rational& a, const num::Rational& b) {
  const num::Rational d = (a - b).abs(), m = a.abs();
  if (d * num::Rational(100) <= m) return 1;
  return d * num::Rational(10) <= m ? 2 : 3;
}

bool inside(const num::Rational& v, const Q& iv) {
  if (iv.lo && (iv.lo_incl ? v < *iv.lo : v <= *iv.lo)) return false;
  if (iv.hi && (iv.hi_incl ? v > *iv.hi : v >= *iv.hi)) return false;
  return iv.lo || iv.hi;
}

bool known_period(const claims::Segment& s) {
  return s.kind == claims::SegmentKind::kTemporal && !s.period_start.empty() && !s.period_end.empty() &&
         s.period_start.find('X') == std::string::npos && s.period_end.find('X') == std::string::npos;
}

}  // namespace

Alignment align(const std::vector<claims::Segment>& claim,
                const std::vector<std::vector<claims::Segment>>& docs) {
  Alignment a;
  std::vector<Q> ev;
  std::vector<const claims::Segment*> ev_periods;
  std::unordered_set<std::string> ev_trends;
  for (const auto& d : docs) {
    for (const auto& s : d) {
      if (auto q = quantity(s)) ev.push_back(*q);
      if (known_period(s)) ev_periods.push_back(&s);
      if (!s.trend_direction.empty()) ev_trends.insert(s.trend_direction);
    }
  }
  a.evidence_quantities = ev.size();
  for (const auto& s : claim) {
    if (known_period(s)) {
      ++a.claim_periods;
      if (!ev_periods.empty()) {
        const bool overlap = std::any_of(ev_periods.begin(), ev_periods.end(), [&](const claims::Segment* e) {
          return e->period_start <= s.period_end && s.period_start <= e->period_end;
        });
        ++(overlap ? a.period_overlap : a.period_disjoint);
      }
      continue;
    }
    if (!s.trend_direction.empty()) {
      ++a.trend_claim;
      if (ev_trends.count(s.trend_direction) > 0)
        ++a.trend_agree;
      else if (ev_trends.count(s.trend_direction == "up" ? "down" : "up") > 0)
        ++a.trend_contradict;
    }
    const auto q = quantity(s);
    if (!q) continue;
    ++a.claim_quantities;
    // A share is a proportion however it is written; it is compared with proportions only, and a
    // plain number that is not one with plain numbers that are not either.
    const bool share = q->proportion;
    a.shares += share ? 1 : 0;
    const num::Rational& cv = q->representative();
    int best =
        4;  // 0 exact, 1 within 1%, 2 within 10%, 3 same dimension only, 4 none, 5 inside the claim bound
    const Q* best_e = nullptr;
    bool in_iv = false, contains = false;
    for (const auto& e : ev) {
      if (e.cls != q->cls || e.proportion != share) continue;
      if (e.point) {
        const int m = *e.point == cv ? 0 : closeness(cv, *e.point);
        if (m < best) {
          best = m;
          best_e = &e;
        }
        if ((q->lo || q->hi) && inside(*e.point, *q)) contains = true;
      } else if (best > 3) {
        best = 3;
      }
      if (q->point && e.lo && e.hi && inside(*q->point, e)) in_iv = true;
    }
    if (best <= 3) ++a.same_dimension;
    // A bound or range holding an evidence value agrees with it, however far the written ends are.
    if (best == 3 && contains) best = 5;
    switch (best) {
      case 0:
        ++a.exact;
        break;
      case 1:
        ++a.within_1pct;
        break;
      case 2:
        ++a.within_10pct;
        break;
      case 3:
        ++a.contradicting;
        break;
      default:
        break;
    }
    a.in_interval += in_iv ? 1 : 0;
    a.contains_evidence += contains ? 1 : 0;
    if (share) {
      if (best <= 1) ++a.shares_matched;
      if (best == 3) ++a.shares_contradicted;
    }
    const std::string& ck = s.approximator_kind;
    if (!ck.empty() && ck != "exact" && best_e != nullptr && best <= 2) {
      const std::string& ek = best_e->seg->approximator_kind;
      if (ek == ck)
        ++a.approx_agree;
      else if (!ek.empty() && ek != "exact")
        ++a.approx_disagree;
    }
  }
  return a;
}

// ---------------------------------------------------------------------------------------------
// Evidence context

namespace {

// 0: e agrees with a claim quantity (same class and proportion kind, within 10%, or a point inside
// the other's interval), 1: it contradicts one (same class, none agrees), 2: unrelated.
int relate(const Q& e, const std::vector<Q>& claim) {
  int best = 2;
  for (const auto& q : claim) {
    if (e.cls != q.cls || e.proportion != q.proportion) continue;
    if ((e.point && (q.lo || q.hi) && inside(*e.point, q)) ||
        (q.point && (e.lo || e.hi) && inside(*q.point, e)))
      return 0;
    if (e.point && q.point) {
      if (*e.point == *q.point || closeness(*q.point, *e.point) <= 2) return 0;
      best = 1;
    }
  }
  return best;
}

}  // namespace

EvidenceContext evidence_context(std::string_view claim, const std::vector<claims::Segment>& claim_segs,
                                 const std::vector<std::string_view>& docs,
                                 const std::vector<std::vector<claims::Segment>>& doc_segs,
                                 const FeatureSettings& s) {
  EvidenceContext c;
  std::vector<Q> cq;
  for (const auto& sg : claim_segs)
    if (auto q = quantity(sg)) cq.push_back(*q);
  // Quoting: the claim's word 3-grams (surface words) found in each document's words.
  std::vector<std::string> cw;
  surface_tokens(claim, 0, claim.size(), cw);
  std::set<std::string> tri;
  for (std::size_t i = 0; i + 3 <= cw.size(); ++i) tri.insert(cw[i] + ' ' + cw[i + 1] + ' ' + cw[i + 2]);
  std::size_t best_doc = docs.size();
  for (std::size_t d = 0; d < docs.size(); ++d) {
    if (tri.empty()) break;
    std::vector<std::string> dw;
    surface_tokens(docs[d], 0, docs[d].size(), dw);
    std::set<std::string> dt;
    for (std::size_t i = 0; i + 3 <= dw.size(); ++i) dt.insert(dw[i] + ' ' + dw[i + 1] + ' ' + dw[i + 2]);
    std::size_t found = 0;
    for (const auto& t : tri) found += dt.count(t);
    const double share = static_cast<double>(found) / static_cast<double>(tri.size());
    if (share > c.quote) {
      c.quote = share;
      best_doc = d;
    }
  }
  std::set<std::string> agree, contra;
  for (std::size_t d = 0; d < docs.size() && d < doc_segs.size(); ++d) {
    for (const auto& sg : doc_segs[d]) {
      const auto e = quantity(sg);
      if (!e || cq.empty()) continue;
      const int r = relate(*e, cq);
      if (r == 2) continue;
      if (r == 0) {
        ++c.agreeing;
        if (d == 0) c.first_doc_agree = true;
        if (d == best_doc && e->point && std::any_of(cq.begin(), cq.end(), [&](const Q& q) {
              return q.cls == e->cls && q.point && *q.point == *e->point;
            }))
          c.quote_doc_exact = true;
      } else {
        ++c.contradicting;
      }
      if (s.context_words.empty()) continue;
      const std::string_view text = docs[d];
      const std::size_t b = sg.begin > s.context_chars ? sg.begin - s.context_chars : 0;
      const std::size_t e_end = std::min(text.size(), sg.end + s.context_chars);
      if (b >= e_end) continue;
      std::vector<std::string> ws;
      surface_tokens(text, b, e_end, ws);
      for (const auto& [name, phrases] : s.context_words) {
        const bool hit = std::any_of(phrases.begin(), phrases.end(), [&](const std::vector<std::string>& p) {
          if (p.empty() || p.size() > ws.size()) return false;
          for (std::size_t i = 0; i + p.size() <= ws.size(); ++i)
            if (std::equal(p.begin(), p.end(), ws.begin() + static_cast<std::ptrdiff_t>(i))) return true;
          return false;
        });
        if (hit) (r == 0 ? agree : contra).insert(name);
      }
    }
  }
  c.agree_words.assign(agree.begin(), agree.end());
  c.contra_words.assign(contra.begin(), contra.end());
  return c;
}

// ---------------------------------------------------------------------------------------------
// Extraction

namespace {

void add_ngrams(const std::vector<std::string>& toks, int max_n, const char* prefix,
                std::vector<std::pair<std::string, double>>& out) {
  if (max_n == 1) {  // unigrams: the first occurrence of each token, one string built per kept token
    StringViewSet seen(toks.size());
    for (const auto& t : toks)
      if (seen.insert(t)) {
        std::string& g = out.emplace_back(prefix, 1.0).first;
        g += t;
      }
    return;
  }
  // All n-grams first (no reallocation afterwards, so views into them stay valid), then the first
  // occurrence of each, in order.
  std::vector<std::string> grams;
  std::size_t total = 0;
  for (int n = 1; n <= max_n; ++n)
    total += toks.size() >= static_cast<std::size_t>(n) ? toks.size() - n + 1 : 0;
  grams.reserve(total);
  for (int n = 1; n <= max_n; ++n) {
    for (std::size_t i = 0; i + static_cast<std::size_t>(n) <= toks.size(); ++i) {
      std::string& g = grams.emplace_back(prefix);
      for (int k = 0; k < n; ++k) {
        if (k > 0) g += ' ';
        g += toks[i + static_cast<std::size_t>(k)];
      }
    }
  }
  std::vector<char> first(grams.size(), 0);
  {
    StringViewSet seen(grams.size());
    for (std::size_t i = 0; i < grams.size(); ++i) first[i] = seen.insert(grams[i]) ? 1 : 0;
  }
  out.reserve(out.size() + grams.size());
  for (std::size_t i = 0; i < grams.size(); ++i)
    if (first[i] != 0) out.emplace_back(std::move(grams[i]), 1.0);
}

// Each distinct token once, in order (the exact-value tokens of a text).
void add_unigrams(const std::vector<std::string>& toks, const char* prefix,
                  std::vector<std::pair<std::string, double>>& out) {
  StringViewSet seen(toks.size());
  for (const auto& t : toks)
    if (seen.insert(t)) out.emplace_back(prefix + t, 1.0);
}

double frac(std::size_t k, std::size_t n) {
  return n == 0 ? 0.0 : static_cast<double>(k) / static_cast<double>(n);
}

}  // namespace

namespace {

using FeatureList = std::vector<std::pair<std::string, double>>;

void add_claim_chars(const std::vector<std::string>& claim_toks, const GroupSettings& g, FeatureList& o) {
  // Character n-grams of the claim's words (each padded with a space on both sides), never of a
  // quantity, temporal or marker token: with canonical numbers they stay a function of the
  // quantities' values.
  std::unordered_set<std::string> seen;
  for (const auto& t : claim_toks) {
    if (t.empty() || t[0] == '<') continue;
    const std::string w = " " + t + " ";
    for (std::size_t n = 3; n <= static_cast<std::size_t>(g.max_n); ++n)
      for (std::size_t i = 0; i + n <= w.size(); ++i) {
        std::string name = "cc:" + w.substr(i, n);
        if (seen.insert(name).second) o.emplace_back(std::move(name), 1.0);
      }
  }
}

// The alignment group: how the claim's quantities, trends, periods and content words meet the
// evidence's.
void add_alignment(const std::vector<claims::Segment>& claim_segs,
                   const std::vector<std::vector<claims::Segment>>& doc_segs, std::size_t n_docs,
                   const std::vector<std::string>& claim_toks, const std::vector<std::string>& claim_values,
                   const StringViewSet& ev_words, FeatureList& o) {
  const Alignment a = align(claim_segs, doc_segs);
  const std::size_t n = a.claim_quantities;
  auto put = [&](const char* name, double v) {
    if (v != 0.0) o.emplace_back(name, v);
  };
  put("a:has_quantity", n > 0 ? 1 : 0);
  put("a:no_quantity", n == 0 ? 1 : 0);
  put("a:evidence_empty", n_docs == 0 ? 1 : 0);
  put("a:evidence_no_quantity", n_docs != 0 && a.evidence_quantities == 0 ? 1 : 0);
  put("a:same_dimension", frac(a.same_dimension, n));
  put("a:exact", frac(a.exact, n));
  put("a:any_exact", a.exact > 0 ? 1 : 0);
  put("a:within_1pct", frac(a.within_1pct, n));
  put("a:within_10pct", frac(a.within_10pct, n));
  put("a:contradicting", frac(a.contradicting, n));
  put("a:all_contradicting", n > 0 && a.contradicting == n ? 1 : 0);
  put("a:in_interval", frac(a.in_interval, n));
  put("a:contains_evidence", frac(a.contains_evidence, n));
  put("a:approx_agree", a.approx_agree > 0 ? 1 : 0);
  put("a:approx_disagree", a.approx_disagree > 0 ? 1 : 0);
  put("a:trend_agree", frac(a.trend_agree, a.trend_claim));
  put("a:trend_contradict", frac(a.trend_contradict, a.trend_claim));
  put("a:trend_unmatched", frac(a.trend_claim - a.trend_agree - a.trend_contradict, a.trend_claim));
  put("a:period_overlap", frac(a.period_overlap, a.claim_periods));
  put("a:period_disjoint", frac(a.period_disjoint, a.claim_periods));
  put("a:share_matched", frac(a.shares_matched, a.shares));
  put("a:share_contradicted", frac(a.shares_contradicted, a.shares));
  std::size_t content = 0, found = 0;
  StringViewSet seen;
  // Content words: 4+ bytes (a shape token is not one), and the claim's exact values.
  auto count = [&](const std::string& t) {
    if (!seen.insert(t)) return;
    ++content;
    found += ev_words.contains(t) ? 1 : 0;
  };
  for (const auto& t : claim_toks)
    if (t.size() >= 4 && t.rfind("<#", 0) != 0) count(t);
  for (const auto& t : claim_values)
    if (t.size() >= 4) count(t);
  put("a:word_overlap", frac(found, content));
}

void add_evidence_context(const claims::EvidenceRecord& r, const std::vector<claims::Segment>& claim_segs,
                          const std::vector<std::string_view>& docs,
                          const std::vector<std::vector<claims::Segment>>& doc_segs, const FeatureSettings& s,
                          FeatureList& o) {
  const EvidenceContext c = evidence_context(r.claim, claim_segs, docs, doc_segs, s);
  if (c.quote > 0) o.emplace_back("x:quote", c.quote);
  if (c.quote >= 0.5) o.emplace_back("x:quote>=0.5", 1.0);
  if (c.quote >= 0.8) o.emplace_back("x:quote>=0.8", 1.0);
  if (c.quote_doc_exact) o.emplace_back("x:quote_doc_exact", 1.0);
  if (c.first_doc_agree) o.emplace_back("x:first_doc_agree", 1.0);
  if (c.agreeing > 0 && c.contradicting == 0) o.emplace_back("x:only_agreeing", 1.0);
  if (c.contradicting > 0 && c.agreeing == 0) o.emplace_back("x:only_contradicting", 1.0);
  if (c.agreeing > 0 && c.contradicting > 0) o.emplace_back("x:mixed", 1.0);
  for (const auto& w : c.agree_words) o.emplace_back("x:agree:" + w, 1.0);
  for (const auto& w : c.contra_words) o.emplace_back("x:contra:" + w, 1.0);
}

// The cues group: phrase lists on the claim's words (and on the evidence's, when `ev_cues`), the
// claim's length, its number of quantities and whether it opens with a quotation mark.
void add_cues(const claims::EvidenceRecord& r, const std::vector<claims::Segment>& claim_segs,
              const FeatureSettings& s, bool ev_cues, const std::vector<std::string>& all,
              const StringViewSet& ev_words, FeatureList& o) {
  const std::vector<std::string> words = cue_words(r.claim, s.numbers, claim_segs);
  // `vocab` (when given) holds every word of `ws`: phrases with a word outside it cannot match.
  auto match = [&](const auto& list, const std::vector<std::string>& ws, const char* prefix,
                   const StringViewSet* vocab) {
    for (const auto& [name, phrases] : list) {
      bool hit = false;
      for (const auto& p : phrases) {
        if (p.empty() || p.size() > ws.size()) continue;
        if (vocab != nullptr &&
            std::any_of(p.begin(), p.end(), [&](const std::string& w) { return !vocab->contains(w); }))
          continue;
        for (std::size_t i = 0; i + p.size() <= ws.size() && !hit; ++i)
          hit = std::equal(p.begin(), p.end(), ws.begin() + static_cast<std::ptrdiff_t>(i));
        if (hit) break;
      }
      if (hit) o.emplace_back(prefix + name, 1.0);
    }
  };
  match(s.cues, words, "k:", nullptr);
  if (ev_cues) match(s.evidence_cues, all, "ke:", &ev_words);
  const std::size_t w = words.size();
  o.emplace_back(w < 10 ? "k:len<10" : w < 20 ? "k:len<20" : w < 40 ? "k:len<40" : "k:len>=40", 1.0);
  std::size_t nq = 0;
  for (const auto& sg : claim_segs) nq += sg.kind == claims::SegmentKind::kQuantity ? 1 : 0;
  o.emplace_back(fmt::format("k:quantities={}", std::min<std::size_t>(nq, 3)), 1.0);
  const auto first = r.claim.find_first_not_of(" \t");
  if (first != std::string::npos && (r.claim[first] == '"' || r.claim.compare(first, 3, "\xE2\x80\x9C") == 0))
    o.emplace_back("k:quoted", 1.0);
}

}  // namespace

NamedFeatures extract(const claims::EvidenceRecord& r, const FeatureSettings& s) {
  NamedFeatures f;
  const auto claim_segs = claims::find_segments(r.claim);
  const bool need_ev_segs = s.group(Group::kAlignment).enabled || s.group(Group::kEvidenceContext).enabled ||
                            (s.group(Group::kEvidenceNgrams).enabled && s.numbers == NumberMode::kCanonical);
  std::vector<std::string_view> docs;
  for (const auto& d : r.evidence) {
    if (docs.size() >= s.max_evidence_docs) break;
    docs.push_back(utf8::prefix(d.text, s.max_evidence_chars));
  }
  std::vector<std::vector<claims::Segment>> doc_segs(docs.size());
  if (need_ev_segs)
    for (std::size_t i = 0; i < docs.size(); ++i) doc_segs[i] = claims::find_segments(docs[i]);

  // Canonical numbers: the n-gram streams carry each quantity's shape, and its exact canonical
  // value is a unigram of its own (claim_values, ev_values).
  const bool canonical = s.numbers == NumberMode::kCanonical;
  std::vector<std::string> claim_values, ev_values;
  const auto claim_toks = tokenize(r.claim, s.numbers, &claim_segs, canonical ? &claim_values : nullptr);
  if (const auto& g = s.group(Group::kClaimNgrams); g.enabled) {
    auto& o = f.groups[static_cast<std::size_t>(Group::kClaimNgrams)];
    add_ngrams(claim_toks, g.max_n, "c:", o);
    add_unigrams(claim_values, "c:", o);
  }
  if (const auto& g = s.group(Group::kClaimChars); g.enabled) {
    add_claim_chars(claim_toks, g, f.groups[static_cast<std::size_t>(Group::kClaimChars)]);
  }

  StringViewSet ev_words;        // views into `all` and ev_values, filled once they are complete
  std::vector<std::string> all;  // evidence tokens, documents separated by "</d>"
  const bool ev_cues = s.group(Group::kCues).enabled && !s.evidence_cues.empty();
  const bool need_ev_toks =
      s.group(Group::kEvidenceNgrams).enabled || s.group(Group::kAlignment).enabled || ev_cues;
  if (need_ev_toks) {
    for (std::size_t i = 0; i < docs.size(); ++i) {
      auto t = tokenize(docs[i], s.numbers, need_ev_segs ? &doc_segs[i] : nullptr,
                        canonical ? &ev_values : nullptr);
      if (!all.empty()) all.emplace_back("</d>");
      all.insert(all.end(), std::make_move_iterator(t.begin()), std::make_move_iterator(t.end()));
    }
    ev_words = StringViewSet(all.size() + ev_values.size());
    for (const auto& w : all)
      if (w != "</d>") ev_words.insert(w);
    for (const auto& v : ev_values) ev_words.insert(v);
    if (const auto& g = s.group(Group::kEvidenceNgrams); g.enabled) {
      auto& o = f.groups[static_cast<std::size_t>(Group::kEvidenceNgrams)];
      add_ngrams(all, g.max_n, "e:", o);
      add_unigrams(ev_values, "e:", o);
    }
  }

  if (s.group(Group::kAlignment).enabled) {
    add_alignment(claim_segs, doc_segs, docs.size(), claim_toks, claim_values, ev_words,
                  f.groups[static_cast<std::size_t>(Group::kAlignment)]);
  }

  if (s.group(Group::kEvidenceContext).enabled && !docs.empty()) {
    add_evidence_context(r, claim_segs, docs, doc_segs, s,
                         f.groups[static_cast<std::size_t>(Group::kEvidenceContext)]);
  }

  if (s.group(Group::kCategory).enabled) {
    const auto cat = r.category ? *r.category : claims::categorize(r.claim, claim_segs).category;
    f.groups[static_cast<std::size_t>(Group::kCategory)].emplace_back(
        "g:" + std::string(claims::category_name(cat)), 1.0);
  }

  if (s.group(Group::kCues).enabled) {
    add_cues(r, claim_segs, s, ev_cues, all, ev_words, f.groups[static_cast<std::size_t>(Group::kCues)]);
  }
  return f;
}

// ---------------------------------------------------------------------------------------------
// Settings

namespace {

void num_field(const io::Json& o, const char* key, double& out, const std::string& path,
               std::string_view where) {
  if (auto it = o.find(key); it != o.end()) {
    if (!it->is_number()) fail("{}: field '{}{}' is not a number", where, path, key);
    out = it->get<double>();
  }
}

void size_field(const io::Json& o, const char* key, std::size_t& out, std::string_view where) {
  if (auto it = o.find(key); it != o.end()) {
    if (!it->is_number_unsigned()) fail("{}: field '{}' is not a non-negative integer", where, key);
    out = it->get<std::size_t>();
  }
}

// The "groups" object: per group, enabled, weight and max_n.
void parse_groups(const io::Json& groups, FeatureSettings& s, std::string_view where) {
  for (const auto& [k, v] : groups.items()) {
    const auto pos = std::find(kGroupNames.begin(), kGroupNames.end(), k);
    if (pos == kGroupNames.end()) fail("{}: field 'groups.{}': unknown feature group", where, k);
    auto& g = s.groups[static_cast<std::size_t>(pos - kGroupNames.begin())];
    if (!v.is_object()) fail("{}: field 'groups.{}' is not an object", where, k);
    if (auto e = v.find("enabled"); e != v.end()) {
      if (!e->is_boolean()) fail("{}: field 'groups.{}.enabled' is not a boolean", where, k);
      g.enabled = e->get<bool>();
    }
    num_field(v, "weight", g.weight, "groups." + k + ".", where);
    if (auto n = v.find("max_n"); n != v.end()) {
      const bool chars = k == "claim_chars";
      const int lo = chars ? 3 : 1, hi = chars ? 6 : 4;
      if (!n->is_number_integer() || n->get<int>() < lo || n->get<int>() > hi)
        fail("{}: field 'groups.{}.max_n' is not an integer in {}..{}", where, k, lo, hi);
      g.max_n = n->get<int>();
    }
  }
}

// The phrase lists: "cues", "evidence_cues" and "context_words".
void parse_phrase_lists(const io::Json& j, FeatureSettings& s, std::string_view where) {
  for (const char* field : {"cues", "evidence_cues", "context_words"}) {
    auto& dest = std::string_view(field) == "cues"            ? s.cues
                 : std::string_view(field) == "evidence_cues" ? s.evidence_cues
                                                              : s.context_words;
    auto it = j.find(field);
    if (it == j.end()) continue;
    if (!it->is_object()) fail("{}: field '{}' is not an object", where, field);
    for (const auto& [k, v] : it->items()) {
      if (!v.is_array()) fail("{}: field '{}.{}' is not an array", where, field, k);
      std::vector<std::vector<std::string>> phrases;
      for (const auto& p : v) {
        if (!p.is_string()) fail("{}: field '{}.{}' holds a non-string", where, field, k);
        std::vector<std::string> w;
        const std::string t = p.get<std::string>();
        surface_tokens(t, 0, t.size(), w);
        phrases.push_back(std::move(w));
      }
      dest.emplace_back(k, std::move(phrases));
    }
  }
}

void parse_xgboost(const io::Json& xgb, FeatureSettings& s, std::string_view where) {
  const auto* b = &xgb;
  auto int_field = [&](const char* key, int& out, int lo, int hi) {
    if (auto v = b->find(key); v != b->end()) {
      if (!v->is_number_integer() || v->get<int>() < lo || v->get<int>() > hi)
        fail("{}: field 'learner.xgboost.{}' is not an integer in {}..{}", where, key, lo, hi);
      out = v->get<int>();
    }
  };
  int_field("rounds", s.learner.boost.rounds, 1, 5000);
  int_field("max_depth", s.learner.boost.max_depth, 1, 12);
  num_field(*b, "eta", s.learner.boost.eta, "learner.xgboost.", where);
  num_field(*b, "min_child_weight", s.learner.boost.min_child_weight, "learner.xgboost.", where);
  num_field(*b, "lambda", s.learner.boost.lambda, "learner.xgboost.", where);
  if (!(s.learner.boost.eta > 0 && s.learner.boost.eta <= 1) || !(s.learner.boost.min_child_weight >= 0) ||
      !(s.learner.boost.lambda >= 0))
    fail("{}: learner.xgboost: eta must be in (0, 1], min_child_weight and lambda non-negative", where);
}

// The "learner" object.
void parse_learner(const io::Json& l, FeatureSettings& s, std::string_view where) {
  if (!l.is_object()) fail("{}: field 'learner' is not an object", where);
  if (auto v = l.find("solver"); v != l.end()) {
    if (!v->is_string() || (*v != "l2r_lr" && *v != "l2r_l2loss_svc"))
      fail("{}: field 'learner.solver' is not l2r_lr or l2r_l2loss_svc", where);
    s.learner.solver = v->get<std::string>();
  }
  num_field(l, "C", s.learner.C, "learner.", where);
  num_field(l, "eps", s.learner.eps, "learner.", where);
  num_field(l, "bias", s.learner.bias, "learner.", where);
  if (!(s.learner.C > 0) || !(s.learner.eps > 0)) fail("{}: learner C and eps must be positive", where);
  if (auto v = l.find("kind"); v != l.end()) {
    if (!v->is_string() || (*v != "linear" && *v != "xgboost" && *v != "stacked"))
      fail("{}: field 'learner.kind' is not linear, xgboost or stacked", where);
    s.learner.kind = v->get<std::string>();
  }
  if (auto v = l.find("inner_folds"); v != l.end()) {
    if (!v->is_number_integer() || v->get<int>() < 2 || v->get<int>() > 20)
      fail("{}: field 'learner.inner_folds' is not an integer in 2..20", where);
    s.learner.inner_folds = v->get<int>();
  }
  if (auto v = l.find("select_C"); v != l.end()) {
    if (!v->is_array()) fail("{}: field 'learner.select_C' is not an array", where);
    for (const auto& c : *v) {
      if (!c.is_number() || !(c.get<double>() > 0))
        fail("{}: field 'learner.select_C' holds a value that is not a positive number", where);
      s.learner.select_C.push_back(c.get<double>());
    }
  }
  if (auto v = l.find("tune_offsets"); v != l.end()) {
    if (!v->is_boolean()) fail("{}: field 'learner.tune_offsets' is not a boolean", where);
    s.learner.tune_offsets = v->get<bool>();
  }
  num_field(l, "offset_range", s.learner.offset_range, "learner.", where);
  if (!(s.learner.offset_range >= 0 && s.learner.offset_range <= 5))
    fail("{}: field 'learner.offset_range' is not a number in 0..5", where);
  if (auto v = l.find("offsets"); v != l.end()) {
    if (!v->is_array() || v->size() != 3 ||
        !std::all_of(v->begin(), v->end(), [](const io::Json& x) { return x.is_number(); }))
      fail("{}: field 'learner.offsets' is not an array of 3 numbers", where);
    for (std::size_t i = 0; i < 3; ++i) s.learner.offsets[i] = (*v)[i].get<double>();
  }
  if (auto v = l.find("select_class_weight"); v != l.end()) {
    if (!v->is_array()) fail("{}: field 'learner.select_class_weight' is not an array", where);
    for (const auto& c : *v) {
      if (!c.is_string() || (c != "balanced" && c != "none"))
        fail("{}: field 'learner.select_class_weight' holds a value other than balanced or none", where);
      s.learner.select_class_weight.push_back(c.get<std::string>());
    }
  }
  if (auto b = l.find("xgboost"); b != l.end()) {
    if (!b->is_object()) fail("{}: field 'learner.xgboost' is not an object", where);
    parse_xgboost(*b, s, where);
  }
  if (auto v = l.find("class_weight"); v != l.end()) {
    if (!v->is_string() || (*v != "balanced" && *v != "none"))
      fail("{}: field 'learner.class_weight' is not balanced or none", where);
    s.learner.balanced = *v == "balanced";
  }
}

}  // namespace

FeatureSettings FeatureSettings::parse(const io::Json& j, std::string_view where) {
  FeatureSettings s;
  if (!j.is_object()) fail("{}: not a JSON object", where);
  if (auto it = j.find("numbers"); it != j.end()) {
    if (!it->is_string()) fail("{}: field 'numbers' is not a string", where);
    s.numbers = number_mode_from_name(it->get<std::string>());
  }
  size_field(j, "min_df", s.min_df, where);
  size_field(j, "max_evidence_chars", s.max_evidence_chars, where);
  size_field(j, "max_evidence_docs", s.max_evidence_docs, where);
  // Groups added later are off unless the file names them (a model file written before they
  // existed keeps its features).
  s.group(Group::kClaimChars) = GroupSettings{false, 1.0, 5};
  s.group(Group::kEvidenceContext) = GroupSettings{false, 1.0, 1};
  size_field(j, "context_chars", s.context_chars, where);
  if (auto it = j.find("groups"); it != j.end()) {
    if (!it->is_object()) fail("{}: field 'groups' is not an object", where);
    parse_groups(*it, s, where);
  }
  parse_phrase_lists(j, s, where);
  if (auto it = j.find("learner"); it != j.end()) parse_learner(*it, s, where);
  return s;
}

FeatureSettings FeatureSettings::load(const std::filesystem::path& path) {
  return parse(io::read_json_file(path), path.filename().string());
}

const FeatureSettings& FeatureSettings::builtin() {
  static const FeatureSettings s = load(io::data_path("verify/features.json"));
  return s;
}

io::OrderedJson FeatureSettings::to_json() const {
  io::OrderedJson j;
  j["numbers"] = std::string(number_mode_name(numbers));
  j["min_df"] = min_df;
  j["max_evidence_chars"] = max_evidence_chars;
  j["max_evidence_docs"] = max_evidence_docs;
  io::OrderedJson g;
  const bool context = group(Group::kEvidenceContext).enabled;
  for (std::size_t i = 0; i < kGroupCount; ++i) {
    // The evidence_context group is written only when on: a model file without it parses with it
    // off, and a default model's bytes stay those of the settings it was trained with.
    if (i == static_cast<std::size_t>(Group::kEvidenceContext) && !context) continue;
    io::OrderedJson o;
    o["enabled"] = groups[i].enabled;
    o["weight"] = groups[i].weight;
    if (i == static_cast<std::size_t>(Group::kClaimNgrams) ||
        i == static_cast<std::size_t>(Group::kEvidenceNgrams) ||
        i == static_cast<std::size_t>(Group::kClaimChars))
      o["max_n"] = groups[i].max_n;
    g[std::string(kGroupNames[i])] = std::move(o);
  }
  j["groups"] = std::move(g);
  for (const auto* list : {&cues, &evidence_cues, &context_words}) {
    if (list == &context_words && !context) continue;
    io::OrderedJson c = io::OrderedJson::object();
    for (const auto& [name, phrases] : *list) {
      io::OrderedJson arr = io::OrderedJson::array();
      for (const auto& p : phrases) {
        std::string t;
        for (const auto& w : p) t += (t.empty() ? "" : " ") + w;
        arr.push_back(t);
      }
      c[name] = std::move(arr);
    }
    if (list == &cues || !c.empty())
      j[list == &cues ? "cues" : list == &evidence_cues ? "evidence_cues" : "context_words"] = std::move(c);
  }
  if (context && !context_words.empty()) j["context_chars"] = context_chars;
  j["learner"] = {{"kind", learner.kind},
                  {"inner_folds", learner.inner_folds},
                  {"xgboost",
                   {{"rounds", learner.boost.rounds},
                    {"max_depth", learner.boost.max_depth},
                    {"eta", learner.boost.eta},
                    {"min_child_weight", learner.boost.min_child_weight},
                    {"lambda", learner.boost.lambda}}},
                  {"select_C", learner.select_C},
                  {"select_class_weight", learner.select_class_weight},
                  {"tune_offsets", learner.tune_offsets},
                  {"offset_range", learner.offset_range},
                  {"offsets", learner.offsets},
                  {"solver", learner.solver},
                  {"C", learner.C},
                  {"eps", learner.eps},
                  {"class_weight", learner.balanced ? "balanced" : "none"},
                  {"bias", learner.bias}};
  return j;
}

}  // namespace numcheck::verify
