#pragma once
// What several verify tests share, defined once (the test suites are compiled in unity batches,
// where two files' own copies would clash).
#include <filesystem>
#include <map>
#include <string>

#include "../support/quantemp_data.hpp"
#include "verify/features.hpp"

namespace numcheck::testing {

// The QuanTemp data folder (quantemp_dir).
inline const std::filesystem::path kData = quantemp_dir();

// A feature vector as one name -> value map over all its groups.
inline std::map<std::string, double> flat(const verify::NamedFeatures& f) {
  std::map<std::string, double> m;
  for (const auto& g : f.groups)
    for (const auto& [n, v] : g) m[n] = v;
  return m;
}

}  // namespace numcheck::testing
