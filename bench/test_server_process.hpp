#pragma once
// The benchmarks' test server (tests/support/numcheck_test_server) as a child process: started
// with the given arguments, its URL read from the first line it prints, stopped (SIGTERM) when the
// handle goes. $NUMCHECK_TEST_SERVER names another binary. Used by bench_runner and
// bench_runner_latency.
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace numcheck::bench {

inline std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != 0 ? std::string(v) : fallback;
}

struct ServerProcess {
  pid_t pid = -1;
  std::string url;
  ServerProcess() = default;
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;
  ~ServerProcess() {
    if (pid > 0) {
      ::kill(pid, SIGTERM);
      int st = 0;
      ::waitpid(pid, &st, 0);
    }
  }
};

// nullptr (with a line on stderr naming `who` and the binary) when the server does not start.
inline std::unique_ptr<ServerProcess> start_test_server(const std::vector<std::string>& args,
                                                        const char* who) {
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
  const std::string bin =
      env_or("NUMCHECK_TEST_SERVER",
             (self.parent_path().parent_path() / "tests/support/numcheck_test_server").string());
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(bin.c_str()));  // NOLINT: execv's signature
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int fds[2];
  if (::pipe(fds) != 0) return nullptr;
  auto s = std::make_unique<ServerProcess>();
  s->pid = ::fork();
  if (s->pid == 0) {
    ::dup2(fds[1], 1);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execv(bin.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  char c = 0;
  while (::read(fds[0], &c, 1) == 1 && c != '\n') s->url += c;
  ::close(fds[0]);
  if (s->url.rfind("http://", 0) != 0) {
    fmt::print(stderr, "{}: cannot start the test server {}\n", who, bin);
    return nullptr;
  }
  return s;
}

}  // namespace numcheck::bench
