#pragma once
// A fresh, empty temporary folder per call, for tests that make several (unit suites; the
// integration tests use cli_support.hpp's fresh_dir), and the guard that removes one.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

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

// Removes a test's temporary folder when it goes out of scope, however the test ends (a failed
// ASSERT returns early), so that test runs leave nothing in $TMPDIR.
class ScopedTempDir {
 public:
  explicit ScopedTempDir(std::filesystem::path dir) : dir_(std::move(dir)) {}
  ~ScopedTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return dir_; }

 private:
  std::filesystem::path dir_;
};

}  // namespace numcheck::testing
