#pragma once
// Field readers shared by the benchmark loader (benchmark.cpp, io::OrderedRecord) and the compact
// benchmark index (index.cpp, io::LineRecord); private to src/orbit.
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "num/rational.hpp"

namespace numcheck::orbit::detail {

// The error of a field `key` whose text `s` is not an exact rational (the record's fail_field).
template <class Record>
[[noreturn]] void fail_rational(const Record& r, std::string_view s, std::string_view key) {
  r.fail_field(key, fmt::format("must be an exact rational ('p/q' or an integer), got '{}'", s));
}

// The field `key` of a record, whose text `s` the caller has read (a LineRecord's string_view: no
// copy), as an exact rational into `into` (its memory reused): req_rational's rule and error.
template <class Record>
void read_rational(const Record& r, std::string_view s, std::string_view key, num::Rational& into) {
  if (!into.assign(s)) fail_rational(r, s, key);
}

// read_rational's check and error without the value (for fields that are checked, not kept).
template <class Record>
void check_rational(const Record& r, std::string_view s, std::string_view key) {
  if (!num::Rational::is_exact_form(s)) fail_rational(r, s, key);
}

// The field `key` of a record as an exact rational ("p/q" or an integer); any other text is an
// error naming the file, line and field (the record's fail_field).
template <class Record>
num::Rational req_rational(const Record& r, std::string_view key) {
  num::Rational q;
  read_rational(r, r.string(key), key, q);
  return q;
}

// req_rational(r, key).str() (the canonical text): the field's own text when it already is canonical
// (num::Rational::is_canonical_form, no GMP), else the canonical text written into `scratch`.
template <class Record>
std::string_view canonical_rational(const Record& r, std::string_view key, std::string& scratch) {
  const std::string_view s = r.string_view(key);
  if (num::Rational::is_canonical_form(s)) return s;
  num::Rational q;
  read_rational(r, s, key, q);
  scratch = q.str();
  return scratch;
}

}  // namespace numcheck::orbit::detail
