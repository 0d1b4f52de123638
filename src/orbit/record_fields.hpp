#pragma once
// Field readers shared by the benchmark loader (benchmark.cpp, io::OrderedRecord) and the compact
// benchmark index (index.cpp, io::LineRecord); private to src/orbit.
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "num/rational.hpp"

namespace numcheck::orbit::detail {

// The field `key` of a record, whose text `s` the caller has read (a LineRecord's string_view: no
// copy), as an exact rational into `into` (its memory reused): req_rational's rule and error.
template <class Record>
void read_rational(const Record& r, std::string_view s, std::string_view key, num::Rational& into) {
  if (!into.assign(s))
    r.fail_field(key, fmt::format("must be an exact rational ('p/q' or an integer), got '{}'", s));
}

// The field `key` of a record as an exact rational ("p/q" or an integer); any other text is an
// error naming the file, line and field (the record's fail_field).
template <class Record>
num::Rational req_rational(const Record& r, std::string_view key) {
  num::Rational q;
  read_rational(r, r.string(key), key, q);
  return q;
}

// req_rational(r, key).str() (the canonical text), without GMP when the text already is a canonical
// integer ("0", or an optional "-" and digits without a leading zero).
template <class Record>
std::string canonical_rational(const Record& r, std::string_view key) {
  std::string s = r.string(key);
  const std::size_t digits = !s.empty() && s[0] == '-' ? 1 : 0;
  bool canonical = s.size() > digits && (s[digits] != '0' || s.size() == 1);
  for (std::size_t i = digits; canonical && i < s.size(); ++i) canonical = s[i] >= '0' && s[i] <= '9';
  if (canonical) return s;
  return req_rational(r, key).str();
}

}  // namespace numcheck::orbit::detail
