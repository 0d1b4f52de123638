#pragma once
// Small helpers shared by CLI commands.
#include <csignal>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>

#include <fmt/core.h>

#include <string>
#include <vector>
#include "claims/load.hpp"
#include "core/error.hpp"
#include "llm/preflight.hpp"
#include "llm/runner.hpp"

namespace numcheck::cli {

// An output folder option (--out DIR) must name a folder or nothing yet: a clear usage error
// instead of a filesystem error from deep inside the command.
inline void require_output_dir(const std::string& dir, const char* option = "--out") {
  std::error_code ec;
  const auto st = std::filesystem::status(dir, ec);
  if (std::filesystem::exists(st) && !std::filesystem::is_directory(st))
    fail(ErrorCode::kUsage, "{} {}: that is a file, not a folder; give a folder (it is created if missing)",
         option, dir);
}

// "a, b,,c" -> {"a", "b", "c"}: comma-separated list items, trimmed, empty items dropped.
inline std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ',')) {
    while (!part.empty() && part.front() == ' ') part.erase(part.begin());
    while (!part.empty() && part.back() == ' ') part.pop_back();
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

// `arg` with the user:password@ of every URL in it left out ("--endpoint=http://u:p@h/v1" ->
// "--endpoint=http://h/v1"; lists separated by commas too).
inline std::string without_url_credentials(std::string arg) {
  std::size_t from = 0;
  for (std::size_t scheme; (scheme = arg.find("://", from)) != std::string::npos;) {
    const std::size_t host = scheme + 3;
    const std::size_t end = arg.find_first_of("/,", host);
    const std::size_t at = arg.rfind('@', end == std::string::npos ? arg.size() : end);
    if (at != std::string::npos && at >= host) arg.erase(host, at + 1 - host);
    from = host;
  }
  return arg;
}

// The command line of this process, shell-quoted, with `--resume` added when it is missing: what
// to type to continue an interrupted run (read from /proc/self/cmdline; the API key is never on
// it, only the name of its variable). Credentials in an endpoint URL are left out (and a second
// line says so): a password is never printed.
inline std::string resume_command() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  const std::string raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  std::string cur;
  for (char c : raw) {
    if (c == '\0') {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (args.empty()) return "the same command with --resume";
  bool has_resume = false;
  bool credentials = false;
  std::string out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string a = i == 0 ? std::string("numcheck") : without_url_credentials(args[i]);
    credentials = credentials || (i > 0 && a != args[i]);
    has_resume = has_resume || a == "--resume";
    const bool plain = !a.empty() && a.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                         "-_./=:,@+") == std::string::npos;
    if (!plain) {
      std::string q = "'";
      for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
      a = q + "'";
    }
    out += (out.empty() ? "" : " ") + a;
  }
  if (!has_resume) out += " --resume";
  if (credentials)
    out += "\n(the user name and password of the endpoint URL are left out above: add them back)";
  return out;
}

// Keeps `p` alive, unfreed, until the process exits: the last step of a command can leave a large
// object graph (a loaded benchmark and its work items: tens of thousands of allocations) to the
// exit, which returns the memory at once, instead of freeing it piece by piece (milliseconds at
// the end of every `orbit run`). Held from a static pointer, so leak checkers see it as reachable.
// For the command's own thread.
inline void keep_until_exit(std::shared_ptr<const void> p) {
  static auto* const kept = new std::vector<std::shared_ptr<const void>>();
  kept->push_back(std::move(p));
}

// Set by the SIGINT handler run_session installs.
inline std::atomic<bool> g_interrupted{false};
extern "C" inline void on_sigint(int /*sig*/) { g_interrupted.store(true); }

// One runner session as the CLI runs it: the preflight (llm/preflight.hpp: stop at once on a
// set-up mistake), then the run with Ctrl-C handled gracefully (the first SIGINT stops issuing
// requests, lets the ones in flight finish and be recorded; a second one kills the process).
inline llm::RunSummary run_session(const std::vector<llm::WorkItem>& items, llm::RunSettings s,
                                   llm::Backend& backend, const std::string& out) {
  if (!items.empty()) s.server = llm::preflight(backend, s, items.front());
  g_interrupted.store(false);
  s.interrupt = &g_interrupted;
  struct sigaction sa {};
  struct sigaction old {};
  sa.sa_handler = on_sigint;
  sa.sa_flags = SA_RESETHAND;  // a second Ctrl-C takes the default action
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old);
  try {
    llm::RunSummary r = llm::run_items(items, s, backend, out);
    sigaction(SIGINT, &old, nullptr);
    return r;
  } catch (...) {
    sigaction(SIGINT, &old, nullptr);
    throw;
  }
}

// Prints malformed-record warnings of a claims file on stderr (the first 20, then a count).
inline void report_issues(const std::vector<claims::LoadIssue>& issues) {
  std::size_t shown = 0;
  for (const auto& is : issues) {
    if (shown++ < 20) fmt::print(stderr, "numcheck: warning: {}\n", is.str());
  }
  if (issues.size() > 20)
    fmt::print(stderr, "numcheck: warning: ... and {} more malformed records\n", issues.size() - 20);
}

// Prints the summary of a runner session (`noun` is "prompts" or "calls") and throws
// Error(kIncomplete, exit 3) when some items are still unanswered.
inline void finish_run(const std::string& out, const llm::RunSummary& r, const char* noun) {
  fmt::print(
      "{}: {} {}, {} answered ({} earlier, {} now, {} from cache), {} failed this session, {} unanswered{}\n",
      out, r.total, noun, r.answered_before + r.answered, r.answered_before, r.answered, r.from_cache,
      r.failed, r.unanswered,
      r.stop_reason.empty() ? std::string() : fmt::format(" (stopped early: {})", r.stop_reason));
  if (r.torn_bytes_repaired > 0) {
    fmt::print("repaired a torn last record ({} bytes) left by an interrupted session\n",
               r.torn_bytes_repaired);
  }
  if (r.cache_rejected > 0) {
    fmt::print(
        stderr,
        "numcheck: warning: {} response cache entries did not belong to their request (edited or damaged) "
        "and were asked again\n",
        r.cache_rejected);
  }
  if (!r.cache_warning.empty())
    fmt::print(stderr, "numcheck: warning: {}; the run went on without the response cache\n",
               r.cache_warning);
  if (r.unanswered > 0) {
    fmt::print("to continue: {}\n", resume_command());
    throw Error(
        ErrorCode::kIncomplete,
        fmt::format("{} of {} {} unanswered (see {}/errors.jsonl); run again with --resume to retry them",
                    r.unanswered, r.total, noun, out));
  }
}

}  // namespace numcheck::cli
