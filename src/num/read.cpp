// Number readers. One scanner (scan_at) proposes every candidate reading that starts at a
// position, each either a value in some form or a definite rejection (bad grouping, two points,
// zero denominator, exponent too large). read_number, read_number_prefix and find_numbers choose
// among the candidates. Everything works on raw bytes: the only non-ASCII characters recognised
// are exact UTF-8 sequences (×, ˆ, ·, ⋅, −, superscripts, vulgar fractions), so invalid UTF-8 is
// just "not part of a number". Every scan step moves forward; work per start position is bounded
// by the length of the token it reads, and find_numbers never rescans a token it skipped.
#include "num/read.hpp"
#include "core/ascii.hpp"

#include <array>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "num/read_detail.hpp"

namespace numcheck::num {

std::string_view form_name(NumberForm f) noexcept {
  switch (f) {
    case NumberForm::kInteger:
      return "integer";
    case NumberForm::kDecimal:
      return "decimal";
    case NumberForm::kFraction:
      return "fraction";
    case NumberForm::kMixed:
      return "mixed";
    case NumberForm::kENotation:
      return "e_notation";
    case NumberForm::kTimesTen:
      return "times_ten";
    case NumberForm::kPercent:
      return "percent";
    case NumberForm::kWords:
      return "words";
  }
  return "unknown";
}

std::optional<NumberForm> form_from_name(std::string_view name) noexcept {
  for (int i = 0; i < kNumberFormCount; ++i) {
    const auto f = static_cast<NumberForm>(i);
    if (form_name(f) == name) return f;
  }
  return std::nullopt;
}

std::string_view reject_name(RejectReason r) noexcept {
  switch (r) {
    case RejectReason::kEmpty:
      return "empty";
    case RejectReason::kNotANumber:
      return "not_a_number";
    case RejectReason::kFormNotAllowed:
      return "form_not_allowed";
    case RejectReason::kBadGrouping:
      return "bad_grouping";
    case RejectReason::kTwoPoints:
      return "two_points";
    case RejectReason::kZeroDenominator:
      return "zero_denominator";
    case RejectReason::kExponentTooLarge:
      return "exponent_too_large";
    case RejectReason::kTrailingText:
      return "trailing_text";
  }
  return "unknown";
}

namespace detail {
namespace {

using std::size_t;

using ascii::is_alpha;
using ascii::is_digit;
constexpr bool is_hspace(char c) noexcept { return ascii::is_blank(c); }
constexpr char lower(char c) noexcept { return ascii::to_lower(c); }

bool at(std::string_view t, size_t i, std::string_view lit) {
  return i <= t.size() && t.size() - i >= lit.size() && t.compare(i, lit.size(), lit) == 0;
}
bool digit_at(std::string_view t, size_t i) { return i < t.size() && is_digit(t[i]); }
size_t skip_digits(std::string_view t, size_t i) {
  while (i < t.size() && is_digit(t[i])) ++i;
  return i;
}
size_t skip_hspace(std::string_view t, size_t i) {
  while (i < t.size() && is_hspace(t[i])) ++i;
  return i;
}
size_t skip_alpha(std::string_view t, size_t i) {
  while (i < t.size() && is_alpha(t[i])) ++i;
  return i;
}
// Case-insensitive ASCII word at i, ending at a non-letter.
bool word_at(std::string_view t, size_t i, std::string_view w) {
  if (t.size() - std::min(i, t.size()) < w.size()) return false;
  for (size_t k = 0; k < w.size(); ++k) {
    if (lower(t[i + k]) != w[k]) return false;
  }
  return i + w.size() >= t.size() || !is_alpha(t[i + w.size()]);
}

// Sign at i: '-', '+' or U+2212; returns its length (0 when none).
size_t sign_len(std::string_view t, size_t i, bool* negative) {
  if (i >= t.size()) return 0;
  if (t[i] == '-' || t[i] == '+') {
    *negative = t[i] == '-';
    return 1;
  }
  if (at(t, i, "\xE2\x88\x92")) {  // − U+2212 MINUS SIGN
    *negative = true;
    return 3;
  }
  return 0;
}

// Vulgar fraction characters: ¼ ½ ¾ (U+00BC..BE) and U+2150..215E.
struct Vulgar {
  const char* bytes;
  int num;
  int den;
};
constexpr std::array<Vulgar, 18> kVulgar{{{"\xC2\xBC", 1, 4},
                                          {"\xC2\xBD", 1, 2},
                                          {"\xC2\xBE", 3, 4},
                                          {"\xE2\x85\x90", 1, 7},
                                          {"\xE2\x85\x91", 1, 9},
                                          {"\xE2\x85\x92", 1, 10},
                                          {"\xE2\x85\x93", 1, 3},
                                          {"\xE2\x85\x94", 2, 3},
                                          {"\xE2\x85\x95", 1, 5},
                                          {"\xE2\x85\x96", 2, 5},
                                          {"\xE2\x85\x97", 3, 5},
                                          {"\xE2\x85\x98", 4, 5},
                                          {"\xE2\x85\x99", 1, 6},
                                          {"\xE2\x85\x9A", 5, 6},
                                          {"\xE2\x85\x9B", 1, 8},
                                          {"\xE2\x85\x9C", 3, 8},
                                          {"\xE2\x85\x9D", 5, 8},
                                          {"\xE2\x85\x9E", 7, 8}}};

const Vulgar* vulgar_at(std::string_view t, size_t i) {
  if (i >= t.size() || (t[i] != '\xC2' && t[i] != '\xE2')) return nullptr;
  for (const auto& v : kVulgar) {
    if (at(t, i, v.bytes)) return &v;
  }
  return nullptr;
}

// Superscript digit at i: returns its byte length and sets *d, or 0.
size_t superscript_digit(std::string_view t, size_t i, int* d) {
  if (at(t, i, "\xC2\xB9")) return *d = 1, 2;
  if (at(t, i, "\xC2\xB2")) return *d = 2, 2;
  if (at(t, i, "\xC2\xB3")) return *d = 3, 2;
  if (at(t, i, "\xE2\x81\xB0")) return *d = 0, 3;
  if (i + 2 < t.size() && t[i] == '\xE2' && t[i + 1] == '\x81') {
    const auto c = static_cast<unsigned char>(t[i + 2]);
    if (c >= 0xB4 && c <= 0xB9) return *d = c - 0xB0, 3;
  }
  return 0;
}

// Times signs between mantissa and "10": × · ⋅ x X *.
size_t times_len(std::string_view t, size_t i) {
  if (at(t, i, "\xC3\x97")) return 2;      // ×
  if (at(t, i, "\xC2\xB7")) return 2;      // ·
  if (at(t, i, "\xE2\x8B\x85")) return 3;  // ⋅
  if (i < t.size() && (t[i] == 'x' || t[i] == 'X' || t[i] == '*')) return 1;
  return 0;
}

// An exponent read from text: value, or too large (magnitude > kMaxExponentMagnitude).
struct Exponent {
  bool found = false;
  bool too_large = false;
  long value = 0;
  size_t end = 0;
};

// Decimal digits [b, e) as an exponent with the given sign.
Exponent exponent_from_digits(std::string_view t, size_t b, size_t e, bool negative) {
  Exponent x;
  x.found = true;
  x.end = e;
  while (b < e && t[b] == '0') ++b;
  if (e - b > 6) {
    x.too_large = true;
    return x;
  }
  long v = 0;
  for (size_t k = b; k < e; ++k) v = v * 10 + (t[k] - '0');
  if (v > kMaxExponentMagnitude) x.too_large = true;
  x.value = negative ? -v : v;
  return x;
}

// The power part after "10": ^k, ˆk, **k, ^{k}, or superscript digits (with ⁻ or ⁺).
Exponent parse_power(std::string_view t, size_t i) {
  Exponent none;
  size_t k = i;
  if (at(t, k, "^")) {
    k += 1;
  } else if (at(t, k, "\xCB\x86") || at(t, k, "**")) {  // ˆ U+02C6 (two bytes) or **
    k += 2;
  } else {
    // Superscripts.
    bool neg = false;
    if (at(t, k, "\xE2\x81\xBB")) {  // ⁻
      neg = true;
      k += 3;
    } else if (at(t, k, "\xE2\x81\xBA")) {  // ⁺
      k += 3;
    }
    std::string digits;  // at most 8 kept: more than 6 significant digits is too large anyway
    bool many = false;
    int d = 0;
    size_t len = 0;
    while ((len = superscript_digit(t, k, &d)) != 0) {
      if (digits.empty() && d == 0) {
        digits.push_back('0');  // leading zeros collapse to one
      } else if (digits == "0") {
        digits[0] = static_cast<char>('0' + d);
      } else if (digits.size() < 8) {
        digits.push_back(static_cast<char>('0' + d));
      } else {
        many = true;
      }
      k += len;
    }
    if (digits.empty()) return none;
    Exponent x = exponent_from_digits(digits, 0, digits.size(), neg);
    x.too_large = x.too_large || many;
    x.end = k;
    return x;
  }
  const bool brace = at(t, k, "{");
  if (brace) ++k;
  bool neg = false;
  k += sign_len(t, k, &neg);
  const size_t db = k;
  k = skip_digits(t, k);
  if (k == db) return none;
  if (brace) {
    if (!at(t, k, "}")) return none;
    Exponent x = exponent_from_digits(t, db, k, neg);
    x.end = k + 1;
    return x;
  }
  return exponent_from_digits(t, db, k, neg);
}

// An unsigned decimal numeral: integer part (plain digits or valid comma grouping), optional
// point and fraction digits.
struct Numeral {
  size_t begin = 0;
  size_t int_end = 0;  // end of the integer part (including group commas)
  size_t end = 0;      // end of the numeral
  bool grouped = false;
  bool point = false;
  // A definite rejection (bad grouping, two points) covering [begin, fail_end).
  bool failed = false;
  RejectReason reason = RejectReason::kNotANumber;
  size_t fail_end = 0;
};

Numeral parse_numeral(std::string_view t, size_t b, bool allow_grouping) {
  Numeral n;
  n.begin = b;
  const size_t d_end = skip_digits(t, b);
  size_t i = d_end;
  if (i < t.size() && t[i] == ',' && digit_at(t, i + 1)) {
    if (!allow_grouping) {
      n.int_end = n.end = d_end;
      return n;
    }
    bool ok = d_end - b <= 3;
    if (ok) {
      while (i < t.size() && t[i] == ',' && digit_at(t, i + 1)) {
        if (digit_at(t, i + 1) && digit_at(t, i + 2) && digit_at(t, i + 3) && !digit_at(t, i + 4)) {
          i += 4;
          n.grouped = true;
        } else {
          ok = false;
          break;
        }
      }
    }
    if (!ok) {
      n.failed = true;
      n.reason = RejectReason::kBadGrouping;
      n.fail_end = skip_numeric_token(t, b);
      return n;
    }
  }
  n.int_end = i;
  if (i < t.size() && t[i] == '.' && digit_at(t, i + 1)) {
    n.point = true;
    i = skip_digits(t, i + 1);
    if (i < t.size() && t[i] == '.' && digit_at(t, i + 1)) {
      n.failed = true;
      n.reason = RejectReason::kTwoPoints;
      n.fail_end = skip_numeric_token(t, b);
      return n;
    }
  }
  n.end = i;
  return n;
}

// The exact value of numeral * 10^shift, or nullopt when a nonzero digit would lie outside
// 10^-kMaxExponentMagnitude .. 10^kMaxExponentMagnitude. Checked before any big-number work, so
// megabytes of digits cost one linear pass.
std::optional<Rational> numeral_value(std::string_view t, const Numeral& n, long shift) {
  // Integer digits (skip commas) and fraction digits.
  size_t first_nz = n.int_end;  // first nonzero integer digit
  for (size_t k = n.begin; k < n.int_end; ++k) {
    if (t[k] != '0' && t[k] != ',') {
      first_nz = k;
      break;
    }
  }
  const size_t fb = n.point ? n.int_end + 1 : n.end;
  size_t fe = n.end;
  while (fe > fb && t[fe - 1] == '0') --fe;  // fraction digits without trailing zeros
  long long top = 0;
  long long bottom = 0;
  if (first_nz < n.int_end) {
    long long sig = 0;
    for (size_t k = first_nz; k < n.int_end; ++k) sig += t[k] != ',';
    top = sig - 1;
  } else {
    size_t z = fb;
    while (z < fe && t[z] == '0') ++z;
    if (z == fe) return Rational(0);  // zero
    top = -static_cast<long long>(z - fb) - 1;
  }
  if (fe > fb) {
    bottom = -static_cast<long long>(fe - fb);
  } else {
    long long tz = 0;
    for (size_t k = n.int_end; k > first_nz; --k) {
      const char c = t[k - 1];
      if (c == ',') continue;
      if (c != '0') break;
      ++tz;
    }
    bottom = tz;
  }
  if (top + shift > kMaxExponentMagnitude || bottom + shift < -kMaxExponentMagnitude) return std::nullopt;
  // Significant digits from the first nonzero to the last kept digit: value = digits * 10^bottom.
  const long long count = top - bottom + 1;
  std::string digits;
  unsigned long long small = 0;  // the digits themselves when there are at most 18
  const bool fast = count <= 18;
  if (!fast) digits.reserve(static_cast<size_t>(count));
  long long kept = 0;
  bool started = false;
  auto take = [&](size_t from, size_t to) {
    for (size_t k = from; k < to && kept < count; ++k) {
      const char c = t[k];
      if (c == ',') continue;
      if (!started && c == '0') continue;
      started = true;
      ++kept;
      if (fast)
        small = small * 10 + static_cast<unsigned>(c - '0');
      else
        digits.push_back(c);
    }
  };
  take(n.begin, n.int_end);
  if (fe > fb) take(fb, fe);  // else: trailing integer zeros are counted in bottom, not taken
  mpz_class m;
  if (fast)
    mpz_set_ui(m.get_mpz_t(), static_cast<unsigned long>(small));
  else
    m.set_str(digits, 10);
  const long long e10 = bottom + shift;
  if (e10 >= 0) {
    mpz_class p;
    mpz_ui_pow_ui(p.get_mpz_t(), 10, static_cast<unsigned long>(e10));
    return Rational(mpz_class(m * p));
  }
  mpz_class p;
  mpz_ui_pow_ui(p.get_mpz_t(), 10, static_cast<unsigned long>(-e10));
  return Rational(m, p);
}

// A plain integer [b, e) with at most 1,001 significant digits (its top digit at most 10^1000).
std::optional<mpz_class> small_integer(std::string_view t, size_t b, size_t e) {
  while (b < e && t[b] == '0') ++b;
  if (e - b > static_cast<size_t>(kMaxExponentMagnitude) + 1) return std::nullopt;
  if (b == e) return mpz_class(0);
  return mpz_class(std::string(t.substr(b, e - b)), 10);
}

// ---------------------------------------------------------------------------------------------
// Number words.

enum class WordKind : std::uint8_t {
  kOnes,
  kTeen,
  kTens,
  kHundred,
  kScale,
  kFraction,
  kA,
  kAnd,
  kMinus,
  kPoint,
  kZero
};
struct WordInfo {
  const char* word;
  WordKind kind;
  int value;  // digit, teen, tens value, scale exponent, or fraction denominator
};
constexpr WordInfo kWords[] = {
    {"zero", WordKind::kZero, 0},
    {"one", WordKind::kOnes, 1},
    {"two", WordKind::kOnes, 2},
    {"three", WordKind::kOnes, 3},
    {"four", WordKind::kOnes, 4},
    {"five", WordKind::kOnes, 5},
    {"six", WordKind::kOnes, 6},
    {"seven", WordKind::kOnes, 7},
    {"eight", WordKind::kOnes, 8},
    {"nine", WordKind::kOnes, 9},
    {"ten", WordKind::kTeen, 10},
    {"eleven", WordKind::kTeen, 11},
    {"twelve", WordKind::kTeen, 12},
    {"thirteen", WordKind::kTeen, 13},
    {"fourteen", WordKind::kTeen, 14},
    {"fifteen", WordKind::kTeen, 15},
    {"sixteen", WordKind::kTeen, 16},
    {"seventeen", WordKind::kTeen, 17},
    {"eighteen", WordKind::kTeen, 18},
    {"nineteen", WordKind::kTeen, 19},
    {"twenty", WordKind::kTens, 20},
    {"thirty", WordKind::kTens, 30},
    {"forty", WordKind::kTens, 40},
    {"fourty", WordKind::kTens, 40},
    {"fifty", WordKind::kTens, 50},
    {"sixty", WordKind::kTens, 60},
    {"seventy", WordKind::kTens, 70},
    {"eighty", WordKind::kTens, 80},
    {"ninety", WordKind::kTens, 90},
    {"hundred", WordKind::kHundred, 2},
    {"thousand", WordKind::kScale, 3},
    {"million", WordKind::kScale, 6},
    {"billion", WordKind::kScale, 9},
    {"trillion", WordKind::kScale, 12},
    {"half", WordKind::kFraction, 2},
    {"halves", WordKind::kFraction, 2},
    {"third", WordKind::kFraction, 3},
    {"thirds", WordKind::kFraction, 3},
    {"quarter", WordKind::kFraction, 4},
    {"quarters", WordKind::kFraction, 4},
    {"fourth", WordKind::kFraction, 4},
    {"fourths", WordKind::kFraction, 4},
    {"fifth", WordKind::kFraction, 5},
    {"fifths", WordKind::kFraction, 5},
    {"sixth", WordKind::kFraction, 6},
    {"sixths", WordKind::kFraction, 6},
    {"seventh", WordKind::kFraction, 7},
    {"sevenths", WordKind::kFraction, 7},
    {"eighth", WordKind::kFraction, 8},
    {"eighths", WordKind::kFraction, 8},
    {"ninth", WordKind::kFraction, 9},
    {"ninths", WordKind::kFraction, 9},
    {"tenth", WordKind::kFraction, 10},
    {"tenths", WordKind::kFraction, 10},
    {"a", WordKind::kA, 1},
    {"an", WordKind::kA, 1},
    {"and", WordKind::kAnd, 0},
    {"minus", WordKind::kMinus, 0},
    {"negative", WordKind::kMinus, 0},
    {"point", WordKind::kPoint, 0},
};

struct Token {
  const WordInfo* info = nullptr;  // nullptr: not a number word
  size_t begin = 0;
  size_t end = 0;
};

// Number words by first letter, so a lookup compares against a handful of words (of the same
// length only).
struct WordIndex {
  std::array<std::vector<std::pair<std::string_view, const WordInfo*>>, 26> by_letter;
  WordIndex() {
    for (const auto& wi : kWords) by_letter[static_cast<size_t>(wi.word[0] - 'a')].emplace_back(wi.word, &wi);
  }
};

const WordInfo* lookup_word(std::string_view t, size_t b, size_t e) {
  if (e - b > 9 || e == b) return nullptr;
  const char c0 = lower(t[b]);
  if (c0 < 'a' || c0 > 'z') return nullptr;
  static const WordIndex index;
  const size_t len = e - b;
  for (const auto& [w, wi] : index.by_letter[static_cast<size_t>(c0 - 'a')]) {
    if (w.size() != len) continue;
    size_t k = 1;
    while (k < len && lower(t[b + k]) == w[k]) ++k;
    if (k == len) return wi;
  }
  return nullptr;
}

// Number words from a start position, read lazily (the grammar usually needs one or two): words
// separated by spaces/tabs or one hyphen, ending at the first word that is not a number word.
// At most kMaxTokens words, so a start position costs bounded work.
constexpr size_t kMaxTokens = 40;
class TokenStream {
 public:
  TokenStream(std::string_view t, size_t b) : t_(t), next_(b) {}
  // Token i, or nullptr when there are fewer words.
  const Token* get(size_t i) {
    while (n_ <= i && !done_) advance();
    return i < n_ ? &tok_[i] : nullptr;
  }

