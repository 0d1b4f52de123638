#pragma once
// Where the real-data benchmarks find the QuanTemp data: $NUMCHECK_QUANTEMP when set (as the
// scripts read it), else ../shared/data/quantemp next to the repository.
#include <cstdlib>
#include <filesystem>

namespace numcheck::bench {

inline std::filesystem::path quantemp_dir() {
  if (const char* e = std::getenv("NUMCHECK_QUANTEMP"); e != nullptr && *e != '\0') return e;
  return std::filesystem::path(NUMCHECK_SOURCE_DIR) / ".." / "shared" / "data" / "quantemp";
}

}  // namespace numcheck::bench
