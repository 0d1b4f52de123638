// The strict answer parser and the audit layer audit_v2. The behaviour is fixed by
// docs/grading.md (which follows ../shared/design/orbit-benchmark.md and the seed's Appendix B);
// every rule below is pinned by a test in tests/grade/.
//
// Cost model: the strict path is a backward line scan with memrchr that stops at the second
// FINAL line, one pass over the answer text, one read_number call and a unit lookup. Nothing is
// copied except the exact values themselves. Every loop is linear in the input.
#include "grade/grade.hpp"
#include "core/ascii.hpp"
#include "io/json_writer.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <tuple>
#include <utility>

#include <fmt/format.h>

namespace numcheck::grade {
namespace {

using num::Rational;
using num::Unit;
using num::UnitRegistry;

constexpr std::string_view kTag = "FINAL:";
constexpr std::size_t kNpos = std::string_view::npos;

using ascii::is_blank;
using ascii::is_digit;
using ascii::is_space;
using ascii::trim;

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Offset just past the tag when `line` is a FINAL line (first non-blank characters are exactly
// "FINAL:"), else kNpos.
std::size_t final_tag_end(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && is_blank(line[i])) ++i;
  if (line.size() - i >= kTag.size() && std::memcmp(line.data() + i, kTag.data(), kTag.size()) == 0) {
    return i + kTag.size();
  }
  return kNpos;
}

struct FinalScan {
  std::string_view answer;         // text after the tag on the last FINAL line
  std::size_t line_begin = kNpos;  // offset of that line in the text; kNpos when there is none
  bool multiple = false;
};

// Walks the lines from the end (memrchr for '\n') and stops at the second FINAL line found.
FinalScan scan_final(std::string_view text) {
  FinalScan out;
  const char* base = text.data();
  std::size_t end = text.size();  // exclusive end of the current line
  for (;;) {
    const void* nl = end == 0 ? nullptr : ::memrchr(base, '\n', end);
    const std::size_t begin =
        nl == nullptr ? 0 : static_cast<std::size_t>(static_cast<const char*>(nl) - base) + 1;
    const std::string_view line = text.substr(begin, end - begin);
    if (const std::size_t t = final_tag_end(line); t != kNpos) {
      if (out.line_begin == kNpos) {
        out.answer = line.substr(t);
        out.line_begin = begin;
      } else {
        out.multiple = true;
        break;
      }
    }
    if (begin == 0) break;
    end = begin - 1;
  }
  return out;
}

// The question's unit: null when dimensionless or unknown to the registry.
struct Target {
  bool dimensionless = false;
  const Unit* unit = nullptr;
};

Target resolve_target(std::string_view canonical_unit, const UnitRegistry& units) {
  Target t;
  t.dimensionless = canonical_unit.empty();
  if (!t.dimensionless) t.unit = resolve_unit(canonical_unit, units);
  return t;
}

bool is_seed_unit(std::string_view id) {
  return std::find(std::begin(kStrictUnitIds), std::end(kStrictUnitIds), id) != std::end(kStrictUnitIds);
}

// The whitelist: a seed unit written as its seed symbol (its id) or any of its registered words;
// any other unit only when it is the question's own unit.
bool strict_unit_allowed(const Unit& u, std::string_view written, const Unit* target) {
  if (!is_seed_unit(u.id)) return &u == target;
  for (const auto& sym : u.symbols) {
    if (sym == written && sym != u.id) return false;  // e.g. "ℓ": a registry symbol the seed does not list
  }
  return true;
}

// Where parse_answer writes its result: straight into the grade, because moving a Rational
// allocates (gmpxx re-initialises the moved-from value).
struct Parsed {
  Outcome& outcome;
  std::optional<Rational>& value;
};

// True for the bytes a strict number (with an attached percent sign) may span, plus blanks so
// that "2 3/4" and "1.5 2" are read as one (rejected) number instead of a number and a unit.
bool is_number_char(char c) {
  return is_digit(c) || c == '+' || c == '-' || c == '.' || c == ',' || c == '/' || c == '%' || is_blank(c);
}

// Length of a U+2212 MINUS SIGN at answer[i] (read_number accepts it as a sign), else 0.
std::size_t unicode_minus_at(std::string_view s, std::size_t i) {
  return s.size() - i >= 3 && s.compare(i, 3, "\xE2\x88\x92") == 0 ? 3 : 0;
}

// The end of the answer's number: the longest prefix of number characters (an e/E counts when it
// sits in an exponent position: after a digit or point and before a digit or a signed digit).
std::size_t number_prefix_end(std::string_view answer) {
  std::size_t i = 0;
  const std::size_t n = answer.size();
  while (i < n) {
    const char c = answer[i];
    if (is_number_char(c)) {
      ++i;
      continue;
    }
    if (const std::size_t m = unicode_minus_at(answer, i); m != 0) {
      i += m;
      continue;
    }
    if ((c == 'e' || c == 'E') && i > 0 && (is_digit(answer[i - 1]) || answer[i - 1] == '.')) {
      std::size_t j = i + 1;
      if (j < n && (answer[j] == '+' || answer[j] == '-')) {
        ++j;
      } else {
        j += unicode_minus_at(answer, j);
      }
      if (j < n && is_digit(answer[j])) {
        i = j;
        continue;
      }
    }
    break;
  }
  return i;
}

// Parses the text after "FINAL:" (docs/grading.md, "The answer").
void parse_answer(std::string_view answer, const Question& q, const Target& target, const UnitRegistry& units,
                  Parsed out) {
  out.outcome = Outcome::kParseError;
  answer = trim(answer);
  if (!answer.empty() && answer.back() == '.') answer = trim_right(answer.substr(0, answer.size() - 1));

  const std::size_t i = number_prefix_end(answer);
  std::string_view number = trim_right(answer.substr(0, i));
  const std::size_t number_end = number.size();  // including an attached percent sign
  const std::string_view unit_text = answer.substr(i);

  bool percent = false;
  if (number.size() >= 2 && number.back() == '%' && !is_blank(number[number.size() - 2])) {
    percent = true;
    number.remove_suffix(1);
  }
  if (number.empty()) return;
  // Digits after the number's end mean the number continues in a form the strict grammar does not
  // have ("1.494 x 10^4", "1.494 × 10^4") or that there are several numbers: a parse_error.
  if (std::any_of(unit_text.begin(), unit_text.end(), is_digit)) return;
  // The common path holds the number in fixed-width integers (num::SmallNumber): reading it,
  // scaling it by a power-of-ten unit factor and comparing it with the expected value take no GMP
  // and no allocation. Numbers that do not fit, and other unit factors, take the Rational path.
  std::optional<num::SmallNumber> small = num::read_small_number(number, kStrictForms);
  std::optional<Rational> exact;
  if (small) {
    if (percent) small->exp10 -= 2;
  } else {
    num::ReadResult r = num::read_number(number, kStrictForms);
    if (!r) return;
    exact = std::move(r.match->value);
    if (percent) *exact = *exact / Rational(100);
  }

  out.outcome = Outcome::kUnitError;
  if (unit_text.empty()) {
    if (!target.dimensionless) return;  // a missing unit where the answer has a dimension
  } else {
    const Unit* written = units.lookup(unit_text);
    const bool accepted = written != nullptr && !target.dimensionless && target.unit != nullptr &&
                          strict_unit_allowed(*written, unit_text, target.unit);
    bool converted = false;
    if (accepted && written == target.unit) {
      converted = true;
    } else if (accepted && written->dimension == target.unit->dimension) {
      if (small && written->factor_exp10 && target.unit->factor_exp10) {
        small->exp10 += *written->factor_exp10 - *target.unit->factor_exp10;
      } else {
        if (small) exact = small->to_rational();
        small.reset();
        exact = UnitRegistry::convert(*exact, *written, *target.unit);
      }
      converted = true;
    }
    if (!converted) {
      // Before calling it a unit: does the number itself go on in a form the strict grammar does
      // not have ("1.5 million L", "2¾ L", "75 percent")? Then the number does not parse.
      const auto m = num::find_numbers(answer, num::FormSet::all(), 1);
      if (!m.empty() && m.front().begin == 0 && m.front().end > number_end)
        out.outcome = Outcome::kParseError;
      return;
    }
  }
  if (small) {
    if (const std::optional<bool> equal = small->equals(q.expected)) {
      out.outcome = *equal ? Outcome::kCorrect : Outcome::kValueError;
      if (*equal)
        out.value.emplace(q.expected);
      else
        out.value.emplace(small->to_rational());
      return;
    }
    exact = small->to_rational();  // too wide for 128-bit products: compare the Rationals
  }
  out.outcome = *exact == q.expected ? Outcome::kCorrect : Outcome::kValueError;
  out.value.emplace(std::move(*exact));
}

void run_strict(std::string_view text, const Question& q, const Target& target, const UnitRegistry& units,
                StrictResult& result) {
  const FinalScan scan = scan_final(text);
  result.multiple_final = scan.multiple;
  if (scan.line_begin == kNpos) {
    result.outcome = Outcome::kFormatError;
    return;
  }
  parse_answer(scan.answer, q, target, units, Parsed{result.outcome, result.value});
}

// ---- audit_v2 rewrite --------------------------------------------------------------------------

enum RuleBit : unsigned {
  kStripBold = 1u << 0,
  kStripAsterisk = 1u << 1,
  kStripBacktick = 1u << 2,
  kCasefoldTag = 1u << 3,
  kSciTimes = 1u << 4,
  kSciX = 1u << 5,
  kSciCaret = 1u << 6,
  kSciSuperscript = 1u << 7,
};

// Removes every occurrence of `pat` from s (in place); true when anything was removed.
bool remove_all(std::string& s, std::string_view pat) {
  const char first = pat.front();
  char* const data = s.data();
  const std::size_t n = s.size();
  std::size_t w = 0;
  std::size_t r = 0;
  bool any = false;
  while (r < n) {
    const void* hit = std::memchr(data + r, first, n - r);
    const std::size_t h = hit == nullptr ? n : static_cast<std::size_t>(static_cast<const char*>(hit) - data);
    if (w != r) std::memmove(data + w, data + r, h - r);
    w += h - r;
    r = h;
    if (r == n) break;
    if (n - r >= pat.size() && std::memcmp(data + r, pat.data(), pat.size()) == 0) {
      r += pat.size();
      any = true;
    } else {
      data[w++] = data[r++];
    }
  }
  s.resize(w);
  return any;
}

bool casefold_tag(std::string& s) {
  std::size_t i = 0;
  while (i < s.size() && is_blank(s[i])) ++i;
  if (s.size() - i < kTag.size()) return false;
  bool differs = false;
  for (std::size_t k = 0; k < kTag.size(); ++k) {
    const char c = s[i + k];
    const char up = (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
    if (up != kTag[k]) return false;
    differs = differs || c != up;
  }
  if (differs) s.replace(i, kTag.size(), kTag);
  return differs;
}

// Superscript digits and signs in UTF-8: returns the ASCII character and the byte length, or
// {0, 0}.
std::pair<char, std::size_t> superscript_at(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  if (b(0) == 0xC2) {
    if (b(1) == 0xB9) return {'1', 2};
    if (b(1) == 0xB2) return {'2', 2};
    if (b(1) == 0xB3) return {'3', 2};
  }
  if (b(0) == 0xE2 && b(1) == 0x81) {
    const unsigned c = b(2);
    if (c == 0xB0) return {'0', 3};
    if (c >= 0xB4 && c <= 0xB9) return {static_cast<char>('4' + (c - 0xB4)), 3};
    if (c == 0xBA) return {'+', 3};
    if (c == 0xBB) return {'-', 3};
  }
  return {0, 0};
}

// Tries to read " 10^k" / "10ˆk" / "10⁴" starting at s[i] (after the multiplication sign).
// On success appends "e<k>" to `exp`, returns the end offset and sets the rule bit.
std::size_t read_ten_power(std::string_view s, std::size_t i, std::string& exp, unsigned& bit) {
  while (i < s.size() && is_blank(s[i])) ++i;
  if (s.size() - i < 2 || s[i] != '1' || s[i + 1] != '0') return kNpos;
  i += 2;
  exp.assign("e");
  if (i < s.size() && (s[i] == '^' || (s.compare(i, 2, "\xCB\x86") == 0))) {
    i += s[i] == '^' ? 1 : 2;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
      exp.push_back(s[i]);
      ++i;
    } else if (s.compare(i, 3, "\xE2\x88\x92") == 0) {  // U+2212 minus sign
      exp.push_back('-');
      i += 3;
    }
    const std::size_t digits = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    if (i == digits) return kNpos;
    exp.append(s.substr(digits, i - digits));
    bit = kSciCaret;
    return i;
  }
  auto [c, len] = superscript_at(s, i);
  if (c == '+' || c == '-') {
    exp.push_back(c);
    i += len;
    std::tie(c, len) = superscript_at(s, i);
  }
  if (len == 0 || !is_digit(c)) return kNpos;
  while (len != 0 && is_digit(c)) {
    exp.push_back(c);
    i += len;
    std::tie(c, len) = superscript_at(s, i);
  }
  bit = kSciSuperscript;
  return i;
}

// Rewrites "m × 10^k" (× U+00D7, x or X; ^ or ˆ exponent, or superscript digits; blanks around
// the sign optional) into "me<k>". The mantissa must end with a digit right before the optional
// blanks; the mantissa text itself is kept as written.
unsigned rewrite_times_ten(std::string& s, std::string& scratch, std::string& exp) {
  unsigned fired = 0;
  scratch.clear();
  std::size_t copied = 0;  // s[copied, i) is still to be copied
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t op_len = 0;
    unsigned op_bit = 0;
    if (s[i] == 'x' || s[i] == 'X') {
      op_len = 1;
      op_bit = kSciX;
    } else if (static_cast<unsigned char>(s[i]) == 0xC3 && i + 1 < s.size() &&
               static_cast<unsigned char>(s[i + 1]) == 0x97) {
      op_len = 2;
      op_bit = kSciTimes;
    }
    if (op_len == 0) {
      ++i;
      continue;
    }
    std::size_t m = i;  // end of the mantissa
    while (m > copied && is_blank(s[m - 1])) --m;
    unsigned exp_bit = 0;
    const std::size_t end =
        (m > copied && is_digit(s[m - 1])) ? read_ten_power(s, i + op_len, exp, exp_bit) : kNpos;
    if (end == kNpos) {
      i += op_len;
      continue;
    }
    scratch.append(s, copied, m - copied);
    scratch.append(exp);
    fired |= op_bit | exp_bit;
    copied = i = end;
  }
  if (fired != 0) {
    scratch.append(s, copied, std::string::npos);
    s.swap(scratch);
  }
  return fired;
}

// Applies the rules to one line (no '\n' inside) and appends the result to `out`.
// Bytes that can make a rule fire on a line: markdown markers, the first byte of U+00D7, x and X.
// A line without them (and without a lowercase tag) is copied unchanged.
constexpr std::array<bool, 256> kRuleBytes = [] {
  std::array<bool, 256> t{};
  for (const unsigned char c : std::initializer_list<unsigned char>{'*', '`', 'x', 'X', 0xC3}) t[c] = true;
  return t;
}();

bool may_fire(std::string_view line) {
  for (const char c : line) {
    if (kRuleBytes[static_cast<unsigned char>(c)]) return true;
  }
  std::size_t i = 0;
  while (i < line.size() && is_blank(line[i])) ++i;
  return i < line.size() && (line[i] == 'f' || line[i] == 'F');
}

// Rewrites a line that may_fire into buf; returns the rules that fired.
unsigned rewrite_into(std::string_view line, std::string& buf, std::string& scratch, std::string& exp) {
  buf.assign(line);
  unsigned fired = 0;
  if (remove_all(buf, "**")) fired |= kStripBold;
  if (remove_all(buf, "*")) fired |= kStripAsterisk;
  if (remove_all(buf, "`")) fired |= kStripBacktick;
  if (casefold_tag(buf)) fired |= kCasefoldTag;
  fired |= rewrite_times_ten(buf, scratch, exp);
  return fired;
}

unsigned rewrite_line(std::string_view line, std::string& out, std::string& buf, std::string& scratch,
                      std::string& exp) {
  if (!may_fire(line)) {
    out.append(line);
    return 0;
  }
  const unsigned fired = rewrite_into(line, buf, scratch, exp);
  out.append(buf);
  return fired;
}

struct Rewritten {
  std::string text;
  std::vector<std::pair<std::size_t, unsigned>> fired;  // (line start in text, rule bits), bits != 0
};

Rewritten rewrite(std::string_view response) {
  Rewritten rw;
  rw.text.reserve(response.size());
  std::string buf;
  std::string scratch;
  std::string exp;
  std::size_t pos = 0;
  for (;;) {
    const std::size_t nl = response.find('\n', pos);
    const std::string_view line = response.substr(pos, nl == kNpos ? kNpos : nl - pos);
    const std::size_t start = rw.text.size();
    if (const unsigned bits = rewrite_line(line, rw.text, buf, scratch, exp); bits != 0) {
      rw.fired.emplace_back(start, bits);
    }
    if (nl == kNpos) break;
    rw.text.push_back('\n');
    pos = nl + 1;
  }
  return rw;
}

std::vector<std::string> rule_names(unsigned bits) {
  std::vector<std::string> names;
  for (std::size_t k = 0; k < std::size(kAuditRules); ++k) {
    if ((bits & (1u << k)) != 0) names.emplace_back(kAuditRules[k]);
  }
  return names;
}

void run_audit(std::string_view response, const Question& q, const Target& target, const UnitRegistry& units,
               const StrictResult& strict, AuditResult& a) {
  if (strict.outcome == Outcome::kCorrect) {
    a.outcome = Outcome::kCorrect;
    a.value = strict.value;
    return;
  }
  if (strict.outcome == Outcome::kTruncationError) {
    a.outcome = Outcome::kTruncationError;  // a truncated response stays a failure
    return;
  }
  // The strict parser on the rewritten response, rewriting only the lines its backward scan visits
  // up to the last FINAL line (the rules never cross a line break, so this grades the same line of
  // rewrite(response) as a full rewrite would; the audit has no multiple_final of its own).
  thread_local std::string line_buf;
  thread_local std::string scratch;
  thread_local std::string exp;
  thread_local std::string graded;  // the rewritten graded FINAL line
  std::size_t graded_tag = kNpos;   // offset past its tag
  unsigned graded_bits = 0;
  std::size_t end = response.size();
  for (;;) {
    const void* nl = end == 0 ? nullptr : ::memrchr(response.data(), '\n', end);
    const std::size_t begin =
        nl == nullptr ? 0 : static_cast<std::size_t>(static_cast<const char*>(nl) - response.data()) + 1;
    std::string_view line = response.substr(begin, end - begin);
    unsigned bits = 0;
    if (may_fire(line)) {
      bits = rewrite_into(line, line_buf, scratch, exp);
      line = line_buf;
    }
    if (const std::size_t t = final_tag_end(line); t != kNpos) {  // the last FINAL line: graded
      graded.assign(line);
      graded_tag = t;
      graded_bits = bits;
      break;
    }
    if (begin == 0) break;
    end = begin - 1;
  }
  if (graded_tag == kNpos) {
    a.outcome = Outcome::kFormatError;
    return;
  }
  parse_answer(std::string_view(graded).substr(graded_tag), q, target, units, Parsed{a.outcome, a.value});
  a.recovered = a.outcome == Outcome::kCorrect;
  if (graded_bits != 0) a.rules = rule_names(graded_bits);
  if (a.outcome == Outcome::kValueError && a.value) a.magnitude_k = magnitude_exponent(*a.value, q.expected);
}

}  // namespace

