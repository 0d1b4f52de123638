#pragma once
// Exact rationals written briefly in tests, defined once for every test file (the test suites are
// compiled in unity batches, where two files' own copies would clash).
#include <gmpxx.h>

#include "num/rational.hpp"

namespace numcheck::testing {

// The exact value of a number's text ("3/4", "-0.25", "1e3"); the text must be valid.
inline num::Rational q(const char* text) { return *num::Rational::from_string(text); }

// p/den.
inline num::Rational R(long p, long den = 1) { return num::Rational(mpz_class(p), mpz_class(den)); }

}  // namespace numcheck::testing
