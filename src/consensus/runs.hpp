#pragma once
// Reading one system's consensus run directory (written by `numcheck orbit consensus run` through
// the shared runner, llm/runner.hpp) back into graded calls for the analysis.
#include <filesystem>
#include <string>
#include <vector>

#include "consensus/analyze.hpp"
#include "consensus/plan.hpp"
#include "grade/grade.hpp"
#include "io/json.hpp"

namespace numcheck::consensus {

// The record field that holds a planned request's id in responses.jsonl / errors.jsonl.
inline constexpr const char* kRequestIdField = "request_id";

using grade::Layer;  // which grading layer decides correctness

struct LoadedRun {
  std::filesystem::path dir;
  std::string model;              // run.json "model" (as the server reported it), "" when absent
  bool simulated = false;         // run.json "simulated"
  std::vector<CallResult> calls;  // indexed like plan.requests
  std::size_t missing = 0;        // planned requests without a response record
  std::size_t records = 0;        // response records read
  // false when run.json's sampling says no call carried a top_k (a run with --no-top-k)
  bool top_k_sent = true;
};

// Reads DIR/responses.jsonl (and DIR/run.json when present), grades every record against the
// plan's expected answer with grade::grade_response, and checks that the run belongs to the plan
// (run.json's plan_sha256 when recorded). A record whose request id is not in the plan, a
// duplicate, or a malformed line is an Error naming file and line. Missing requests are counted
// (the caller decides whether that is an error).
[[nodiscard]] LoadedRun load_run(const Plan& plan, const std::string& plan_sha256,
                                 const std::filesystem::path& dir, Layer layer);

}  // namespace numcheck::consensus
