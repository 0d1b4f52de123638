// Number writers: the inverse of each reader form. A writer returns nullopt whenever its form
// cannot show the value exactly or the reader would refuse the text (digits beyond 10^±1000).
#include "num/write.hpp"

#include <array>
#include <string>

#include "core/error.hpp"

namespace numcheck::num {

namespace {

constexpr std::size_t kMaxIntegerDigits = static_cast<std::size_t>(kMaxExponentMagnitude) + 1;

// "1234567" -> "1,234,567" (digits only, no sign).
std::string group(const std::string& digits) {
  std::string out;
  const std::size_t n = digits.size();
  out.reserve(n + n / 3);
  for (std::size_t i = 0; i < n; ++i) {
    if (i != 0 && (n - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

// Number of decimal digits of |z| (mpz_sizeinbase may overestimate by one, so check exactly when
// that matters).
std::size_t digit_count(const mpz_class& z) {
  const std::size_t approx = mpz_sizeinbase(z.get_mpz_t(), 10);
  if (approx <= 1 || approx > kMaxIntegerDigits + 1) return approx;
  return mpz_class(abs(z)).get_str().size();
}

__extension__ using U128 = unsigned __int128;  // GCC/Clang extension; __extension__ keeps -Wpedantic quiet
__extension__ using I128 = __int128;

// The decimal digits of a 128-bit unsigned integer.
std::string digits_of(U128 m) {
  char buf[40];
  char* p = buf + sizeof buf;
  do {
    *--p = static_cast<char>('0' + static_cast<unsigned>(m % 10));
    m /= 10;
  } while (m != 0);
  return std::string(p, buf + sizeof buf);
}

// Rational::to_decimal of v in fixed-width integers, when numerator and denominator fit in 64 bits
// and the scaled digits in 128 (the numbers of generated prompts): the same text without GMP's
// allocations. `decided` is false when the value is too large for this path.
std::optional<std::string> small_decimal(const Rational& v, bool& decided) {
  decided = false;
  const mpz_srcptr num = v.mpq().get_num_mpz_t();
  const mpz_srcptr den = v.mpq().get_den_mpz_t();
  if (!mpz_fits_slong_p(num) || !mpz_fits_ulong_p(den)) return std::nullopt;
  const long n = mpz_get_si(num);
  unsigned long d = mpz_get_ui(den);  // >= 1
  const auto twos = static_cast<unsigned>(__builtin_ctzl(d));
  d >>= twos;
  unsigned fives = 0;
  while (d % 5 == 0) {
    d /= 5;
    ++fives;
  }
  decided = true;
  if (d != 1) return std::nullopt;  // no finite decimal
  // num / (2^twos 5^fives) = num 2^(k-twos) 5^(k-fives) / 10^k, k = max(twos, fives) <= 63: within
  // the readers' range, and so is the whole part (at most 19 digits).
  const unsigned k = std::max(twos, fives);
  U128 m = n < 0 ? static_cast<U128>(-static_cast<I128>(n)) : static_cast<U128>(n);
  constexpr auto kMax = ~static_cast<U128>(0);
  for (unsigned i = twos; i < k; ++i) {
    if (m > kMax / 2) {
      decided = false;
      return std::nullopt;
    }
    m *= 2;
  }
  for (unsigned i = fives; i < k; ++i) {
    if (m > kMax / 5) {
      decided = false;
      return std::nullopt;
    }
    m *= 5;
  }
  std::string digits = digits_of(m);
  if (k > 0) {
    if (digits.size() <= k) digits.insert(0, k - digits.size() + 1, '0');
    digits.insert(digits.size() - k, ".");
  }
  if (n < 0) digits.insert(0, 1, '-');
  return digits;
}

// Decimal digits of v as a plain string when v is a finite decimal whose digits all lie within
// 10^-1000 .. 10^1000 (the readers' range); nullopt otherwise.
std::optional<std::string> ranged_decimal(const Rational& v) {
  bool decided = false;
  auto small = small_decimal(v, decided);
  if (decided) return small;
  if (!v.has_finite_decimal()) return std::nullopt;
  mpz_class den = v.denominator();
  const auto twos = mpz_remove(den.get_mpz_t(), den.get_mpz_t(), mpz_class(2).get_mpz_t());
  const auto fives = mpz_remove(den.get_mpz_t(), den.get_mpz_t(), mpz_class(5).get_mpz_t());
  if (std::max(twos, fives) > static_cast<unsigned long>(kMaxExponentMagnitude)) return std::nullopt;
  const mpz_class whole = abs(v.numerator()) / v.denominator();
  if (whole != 0 && digit_count(whole) > kMaxIntegerDigits) return std::nullopt;
  return v.to_decimal();
}

// Splits a plain decimal ("-12.50" style, as Rational::to_decimal writes it) into sign, integer
// digits and fraction digits.
struct DecimalParts {
  bool negative = false;
  std::string integer;
  std::string fraction;
};
DecimalParts split_decimal(const std::string& s) {
  DecimalParts p;
  std::string_view t(s);
  if (!t.empty() && t.front() == '-') {
    p.negative = true;
    t.remove_prefix(1);
  }
  const auto dot = t.find('.');
  p.integer = std::string(t.substr(0, dot));
  if (dot != std::string_view::npos) p.fraction = std::string(t.substr(dot + 1));
  return p;
}

std::string plain(const DecimalParts& p, bool grouped) {
  std::string out = p.negative ? "-" : "";
  out += grouped ? group(p.integer) : p.integer;
  if (!p.fraction.empty()) out += "." + p.fraction;
  return out;
}

// Mantissa digits and exponent: 14940 -> ("1494", 4), 0.0015 -> ("15", -3).
std::optional<std::pair<std::string, long>> scientific(const Rational& v, bool* negative) {
  auto s = ranged_decimal(v);
  if (!s) return std::nullopt;
  const DecimalParts p = split_decimal(*s);
  *negative = p.negative;
  if (v.is_zero()) return std::make_pair(std::string("0"), 0L);
  const std::string all = p.integer + p.fraction;
  const std::size_t first = all.find_first_not_of('0');
  const std::size_t last = all.find_last_not_of('0');
  const long exponent = static_cast<long>(p.integer.size()) - 1 - static_cast<long>(first);
  std::string digits = all.substr(first, last - first + 1);
  std::string mantissa(1, digits[0]);
  if (digits.size() > 1) mantissa += "." + digits.substr(1);
  return std::make_pair(mantissa, exponent);
}

constexpr std::array<const char*, 20> kSmall{"zero",    "one",     "two",       "three",    "four",
                                             "five",    "six",     "seven",     "eight",    "nine",
                                             "ten",     "eleven",  "twelve",    "thirteen", "fourteen",
                                             "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"};
constexpr std::array<const char*, 10> kTens{"",      "",      "twenty",  "thirty", "forty",
                                            "fifty", "sixty", "seventy", "eighty", "ninety"};
constexpr std::array<const char*, 11> kFracSingular{"",      "",        "half",   "third", "quarter", "fifth",
                                                    "sixth", "seventh", "eighth", "ninth", "tenth"};
constexpr std::array<const char*, 11> kFracPlural{
    "", "", "halves", "thirds", "quarters", "fifths", "sixths", "sevenths", "eighths", "ninths", "tenths"};

std::string below_hundred(unsigned v) {
  if (v < 20) return kSmall[v];
  std::string s = kTens[v / 10];
  if (v % 10 != 0) s += std::string("-") + kSmall[v % 10];
  return s;
}

std::string below_thousand(unsigned v) {
  std::string s;
  if (v >= 100) {
    s = std::string(kSmall[v / 100]) + " hundred";
    if (v % 100 != 0) s += " " + below_hundred(v % 100);
  } else {
    s = below_hundred(v);
  }
  return s;
}

}  // namespace

std::optional<std::string> integer_to_words(const mpz_class& v) {
  static const mpz_class limit("1000000000000000");
  const mpz_class a = abs(v);
  if (a >= limit) return std::nullopt;
  unsigned long long x = std::stoull(a.get_str());
  if (x == 0) return std::string("zero");
  static constexpr std::array<std::pair<unsigned long long, const char*>, 4> kScales{
      {{1000000000000ULL, "trillion"},
       {1000000000ULL, "billion"},
       {1000000ULL, "million"},
       {1000ULL, "thousand"}}};
  std::string out;
  for (const auto& [scale, name] : kScales) {
    if (x >= scale) {
      if (!out.empty()) out += " ";
      out += below_thousand(static_cast<unsigned>(x / scale)) + " " + name;
      x %= scale;
    }
  }
  if (x != 0) {
    if (!out.empty()) out += " ";
    out += below_thousand(static_cast<unsigned>(x));
  }
  return v < 0 ? "minus " + out : out;
}

std::optional<std::string> write_number(const Rational& v, NumberForm form, const WriteOptions& opts) {
  switch (form) {
    case NumberForm::kInteger: {
      if (!v.is_integer()) return std::nullopt;
      if (mpz_fits_slong_p(v.mpq().get_num_mpz_t())) {
        const long n = mpz_get_si(v.mpq().get_num_mpz_t());
        return plain(split_decimal(std::to_string(n)), opts.group_thousands);
      }
      if (digit_count(v.numerator()) > kMaxIntegerDigits) return std::nullopt;
      return plain(split_decimal(v.numerator().get_str()), opts.group_thousands);
    }
    case NumberForm::kDecimal: {
      if (v.is_integer()) return std::nullopt;
      auto s = ranged_decimal(v);
      if (!s) return std::nullopt;
      return plain(split_decimal(*s), opts.group_thousands);
    }
    case NumberForm::kFraction: {
      if (v.is_integer()) return std::nullopt;
      if (digit_count(v.numerator()) > kMaxIntegerDigits ||
          digit_count(v.denominator()) > kMaxIntegerDigits) {
        return std::nullopt;
      }
      return v.str();
    }
    case NumberForm::kMixed: {
      if (v.is_integer() || v.abs() <= Rational(1)) return std::nullopt;
      const mpz_class num = abs(v.numerator());
      const mpz_class den = v.denominator();
      const mpz_class whole = num / den;
      const mpz_class rem = num - whole * den;
      if (digit_count(whole) > kMaxIntegerDigits || digit_count(den) > kMaxIntegerDigits) return std::nullopt;
      return (v.sign() < 0 ? "-" : "") + whole.get_str() + " " + rem.get_str() + "/" + den.get_str();
    }
    case NumberForm::kENotation:
    case NumberForm::kTimesTen: {
      bool negative = false;
      auto sci = scientific(v, &negative);
      if (!sci) return std::nullopt;
      const std::string sign = negative ? "-" : "";
      if (form == NumberForm::kENotation) return sign + sci->first + "e" + std::to_string(sci->second);
      return sign + sci->first + (opts.unicode_times ? " \xC3\x97 10^" : " x 10^") +
             std::to_string(sci->second);
    }
    case NumberForm::kPercent: {
      const Rational p = v * Rational(100);
      auto s = ranged_decimal(p);
      if (!s) return std::nullopt;
      return plain(split_decimal(*s), opts.group_thousands) + "%";
    }
    case NumberForm::kWords: {
      if (v.is_integer()) return integer_to_words(v.numerator());
      const mpz_class den = v.denominator();
      if (den < 2 || den > 10 || v.abs() >= Rational(100)) return std::nullopt;
      const mpz_class num = abs(v.numerator());
      const unsigned long d = den.get_ui();
      const unsigned long whole = mpz_class(num / den).get_ui();
      const unsigned long rem = mpz_class(num % den).get_ui();
      std::string frac;
      if (rem == 1) {
        frac = std::string(whole > 0 ? "a " : "one ") + kFracSingular[d];
      } else {
        frac = std::string(kSmall[rem]) + " " + kFracPlural[d];
      }
      std::string out = v.sign() < 0 ? "minus " : "";
      if (whole > 0) out += below_hundred(static_cast<unsigned>(whole)) + " and ";
      return out + frac;
    }
  }
  return std::nullopt;
}

std::string fixed_decimal(const Rational& v, int places) {
  if (places < 0 || places > 60) fail("fixed_decimal: {} decimal places is outside 0..60", places);
  mpz_class scale;
  mpz_ui_pow_ui(scale.get_mpz_t(), 10, static_cast<unsigned long>(places));
  const mpq_class a = abs(v.mpq()) * scale + mpq_class(1, 2);
  mpz_class r;  // floor(|v| 10^places + 1/2)
  mpz_fdiv_q(r.get_mpz_t(), a.get_num_mpz_t(), a.get_den_mpz_t());
  std::string digits = r.get_str();
  if (places > 0) {
    if (digits.size() <= static_cast<std::size_t>(places)) {
      digits.insert(0, static_cast<std::size_t>(places) + 1 - digits.size(), '0');
    }
    digits.insert(digits.size() - static_cast<std::size_t>(places), ".");
  }
  return (v.sign() < 0 && r != 0 ? "-" : "") + digits;
}

}  // namespace numcheck::num
