#include "num/rational.hpp"

#include <functional>
#include <utility>

#include "core/error.hpp"

namespace numcheck::num {

Rational::Rational(const mpz_class& numerator, const mpz_class& denominator) {
  if (denominator == 0) fail("rational with zero denominator");
  q_ = mpq_class(numerator, denominator);
  q_.canonicalize();
}

static bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

namespace {

// Digits of at most 19 characters as a 64-bit value (below 10^19 < 2^64).
std::uint64_t small_digits(std::string_view s) {
  std::uint64_t v = 0;
  for (const char c : s) v = v * 10 + static_cast<std::uint64_t>(c - '0');
  return v;
}

void set_digits(mpz_ptr z, std::string_view digits, std::string& scratch) {
  if (digits.size() <= 19) {
    mpz_set_ui(z, small_digits(digits));
    return;
  }
  scratch.assign(digits);
  mpz_set_str(z, scratch.c_str(), 10);  // all digits: cannot fail
}

}  // namespace

namespace {

// The parts of an exact form: sign, numerator digits, denominator digits ("1" for an integer);
// false when s is not one (a non-digit, an empty term, a zero denominator).
struct ExactParts {
  bool neg = false;
  std::string_view num, den;
};
bool split_exact(std::string_view s, ExactParts& out) noexcept {
  out.neg = false;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    out.neg = s.front() == '-';
    s.remove_prefix(1);
  }
  const auto slash = s.find('/');
  out.num = s.substr(0, slash);
  out.den = slash == std::string_view::npos ? std::string_view("1") : s.substr(slash + 1);
  if (!all_digits(out.num) || !all_digits(out.den)) return false;
  return out.den.find_first_not_of('0') != std::string_view::npos;
}

std::uint64_t gcd_u64(std::uint64_t a, std::uint64_t b) noexcept {
  while (b != 0) a = std::exchange(b, a % b);
  return a;
}

}  // namespace

bool Rational::is_exact_form(std::string_view s) noexcept {
  ExactParts p;
  return split_exact(s, p);
}

bool Rational::is_canonical_form(std::string_view s) noexcept {
  ExactParts p;
  if (s.empty() || s.front() == '+' || !split_exact(s, p)) return false;
  const bool integer = s.find('/') == std::string_view::npos;
  // No leading zero in a term; "0" only as the whole integer.
  if (p.num.size() > 1 && p.num.front() == '0') return false;
  if (p.num == "0") return integer && !p.neg;
  if (integer) return true;
  if (p.den.front() == '0' || p.den == "1" || p.num.size() > 19 || p.den.size() > 19) return false;
  return gcd_u64(small_digits(p.num), small_digits(p.den)) == 1;
}

bool Rational::assign(std::string_view s) {
  ExactParts parts;
  if (!split_exact(s, parts)) return false;
  const bool neg = parts.neg;
  const std::string_view n = parts.num;
  const std::string_view d = parts.den;
  std::string scratch;
  mpz_ptr den = mpq_denref(q_.get_mpq_t());
  set_digits(den, d, scratch);
  mpz_ptr num = mpq_numref(q_.get_mpq_t());
  set_digits(num, n, scratch);
  if (neg) mpz_neg(num, num);
  if (mpz_cmp_ui(den, 1) != 0) mpq_canonicalize(q_.get_mpq_t());
  return true;
}

std::optional<Rational> Rational::from_string(std::string_view s) {
  Rational r;
  if (!r.assign(s)) return std::nullopt;
  return r;
}

Rational Rational::parse_exact(std::string_view s, std::string_view what) {
  Rational r;
  if (!r.assign(s)) fail("{}: '{}' is not an exact rational (expected an integer or p/q)", what, s);
  return r;
}

Rational Rational::pow10(int k) {
  mpz_class p;
  mpz_ui_pow_ui(p.get_mpz_t(), 10, static_cast<unsigned long>(k < 0 ? -static_cast<long>(k) : k));
  return k >= 0 ? Rational(p) : Rational(mpz_class(1), p);
}

bool Rational::has_finite_decimal() const {
  mpz_class d = q_.get_den();
  mpz_remove(d.get_mpz_t(), d.get_mpz_t(), mpz_class(2).get_mpz_t());
  mpz_remove(d.get_mpz_t(), d.get_mpz_t(), mpz_class(5).get_mpz_t());
  return d == 1;
}

std::string Rational::str() const {
  if (is_integer()) return q_.get_num().get_str();
  return q_.get_num().get_str() + "/" + q_.get_den().get_str();
}

std::optional<std::string> Rational::to_decimal() const {
  if (is_integer()) return q_.get_num().get_str();
  if (!has_finite_decimal()) return std::nullopt;
  // Find the smallest k with den | 10^k, then write num * (10^k / den) with k fraction digits.
  mpz_class den = q_.get_den();
  unsigned long twos = mpz_remove(den.get_mpz_t(), den.get_mpz_t(), mpz_class(2).get_mpz_t());
  unsigned long fives = mpz_remove(den.get_mpz_t(), den.get_mpz_t(), mpz_class(5).get_mpz_t());
  const unsigned long k = std::max(twos, fives);
  mpz_class scale;
  mpz_ui_pow_ui(scale.get_mpz_t(), 10, k);
  mpz_class scaled = q_.get_num() * (scale / q_.get_den());
  const bool neg = scaled < 0;
  if (neg) scaled = -scaled;
  std::string digits = scaled.get_str();
  if (digits.size() <= k) digits.insert(0, k - digits.size() + 1, '0');
  digits.insert(digits.size() - k, ".");
  return neg ? "-" + digits : digits;
}

Rational Rational::pow(int exponent) const {
  if (exponent < 0) {
    if (is_zero()) fail("zero raised to a negative power");
    return Rational(1) / pow(-exponent);
  }
  mpz_class n, d;
  mpz_pow_ui(n.get_mpz_t(), q_.get_num_mpz_t(), static_cast<unsigned long>(exponent));
  mpz_pow_ui(d.get_mpz_t(), q_.get_den_mpz_t(), static_cast<unsigned long>(exponent));
  return Rational(n, d);
}

Rational operator/(const Rational& a, const Rational& b) {
  if (b.is_zero()) fail("division by zero");
  return Rational(mpq_class(a.q_ / b.q_));
}

std::size_t RationalHash::operator()(const Rational& r) const { return std::hash<std::string>()(r.str()); }

}  // namespace numcheck::num
