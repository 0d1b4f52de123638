#pragma once
// Small helpers shared by CLI commands.
#include <filesystem>
#include <sstream>

#include <fmt/core.h>

#include <string>
#include <vector>
#include "core/error.hpp"
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

// Prints the summary of a runner session (`noun` is "prompts" or "calls") and throws
// Error(kIncomplete, exit 3) when some items are still unanswered.
inline void finish_run(const std::string& out, const llm::RunSummary& r, const char* noun) {
  fmt::print(
      "{}: {} {}, {} answered ({} earlier, {} now, {} from cache), {} failed this session, {} unanswered{}\n",
      out, r.total, noun, r.answered_before + r.answered, r.answered_before, r.answered, r.from_cache,
      r.failed, r.unanswered, r.stopped_early ? " (stopped early: --max-errors)" : "");
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
  if (r.unanswered > 0) {
    throw Error(
        ErrorCode::kIncomplete,
        fmt::format("{} of {} {} unanswered (see {}/errors.jsonl); run again with --resume to retry them",
                    r.unanswered, r.total, noun, out));
  }
}

}  // namespace numcheck::cli
