#include "claims/segment.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "core/ascii.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "num/read.hpp"

namespace numcheck::claims {

namespace {

using num::Rational;

using ascii::is_alpha;
using ascii::is_digit;
using ascii::is_space;
using ascii::is_wordish;
using ascii::lower;

// An exact value: an integer or a "p/q" string.
Rational rat(const io::Record& r, std::string_view key) {
  const io::Json& v = r.at(key);
  if (v.is_number_integer()) return Rational(static_cast<long long>(r.integer(key)));
  if (v.is_string())
    return Rational::parse_exact(r.string(key), fmt::format("{}: {}", r.where(), r.path(key)));
  r.fail_field(key, "must be an integer or a \"p/q\" string");
}

std::vector<std::string> strings(const io::Record& j, std::string_view key) {
  std::vector<std::string> out = j.opt_strings(key).value_or(std::vector<std::string>{});
  for (auto& s : out) s = lower(s);
  return out;
}

std::map<std::string, Rational> rational_map(const io::Record& j, std::string_view key, bool fold) {
  std::map<std::string, Rational> out;
  if (!j.has(key)) return out;
  const io::Record m = j.object(key);
  for (const auto& [k, v] : m.json().items()) out.emplace(fold ? lower(k) : k, rat(m, k));
  return out;
}

// "MM-DD" with a real month and day (checked when the lexicon is read, so that using it cannot fail).
bool is_month_day(std::string_view md) {
  if (md.size() != 5 || md[2] != '-') return false;
  for (const std::size_t i : {0u, 1u, 3u, 4u}) {
    if (md[i] < '0' || md[i] > '9') return false;
  }
  const int m = (md[0] - '0') * 10 + (md[1] - '0');
  const int d = (md[3] - '0') * 10 + (md[4] - '0');
  return m >= 1 && m <= 12 && d >= 1 && d <= 31;
}

int two_digits(std::string_view s) { return (s[0] - '0') * 10 + (s[1] - '0'); }

template <typename T>
void longest_first(std::vector<T>& v) {
  std::stable_sort(v.begin(), v.end(),
                   [](const T& a, const T& b) { return a.phrase.size() > b.phrase.size(); });
}

}  // namespace

Lexicon Lexicon::parse(std::string_view json_text, std::string_view where) {
  const io::Json json = io::parse_json(json_text, where);
  const io::Record j = io::Record::of(json, where);
  Lexicon lex;
  for (const char* key : {"approximators_before", "approximators_after"}) {
    if (!j.has(key)) continue;
    for (const auto& e : j.objects(key)) {
      Approx a{lower(e.string("phrase")), e.string("kind")};
      static constexpr std::array<std::string_view, 8> kKinds = {
          "lower",       "lower_inclusive",   "upper", "upper_inclusive",
          "approximate", "approximate_below", "some",  "exact"};
      if (std::find(kKinds.begin(), kKinds.end(), a.kind) == kKinds.end())
        fail("{}: {}: unknown approximator kind '{}'", where, key, a.kind);
      (std::string_view(key) == "approximators_before" ? lex.before : lex.after).push_back(std::move(a));
    }
  }
  longest_first(lex.before);
  longest_first(lex.after);
  lex.scale_words = rational_map(j, "scale_words", true);
  lex.attached_scales = rational_map(j, "attached_scales", false);
  lex.multiplicative_trends = rational_map(j, "multiplicative_trends", true);
  lex.calendar_units = rational_map(j, "calendar_units", true);
  lex.attached_need_currency =
      j.opt_strings("attached_scales_need_currency").value_or(std::vector<std::string>{});
  if (j.has("vague_quantities")) {
    for (const auto& e : j.objects("vague_quantities"))
      lex.vague.push_back({lower(e.string("phrase")), rat(e, "lo"), rat(e, "hi")});
    longest_first(lex.vague);
  }
  if (const auto mu = j.opt_object("multiplier_units")) {
    for (const auto& [k, v] : mu->json().items()) lex.multiplier_units[lower(k)] = mu->string(k);
  }
  if (const auto tw = j.opt_object("trend_words")) {
    for (const auto& [k, v] : tw->json().items()) {
      if (k != "up" && k != "down") fail("{}: trend_words: unknown direction '{}'", where, k);
      for (const auto& w : tw->strings(k)) lex.trend_direction[lower(w)] = k;
    }
  }
  lex.name_prefixes = strings(j, "name_prefixes");
  lex.name_tokens = strings(j, "name_tokens");
  for (auto& p : strings(j, "non_quantity_phrases")) lex.name_tokens.push_back(std::move(p));
  lex.relative_temporal = strings(j, "relative_temporal");
  lex.change_words = strings(j, "change_words");
  lex.multiplier_followers = strings(j, "multiplier_followers");
  lex.multiplier_lead_words = strings(j, "multiplier_lead_words");
  lex.fraction_words = rational_map(j, "fraction_words", true);
  lex.fraction_followers = strings(j, "fraction_followers");
  lex.fraction_multiplier_followers = strings(j, "fraction_multiplier_followers");
  lex.fraction_blocked_after = strings(j, "fraction_blocked_after");
  lex.name_exempt_before = strings(j, "name_exempt_before");
  lex.hyphen_scales = rational_map(j, "hyphen_scales", true);
  lex.ordinal_words = strings(j, "ordinal_words");
  lex.ordinal_fraction_followers = strings(j, "ordinal_fraction_followers");
  std::stable_sort(lex.relative_temporal.begin(), lex.relative_temporal.end(),
                   [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  if (const auto months = j.opt_object("months")) {
    for (const auto& [k, v] : months->json().items())
      lex.months[lower(k)] = static_cast<int>(months->integer(k, 1, 12));
  }
  if (auto y = j.opt_integer("year_min", 0, 9999)) lex.year_min = static_cast<int>(*y);
  if (auto y = j.opt_integer("year_max", 0, 9999)) lex.year_max = static_cast<int>(*y);
  if (const auto pm = j.opt_object("period_modifiers")) {
    for (const auto& [k, v] : pm->json().items()) {
      const auto md = pm->strings(k);
      if (md.size() != 2 || !is_month_day(md[0]) || !is_month_day(md[1]))
        pm->fail_field(k, "must be [start MM-DD, end MM-DD]");
      lex.modifiers.push_back({lower(k), md[0], md[1]});
    }
    longest_first(lex.modifiers);
  }
  return lex;
}

Lexicon Lexicon::load(const std::filesystem::path& path) { return parse(io::read_file(path), path.string()); }

const Lexicon& Lexicon::builtin() {
  static const Lexicon lex = load(io::data_path("claims/segments.json"));
  return lex;
}

namespace {

int days_in_month(int y, int m) {
  static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m == 2 && y > 0 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) return 29;
  return d[(m - 1) % 12];
}

std::string ystr(int y) { return y > 0 ? fmt::format("{:04d}", y) : "XXXX"; }
std::string date(int y, int m, int d) { return fmt::format("{}-{:02d}-{:02d}", ystr(y), m, d); }

class Segmenter {
 public:
  Segmenter(std::string_view text, const Lexicon& lex, const num::UnitRegistry& units)
      : t_(text), low_(lower(text)), L_(lex), U_(units), used_(text.size(), false) {
    index_word_starts();
    for (const auto& u : U_.units())
      if (u.prefix)
        for (const auto& sym : u.symbols)
          if (!sym.empty()) currency_last_[static_cast<unsigned char>(sym.back())] = true;
  }

  std::vector<Segment> run() {
    mark_name_tokens();
    numeric_dates_and_times();
    relative_expressions();
    month_dates();
    numbers();
    fraction_words();
    vague_quantities();
    multiplicative_trends();
    std::sort(out_.begin(), out_.end(), [](const Segment& a, const Segment& b) { return a.begin < b.begin; });
    return std::move(out_);
  }

 private:
  std::string_view t_;
  std::string low_;
  const Lexicon& L_;
  const num::UnitRegistry& U_;
  std::vector<bool> used_;
  std::vector<Segment> out_;
  // Word starts (a wordish byte with boundary_before) grouped by their lowered byte, ascending
  // within a group: positions start_pos_[start_off_[b] .. start_off_[b + 1]).
  std::vector<std::uint32_t> start_pos_;
  std::array<std::uint32_t, 257> start_off_{};
  std::vector<std::size_t> hits_;
  std::array<bool, 256> currency_last_{};  // last bytes of the currency symbols written before a number

  void index_word_starts() {
    // One pass finds the word starts (ascending), a counting sort groups them by lowered byte.
    std::array<std::uint32_t, 256> count{};
    std::vector<std::uint32_t> starts;
    starts.reserve(n() / 4 + 1);
    for (std::size_t p = 0; p < n(); ++p)
      if (is_wordish(t_[p]) && boundary_before(p)) {
        starts.push_back(static_cast<std::uint32_t>(p));
        ++count[static_cast<unsigned char>(low_[p])];
      }
    for (std::size_t b = 0; b < 256; ++b) start_off_[b + 1] = start_off_[b] + count[b];
    start_pos_.resize(start_off_[256]);
    std::array<std::uint32_t, 256> fill{};
    for (const std::uint32_t p : starts) {
      const auto b = static_cast<unsigned char>(low_[p]);
      start_pos_[start_off_[b] + fill[b]++] = p;
    }
  }
  // Every position where low_ holds `w` and a phrase starting there can pass word_at() or
  // boundary_before(), ascending: for a phrase starting with a wordish byte only word starts (from
  // the index) qualify; otherwise every occurrence. The loops that use this skip any other position
  // first thing, so their output is that of a plain low_.find() loop. Not reentrant.
  const std::vector<std::size_t>& hits(std::string_view w) {
    hits_.clear();
    if (w.empty() || !is_wordish(w.front()) || n() > std::numeric_limits<std::uint32_t>::max()) {
      for (std::size_t p = low_.find(w); p != std::string::npos; p = low_.find(w, p + 1)) hits_.push_back(p);
      return hits_;
    }
    const auto b = static_cast<unsigned char>(w.front());
    for (std::uint32_t i = start_off_[b]; i < start_off_[b + 1]; ++i) {
      const std::size_t p = start_pos_[i];
      if (p + w.size() <= n() && low_.compare(p, w.size(), w) == 0) hits_.push_back(p);
    }
    return hits_;
  }

  std::size_t n() const { return t_.size(); }
  bool free(std::size_t b, std::size_t e) const {
    for (std::size_t i = b; i < e && i < used_.size(); ++i)
      if (used_[i]) return false;
    return true;
  }
  void claim(std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e && i < used_.size(); ++i) used_[i] = true;
  }
  bool boundary_before(std::size_t p) const {
    if (p >= 3 && t_[p - 3] == '\xE2' && t_[p - 2] == '\x80') {
      const unsigned char c = static_cast<unsigned char>(t_[p - 1]);
      if (c == 0x98 || c == 0x99 || c == 0x9C || c == 0x9D || c == 0x93 || c == 0x94)
        return true;  // quotes, dashes
    }
    return p == 0 || !is_wordish(t_[p - 1]);
  }
  // A right single quote (U+2019, "week’s") or a left one ends a word like ASCII "'" does.
  bool boundary_after(std::size_t p) const {
    return p >= n() || !is_wordish(t_[p]) ||
           (p + 3 <= n() && t_[p] == '\xE2' && t_[p + 1] == '\x80' &&
            (t_[p + 2] == '\x99' || t_[p + 2] == '\x9D'));
  }
  // Does low_ hold `w` at p as a whole word (phrase)?
  bool word_at(std::size_t p, std::string_view w) const {
    if (p + w.size() > n() || low_.compare(p, w.size(), w) != 0) return false;
    const bool wb = !is_wordish(w.front()) || boundary_before(p);
    const bool we = !is_wordish(w.back()) || boundary_after(p + w.size());
    return wb && we;
  }
  std::size_t skip_spaces(std::size_t p) const {
    while (p < n() && (t_[p] == ' ' || t_[p] == '\t')) ++p;
    return p;
  }
  std::size_t skip_spaces_back(std::size_t p) const {
    while (p > 0 && (t_[p - 1] == ' ' || t_[p - 1] == '\t')) --p;
    return p;
  }
  // Phrase ending right before p (spaces between allowed): returns its start or npos.
  std::size_t phrase_before(std::size_t p, std::string_view w) const {
    const std::size_t q = skip_spaces_back(p);
    if (q < w.size()) return std::string_view::npos;
    const std::size_t b = q - w.size();
    return word_at(b, w) ? b : std::string_view::npos;
  }
  std::string word_before(std::size_t p) const {
    std::size_t q = skip_spaces_back(p);
    std::size_t b = q;
    while (b > 0 && !is_space(t_[b - 1]) && t_[b - 1] != '(' && t_[b - 1] != '"') --b;
    std::string w = low_.substr(b, q - b);
    while (!w.empty() && (w.back() == ',' || w.back() == ':' || w.back() == ';')) w.pop_back();
    return w;
  }
  Segment make(SegmentKind k, std::size_t b, std::size_t e) const {
    Segment s;
    s.kind = k;
    s.begin = b;
    s.end = e;
    s.text = std::string(t_.substr(b, e - b));
    return s;
  }
  void push(Segment s) {
    claim(s.begin, s.end);
    out_.push_back(std::move(s));
  }

  // ------------------------------------------------------------------ names and dates
  void mark_name_tokens() {
    for (const auto& tok : L_.name_tokens) {
      for (std::size_t p : hits(tok))
        if (boundary_before(p) && boundary_after(p + tok.size())) claim(p, p + tok.size());
    }
    mark_identifiers();
  }

  // Numbers that identify rather than count: a digit run followed by parenthesized letters or
  // digits ("501(c)(4)", "401(k)") and telephone numbers ("1-800-273-8255", "555-123-4567").
  void mark_identifiers() {
    auto digit_run = [&](std::size_t p) {
      std::size_t q = p;
      while (q < n() && is_digit(t_[q])) ++q;
      return q - p;
    };
    for (std::size_t p = 0; p < n(); ++p) {
      if (!is_digit(t_[p]) || (p > 0 && (is_wordish(t_[p - 1]) || t_[p - 1] == '-'))) continue;
      const std::size_t l = digit_run(p);
      std::size_t e = p + l;
      // Parenthesized groups: "(c)", "(4)", at most three letters or digits each.
      std::size_t g = e;
      while (g < n() && t_[g] == '(') {
        std::size_t k = g + 1;
        while (k < n() && k - g <= 3 && (is_alpha(t_[k]) || is_digit(t_[k]))) ++k;
        if (k == g + 1 || k >= n() || t_[k] != ')') break;
        g = k + 1;
      }
      if (g > e) {
        claim(p, g);
        p = g;
        continue;
      }
      // Telephone numbers: [1-]ddd-ddd-dddd (separators '-' or '.').
      std::vector<std::size_t> groups{l};
      std::size_t q = e;
      while (q + 1 < n() && (t_[q] == '-' || t_[q] == '.') && t_[q] == t_[e] && is_digit(t_[q + 1]) &&
             groups.size() < 4) {
        const std::size_t gl = digit_run(q + 1);
        groups.push_back(gl);
        q += 1 + gl;
      }
      const bool phone = (groups == std::vector<std::size_t>{3, 3, 4} ||
                          (groups == std::vector<std::size_t>{1, 3, 3, 4} && t_[p] == '1')) &&
                         boundary_after(q);
      if (phone) {
        claim(p, q);
        p = q;
        continue;
      }
      p = e;
    }
  }

  std::size_t digits_at(std::size_t p, int& value, std::size_t max_len = 4) const {
    std::size_t q = p;
    value = 0;
    while (q < n() && is_digit(t_[q]) && q - p < max_len) value = value * 10 + (t_[q++] - '0');
    if (q < n() && is_digit(t_[q])) return 0;  // longer than max_len
    return q - p;
  }

  void numeric_dates_and_times() {
    for (std::size_t p = 0; p < n(); ++p) {
      if (!is_digit(t_[p]) || (p > 0 && (is_wordish(t_[p - 1]) || t_[p - 1] == '.' || t_[p - 1] == '/')))
        continue;
      int a = 0, b = 0, c = 0;
      const std::size_t la = digits_at(p, a);
      if (la == 0) continue;
      std::size_t q = p + la;
      // dd/mm/yyyy, mm/dd/yyyy, yyyy-mm-dd, dd.mm.yyyy
      if (q < n() && (t_[q] == '/' || t_[q] == '-' || t_[q] == '.')) {
        const char sep = t_[q];
        const std::size_t lb = digits_at(q + 1, b, 2);
        const std::size_t r = q + 1 + lb;
        if (lb > 0 && r < n() && t_[r] == sep) {
          const std::size_t lc = digits_at(r + 1, c);
          const std::size_t e = r + 1 + lc;
          if (lc > 0 && boundary_after(e) && !(e < n() && (t_[e] == '/' || t_[e] == '-'))) {
            int y = 0, m = 0, d = 0;
            if (la == 4) {
              y = a, m = b, d = c;
            } else if (lc == 4 || lc == 2) {
              y = lc == 2 ? 2000 + c : c;
              if (a > 12) {
                d = a, m = b;
              } else {
                m = a, d = b;  // US order when ambiguous
              }
            }
            if (y > 0 && m >= 1 && m <= 12 && d >= 1 && d <= days_in_month(y, m) && free(p, e)) {
              Segment s = make(SegmentKind::kTemporal, p, e);
              s.granularity = "day";
              s.period_start = s.period_end = date(y, m, d);
              push(std::move(s));
              p = e;
              continue;
            }
          }
        }
      }
      // clock times: h:mm [am|pm], h am/pm
      if (la <= 2 && a <= 24 && q < n() && t_[q] == ':') {
        const std::size_t lb = digits_at(q + 1, b, 2);
        if (lb == 2 && b < 60) {
          std::size_t e = q + 3;
          const std::size_t s2 = skip_spaces(e);
          for (std::string_view ap : {"a.m.", "p.m.", "am", "pm"})
            if (word_at(s2, ap) || (ap.back() == '.' && low_.compare(s2, ap.size(), ap) == 0)) {
              e = s2 + ap.size();
              break;
            }
          if (free(p, e)) {
            Segment s = make(SegmentKind::kTemporal, p, e);
            s.granularity = "time";
            push(std::move(s));
            p = e;
            continue;
          }
        }
      }
      if (la <= 2 && a >= 1 && a <= 12) {
        const std::size_t s2 = skip_spaces(q);
        for (std::string_view ap : {"a.m.", "p.m.", "am", "pm"}) {
          const bool hit = ap.back() == '.' ? low_.compare(s2, ap.size(), ap) == 0 : word_at(s2, ap);
          if (hit && free(p, s2 + ap.size())) {
            Segment s = make(SegmentKind::kTemporal, p, s2 + ap.size());
            s.granularity = "time";
            push(std::move(s));
            break;
          }
        }
      }
      // fiscal years written FY2019 / FY19 / FY 2019
    }
    // "mid-2019": the number reader treats digits hyphenated to a word as part of a name.
    for (const auto& m : L_.modifiers) {
      if (m.phrase.back() != '-') continue;
      for (std::size_t p : hits(m.phrase)) {
        int y = 0;
        const std::size_t q = p + m.phrase.size();
        if (!boundary_before(p) || digits_at(q, y) != 4 || !boundary_after(q + 4) || !free(p, q + 4))
          continue;
        if (y < L_.year_min || y > L_.year_max) continue;
        Segment s = make(SegmentKind::kTemporal, p, q + 4);
        s.granularity = "part";
        s.period_start = fmt::format("{}-{}", ystr(y), m.start_md);
        s.period_end = fmt::format("{}-{}", ystr(y), m.end_md);
        push(std::move(s));
      }
    }
    for (std::size_t p : hits("fy")) {
      if (!boundary_before(p)) continue;
      std::size_t q = p + 2;
      if (q < n() && t_[q] == ' ') ++q;
      int y = 0;
      const std::size_t l = digits_at(q, y);
      if ((l != 2 && l != 4) || !boundary_after(q + l) || !free(p, q + l)) continue;
      if (l == 2) y += 2000;
      Segment s = make(SegmentKind::kTemporal, p, q + l);
      s.granularity = "fiscal_year";
      s.period_start = date(y, 1, 1);
      s.period_end = date(y, 12, 31);
      push(std::move(s));
    }
  }

  void relative_expressions() {
    for (const auto& r : L_.relative_temporal) {
      for (std::size_t p : hits(r)) {
        if (!word_at(p, r) || !free(p, p + r.size())) continue;
        Segment s = make(SegmentKind::kTemporal, p, p + r.size());
        s.granularity = "relative";
        push(std::move(s));
      }
    }
  }

  // Month Day[, Year] | Month Year | Day Month [Year] | Month (after a temporal preposition)
  void month_dates() {
    std::array<bool, 256> first{};  // first bytes of the month names: other words skip the lookup
    for (const auto& kv : L_.months)
      if (!kv.first.empty()) first[static_cast<unsigned char>(kv.first[0])] = true;
    for (std::size_t p = 0; p < n(); ++p) {
      if (!is_alpha(t_[p]) || !boundary_before(p)) continue;
      std::size_t e = p;
      while (e < n() && is_alpha(t_[e])) ++e;
      const std::string_view w = std::string_view(low_).substr(p, e - p);
      auto it = first[static_cast<unsigned char>(w[0])] ? L_.months.find(w) : L_.months.end();
      if (it == L_.months.end()) {
        p = e;
        continue;
      }
      const int month = it->second;
      std::size_t end = e;
      if (end < n() && t_[end] == '.' && w.size() <= 4) ++end;  // "Sept."
      int day = 0, year = 0;
      std::size_t begin = p;
      // Month Day(st)? [,] [Year]
      std::size_t q = skip_spaces(end);
      int v = 0;
      std::size_t l = digits_at(q, v, 2);
      if (l > 0 && v >= 1 && v <= 31) {
        std::size_t r = q + l;
        for (std::string_view suf : {"st", "nd", "rd", "th"})
          if (low_.compare(r, 2, suf) == 0 && boundary_after(r + 2)) r += 2;
        if (boundary_after(r)) {
          day = v;
          end = r;
        }
      }
      {
        std::size_t r = end;
        if (r < n() && t_[r] == ',') ++r;
        r = skip_spaces(r);
        if (word_at(r, "of")) r = skip_spaces(r + 2);
        int y = 0;
        const std::size_t ly = digits_at(r, y);
        if (ly == 4 && boundary_after(r + 4) && y >= L_.year_min && y <= L_.year_max) {
          year = y;
          end = r + 4;
        }
      }
      // Day(st)? [of] Month
      if (day == 0) {
        std::size_t b = skip_spaces_back(p);
        const std::size_t of = phrase_before(p, "of");
        if (of != std::string_view::npos) b = skip_spaces_back(of);
        std::size_t r = b;
        for (std::string_view suf : {"st", "nd", "rd", "th"})
          if (r >= 2 && low_.compare(r - 2, 2, suf) == 0) {
            r -= 2;
            break;
          }
        std::size_t d0 = r;
        while (d0 > 0 && is_digit(t_[d0 - 1]) && r - d0 < 2) --d0;
        if (d0 < r && boundary_before(d0)) {
          int dv = 0;
          digits_at(d0, dv, 2);
          if (dv >= 1 && dv <= 31) {
            day = dv;
            begin = d0;
          }
        }
      }
      // Month words double as verbs and names ("may", "march"): without a year they count only when
      // capitalized, and a bare month also needs a temporal preposition before it.
      const bool capital = t_[p] >= 'A' && t_[p] <= 'Z';
      if (year == 0 && !capital) {
        p = e;
        continue;
      }
      if (day == 0 && year == 0) {
        // A bare month only after a temporal preposition (and never for ambiguous words like "may").
        static constexpr std::array<std::string_view, 12> kPreps = {
            "in", "since", "during", "until", "till", "by", "from", "last", "next", "this", "early", "late"};
        bool prep = false;
        for (auto pr : kPreps) prep = prep || phrase_before(p, pr) != std::string_view::npos;
        if (!prep) {
          p = e;
          continue;
        }
      }
      if (!free(begin, end)) {
        p = end;
        continue;
      }
      Segment s = make(SegmentKind::kTemporal, begin, end);
      if (day > 0) {
        s.granularity = "day";
        const int dd = std::min(day, days_in_month(year, month));
        s.period_start = s.period_end = date(year, month, dd);
      } else {
        s.granularity = "month";
        s.period_start = date(year, month, 1);
        s.period_end = date(year, month, days_in_month(year, month));
      }
      push(std::move(s));
      p = end;
    }
  }

  // ------------------------------------------------------------------ numbers
  struct Draft {
    std::size_t b = 0, e = 0;    // segment extent
    std::size_t nb = 0, ne = 0;  // the number itself
    Rational value;
    num::NumberForm form = num::NumberForm::kInteger;
    const num::Unit* unit = nullptr;
    std::string cal_unit;  // calendar unit id when not a registry unit
    bool times = false;
    bool currency_prefix = false;
    bool year = false;
    bool events = false;  // "voted 10 times": a count of events, not a multiplier
    std::string approx, approx_kind;
  };

  const num::Unit* currency_before(std::size_t p, std::size_t& start) const {
    // Symbols written before the number: "$5", "US$ 5", "Rs. 500", "₹500".
    const num::Unit* best = nullptr;
    std::size_t best_len = 0;
    // A symbol ends right before p, or before one space there: no candidate byte, no symbol.
    const bool maybe = (p >= 1 && currency_last_[static_cast<unsigned char>(t_[p - 1])]) ||
                       (p >= 2 && t_[p - 1] == ' ' && currency_last_[static_cast<unsigned char>(t_[p - 2])]);
    if (!maybe) return nullptr;
    for (const auto& u : U_.units()) {
      if (!u.prefix) continue;
      for (const auto& sym : u.symbols) {
        for (int gap = 0; gap <= 1; ++gap) {
          if (p < sym.size() + static_cast<std::size_t>(gap)) continue;
          if (gap == 1 && t_[p - 1] != ' ') continue;
          const std::size_t b = p - gap - sym.size();
          if (sym.empty() || t_[b + sym.size() - 1] != sym.back() || t_.compare(b, sym.size(), sym) != 0)
            continue;
          if (is_alpha(sym.front()) && !boundary_before(b)) continue;
          if (is_alpha(sym.back()) && gap == 0 && sym.size() == 1) continue;  // "R5": too ambiguous
          if (sym.size() > best_len) {
            best = &u;
            best_len = sym.size();
            start = b;
          }
        }
      }
    }
    return best;
  }

  // The lower-case word (letters only) starting at p, after spaces.
  std::string word_after(std::size_t p) const {
    p = skip_spaces(p);
    std::size_t e = p;
    while (e < n() && is_alpha(t_[e])) ++e;
    return low_.substr(p, e - p);
  }
  static bool listed(const std::vector<std::string>& words, const std::string& w) {
    return !w.empty() && std::find(words.begin(), words.end(), w) != words.end();
  }

  // "three times higher", "increased 10 times": a multiplier; "voted 10 times": a count of events.
  bool multiplier_times(const Draft& d, std::size_t times_end) const {
    return listed(L_.multiplier_followers, word_after(times_end)) ||
           listed(L_.multiplier_lead_words, word_before(d.b));
  }

  // Unit written after the number (words case-insensitively, symbols of 2+ characters).
  bool unit_after(Draft& d) {
    if (d.events) return false;
    std::size_t p = skip_spaces(d.e);
    if (p == d.e && p < n() && is_alpha(t_[p])) return false;  // attached letters handled elsewhere
    // up to three words
    std::array<std::size_t, 3> ends{};
    std::size_t q = p;
    int k = 0;
    for (; k < 3; ++k) {
      std::size_t r = q;
      while (r < n() &&
             (is_alpha(t_[r]) || t_[r] == '/' || t_[r] == '.' || static_cast<unsigned char>(t_[r]) >= 0x80))
        ++r;
      if (r == q) break;
      while (r > q && t_[r - 1] == '.') --r;
      ends[static_cast<std::size_t>(k)] = r;
      q = r;
      if (q >= n() || t_[q] != ' ') {
        ++k;
        break;
      }
      ++q;
    }
    for (int i = k - 1; i >= 0; --i) {
      const std::size_t r = ends[static_cast<std::size_t>(i)];
      const std::string written(t_.substr(p, r - p));
      const std::string lw = lower(written);
      if (i == 0) {
        if (auto c = L_.calendar_units.find(lw); c != L_.calendar_units.end()) {
          d.cal_unit = lw;
          d.e = r;
          return true;
        }
        if (auto m = L_.multiplier_units.find(lw); m != L_.multiplier_units.end()) {
          if (lw == "times" && !multiplier_times(d, r)) {
            d.events = true;  // "voted 10 times": unit times, dimension count (not ratio)
            d.e = r;
            return false;
          }
          d.times = true;
          d.e = r;
          return true;
        }
      }
      const num::Unit* u = U_.lookup(written);
      if (u == nullptr) continue;
      const bool is_word = std::any_of(u->words.begin(), u->words.end(),
                                       [&](const std::string& w) { return lower(w) == lw; }) ||
                           lw.size() > 3;
      if (!is_word && (written.size() < 2 || lw == "in" || lw == "mi")) continue;
      if (d.unit != nullptr) continue;  // currency prefix already set the unit
      d.unit = u;
      d.e = r;
      return true;
    }
    return false;
  }

  void apply_scale_word(Draft& d) {
    const std::size_t p = skip_spaces(d.e);
    if (p == d.e) return;
    for (const std::string w :
         {"lakh crore", "crore", "crores", "lakh", "lakhs", "lac", "dozen", "bn", "mn", "mln", "tn", "trn"}) {
      if (!word_at(p, w)) continue;
      auto it = L_.scale_words.find(w);
      if (it == L_.scale_words.end()) continue;
      d.value *= it->second;
      d.e = p + w.size();
      return;
    }
  }

  void approximator_before(Draft& d) {
    for (const auto& a : L_.before) {
      const std::size_t b = phrase_before(d.b, a.phrase);
      if (b == std::string_view::npos || !free(b, d.b)) continue;
      d.approx = a.phrase;
      d.approx_kind = a.kind;
      d.b = b;
      return;
    }
  }

  void approximator_after(Draft& d) {
    for (const auto& a : L_.after) {
      const bool attached = a.phrase.front() == '-' || a.phrase == "+";
      const std::size_t p = attached ? d.ne : skip_spaces(d.e);
      if (attached && d.e != d.ne) continue;
      if (p + a.phrase.size() > n() || low_.compare(p, a.phrase.size(), a.phrase) != 0) continue;
      if (is_alpha(a.phrase.back()) && !boundary_after(p + a.phrase.size())) continue;
      if (!attached && p == d.e) continue;
      d.approx = a.phrase;
      d.approx_kind = a.kind;
      d.e = p + a.phrase.size();
      return;
    }
  }

  bool name_before(std::size_t b) const {
    const std::size_t q = skip_spaces_back(b);
    if (q > 0 && (t_[q - 1] == ',' || t_[q - 1] == ';' || t_[q - 1] == ':')) return false;  // "call, 2016"
    const std::string w = word_before(b);
    if (w.empty()) return false;
    for (const auto& np : L_.name_prefixes) {
      if (np.find(' ') != std::string::npos) {
        if (phrase_before(b, np) != std::string_view::npos) return true;
      } else if (w == np) {
        return true;
      }
    }
    return false;
  }

  // Indian digit grouping ("1,20,000", "3,50,00,000"), which num::find_numbers refuses as bad
  // grouping: one or two digits, then pairs, then a final group of three.
  void indian_grouping(std::vector<num::NumberMatch>& ms) const {
    std::vector<num::NumberMatch> found;
    for (std::size_t p = 0; p < n(); ++p) {
      if (!is_digit(t_[p]) ||
          (p > 0 && (is_alpha(t_[p - 1]) || is_digit(t_[p - 1]) || t_[p - 1] == ',' || t_[p - 1] == '.')))
        continue;
      std::size_t q = p;
      while (q < n() && is_digit(t_[q])) ++q;
      if (q - p > 2) {
        p = q;
        continue;
      }
      int pairs = 0;
      while (q + 3 < n() && t_[q] == ',' && is_digit(t_[q + 1]) && is_digit(t_[q + 2]) && t_[q + 3] == ',') {
        q += 3;
        ++pairs;
      }
      if (pairs == 0 || q + 3 >= n() || t_[q] != ',' || !is_digit(t_[q + 1]) || !is_digit(t_[q + 2]) ||
          !is_digit(t_[q + 3])) {
        p = q;
        continue;
      }
      std::size_t e = q + 4;
      if (e < n() && (is_digit(t_[e]) || (t_[e] == ',' && e + 1 < n() && is_digit(t_[e + 1])))) {
        p = e;
        continue;
      }
      if (e + 1 < n() && t_[e] == '.' && is_digit(t_[e + 1])) {
        ++e;
        while (e < n() && is_digit(t_[e])) ++e;
      }
      std::string digits;
      for (std::size_t i = p; i < e; ++i)
        if (t_[i] != ',') digits.push_back(t_[i]);
      if (const auto r = num::read_number(digits, {num::NumberForm::kInteger, num::NumberForm::kDecimal}); r)
        found.push_back({r.match->value, r.match->form, p, e});
      p = e;
    }
    for (const auto& f : found) {
      std::erase_if(ms, [&](const num::NumberMatch& m) { return m.begin < f.end && f.begin < m.end; });
      ms.push_back(f);
    }
    std::sort(ms.begin(), ms.end(), [](const auto& a, const auto& b) { return a.begin < b.begin; });
  }

  // "half a million": the reader finds "a million"; "half" before it halves the value.
  void half_scales(std::vector<num::NumberMatch>& ms) const {
    for (auto& m : ms) {
      if (m.form != num::NumberForm::kWords) continue;
      const std::string_view w = std::string_view(low_).substr(m.begin, m.end - m.begin);
      if (!w.starts_with("a ") && !w.starts_with("an ")) continue;
      for (const auto& [word, f] : L_.fraction_words) {
        const std::size_t b = phrase_before(m.begin, word);
        if (b == std::string_view::npos) continue;
        m.begin = b;
        m.value *= f;
        break;
      }
    }
  }

  // A number word written with a capital inside a sentence and followed by a capitalized word is
  // part of a name ("the One Nation party", "Three Mile Island").
  bool capitalized_name(const num::NumberMatch& m) const {
    if (m.form != num::NumberForm::kWords || !(t_[m.begin] >= 'A' && t_[m.begin] <= 'Z')) return false;
    const std::size_t before = skip_spaces_back(m.begin);
    if (before == 0 || before == m.begin) return false;
    const char c = t_[before - 1];
    if (c == '.' || c == '!' || c == '?' || c == ':' || c == '"' || c == '\'' || c == '(' || c == '\n' ||
        static_cast<unsigned char>(c) >= 0x80)
      return false;
    const std::size_t a = skip_spaces(m.end);
    return a > m.end && a < n() && t_[a] >= 'A' && t_[a] <= 'Z';
  }

  // "a fourth stimulus payment", "a third grade level", "after one third shot": "a"/"an"/"one" and a
  // singular ordinal word followed by a word that is not in ordinal_fraction_followers is an
  // ordinal, not a fraction ("a third of voters", "cut by a third", "a fifth more" stay fractions).
  bool ordinal_article(const num::NumberMatch& m) const {
    if (m.form != num::NumberForm::kWords && m.form != num::NumberForm::kFraction) return false;
    const std::string_view w = std::string_view(low_).substr(m.begin, m.end - m.begin);
    std::size_t sp = w.find_first_of(" -");
    if (sp == std::string_view::npos) return false;
    const std::string_view first = w.substr(0, sp), second = w.substr(sp + 1);
    if (first != "a" && first != "an" && first != "one") return false;
    if (!listed(L_.ordinal_words, std::string(second))) return false;
    const std::size_t a = skip_spaces(m.end);
    if (a == m.end || a >= n() || !is_alpha(t_[a])) return false;
    return !listed(L_.ordinal_fraction_followers, word_after(a));
  }

  // Bare fraction words ("half of Americans", "half as many"); see Lexicon::fraction_words.
  void fraction_words() {
    for (const auto& [w, f] : L_.fraction_words) {
      for (std::size_t p : hits(w)) {
        const std::size_t e = p + w.size();
        if (!word_at(p, w) || !free(p, e)) continue;
        if ((e < n() && t_[e] == '-') || (p > 0 && t_[p - 1] == '-')) continue;  // "half-time"
        if (listed(L_.fraction_blocked_after, word_before(p))) continue;
        const std::string next = word_after(e);
        const bool times = listed(L_.fraction_multiplier_followers, next);
        if (!times && !listed(L_.fraction_followers, next)) continue;
        if (next == "of") {
          const std::size_t after_of = skip_spaces(skip_spaces(e) + 2);
          if (after_of < n() && is_digit(t_[after_of])) continue;  // "half of 2020"
        }
        Draft d;
        d.b = d.nb = p;
        d.e = d.ne = e;
        approximator_before(d);
        Segment s = make(SegmentKind::kQuantity, d.b, d.e);
        s.form = "words";
        s.value = f;
        s.unit = times ? "times" : "";
        s.dimension = times ? "ratio" : "count";
        s.approximator = d.approx;
        s.approximator_kind = d.approx_kind;
        apply_bounds(s);
        trend(s);
        push(std::move(s));
      }
    }
  }

  // "Atari 2600", "Flight 370", "The 700 Club": a plain integer (no grouping, no unit, currency or
  // scale) right after a capitalized word inside a sentence is part of a name. Words in
  // `name_exempt_before` ("In", "The" before a lower-case word...) do not count.
  bool capitalized_before(const Draft& d) const {
    if (d.form != num::NumberForm::kInteger || d.e != d.ne) return false;
    std::size_t cb = 0;
    if (currency_before(d.nb, cb) != nullptr) return false;
    for (std::size_t i = d.nb; i < d.ne; ++i)
      if (!is_digit(t_[i])) return false;
    const std::size_t q = skip_spaces_back(d.nb);
    if (q == d.nb || q == 0) return false;
    std::size_t b = q;
    while (b > 0 && is_alpha(t_[b - 1])) --b;
    if (b == q || !(t_[b] >= 'A' && t_[b] <= 'Z')) return false;
    // Inside a sentence: something other than sentence punctuation before the word.
    const std::size_t pb = skip_spaces_back(b);
    if (pb == 0) return false;
    const char c = t_[pb - 1];
    if (c == '.' || c == '!' || c == '?' || c == ':' || c == '"' || c == '\'' || c == '(' ||
        static_cast<unsigned char>(c) >= 0x80)
      return false;
    const std::string w = low_.substr(b, q - b);
    if (listed(L_.name_exempt_before, w) || L_.months.count(w) != 0) return false;
    // A unit, currency or scale after the number makes it a quantity.
    const std::size_t a = skip_spaces(d.e);
    if (a < n() && is_alpha(t_[a])) {
      std::size_t ae = a;
      while (ae < n() && is_alpha(t_[ae])) ++ae;
      const std::string next(t_.substr(a, ae - a));
      if (U_.lookup(next) != nullptr || L_.scale_words.count(lower(next)) != 0 ||
          L_.calendar_units.count(lower(next)) != 0 || L_.multiplier_units.count(lower(next)) != 0)
        return false;
    }
    return true;
  }

  // Letters attached to a number: ordinals and decades (claimed or pushed here: false), scales,
  // unit symbols and calendar units (taken into the draft), or a name ("5G", "3D": claimed, false).
  bool attached_letters(Draft& d) {
    if (d.e >= n() || !(is_alpha(t_[d.e]) || t_[d.e] == '\'')) return true;
    std::size_t r = d.e;
    if (t_[r] == '\'' && r + 1 < n() && t_[r + 1] == 's') ++r;
    std::size_t le = r;
    while (le < n() && is_alpha(t_[le])) ++le;
    const std::string run(t_.substr(r, le - r));
    const std::string lrun = lower(run);
    const std::string digits(t_.substr(d.nb, d.ne - d.nb));
    const bool four = digits.size() == 4 && std::all_of(digits.begin(), digits.end(), is_digit);
    if (lrun == "st" || lrun == "nd" || lrun == "rd" || lrun == "th") {
      claim(d.nb, le);  // ordinal: not a quantity
      return false;
    }
    if (lrun == "s" && d.form == num::NumberForm::kInteger) {
      int y = 0;
      if (four && d.value.is_integer()) y = static_cast<int>(d.value.numerator().get_si());
      const bool apos =
          d.nb > 0 && (t_[d.nb - 1] == '\'' || (d.nb >= 3 && t_.compare(d.nb - 3, 3, "\xE2\x80\x99") == 0));
      if (!four && apos && digits.size() == 2) {
        y = static_cast<int>(d.value.numerator().get_si());
        y += y >= 30 ? 1900 : 2000;
      }
      if (y > 0 && y % 10 == 0 && y >= L_.year_min && y <= L_.year_max) {
        std::size_t b = apos && !four ? d.nb - (t_[d.nb - 1] == '\'' ? 1 : 3) : d.nb;
        Segment s = make(SegmentKind::kTemporal, b, le);
        s.granularity = y % 100 == 0 && four && false ? "century" : "decade";
        s.period_start = date(y, 1, 1);
        s.period_end = date(y + 9, 12, 31);
        s.form = std::string(num::form_name(d.form));
        push(std::move(s));
        return false;
      }
    }
    std::size_t cur_b = d.b;
    const num::Unit* cur = currency_before(d.nb, cur_b);
    auto sc = L_.attached_scales.find(run);
    const bool need_cur = std::find(L_.attached_need_currency.begin(), L_.attached_need_currency.end(),
                                    run) != L_.attached_need_currency.end();
    if (sc != L_.attached_scales.end() && (!need_cur || cur != nullptr)) {
      d.value *= sc->second;
      d.e = le;
    } else if (const num::Unit* u = U_.lookup(run); u != nullptr && !u->prefix) {
      d.unit = u;
      d.e = le;
    } else if (L_.calendar_units.count(lrun) != 0) {
      d.cal_unit = lrun;
      d.e = le;
    } else if (lrun == "x" || lrun == "fold") {
      d.times = true;
      d.e = le;
    } else {
      claim(d.nb, le);  // a name with digits: "5G", "3D", "737MAX"
      return false;
    }
    return true;
  }

  // A unit or scale attached with a hyphen: "-fold", "-year", "$110-billion".
  void hyphen_attached(Draft& d) {
    if (d.e == d.ne && d.e + 1 < n() && t_[d.e] == '-' && is_alpha(t_[d.e + 1])) {
      std::size_t le = d.e + 1;
      while (le < n() && is_alpha(t_[le])) ++le;
      const std::string w = low_.substr(d.e + 1, le - d.e - 1);
      if (w == "fold") {
        d.times = true;
        d.e = le;
      } else if (auto hs = L_.hyphen_scales.find(w); hs != L_.hyphen_scales.end()) {
        d.value *= hs->second;  // "$110-billion", "5-million"
        d.e = le;
      } else if (L_.calendar_units.count(w) != 0) {
        d.cal_unit = w;
        d.e = le;
      } else if (const num::Unit* u = U_.lookup(w); u != nullptr && !u->prefix && w.size() > 1) {
        d.unit = u;
        d.e = le;
      }
    }
  }

  void numbers() {
    auto matches = num::find_numbers(t_, num::FormSet::all(), 4096);
    indian_grouping(matches);
    half_scales(matches);
    std::vector<Draft> drafts;
    drafts.reserve(matches.size());
    out_.reserve(out_.size() + matches.size());
    for (const auto& m : matches) {
      if (!free(m.begin, m.end)) continue;
      if (capitalized_name(m) || ordinal_article(m)) {
        claim(m.begin, m.end);
        continue;
      }
      Draft d;
      d.b = d.nb = m.begin;
      d.e = d.ne = m.end;
      d.value = m.value;
      d.form = m.form;
      // Attached letters: ordinals, decades, scales, unit symbols, or a name ("5G", "3D").
      if (!attached_letters(d)) continue;
      hyphen_attached(d);
      if (name_before(d.nb) || capitalized_before(d)) {
        claim(d.nb, d.e);
        continue;
      }
      // Currency prefix.
      {
        std::size_t cb = d.b;
        if (const num::Unit* c = currency_before(d.nb, cb); c != nullptr && d.unit == nullptr) {
          d.unit = c;
          d.currency_prefix = true;
          d.b = cb;
        }
      }
      apply_scale_word(d);
      if (d.unit == nullptr && d.cal_unit.empty() && !d.times) unit_after(d);
      if (d.form == num::NumberForm::kPercent) {
        d.value *= Rational(100);
        d.unit = U_.by_id("%");
      }
      // Years.
      {
        const std::string digits(t_.substr(d.nb, d.ne - d.nb));
        const bool four = digits.size() == 4 && std::all_of(digits.begin(), digits.end(), is_digit);
        if (four && d.unit == nullptr && d.cal_unit.empty() && !d.times && d.e == d.ne) {
          const long y = d.value.numerator().get_si();
          if (y >= L_.year_min && y <= L_.year_max) d.year = true;
        }
      }
      if (!d.year) {
        approximator_before(d);
        const std::string before = d.approx, before_kind = d.approx_kind;
        approximator_after(d);
        if (!before.empty() && d.approx != before) {
          d.approx = before + " " + d.approx;  // "over 20-some": the after-form decides the interval
        }
        if (d.unit == nullptr && d.cal_unit.empty() && !d.times && unit_after(d) && d.unit != nullptr &&
            d.unit->id == "%") {
          // "20-some percent": the value stays as written, in percent.
        }
      }
      drafts.push_back(std::move(d));
    }
    merge_and_emit(drafts);
  }

  // Connector between two drafts (returns true for a range connector).
  bool range_between(const Draft& a, const Draft& b, bool& between_and) const {
    std::size_t p = a.e;
    const std::size_t q = b.b;
    if (q < p) return false;
    const std::string mid = lower(std::string(t_.substr(p, q - p)));
    std::string m;
    for (char c : mid)
      if (c != ' ') m.push_back(c);
    between_and = false;
    if (m == "-" || m == "\xE2\x80\x93" || m == "\xE2\x80\x94" || m == "to" || m == "through" || m == "or")
      return !(m == "or" && mid.find(' ') == std::string::npos);
    if (m == "and") {
      between_and = phrase_before(a.b, "between") != std::string_view::npos;
      return between_and;
    }
    return false;
  }

  // "increased from 391,000 to 890,000": "from X to Y" after a trend word or a change verb states a
  // change between two values, not an interval.
  bool is_change(const Draft& a, const Draft& b) const {
    std::string mid = lower(std::string(t_.substr(a.e, b.b - a.e)));
    std::erase(mid, ' ');
    if (mid != "to") return false;
    const std::size_t f = phrase_before(a.b, "from");
    if (f == std::string_view::npos) return false;
    if (listed(L_.change_words, word_before(f))) return true;
    Segment probe;
    probe.begin = f;
    trend(probe);
    return !probe.trend.empty();
  }

  // "Rs 7-8,000" is 7,000 to 8,000 and "$5-10 million" is 5 to 10 million: the first end takes the
  // second's scale when it is written without one, is smaller than the second's leading number and
  // (for digit grouping, not a scale word) has as many integer digits. Returns the first end's value.
  Rational shared_scale(const Draft& a, const Draft& b) const {
    if (a.e != a.ne || (a.form != num::NumberForm::kInteger && a.form != num::NumberForm::kDecimal) ||
        a.value.sign() <= 0)
      return a.value;
    const std::string_view at = t_.substr(a.nb, a.ne - a.nb);
    if (at.find(',') != std::string_view::npos) return a.value;
    std::size_t le = b.nb;
    while (le < b.ne && (is_digit(t_[le]) || t_[le] == '.')) ++le;
    const auto lead =
        num::read_number(t_.substr(b.nb, le - b.nb), {num::NumberForm::kInteger, num::NumberForm::kDecimal});
    if (!lead || lead.match->value.sign() <= 0) return a.value;
    const Rational scale = b.value / lead.match->value;
    if (!scale.is_integer() || scale < Rational(1000)) return a.value;
    mpz_class x = scale.numerator();
    while (x % 10 == 0) x /= 10;
    if (x != 1) return a.value;  // not a power of ten
    bool word_scale = false;
    for (std::size_t i = le; i < b.e; ++i) word_scale = word_scale || is_alpha(t_[i]);
    auto int_digits = [](std::string_view s) {
      std::size_t k = 0;
      while (k < s.size() && is_digit(s[k])) ++k;
      return k;
    };
    if (!word_scale && int_digits(at) != int_digits(t_.substr(b.nb, le - b.nb))) return a.value;
    if (!(a.value < lead.match->value)) return a.value;
    return a.value * scale;
  }

  void emit_year(const Draft& d, int y_from, int y_to, std::size_t b, std::size_t e) {
    std::size_t begin = b;
    Segment s = make(SegmentKind::kTemporal, begin, e);
    s.form = std::string(num::form_name(d.form));
    s.granularity = y_from == y_to ? "year" : "years";
    s.period_start = date(y_from, 1, 1);
    s.period_end = date(y_to, 12, 31);
    if (y_from == y_to) {
      for (const auto& m : L_.modifiers) {
        std::size_t mb = phrase_before(b, m.phrase);
        if (mb == std::string_view::npos && m.phrase.back() == '-' && b >= m.phrase.size() &&
            low_.compare(b - m.phrase.size(), m.phrase.size(), m.phrase) == 0 &&
            boundary_before(b - m.phrase.size()))
          mb = b - m.phrase.size();
        if (mb == std::string_view::npos || !free(mb, b)) continue;
        s = make(SegmentKind::kTemporal, mb, e);
        s.form = std::string(num::form_name(d.form));
        s.granularity = m.phrase[0] == 'q' || m.phrase.find("quarter") != std::string::npos ? "quarter"
                        : m.phrase[0] == 'h' || m.phrase.find("half") != std::string::npos  ? "half"
                                                                                            : "part";
        s.period_start = fmt::format("{}-{}", ystr(y_from), m.start_md);
        const int mm = two_digits(m.end_md);
        int dd = two_digits(std::string_view(m.end_md).substr(3));
        dd = std::min(dd, days_in_month(y_from, mm));
        s.period_end = date(y_from, mm, dd);
        break;
      }
    }
    push(std::move(s));
  }

  void merge_and_emit(std::vector<Draft>& ds) {
    for (std::size_t i = 0; i < ds.size(); ++i) {
      Draft& a = ds[i];
      bool between_and = false;
      const bool has_next = i + 1 < ds.size();
      // Year ranges: 2014-2015, 2014-15, 2010 to 2020, between 2010 and 2020.
      if (a.year) {
        const int y = static_cast<int>(a.value.numerator().get_si());
        if (has_next && range_between(a, ds[i + 1], between_and)) {
          Draft& b = ds[i + 1];
          int y2 = -1;
          if (b.year) y2 = static_cast<int>(b.value.numerator().get_si());
          const std::string bd(t_.substr(b.nb, b.ne - b.nb));
          if (!b.year && bd.size() == 2 && b.form == num::NumberForm::kInteger && b.unit == nullptr &&
              b.e == b.ne) {
            y2 = (y / 100) * 100 + static_cast<int>(b.value.numerator().get_si());
            if (y2 < y) y2 += 100;
          }
          if (y2 > y) {
            std::size_t begin = a.b;
            if (between_and)
              begin = phrase_before(a.b, "between");
            else if (const std::size_t f = phrase_before(a.b, "from"); f != std::string_view::npos)
              begin = f;
            if (free(begin, b.e)) {
              emit_year(a, y, y2, begin, b.e);
              ++i;
              continue;
            }
          }
        }
        emit_year(a, y, y, a.b, a.e);
        continue;
      }
      Segment s = make(SegmentKind::kQuantity, a.b, a.e);
      s.form = std::string(num::form_name(a.form));
      set_unit(s, a);
      if (has_next && !ds[i + 1].year && range_between(a, ds[i + 1], between_and) &&
          !(!between_and && is_change(a, ds[i + 1]))) {
        Draft& b = ds[i + 1];
        const Rational a_value = shared_scale(a, b);
        // The second number inherits a unit/currency written only once ("$1,300 to 1,400",
        // "5-11 years") and vice versa.
        if (a.unit == nullptr && a.cal_unit.empty() && !a.times) {
          a.unit = b.unit;
          a.cal_unit = b.cal_unit;
          a.times = b.times;
        }
        std::size_t begin = a.b;
        if (between_and)
          begin = phrase_before(a.b, "between");
        else if (const std::size_t f = phrase_before(a.b, "from"); f != std::string_view::npos)
          begin = f;
        if (free(begin, b.e) && a_value < b.value) {
          s = make(SegmentKind::kQuantity, begin, b.e);
          s.form = std::string(num::form_name(a.form));
          set_unit(s, a.unit != nullptr || !a.cal_unit.empty() || a.times ? a : b);
          s.lo = Bound{a_value, true};
          s.hi = Bound{b.value, true};
          if (!a.approx.empty()) {
            s.approximator = a.approx;
            s.approximator_kind = a.approx_kind;
          }
          trend(s);
          push(std::move(s));
          ++i;
          continue;
        }
      }
      s.value = a.value;
      s.approximator = a.approx;
      s.approximator_kind = a.approx_kind;
      apply_bounds(s);
      trend(s);
      // "two years ago": a relative temporal expression.
      if (s.dimension == "calendar") {
        const std::size_t p = skip_spaces(s.end);
        if (word_at(p, "ago") && free(s.begin, p + 3)) {
          Segment r = make(SegmentKind::kTemporal, s.begin, p + 3);
          r.granularity = "relative";
          r.value = s.value;
          r.unit = s.unit;
          r.dimension = s.dimension;
          r.form = s.form;
          push(std::move(r));
          continue;
        }
      }
      if (free(s.begin, s.end)) push(std::move(s));
    }
  }

  void set_unit(Segment& s, const Draft& d) const {
    if (d.times) {
      s.unit = "times";
      s.dimension = "ratio";
    } else if (d.events) {
      s.unit = "times";  // occurrences: "voted 10 times"
      s.dimension = "count";
    } else if (!d.cal_unit.empty()) {
      const std::string& u = d.cal_unit;
      s.unit = u.rfind("decade", 0) == 0    ? "decade"
               : u.rfind("centur", 0) == 0  ? "century"
               : u.rfind("month", 0) == 0   ? "month"
               : u.rfind("quarter", 0) == 0 ? "quarter"
                                            : "year";
      s.dimension = "calendar";
    } else if (d.unit != nullptr) {
      s.unit = d.unit->id;
      s.dimension = d.unit->dimension;
    } else {
      s.dimension = "count";
    }
  }

  static void apply_bounds(Segment& s) {
    if (!s.value) return;
    const Rational& v = *s.value;
    const std::string& k = s.approximator_kind;
    if (k == "lower")
      s.lo = Bound{v, false};
    else if (k == "lower_inclusive")
      s.lo = Bound{v, true};
    else if (k == "upper" || k == "approximate_below")
      s.hi = Bound{v, false};
    else if (k == "upper_inclusive")
      s.hi = Bound{v, true};
    else if (k == "some" && v.is_integer() && v.sign() > 0) {
      // "20-some" = 21..29, "100-odd" = 101..199: the next unit of the last non-zero digit.
      mpz_class mag = 1;
      mpz_class x = v.numerator();
      while (x % 10 == 0 && x > 0) {
        x /= 10;
        mag *= 10;
      }
      if (mag > 1) {
        s.lo = Bound{v + Rational(1), true};
        s.hi = Bound{v + Rational(mag) - Rational(1), true};
      } else {
        s.lo = Bound{v, false};
      }
    }
  }

  void trend(Segment& s) const {
    // A trend word in the four words before the segment ("increased by", "rose to", "up").
    std::size_t p = s.begin;
    for (int k = 0; k < 4; ++k) {
      const std::string w = word_before(p);
      if (w.empty()) return;
      std::string clean;
      for (char c : w)
        if (is_alpha(c)) clean.push_back(c);
      if (auto it = L_.trend_direction.find(clean); it != L_.trend_direction.end() && clean == w) {
        s.trend = clean;
        s.trend_direction = it->second;
        return;
      }
      if (auto it = L_.multiplicative_trends.find(clean);
          it != L_.multiplicative_trends.end() && clean == w) {
        s.trend = clean;
        s.trend_direction = it->second < Rational(1) ? "down" : "up";
        return;
      }
      if (clean != w) return;  // punctuation: stop
      p = skip_spaces_back(p);
      p -= w.size();
    }
  }

  void vague_quantities() {
    for (const auto& v : L_.vague) {
      for (std::size_t p : hits(v.phrase)) {
        if (!word_at(p, v.phrase) || !free(p, p + v.phrase.size())) continue;
        Segment s = make(SegmentKind::kQuantity, p, p + v.phrase.size());
        s.form = "vague";
        s.dimension = "count";
        if (v.lo == v.hi) {
          s.value = v.lo;
        } else {
          s.lo = Bound{v.lo, true};
          s.hi = Bound{v.hi, true};
        }
        trend(s);
        push(std::move(s));
      }
    }
  }

  void multiplicative_trends() {
    for (const auto& [w, f] : L_.multiplicative_trends) {
      for (std::size_t p : hits(w)) {
        if (!word_at(p, w) || !free(p, p + w.size())) continue;
        if (p + w.size() < n() && t_[p + w.size()] == '-') continue;  // "double-wide"
        Segment s = make(SegmentKind::kQuantity, p, p + w.size());
        s.form = "trend";
        s.value = f;
        s.unit = "times";
        s.dimension = "ratio";
        s.trend = w;
        s.trend_direction = f < Rational(1) ? "down" : "up";
        push(std::move(s));
      }
    }
  }
};

std::string rstr(const Rational& r) { return r.str(); }

}  // namespace

std::vector<Segment> find_segments(std::string_view text, const Lexicon& lex,
                                   const num::UnitRegistry& units) {
  return Segmenter(text, lex, units).run();
}

bool passes_numerical_filter(const std::vector<Segment>& segments, std::size_t min_segments) {
  return segments.size() >= min_segments;
}

io::OrderedJson segment_json(const Segment& s) {
  io::OrderedJson j;
  j["kind"] = s.kind == SegmentKind::kQuantity ? "quantity" : "temporal";
  j["begin"] = s.begin;
  j["end"] = s.end;
  j["text"] = s.text;
  if (s.kind == SegmentKind::kQuantity) {
    j["value"] = s.value ? io::OrderedJson(rstr(*s.value)) : io::OrderedJson(nullptr);
    auto bound = [](const std::optional<Bound>& b) {
      if (!b) return io::OrderedJson(nullptr);
      io::OrderedJson o;
      o["value"] = b->value.str();
      o["inclusive"] = b->inclusive;
      return o;
    };
    j["lo"] = bound(s.lo);
    j["hi"] = bound(s.hi);
    j["unit"] = s.unit;
    j["dimension"] = s.dimension;
    const num::Unit* u = s.unit.empty() ? nullptr : num::UnitRegistry::builtin().by_id(s.unit);
    if (u != nullptr && s.value) j["canonical"] = num::UnitRegistry::to_canonical(*s.value, *u).str();
    j["approximator"] = s.approximator;
    j["approximator_kind"] = s.approximator_kind;
    j["trend"] = s.trend;
    j["trend_direction"] = s.trend_direction;
    j["form"] = s.form;
  } else {
    j["granularity"] = s.granularity;
    j["period_start"] = s.period_start;
    j["period_end"] = s.period_end;
  }
  return j;
}

std::string segment_summary(const Segment& s) {
  if (s.kind == SegmentKind::kTemporal) {
    if (s.period_start.empty()) return fmt::format("`{}` temporal {}", s.text, s.granularity);
    return fmt::format("`{}` temporal {} {}/{}", s.text, s.granularity, s.period_start, s.period_end);
  }
  std::string v;
  if (s.value) v = s.value->str();
  if (s.lo || s.hi) {
    std::string iv = fmt::format("{}{}, {}{}", s.lo ? (s.lo->inclusive ? "[" : "(") : "(",
                                 s.lo ? s.lo->value.str() : "-inf", s.hi ? s.hi->value.str() : "inf",
                                 s.hi ? (s.hi->inclusive ? "]" : ")") : ")");
    v = v.empty() ? iv : v + " " + iv;
  }
  std::string extra;
  if (!s.approximator.empty()) extra += fmt::format(" approx={}({})", s.approximator, s.approximator_kind);
  if (!s.trend.empty()) extra += fmt::format(" trend={}({})", s.trend, s.trend_direction);
  return fmt::format("`{}` quantity {} {} [{}]{}", s.text, v, s.unit.empty() ? "-" : s.unit, s.dimension,
                     extra);
}

}  // namespace numcheck::claims
