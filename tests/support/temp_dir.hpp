#pragma once
// A fresh, empty temporary folder per call, for tests that make several (unit suites; the
// integration tests use cli_support.hpp's fresh_dir), and the guard that removes one.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <system_error>
#include <thread>
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

// Removes `dir` and everything in it, never throwing. A removal can race with a process that is
// still ending (Chromium's helper processes rename and delete files in their profile for a moment
// after the browser exits): a file that vanished or appeared during the walk fails that pass, so it
// is tried again, for up to about 5 s. Returns whether `dir` is gone.
inline bool remove_tree(const std::filesystem::path& dir) noexcept {
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (!ec && !std::filesystem::exists(dir, ec)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// Removes a test's temporary folder when it goes out of scope, however the test ends (a failed
// ASSERT returns early), so that test runs leave nothing in $TMPDIR.
class ScopedTempDir {
 public:
  explicit ScopedTempDir(std::filesystem::path dir) : dir_(std::move(dir)) {}
  ~ScopedTempDir() { remove_tree(dir_); }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return dir_; }

 private:
  std::filesystem::path dir_;
};

}  // namespace numcheck::testing
