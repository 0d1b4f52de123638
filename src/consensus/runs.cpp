#include "consensus/runs.hpp"

#include <unordered_map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "grade/grade.hpp"
#include "llm/runner.hpp"

namespace numcheck::consensus {

LoadedRun load_run(const Plan& plan, const std::string& plan_sha256, const std::filesystem::path& dir,
                   Layer layer) {
  namespace fs = std::filesystem;
  LoadedRun run;
  run.dir = dir;
  if (!fs::is_directory(dir))
    fail(ErrorCode::kIo, "consensus analyze: run directory {} does not exist", dir.string());

  const fs::path manifest = dir / "run.json";
  if (fs::exists(manifest)) {
    const io::Json m = io::read_json_file(manifest);
    if (!m.is_object()) fail("{}: a run manifest must be a JSON object", manifest.string());
    if (auto it = m.find("model"); it != m.end() && it->is_string()) run.model = it->get<std::string>();
    if (auto it = m.find("simulated"); it != m.end() && it->is_boolean()) run.simulated = it->get<bool>();
    if (auto it = m.find("plan_sha256"); it != m.end()) {
      if (!it->is_string()) fail("{}: field 'plan_sha256' must be a string", manifest.string());
      if (it->get<std::string>() != plan_sha256) {
        fail("{}: the run was made from a different plan (plan_sha256 {} but the plan given hashes to {})",
             manifest.string(), it->get<std::string>(), plan_sha256);
      }
    }
  }

  const fs::path responses = dir / "responses.jsonl";
  if (!fs::exists(responses))
    fail(ErrorCode::kIo, "consensus analyze: {} does not exist", responses.string());

  std::unordered_map<std::string, std::size_t> index;
  index.reserve(plan.requests.size());
  for (std::size_t i = 0; i < plan.requests.size(); ++i) index.emplace(plan.requests[i].id, i);
  run.calls.assign(plan.requests.size(), CallResult{false, std::nullopt, false, "missing"});

  (void)llm::read_records(responses, [&](const io::Json& rec, std::size_t line) {
    const std::string where = fmt::format("{}:{}", responses.string(), line);
    if (!rec.is_object()) fail("{}: a response record must be a JSON object", where);
    const std::string id = io::require_string(rec, kRequestIdField, where);
    auto it = index.find(id);
    if (it == index.end()) fail("{}: request '{}' is not in the plan", where, id);
    CallResult& c = run.calls[it->second];
    if (c.answered) fail("{}: a second record for request '{}'", where, id);
    const std::string response = io::require_string(rec, "response", where);
    std::string finish = "stop";
    if (auto f = rec.find("finish_reason"); f != rec.end()) {
      if (f->is_string()) {
        finish = f->get<std::string>();
      } else if (f->is_null()) {
        finish = "";
      } else {
        fail("{}: field 'finish_reason' must be a string or null", where);
      }
    }
    const Request& req = plan.requests[it->second];
    const grade::Grade g =
        grade::grade_response(response, grade::Question{req.expected, req.answer_unit}, finish);
    c.answered = true;
    if (layer == Layer::kStrict) {
      c.value = g.strict.value;
      c.correct = g.strict.outcome == grade::Outcome::kCorrect;
      c.outcome = std::string(grade::outcome_name(g.strict.outcome));
    } else {
      c.value = g.audit.value;
      c.correct = g.audit.outcome == grade::Outcome::kCorrect;
      c.outcome = std::string(grade::outcome_name(g.audit.outcome));
    }
    ++run.records;
  });
  for (const auto& c : run.calls) {
    if (!c.answered) ++run.missing;
  }
  return run;
}

}  // namespace numcheck::consensus
