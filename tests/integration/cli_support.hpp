#pragma once
// Helpers for integration tests that run the real `numcheck` executable (path in NUMCHECK_CLI).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "io/files.hpp"
#include "io/json.hpp"
#include "temp_dir.hpp"

namespace numcheck::testing {

// The test OpenAI-compatible server (tests/support), started with Child.
inline const std::string kServer = std::string(NUMCHECK_BINARY_DIR) + "/tests/support/numcheck_test_server";

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

// A test suite whose tests share one fresh folder, made before the first test and removed after
// the last. Derive as `class X : public SharedDirSuite<X>` and call `make_root("x")` first in
// X::SetUpTestSuite (each derived suite has its own folder).
template <class Suite>
class SharedDirSuite : public ::testing::Test {
 protected:
  static void make_root(const std::string& name) { root_ = new std::filesystem::path(fresh_dir(name)); }
  // make_root, then the default benchmark (seed 20260725) generated into bench().
  static void make_root_with_bench(const std::string& name) {
    make_root(name);
    const auto r = run_cli(fmt::format("orbit generate --out '{}' --seed 20260725", bench().string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() {
    remove_tree(*root_);
    delete root_;
    root_ = nullptr;
  }
  static std::filesystem::path bench() { return *root_ / "bench"; }
  static std::filesystem::path dir(const std::string& name) { return *root_ / name; }
  static inline std::filesystem::path* root_ = nullptr;
};

// A child process started with fork/exec; killed (SIGTERM, then waited) when destroyed.
class Child {
 public:
  // Starts argv; when capture_first_line, reads the first stdout line into first_line.
  Child(const std::vector<std::string>& argv, bool capture_first_line,
        const std::map<std::string, std::string>& env = {}) {
    int fds[2] = {-1, -1};
    if (capture_first_line && ::pipe(fds) != 0) throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork");
    if (pid_ == 0) {
      if (capture_first_line) {
        ::dup2(fds[1], 1);
        ::close(fds[0]);
        ::close(fds[1]);
      } else {
        const int devnull = ::open("/dev/null", O_WRONLY);
        ::dup2(devnull, 1);
        ::dup2(devnull, 2);
      }
      for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    if (capture_first_line) {
      ::close(fds[1]);
      char c = 0;
      while (::read(fds[0], &c, 1) == 1 && c != '\n') first_line += c;
      ::close(fds[0]);
    }
  }
  ~Child() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGTERM);
      int st = 0;
      ::waitpid(pid_, &st, 0);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  [[nodiscard]] bool running() {
    if (reaped_) return false;
    int st = 0;
    if (::waitpid(pid_, &st, WNOHANG) == pid_) {
      reaped_ = true;
      return false;
    }
    return true;
  }
  // Sends `sig` and waits for the process; returns its exit status (-1 when killed by a signal).
  int signal_and_wait(int sig) {
    ::kill(pid_, sig);
    int st = 0;
    ::waitpid(pid_, &st, 0);
    reaped_ = true;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  void kill9() {
    ::kill(pid_, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
    reaped_ = true;
  }
  std::string first_line;

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

// Debian's Chromium, for the browser tests (skipped when it is absent).
inline const char* const kChromiumPath = "/usr/bin/chromium";

// Hostile model text for the browser tests: if it ever ran, the page title would change and an
// element would appear.
inline const std::string kHtmlPayload =
    "<script>document.title='PWNED';document.body.insertAdjacentHTML('beforeend','<div "
    "id=\"injected\">x</div>')</script><img src=x onerror=\"document.title='PWNED'\">";

// Runs Chromium headless with a fresh profile in `work` and `args` (quoted by the caller); returns
// its stdout. The flags keep it off the network (no updates, sync or background requests).
inline std::string run_chromium(const std::filesystem::path& work, const std::string& args) {
  namespace fs = std::filesystem;
  const fs::path profile = work / fmt::format("profile-{}", ::getpid());
  remove_tree(profile);
  const fs::path out = work / "chromium.out";
  const std::string cmd = fmt::format(
      "timeout 120 '{}' --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
      "--disable-background-networking --disable-component-update --disable-sync "
      "--user-data-dir='{}' {} >'{}' 2>/dev/null",
      kChromiumPath, profile.string(), args, out.string());
  const int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << cmd;
  std::string s = fs::exists(out) ? io::read_file(out) : std::string();
  remove_tree(profile);
  return s;
}

// Screenshots `url` with Chromium (`flags`: window size, time budget) into `shot` and checks it is
// a PNG of a page with content; copies it to the path in the environment variable `keep_env` when
// that is set, for a person to look at.
inline void expect_screenshot(const std::filesystem::path& work, const std::filesystem::path& shot,
                              const std::string& flags, const std::string& url, const char* keep_env) {
  (void)run_chromium(work, fmt::format("{} --screenshot='{}' '{}'", flags, shot.string(), url));
  ASSERT_TRUE(std::filesystem::exists(shot));
  const std::string png = io::read_file(shot);
  EXPECT_GT(png.size(), 10000u) << "a blank page compresses to a few kB";
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  if (const char* keep = std::getenv(keep_env))
    std::filesystem::copy_file(shot, keep, std::filesystem::copy_options::overwrite_existing);
}

// The records of a JSONL file: every terminated, non-empty line parsed (none when it is missing).
inline std::vector<io::Json> read_jsonl(const std::filesystem::path& p) {
  std::vector<io::Json> out;
  if (!std::filesystem::exists(p)) return out;
  io::for_each_line(p, [&](const io::Line& l) {
    if (l.terminated && !l.text.empty()) out.push_back(io::parse_json(l.text, p.string()));
  });
  return out;
}

// A file's bytes ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The terminated lines of a file (0 when it is missing).
inline std::size_t count_lines(const std::filesystem::path& p) {
  if (!std::filesystem::exists(p)) return 0;
  std::size_t n = 0;
  io::for_each_line(p, [&](const io::Line& l) { n += l.terminated ? 1 : 0; });
  return n;
}

// How many times `needle` occurs in `hay` (overlapping occurrences counted).
inline std::size_t occurrences(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

// A path in single quotes, for the command lines run_cli passes to the shell.
inline std::string quoted(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

// Runs `cmd` in `dir` with only PATH and HOME of the caller's environment plus `vars` (no NUMCHECK_*
// setting of the caller reaches the job); output appended to dir/log. The exit code, or -1.
inline int run_clean(const std::filesystem::path& dir, const std::string& vars, const std::string& cmd) {
  const char* path = std::getenv("PATH");
  const std::string full =
      fmt::format("cd '{}' && env -i PATH='{}' HOME='{}' {} {} >>'{}/log' 2>&1", dir.string(),
                  path != nullptr ? path : "/usr/bin:/bin", dir.string(), vars, cmd, dir.string());
  const int status = std::system(full.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// An evidence file (claims/evidence.hpp) of labelled claims whose markers ("[true]", "[false]",
// "[conflicting]", "[malformed]", "[refuse]") fix the test server's canned verdicts: claim i is
// "SUBJECT MARKER changed by (i+2)% in (2010+i).", id val:i, with the label given. The subjects
// differ, so no two claims are near-duplicates (which would share a fold and never be each other's
// few-shot examples). At most twelve rows.
inline std::filesystem::path write_marked_evidence(
    const std::filesystem::path& dir, const std::vector<std::pair<std::string, std::string>>& rows) {
  static const char* const kSubjects[] = {"Wages",    "Rents",    "Exports",  "Crime",
                                          "Taxes",    "Tuition",  "Imports",  "Bus fares",
                                          "Salaries", "Deficits", "Pensions", "Tariffs"};
  const std::filesystem::path f = dir / "evidence.jsonl";
  std::string text;
  for (std::size_t i = 0; i < rows.size() && i < std::size(kSubjects); ++i) {
    text += fmt::format(
        "{{\"id\": \"val:{}\", \"claim\": \"{} {} changed by {}% in {}.\", \"label\": \"{}\", "
        "\"questions\": [\"Is it so?\"], \"evidence\": [{{\"doc_id\": \"d{}\", \"text\": \"evidence {}\"}}], "
        "\"selection\": \"val-top3\"}}\n",
        i, kSubjects[i], rows[i].first, i + 2, 2010 + i, rows[i].second, i, i);
  }
  io::write_file_atomic(f, text);
  return f;
}

// The answer faults the test server injects in the run tests (a few of each kind).
inline const std::string kInjectFaults = "times_ten=0.05,markdown=0.03,unit_slip=0.02,truncation=0.01";

}  // namespace numcheck::testing