 private:
  void advance() {
    if (n_ == kMaxTokens || next_ >= t_.size() || !is_alpha(t_[next_])) {
      done_ = true;
      return;
    }
    const size_t e = skip_alpha(t_, next_);
    const WordInfo* wi = lookup_word(t_, next_, e);
    if (wi == nullptr) {
      done_ = true;
      return;
    }
    tok_[n_++] = Token{wi, next_, e};
    size_t j = e;
    if (j < t_.size() && t_[j] == '-') {
      ++j;
    } else {
      j = skip_hspace(t_, j);
      if (j == e) done_ = true;
    }
    if (j >= t_.size() || !is_alpha(t_[j])) done_ = true;
    next_ = j;
  }

  std::string_view t_;
  size_t next_;
  std::array<Token, kMaxTokens> tok_;  // the first n_ are set
  size_t n_ = 0;
  bool done_ = false;
};

struct WordsParser {
  TokenStream& ts;

  [[nodiscard]] bool is(size_t i, WordKind k) const {
    const Token* tk = ts.get(i);
    return tk != nullptr && tk->info->kind == k;
  }
  [[nodiscard]] int val(size_t i) const { return ts.get(i)->info->value; }
  [[nodiscard]] std::string_view word(size_t i) const { return ts.get(i)->info->word; }

