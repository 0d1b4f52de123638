#pragma once
// Small helpers shared by CLI commands.
#include <sstream>

#include <fmt/core.h>

#include <string>
#include <vector>
#include "claims/load.hpp"
#include "core/error.hpp"
#include "llm/runner.hpp"

namespace numcheck::cli {

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
      r.failed, r.unanswered, r.stopped_early ? " (stopped early: --max-errors)" : "");
  if (r.torn_bytes_repaired > 0) {
    fmt::print("repaired a torn last record ({} bytes) left by an interrupted session\n",
               r.torn_bytes_repaired);
  }
  if (r.unanswered > 0) {
    throw Error(
        ErrorCode::kIncomplete,
        fmt::format("{} of {} {} unanswered (see {}/errors.jsonl); run again with --resume to retry them",
                    r.unanswered, r.total, noun, out));
  }
}

}  // namespace numcheck::cli
