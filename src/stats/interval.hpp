#pragma once
// A closed interval [lo, hi] on the real line: confidence intervals of rates and differences.
namespace numcheck::stats {

struct Interval {
  double lo = 0.0;
  double hi = 0.0;
};

}  // namespace numcheck::stats
