#pragma once
// A fresh, empty temporary folder per call, for tests that make several (unit suites; the
// integration tests use cli_support.hpp's fresh_dir).
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>

#include <fmt/format.h>

namespace numcheck::testing {

// $TMPDIR/numcheck_<suite>_<name>_<pid>_<n>, made empty; n counts the calls of this process.
inline std::filesystem::path fresh_temp_dir(const std::string& suite, const std::string& name) {
  static std::atomic<int> counter{0};
  const std::filesystem::path d = std::filesystem::temp_directory_path() /
                                  fmt::format("numcheck_{}_{}_{}_{}", suite, name, ::getpid(), counter++);
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

}  // namespace numcheck::testing