  // 1..99: ones | teen | tens [ones]. Returns value and advances i, or 0.
  long small(size_t& i) const {
    if (is(i, WordKind::kOnes) || is(i, WordKind::kTeen)) return val(i++);
    if (is(i, WordKind::kTens)) {
      long v = val(i++);
      if (is(i, WordKind::kOnes)) v += val(i++);
      return v;
    }
    return 0;
  }

  // A segment below a scale: small [hundred [[and] small]] | a hundred [[and] small]; 1..9999.
  long segment(size_t& i, bool allow_a) const {
    size_t k = i;
    long v = 0;
    if (allow_a && is(k, WordKind::kA) && is(k + 1, WordKind::kHundred)) {
      v = 1;
      ++k;
    } else {
      v = small(k);
      if (v == 0) return 0;
    }
    if (is(k, WordKind::kHundred)) {
      ++k;
      v *= 100;
      size_t m = k;
      if (is(m, WordKind::kAnd)) ++m;
      if (long s = small(m); s != 0) {
        v += s;
        k = m;
      }
    }
    i = k;
    return v;
  }

  // An integer in words. Scales strictly decrease ("two million three thousand"), so the value is
  // below 10^16 and the number of words is bounded.
  std::optional<long long> integer(size_t& i) const {
    if (is(i, WordKind::kZero)) {
      ++i;
      return 0;
    }
    size_t k = i;
    long long total = 0;
    int last_scale = 100;
    bool any = false;
    while (true) {
      size_t m = k;
      long seg = 0;
      if (!any && is(m, WordKind::kA) && is(m + 1, WordKind::kScale)) {
        seg = 1;
        ++m;
      } else {
        seg = segment(m, !any);
      }
      if (seg == 0) break;
      if (is(m, WordKind::kScale) && val(m) < last_scale) {
        long long p = 1;
        for (int s = 0; s < val(m); ++s) p *= 10;
        total += seg * p;
        last_scale = val(m);
        k = m + 1;
        any = true;
        // British "one thousand and five": "and" then a final small number.
        if (is(k, WordKind::kAnd)) {
          size_t q = k + 1;
          if (long s = small(q); s != 0 && !is(q, WordKind::kHundred) && !is(q, WordKind::kScale) &&
                                 !is(q, WordKind::kFraction)) {
            total += s;
            k = q;
            break;
          }
        }
        continue;
      }
      if (any && seg >= 1000) break;  // "two thousand fifteen hundred" is not a number
      total += seg;
      k = m;
      any = true;
      break;
    }
    if (!any) return std::nullopt;
    i = k;
    return total;
  }

