#pragma once
// Rational: an exact, arbitrary-precision rational number (GMP mpq), always in lowest terms with a
// positive denominator. Every label, conversion factor and answer comparison in numcheck is a
// Rational; binary floating point is used only to display or summarise, never to decide.
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <gmpxx.h>

namespace numcheck::num {

class Rational {
 public:
  Rational() = default;                                // zero
  Rational(long long v) : q_(static_cast<long>(v)) {}  // NOLINT(google-explicit-constructor)
  explicit Rational(const mpz_class& integer) : q_(integer) {}
  explicit Rational(const mpq_class& q) : q_(q) { q_.canonicalize(); }
  // numerator / denominator; throws Error when the denominator is zero.
  Rational(const mpz_class& numerator, const mpz_class& denominator);

  // Reads the exact forms this class writes: an integer ("-12") or "p/q" with q != 0 (any terms,
  // normalized on reading). Anything else, including whitespace, is nullopt. For numbers as people
  // write them ("1,234.5", "3 quarters"), use num/read.hpp.
  [[nodiscard]] static std::optional<Rational> from_string(std::string_view s);
  // from_string into this value, reusing its memory (no allocation for terms below 10^19): false,
  // and the value unspecified but valid, when s is not an exact form.
  [[nodiscard]] bool assign(std::string_view s);
  // Whether from_string accepts s, decided on the text alone (no GMP, no allocation).
  [[nodiscard]] static bool is_exact_form(std::string_view s) noexcept;
  // True when s is the text str() writes for the value it stands for (an integer without leading
  // zeros and without "-0", or "p/q" in lowest terms with q >= 2), decided without GMP; false when it
  // is not, and for a fraction with a term of 20 digits or more (then from_string(s)->str() tells).
  [[nodiscard]] static bool is_canonical_form(std::string_view s) noexcept;
  // Like from_string but throws Error naming `what` when s is not an exact form.
  [[nodiscard]] static Rational parse_exact(std::string_view s, std::string_view what);

  [[nodiscard]] static Rational pow10(int k);  // 10^k for any int k (negative gives 1/10^-k)

  [[nodiscard]] const mpq_class& mpq() const noexcept { return q_; }
  [[nodiscard]] mpz_class numerator() const { return q_.get_num(); }
  [[nodiscard]] mpz_class denominator() const { return q_.get_den(); }
  [[nodiscard]] int sign() const noexcept { return sgn(q_); }
  [[nodiscard]] bool is_zero() const noexcept { return sgn(q_) == 0; }
  [[nodiscard]] bool is_integer() const noexcept { return q_.get_den() == 1; }
  // True when the value has a finite decimal expansion (denominator of the form 2^a 5^b).
  [[nodiscard]] bool has_finite_decimal() const;

  // "p/q" in lowest terms, or "p" when q = 1. The canonical string form of labels.
  [[nodiscard]] std::string str() const;
  // Exact plain decimal ("2.75", "-0.125", "14940"), or nullopt when there is no finite decimal.
  [[nodiscard]] std::optional<std::string> to_decimal() const;
  // Nearest double (display and summary statistics only).
  [[nodiscard]] double to_double() const { return q_.get_d(); }

  [[nodiscard]] Rational abs() const { return Rational(mpq_class(::abs(q_))); }
  [[nodiscard]] Rational pow(int exponent) const;  // throws Error for 0^negative

  friend Rational operator+(const Rational& a, const Rational& b) { return Rational(mpq_class(a.q_ + b.q_)); }
  friend Rational operator-(const Rational& a, const Rational& b) { return Rational(mpq_class(a.q_ - b.q_)); }
  friend Rational operator*(const Rational& a, const Rational& b) { return Rational(mpq_class(a.q_ * b.q_)); }
  friend Rational operator/(const Rational& a, const Rational& b);  // throws Error on b == 0
  Rational operator-() const { return Rational(mpq_class(-q_)); }
  Rational& operator+=(const Rational& b) {
    q_ += b.q_;
    return *this;
  }
  Rational& operator-=(const Rational& b) {
    q_ -= b.q_;
    return *this;
  }
  Rational& operator*=(const Rational& b) {
    q_ *= b.q_;
    return *this;
  }
  Rational& operator/=(const Rational& b) { return *this = *this / b; }

  friend bool operator==(const Rational& a, const Rational& b) { return cmp(a.q_, b.q_) == 0; }
  friend std::strong_ordering operator<=>(const Rational& a, const Rational& b) {
    const int c = cmp(a.q_, b.q_);
    return c < 0 ? std::strong_ordering::less
                 : (c > 0 ? std::strong_ordering::greater : std::strong_ordering::equal);
  }

 private:
  mpq_class q_;
};

// Hash for unordered containers (hashes the canonical string).
struct RationalHash {
  std::size_t operator()(const Rational& r) const;
};

}  // namespace numcheck::num