std::string_view outcome_name(Outcome o) noexcept {
  const auto i = static_cast<std::size_t>(o);
  return i < kOutcomeCount ? kOutcomeNames[i] : "unknown";
}

std::optional<Outcome> outcome_from_name(std::string_view name) noexcept {
  for (std::size_t i = 0; i + 1 < kOutcomeCount; ++i) {  // "missing" is never read from a file
    if (kOutcomeNames[i] == name) return static_cast<Outcome>(i);
  }
  return std::nullopt;
}

const num::Unit* resolve_unit(std::string_view unit, const num::UnitRegistry& units) {
  if (unit.empty()) return nullptr;
  if (const num::Unit* u = units.by_id(unit); u != nullptr) return u;
  return units.lookup(unit);
}

StrictResult grade_strict(std::string_view response, const Question& q, std::string_view finish_reason,
                          const num::UnitRegistry& units) {
  if (finish_reason != "stop") {
    StrictResult r;
    r.outcome = Outcome::kTruncationError;
    return r;
  }
  StrictResult r;
  run_strict(response, q, resolve_target(q.canonical_unit, units), units, r);
  return r;
}

Grade grade_response(std::string_view response, const Question& q, std::string_view finish_reason,
                     const num::UnitRegistry& units) {
  Grade g;
  const Target target = resolve_target(q.canonical_unit, units);
  if (finish_reason != "stop") {
    g.strict.outcome = Outcome::kTruncationError;
  } else {
    run_strict(response, q, target, units, g.strict);
  }
  run_audit(response, q, target, units, g.strict, g.audit);
  return g;
}

