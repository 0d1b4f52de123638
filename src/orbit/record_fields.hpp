#pragma once
// Field readers shared by the benchmark loader (benchmark.cpp, io::OrderedRecord) and the compact
// benchmark index (index.cpp, io::LineRecord); private to src/orbit.
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "num/rational.hpp"

namespace numcheck::orbit::detail {

// The field `key` of a record as an exact rational ("p/q" or an integer); any other text is an
// error naming the file, line and field (the record's fail_field).
template <class Record>
num::Rational req_rational(const Record& r, std::string_view key) {
  const std::string s = r.string(key);
  auto q = num::Rational::from_string(s);
  if (!q) r.fail_field(key, fmt::format("must be an exact rational ('p/q' or an integer), got '{}'", s));
  return *q;
}

}  // namespace numcheck::orbit::detail
