// The fixed-width fast path of the number readers (SmallNumber, read_small_number). It accepts a
// subset of what read_number accepts and, on that subset, gives the same value and form; anything
// else is left to the scanner (read.cpp). tests/num/small_number_test.cpp compares the two on
// millions of random inputs, and fuzz/fuzz_num_read.cpp does so without end.
#include <algorithm>
#include <array>
#include <limits>
#include <numeric>

#include "core/ascii.hpp"
#include "num/read.hpp"

namespace numcheck::num {
namespace {

static_assert(GMP_LIMB_BITS == 64, "SmallNumber::equals reads one 64-bit limb");
__extension__ using U128 = unsigned __int128;  // GCC/Clang extension; __extension__ keeps -Wpedantic quiet

constexpr std::uint64_t kMaxMantissa = std::numeric_limits<std::uint64_t>::max();
// Inputs longer than this are left to the scanner: it bounds every loop here and keeps exponents
// far inside kMaxExponentMagnitude.
constexpr std::size_t kMaxSmallText = 64;
constexpr int kMaxSmallExponent = 400;

using ascii::is_digit;  // core/ascii.hpp: the one definition of digits and whitespace
using ascii::is_space;

// Appends one decimal digit to m; false on overflow.
bool push_digit(std::uint64_t& m, char c) {
  const auto d = static_cast<std::uint64_t>(c - '0');
  if (m > (kMaxMantissa - d) / 10) return false;
  m = m * 10 + d;
  return true;
}

// Sign at i ('-', '+', U+2212 MINUS SIGN): its length, 0 when none.
std::size_t sign_at(std::string_view t, std::size_t i, bool& negative) {
  if (i < t.size() && (t[i] == '-' || t[i] == '+')) {
    negative = t[i] == '-';
    return 1;
  }
  if (t.size() - i >= 3 && t[i] == '\xE2' && t[i + 1] == '\x88' && t[i + 2] == '\x92') {
    negative = true;
    return 3;
  }
  return 0;
}

constexpr std::array<std::uint64_t, 20> kPow10 = [] {
  std::array<std::uint64_t, 20> p{};
  std::uint64_t v = 1;
  for (auto& x : p) {
    x = v;
    v *= 10;
  }
  return p;
}();

// a * 10^k in 128 bits; false on overflow.
bool scale10(U128 a, int k, U128& out) {
  while (k > 0) {
    const int step = std::min(k, 19);
    if (__builtin_mul_overflow(a, static_cast<U128>(kPow10[static_cast<std::size_t>(step)]), &a))
      return false;
    k -= step;
  }
  out = a;
  return true;
}

}  // namespace

std::optional<SmallNumber> read_small_number(std::string_view text, FormSet allowed) {
  std::size_t b = 0;
  std::size_t e = text.size();
  while (b < e && is_space(text[b])) ++b;
  while (e > b && is_space(text[e - 1])) --e;
  if (e - b > kMaxSmallText || b == e) return std::nullopt;
  const std::string_view t = text.substr(b, e - b);
  SmallNumber n;
  std::size_t i = sign_at(t, 0, n.negative);
  // Integer part: plain digits, or a first group of 1-3 digits and groups of ",ddd".
  const std::size_t ib = i;
  while (i < t.size() && is_digit(t[i])) {
    if (!push_digit(n.mantissa, t[i])) return std::nullopt;
    ++i;
  }
  if (i == ib) return std::nullopt;
  bool grouped = false;
  if (i < t.size() && t[i] == ',') {
    if (i - ib > 3) return std::nullopt;  // "1234,567": bad grouping, the scanner says so
    while (i < t.size() && t[i] == ',') {
      if (t.size() - i < 4 || !is_digit(t[i + 1]) || !is_digit(t[i + 2]) || !is_digit(t[i + 3]) ||
          (t.size() - i > 4 && is_digit(t[i + 4]))) {
        return std::nullopt;
      }
      for (std::size_t k = i + 1; k < i + 4; ++k) {
        if (!push_digit(n.mantissa, t[k])) return std::nullopt;
      }
      i += 4;
      grouped = true;
    }
  }
  bool point = false;
  if (i < t.size() && t[i] == '.') {
    ++i;
    const std::size_t fb = i;
    while (i < t.size() && is_digit(t[i])) {
      if (!push_digit(n.mantissa, t[i])) return std::nullopt;
      ++i;
    }
    if (i == fb) return std::nullopt;  // "3.": trailing text for the scanner
    n.exp10 = -static_cast<int>(i - fb);
    point = true;
  }
  n.form = point ? NumberForm::kDecimal : NumberForm::kInteger;
  if (i < t.size()) {
    if (t[i] == '/' && !grouped && !point) {
      ++i;
      const std::size_t db = i;
      std::uint64_t den = 0;
      while (i < t.size() && is_digit(t[i])) {
        if (!push_digit(den, t[i])) return std::nullopt;
        ++i;
      }
      if (i == db || den == 0) return std::nullopt;  // zero denominator: the scanner rejects it
      n.denominator = den;
      n.form = NumberForm::kFraction;
    } else if ((t[i] == 'e' || t[i] == 'E') && !grouped) {
      ++i;
      bool eneg = false;
      i += sign_at(t, i, eneg);
      const std::size_t xb = i;
      int x = 0;
      while (i < t.size() && is_digit(t[i])) {
        x = x * 10 + (t[i] - '0');
        if (x > kMaxSmallExponent) return std::nullopt;
        ++i;
      }
      if (i == xb) return std::nullopt;
      n.exp10 += eneg ? -x : x;
      n.form = NumberForm::kENotation;
    } else {
      return std::nullopt;
    }
    if (i != t.size()) return std::nullopt;
  }
  if (!allowed.has(n.form)) return std::nullopt;
  return n;
}

Rational SmallNumber::to_rational() const {
  if (mantissa == 0) return Rational(0);
  // Reduce in fixed width when both sides fit 64 bits, else let GMP do it.
  U128 top = mantissa;
  U128 bottom = denominator;
  if (scale10(top, std::max(exp10, 0), top) && scale10(bottom, std::max(-exp10, 0), bottom) &&
      top <= kMaxMantissa && bottom <= kMaxMantissa) {
    auto p = static_cast<std::uint64_t>(top);
    auto q = static_cast<std::uint64_t>(bottom);
    const std::uint64_t g = std::gcd(p, q);
    p /= g;
    q /= g;
    mpq_class v;
    mpz_set_ui(v.get_num_mpz_t(), static_cast<unsigned long>(p));
    mpz_set_ui(v.get_den_mpz_t(), static_cast<unsigned long>(q));
    if (negative) mpq_neg(v.get_mpq_t(), v.get_mpq_t());
    return Rational(v);
  }
  mpz_class num = static_cast<unsigned long>(mantissa);
  if (negative) num = -num;
  Rational v(num, mpz_class(static_cast<unsigned long>(denominator)));
  return exp10 == 0 ? v : v * Rational::pow10(exp10);
}

std::optional<bool> SmallNumber::equals(const Rational& r) const {
  const mpq_class& q = r.mpq();
  const int rs = sgn(q);
  const int s = mantissa == 0 ? 0 : (negative ? -1 : 1);
  if (s != rs) return false;
  if (s == 0) return true;
  if (!mpz_fits_ulong_p(q.get_den_mpz_t())) return std::nullopt;
  mpz_srcptr rn = q.get_num_mpz_t();
  if (mpz_sizeinbase(rn, 2) > 64) return std::nullopt;
  // mantissa * 10^exp10 / denominator == p / q  <=>  mantissa * 10^max(exp10,0) * q == p * denominator *
  // 10^max(-exp10,0)
  const U128 p = mpz_getlimbn(rn, 0);
  const U128 qd = mpz_get_ui(q.get_den_mpz_t());
  U128 left = 0;
  U128 right = 0;
  if (!scale10(static_cast<U128>(mantissa), std::max(exp10, 0), left)) return std::nullopt;
  if (__builtin_mul_overflow(left, qd, &left)) return std::nullopt;
  if (!scale10(p * denominator, std::max(-exp10, 0), right)) return std::nullopt;
  return left == right;
}

}  // namespace numcheck::num