AuditRewrite audit_rewrite(std::string_view response) {
  Rewritten rw = rewrite(response);
  unsigned all = 0;
  for (const auto& [start, bits] : rw.fired) all |= bits;
  return AuditRewrite{std::move(rw.text), rule_names(all)};
}

namespace {

__extension__ using U128 = unsigned __int128;  // __extension__ keeps -Wpedantic quiet

// |numerator| of r when it fits 64 bits.
std::optional<std::uint64_t> small_abs(mpz_srcptr z) {
  if (mpz_sizeinbase(z, 2) > 64) return std::nullopt;
  return static_cast<std::uint64_t>(mpz_getlimbn(z, 0));
}

// magnitude_exponent in fixed width when every numerator and denominator fits 64 bits:
// expected / parsed == 10^k  <=>  |p| * b == 10^k * q * |a| for parsed a/b, expected p/q.
// Returns k, 0 when there is no such k, or kUndecided when a number does not fit.
constexpr int kUndecided = 1000;
int small_magnitude(const num::Rational& parsed, const num::Rational& expected) {
  const mpq_class& a = parsed.mpq();
  const mpq_class& e = expected.mpq();
  const auto an = small_abs(a.get_num_mpz_t());
  const auto ad = small_abs(a.get_den_mpz_t());
  const auto en = small_abs(e.get_num_mpz_t());
  const auto ed = small_abs(e.get_den_mpz_t());
  if (!an || !ad || !en || !ed) return kUndecided;
  const U128 x = static_cast<U128>(*en) * *ad;
  const U128 y = static_cast<U128>(*ed) * *an;
  const bool up = x >= y;
  const U128 big = up ? x : y;
  const U128 little = up ? y : x;
  if (big % little != 0) return 0;
  const U128 ratio = big / little;
  U128 ten = 1;
  for (int k = 1; k <= 15; ++k) {
    ten *= 10;
    if (ratio == ten) return up ? k : -k;
  }
  return 0;
}

}  // namespace

