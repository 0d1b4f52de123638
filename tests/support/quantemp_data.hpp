#pragma once
// Where the tests that read the real QuanTemp data find it: the folder NUMCHECK_QUANTEMP names,
// as for the claims job and the scripts, else a shared/data/quantemp folder beside the
// repository's folder. Header-only: the test suites include it as "../support/quantemp_data.hpp", the
// real-data benchmarks (bench/claims_*.cpp) as "../tests/support/quantemp_data.hpp".
#include <cstdlib>
#include <filesystem>

namespace numcheck::testing {

inline std::filesystem::path quantemp_dir() {
  if (const char* e = std::getenv("NUMCHECK_QUANTEMP"); e != nullptr && *e != '\0') return e;
  return std::filesystem::path(NUMCHECK_SOURCE_DIR) / ".." / "shared" / "data" / "quantemp";
}

}  // namespace numcheck::testing
