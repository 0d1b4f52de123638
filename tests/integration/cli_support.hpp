#pragma once
// Helpers for integration tests that run the real `numcheck` executable (path in NUMCHECK_CLI).
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include <fmt/format.h>

namespace numcheck::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `numcheck <args>` through /bin/sh (args are passed verbatim: quote them yourself), with
// optional stdin text, capturing stdout and stderr separately.
inline CliResult run_cli(const std::string& args, const std::string& stdin_text = "") {
  namespace fs = std::filesystem;
  static int counter = 0;
  const fs::path dir = fs::temp_directory_path() / fmt::format("numcheck_cli_{}_{}", ::getpid(), counter++);
  fs::create_directories(dir);
  const fs::path in = dir / "stdin", out = dir / "stdout", err = dir / "stderr";
  {
    std::FILE* f = std::fopen(in.c_str(), "wb");
    std::fwrite(stdin_text.data(), 1, stdin_text.size(), f);
    std::fclose(f);
  }
  const std::string cmd =
      fmt::format("'{}' {} <'{}' >'{}' 2>'{}'", NUMCHECK_CLI, args, in.string(), out.string(), err.string());
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  auto slurp = [](const fs::path& p) {
    std::string s;
    std::FILE* f = std::fopen(p.c_str(), "rb");
    if (f == nullptr) return s;
    std::array<char, 65536> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) s.append(buf.data(), n);
    std::fclose(f);
    return s;
  };
  r.out = slurp(out);
  r.err = slurp(err);
  fs::remove_all(dir);
  return r;
}

// A fresh empty temporary folder for one test.
inline std::filesystem::path fresh_dir(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path d = fs::temp_directory_path() / fmt::format("numcheck_it_{}_{}", name, ::getpid());
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace numcheck::testing