std::optional<int> magnitude_exponent(const num::Rational& parsed, const num::Rational& expected) {
  if (parsed.is_zero() || expected.is_zero()) return std::nullopt;
  if (parsed.sign() != expected.sign()) return std::nullopt;
  static_assert(GMP_LIMB_BITS == 64, "small_magnitude reads one 64-bit limb");
  if (const int k = small_magnitude(parsed, expected); k != kUndecided) {
    return k == 0 ? std::nullopt : std::optional<int>(k);
  }
  const Rational r = expected / parsed;
  if (r.sign() <= 0) return std::nullopt;
  const mpz_class num = r.numerator();
  const mpz_class den = r.denominator();
  const bool up = den == 1;
  const mpz_class& p = up ? num : den;
  if (!up && num != 1) return std::nullopt;
  unsigned long ten = 1;
  for (int k = 1; k <= 15; ++k) {
    ten *= 10;
    if (mpz_cmp_ui(p.get_mpz_t(), ten) == 0) return up ? k : -k;
  }
  return std::nullopt;
}

std::string consistency_error(const Grade& g, const Question& q) {
  const auto check_layer = [&](std::string_view layer, Outcome o,
                               const std::optional<num::Rational>& v) -> std::string {
    const bool has_value = o == Outcome::kCorrect || o == Outcome::kValueError;
    if (has_value != v.has_value())
      return fmt::format("{}: {} with{} a value", layer, outcome_name(o), v ? "" : "out");
    if (v && (o == Outcome::kCorrect) != (*v == q.expected)) {
      return fmt::format("{}: {} but value {} vs expected {}", layer, outcome_name(o), v->str(),
                         q.expected.str());
    }
    return {};
  };
  if (auto e = check_layer("strict", g.strict.outcome, g.strict.value); !e.empty()) return e;
  if (auto e = check_layer("audit", g.audit.outcome, g.audit.value); !e.empty()) return e;
  const bool st = g.strict.outcome == Outcome::kTruncationError;
  if (st != (g.audit.outcome == Outcome::kTruncationError)) return "truncation in one layer only";
  if (st && g.strict.multiple_final) return "truncated response flagged multiple_final";
  const bool strict_ok = g.strict.outcome == Outcome::kCorrect;
  if (strict_ok &&
      (g.audit.outcome != Outcome::kCorrect || g.audit.value != g.strict.value || !g.audit.rules.empty())) {
    return "strict correct but the audit differs";
  }
  if (g.audit.recovered != (!strict_ok && g.audit.outcome == Outcome::kCorrect))
    return "recovered flag is wrong";
  if (g.audit.magnitude_k) {
    const int k = *g.audit.magnitude_k;
    if (g.audit.outcome != Outcome::kValueError) return "magnitude_k without a value_error";
    if (k == 0 || k > 15 || k < -15) return fmt::format("magnitude_k {} out of range", k);
    if (*g.audit.value * num::Rational::pow10(k) != q.expected)
      return fmt::format("magnitude_k {} is wrong", k);
  } else if (g.audit.outcome == Outcome::kValueError && magnitude_exponent(*g.audit.value, q.expected)) {
    return "a magnitude drop is not tagged";
  }
  return {};
}