  // A proper or improper fraction phrase: (a | integer) fraction-word. "a half", "three quarters".
  std::optional<Rational> fraction(size_t& i) const {
    size_t k = i;
    long long num = 0;
    if (is(k, WordKind::kA) && is(k + 1, WordKind::kFraction)) {
      num = 1;
      ++k;
    } else {
      size_t m = k;
      auto v = integer(m);
      if (!v || *v == 0 || !is(m, WordKind::kFraction)) return std::nullopt;
      num = *v;
      k = m;
    }
    // A singular fraction word takes the numerator one ("a third", "one quarter"); otherwise it is
    // an ordinal ("twenty-seventh", "the fifth"), which is not a number.
    const std::string_view fw = word(k);
    if (fw.back() != 's' && num != 1) return std::nullopt;
    const int den = val(k);
    ++k;
    i = k;
    return Rational(mpz_class(static_cast<long>(num)), mpz_class(den));
  }

  // The whole words grammar from token 0; returns value and number of tokens used.
  std::optional<std::pair<Rational, size_t>> parse() const {
    size_t i = 0;
    bool neg = false;
    if (is(i, WordKind::kMinus)) {
      neg = true;
      ++i;
    }
    std::optional<Rational> v;
    {
      size_t k = i;
      if (auto f = fraction(k)) {
        v = *f;
        i = k;
      }
    }
    if (!v) {
      size_t k = i;
      auto whole = integer(k);
      if (!whole) return std::nullopt;
      Rational w(mpz_class(static_cast<long>(*whole)));
      // "two point five [million]"
      if (is(k, WordKind::kPoint) && (is(k + 1, WordKind::kOnes) || is(k + 1, WordKind::kZero))) {
        size_t m = k + 1;
        std::string digits;
        while (is(m, WordKind::kOnes) || is(m, WordKind::kZero))
          digits.push_back(static_cast<char>('0' + val(m++)));
        w += Rational(mpz_class(digits, 10)) * Rational::pow10(-static_cast<int>(digits.size()));
        k = m;
        if (*whole < 1000 && is(k, WordKind::kScale)) {
          w *= Rational::pow10(val(k));
          ++k;
        }
      } else if (is(k, WordKind::kAnd)) {
        // "two and a half", "one and three quarters": a proper fraction after "and".
        size_t m = k + 1;
        if (auto f = fraction(m); f && *f < Rational(1)) {
          w += *f;
          k = m;
        }
      }
      v = w;
      i = k;
    }
    if (neg) v = -*v;
    return std::make_pair(*v, i);
  }
};

// Words at b: returns (value, end) or nullopt.
std::optional<std::pair<Rational, size_t>> parse_words(std::string_view t, size_t b) {
  TokenStream ts(t, b);
  if (ts.get(0) == nullptr) return std::nullopt;
  WordsParser p{ts};
  auto r = p.parse();
  if (!r || r->second == 0) return std::nullopt;
  return std::make_pair(r->first, ts.get(r->second - 1)->end);
}

}  // namespace

size_t skip_numeric_token(std::string_view t, size_t i) {
  while (i < t.size() && (is_digit(t[i]) || ((t[i] == ',' || t[i] == '.') && digit_at(t, i + 1)))) ++i;
  return i;
}

void scan_at(std::string_view t, size_t pos, std::vector<Candidate>& out) {
  out.clear();
  if (pos >= t.size()) return;
  auto ok = [&](NumberForm f, Rational v, size_t end) {
    out.push_back(Candidate{true, f, end, {}, std::move(v)});
  };
  auto bad = [&](RejectReason r, size_t end) {
    out.push_back(Candidate{false, NumberForm::kInteger, end, r, {}});
  };

  bool neg = false;
  const size_t s = pos + sign_len(t, pos, &neg);
  auto sgn = [&](const Rational& v) { return neg ? -v : v; };

  if (digit_at(t, s)) {
    const Numeral n = parse_numeral(t, s, true);
    if (n.failed) {
      bad(n.reason, n.fail_end);
      return;
    }
    // The numeral alone may be out of range while its scientific form is not ("1.<1,200
    // digits>e300"), so an out-of-range base only rules out the readings built on its value.
    const auto base = numeral_value(t, n, 0);
    if (base)
      ok(n.point ? NumberForm::kDecimal : NumberForm::kInteger, sgn(*base), n.end);
    else
      bad(RejectReason::kExponentTooLarge, n.end);
    const bool plain = !n.grouped;
    const bool integer = plain && !n.point;

    // Fraction a/b (no spaces; a slash after the denominator makes a date, not a number).
    if (integer && at(t, n.end, "/") && digit_at(t, n.end + 1)) {
      const size_t de = skip_digits(t, n.end + 1);
      if (at(t, de, "/") && digit_at(t, de + 1)) {
        size_t e = de;
        while (at(t, e, "/") && digit_at(t, e + 1)) e = skip_digits(t, e + 1);
        bad(RejectReason::kNotANumber, e);
      } else {
        const auto num = small_integer(t, s, n.end);
        const auto den = small_integer(t, n.end + 1, de);
        if (den && *den == 0) {
          bad(RejectReason::kZeroDenominator, de);
        } else if (!num || !den) {
          bad(RejectReason::kExponentTooLarge, de);
        } else {
          ok(NumberForm::kFraction, sgn(Rational(*num, *den)), de);
        }
      }
    }

    // e-notation.
    if (plain && n.end < t.size() && (t[n.end] == 'e' || t[n.end] == 'E')) {
      size_t k = n.end + 1;
      bool eneg = false;
      k += sign_len(t, k, &eneg);
      if (digit_at(t, k)) {
        const size_t ee = skip_digits(t, k);
        const Exponent x = exponent_from_digits(t, k, ee, eneg);
        std::optional<Rational> v;
        if (!x.too_large) v = numeral_value(t, n, x.value);
        if (v)
          ok(NumberForm::kENotation, sgn(*v), ee);
        else
          bad(RejectReason::kExponentTooLarge, ee);
      }
    }

    // Times-ten: mantissa × 10^k (spaces optional around the sign).
    if (plain) {
      const size_t k = skip_hspace(t, n.end);
      if (const size_t tl = times_len(t, k); tl != 0) {
        const size_t k2 = skip_hspace(t, k + tl);
        if (at(t, k2, "10") && !digit_at(t, k2 + 2)) {
          const Exponent x = parse_power(t, k2 + 2);
          if (x.found) {
            std::optional<Rational> v;
            if (!x.too_large) v = numeral_value(t, n, x.value);
            if (v)
              ok(NumberForm::kTimesTen, sgn(*v), x.end);
            else
              bad(RejectReason::kExponentTooLarge, x.end);
          }
        }
      }
      // A bare power of ten: "10^4", "10⁴".
      if (integer && n.end - s == 2 && t[s] == '1' && t[s + 1] == '0') {
        const Exponent x = parse_power(t, n.end);
        if (x.found) {
          if (x.too_large)
            bad(RejectReason::kExponentTooLarge, x.end);
          else
            ok(NumberForm::kTimesTen, sgn(Rational::pow10(static_cast<int>(x.value))), x.end);
        }
      }
    }

    // Percent: "75%", "75 %", "75 percent", "75 per cent".
    {
      const size_t k = skip_hspace(t, n.end);
      size_t pe = 0;
      if (at(t, k, "%")) {
        pe = k + 1;
      } else if (k > n.end && word_at(t, k, "percent")) {
        pe = k + 7;
      } else if (k > n.end && word_at(t, k, "per")) {
        const size_t k2 = skip_hspace(t, k + 3);
        if (k2 > k + 3 && word_at(t, k2, "cent")) pe = k2 + 4;
      }
      if (pe != 0 && base) ok(NumberForm::kPercent, sgn(*base / Rational(100)), pe);
      if (pe != 0 && !base) bad(RejectReason::kExponentTooLarge, pe);
    }

    // Digits with a scale word: "1.5 million", "2 thousand".
    {
      const size_t k = skip_hspace(t, n.end);
      if (k > n.end && k < t.size() && is_alpha(t[k])) {
        const size_t we = skip_alpha(t, k);
        const WordInfo* wi = lookup_word(t, k, we);
        if (wi != nullptr && (wi->kind == WordKind::kScale || wi->kind == WordKind::kHundred)) {
          if (auto v = numeral_value(t, n, wi->value))
            ok(NumberForm::kWords, sgn(*v), we);
          else
            bad(RejectReason::kExponentTooLarge, we);
        }
      }
    }

    // Mixed number: integer, whitespace, proper fraction ("2 3/4"), or integer and a vulgar
    // fraction ("2¾", "2 ¾").
    if (integer && base) {
      const size_t k = skip_hspace(t, n.end);
      if (k > n.end && digit_at(t, k)) {
        const size_t ne = skip_digits(t, k);
        if (at(t, ne, "/") && digit_at(t, ne + 1)) {
          const size_t de = skip_digits(t, ne + 1);
          if (!(at(t, de, "/") && digit_at(t, de + 1))) {
            const auto num = small_integer(t, k, ne);
            const auto den = small_integer(t, ne + 1, de);
            if (den && *den == 0) {
              bad(RejectReason::kZeroDenominator, de);
            } else if (num && den && *num > 0 && *num < *den) {
              ok(NumberForm::kMixed, sgn(*base + Rational(*num, *den)), de);
            }
          }
        }
      }
      if (const Vulgar* vf = vulgar_at(t, k)) {
        ok(NumberForm::kMixed, sgn(*base + Rational(mpz_class(vf->num), mpz_class(vf->den))),
           k + std::strlen(vf->bytes));
      }
    }
    return;
  }

  if (const Vulgar* vf = vulgar_at(t, s)) {
    // A vulgar fraction glyph is not the integer fraction "a/b" of the strict grammar; it is read
    // as a named number, like words.
    ok(NumberForm::kWords, sgn(Rational(mpz_class(vf->num), mpz_class(vf->den))), s + std::strlen(vf->bytes));
    return;
  }

  if (s == pos && is_alpha(t[pos])) {
    if (auto w = parse_words(t, pos)) ok(NumberForm::kWords, std::move(w->first), w->second);
  }
}

const Candidate* longest(const std::vector<Candidate>& c) {
  const Candidate* best = nullptr;
  for (const auto& x : c) {
    // Longest wins; on a tie a rejection wins (it is the more specific reading).
    if (best == nullptr || x.end > best->end || (x.end == best->end && !x.ok && best->ok)) best = &x;
  }
  return best;
}

bool number_word_at(std::string_view t, size_t pos) {
  return pos < t.size() && is_alpha(t[pos]) && lookup_word(t, pos, skip_alpha(t, pos)) != nullptr;
}

bool is_number_word_impl(std::string_view w) noexcept {
  const WordInfo* wi = lookup_word(w, 0, w.size());
  return wi != nullptr && wi->kind != WordKind::kA && wi->kind != WordKind::kAnd &&
         wi->kind != WordKind::kMinus && wi->kind != WordKind::kPoint;
}

}  // namespace detail

namespace {

using detail::Candidate;

using ascii::is_alpha;
using ascii::is_digit;
using ascii::is_space;
constexpr bool is_word_char(char c) noexcept { return ascii::is_word(c); }
constexpr char lower(char c) noexcept { return ascii::to_lower(c); }

// Chooses the reading at a position for read_number / read_number_prefix: the longest candidate.
ReadResult choose(const std::vector<Candidate>& cands, FormSet allowed, std::size_t begin) {
  ReadResult r;
  const Candidate* best = detail::longest(cands);
  if (best == nullptr) {
    r.reason = RejectReason::kNotANumber;
    return r;
  }
  if (!best->ok) {
    r.reason = best->reason;
    return r;
  }
  if (!allowed.has(best->form)) {
    r.reason = RejectReason::kFormNotAllowed;
    return r;
  }
  r.match = NumberMatch{*best->value, best->form, begin, best->end};
  return r;
}

// May a number that ends at `end` stop there in running text? Not when glued to a digit, to
// ".5"/",5"/"/5", to an underscore, to an ordinal suffix ("19th"), or to letters that are followed
// by a digit ("4x4", "0x1F"). Letters alone are allowed: "5km", "10mL".
bool end_ok(std::string_view t, std::size_t end, NumberForm form) {
  if (end >= t.size()) return true;
  const char c = t[end];
  if (is_digit(c) || c == '_') return false;
  if ((c == '.' || c == ',' || c == '/') && end + 1 < t.size() && is_digit(t[end + 1])) return false;
  // "twenty-seventh", "twenty-something": number words glued by a hyphen to another word.
  if (c == '-' && form == NumberForm::kWords && end + 1 < t.size() && is_alpha(t[end + 1])) return false;
  if (is_alpha(c)) {
    if (form == NumberForm::kWords) return false;
    std::size_t e = end;
    while (e < t.size() && is_alpha(t[e])) ++e;
    if (e < t.size() && (is_digit(t[e]) || t[e] == '_')) return false;
    if (e - end == 2) {
      const char a = lower(t[end]);
      const char b = lower(t[end + 1]);
      if ((a == 's' && b == 't') || (a == 'n' && b == 'd') || (a == 'r' && b == 'd') ||
          (a == 't' && b == 'h')) {
        return false;
      }
    }
  }
  return true;
}

std::size_t skip_word(std::string_view t, std::size_t i) {
  while (i < t.size() && is_word_char(t[i])) ++i;
  return i;
}

}  // namespace

ReadResult read_number(std::string_view text, FormSet allowed) {
  if (const auto small = read_small_number(text, allowed)) {
    ReadResult r;
    r.match = NumberMatch{small->to_rational(), small->form, 0, text.size()};
    return r;
  }
  return detail::read_number_scan(text, allowed);
}

ReadResult detail::read_number_scan(std::string_view text, FormSet allowed) {
  std::size_t b = 0;
  std::size_t e = text.size();
  while (b < e && is_space(text[b])) ++b;
  while (e > b && is_space(text[e - 1])) --e;
  ReadResult r;
  if (b == e) {
    r.reason = RejectReason::kEmpty;
    return r;
  }
  const std::string_view t = text.substr(0, e);
  thread_local std::vector<Candidate> cands;  // reused: its capacity survives the calls
  detail::scan_at(t, b, cands);
  const Candidate* best = detail::longest(cands);
  if (best == nullptr) {
    r.reason = RejectReason::kNotANumber;
    return r;
  }
  if (!best->ok) {
    r.reason = best->reason;
    return r;
  }
  if (best->end != t.size()) {
    r.reason = RejectReason::kTrailingText;
    return r;
  }
  if (!allowed.has(best->form)) {
    r.reason = RejectReason::kFormNotAllowed;
    return r;
  }
  r.match = NumberMatch{*best->value, best->form, 0, text.size()};
  return r;
}

ReadResult read_number_prefix(std::string_view text, FormSet allowed) {
  std::size_t b = 0;
  while (b < text.size() && is_space(text[b])) ++b;
  if (b == text.size()) {
    ReadResult r;
    r.reason = RejectReason::kEmpty;
    return r;
  }
  thread_local std::vector<Candidate> cands;  // reused: its capacity survives the calls
  detail::scan_at(text, b, cands);
  return choose(cands, allowed, b);
}

std::vector<NumberMatch> find_numbers(std::string_view t, FormSet allowed, std::size_t max_matches) {
  std::vector<NumberMatch> out;
  std::vector<Candidate> cands;
  std::size_t i = 0;
  const std::size_t n = t.size();
  while (i < n && out.size() < max_matches) {
    const char c = t[i];
    const char prev = i > 0 ? t[i - 1] : ' ';
    std::size_t start = i;
    bool candidate = false;
    bool digit_start = false;
    if (is_digit(c)) {
      digit_start = true;
      if (is_word_char(prev)) {  // "B737", "G7", "x_1"
        i = skip_word(t, i);
        continue;
      }
      if (prev == '.' || prev == ',') {  // ".5" is not a number; ",5" after a digit was skipped
        i = detail::skip_numeric_token(t, i);
        continue;
      }
      if (prev == '-' || prev == '+') {
        const char pp = i > 1 ? t[i - 2] : ' ';
        if (is_alpha(pp) || pp == '_') {  // "Covid-19", "F-16"
          i = skip_word(t, i);
          continue;
        }
        // A sign, except after a digit or percent sign, where it is a range dash ("5-10", "5%-10%").
        if (!is_digit(pp) && pp != '%') start = i - 1;
      } else if (i >= 3 && t.compare(i - 3, 3, "\xE2\x88\x92") == 0) {
        start = i - 3;  // U+2212 minus sign
      }
      candidate = true;
    } else if (is_alpha(c)) {
      if (is_word_char(prev)) {
        i = skip_word(t, i);
        continue;
      }
      // At a letter scan_at reads only number words ("seven", "a half"): a word that is none has
      // no candidate, so skip it without the scan (most words of a text).
      if (!detail::number_word_at(t, i)) {
        i = skip_word(t, i);
        continue;
      }
      candidate = true;
    } else if ((c == '\xC2' && i + 1 < n && t[i + 1] >= '\xBC' && t[i + 1] <= '\xBE') ||
               (c == '\xE2' && i + 2 < n && t[i + 1] == '\x85' && t[i + 2] >= '\x90' && t[i + 2] <= '\x9E')) {
      candidate = true;  // a vulgar fraction glyph
    }
    if (!candidate) {
      ++i;
      continue;
    }
    detail::scan_at(t, start, cands);
    const Candidate* best_any = detail::longest(cands);
    const Candidate* best_ok = nullptr;
    for (const auto& x : cands) {
      if (x.ok && allowed.has(x.form) && end_ok(t, x.end, x.form) &&
          (best_ok == nullptr || x.end > best_ok->end)) {
        best_ok = &x;
      }
    }
    if (best_any != nullptr && !best_any->ok) {
      // A definite rejection ("1e99999", "3/0", "12,34", "1.2.3"): no number here at all.
      i = std::max(best_any->end, i + 1);
      continue;
    }
    if (best_ok != nullptr) {
      out.push_back(NumberMatch{*best_ok->value, best_ok->form, start, best_ok->end});
      i = best_ok->end;
      continue;
    }
    if (digit_start) {
      i = detail::skip_numeric_token(t, i);
    } else if (is_alpha(c)) {
      i = skip_word(t, i);
    } else {
      ++i;
    }
  }
  return out;
}

bool is_number_word(std::string_view word) noexcept { return detail::is_number_word_impl(word); }

}  // namespace numcheck::num