void write_json_members(io::JsonWriter& w, const Grade& g) {
  using io::literals::operator""_key;
  const auto value = [&w](const std::optional<num::Rational>& v) {
    if (!v) {
      w.null();
      return;
    }
    // Rational::str() without an allocation when numerator and denominator fit in 64 bits.
    const mpq_srcptr q = v->mpq().get_mpq_t();
    if (mpz_fits_slong_p(mpq_numref(q)) != 0 && mpz_fits_slong_p(mpq_denref(q)) != 0) {
      char buf[48];
      char* end = std::to_chars(buf, buf + 20, mpz_get_si(mpq_numref(q))).ptr;
      const long den = mpz_get_si(mpq_denref(q));
      if (den != 1) {
        *end++ = '/';
        end = std::to_chars(end, buf + sizeof buf, den).ptr;
      }
      w.value(std::string_view(buf, static_cast<std::size_t>(end - buf)));
    } else {
      w.value(v->str());
    }
  };
  w.key("strict"_key).begin_object();
  w.key("outcome"_key).value(outcome_name(g.strict.outcome));
  w.key("value"_key);
  value(g.strict.value);
  w.key("multiple_final"_key).value(g.strict.multiple_final);
  w.end_object();
  w.key("audit"_key).begin_object();
  w.key("outcome"_key).value(outcome_name(g.audit.outcome));
  w.key("value"_key);
  value(g.audit.value);
  w.key("recovered"_key).value(g.audit.recovered);
  w.key("rules"_key).begin_array();
  for (const auto& r : g.audit.rules) w.value(r);
  w.end_array();
  w.key("magnitude_k"_key);
  if (g.audit.magnitude_k) {
    w.value(*g.audit.magnitude_k);
  } else {
    w.null();
  }
  w.end_object();
}

io::OrderedJson to_json(const Grade& g) {
  const auto value = [](const std::optional<num::Rational>& v) -> io::OrderedJson {
    if (!v) return nullptr;
    return v->str();
  };
  io::OrderedJson strict = io::OrderedJson::object();
  strict["outcome"] = std::string(outcome_name(g.strict.outcome));
  strict["value"] = value(g.strict.value);
  strict["multiple_final"] = g.strict.multiple_final;
  io::OrderedJson audit = io::OrderedJson::object();
  audit["outcome"] = std::string(outcome_name(g.audit.outcome));
  audit["value"] = value(g.audit.value);
  audit["recovered"] = g.audit.recovered;
  audit["rules"] = g.audit.rules;
  audit["magnitude_k"] =
      g.audit.magnitude_k ? io::OrderedJson(*g.audit.magnitude_k) : io::OrderedJson(nullptr);
  io::OrderedJson out = io::OrderedJson::object();
  out["strict"] = std::move(strict);
  out["audit"] = std::move(audit);
  return out;
}

}  // namespace numcheck::grade
