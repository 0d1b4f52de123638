#include "consensus/runs.hpp"

#include <unordered_map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "grade/grade.hpp"
#include "io/json.hpp"

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
    const io::Json mj = io::read_json_file(manifest);
    const io::Record m = io::Record::of(mj, manifest.string());
    if (const io::Json* v = m.find("model"); v != nullptr && v->is_string()) run.model = m.string("model");
    if (const io::Json* v = m.find("simulated"); v != nullptr && v->is_boolean())
      run.simulated = m.boolean("simulated");
    // The sampling as sent, per tier (the runner's sampling_as_sent): --no-top-k leaves top_k out
    // of every tier.
    if (const io::Json* s = m.find("sampling"); s != nullptr && s->is_object() && s->contains("by_tier") &&
                                                (*s)["by_tier"].is_object() && !(*s)["by_tier"].empty()) {
      run.top_k_sent = false;
      for (const auto& [tier, sampling] : (*s)["by_tier"].items())
        run.top_k_sent = run.top_k_sent || !sampling.is_object() || sampling.contains("top_k");
    }
    if (auto sha = m.opt_string("plan_sha256"); sha && *sha != plan_sha256) {
      fail("{}: the run was made from a different plan (plan_sha256 {} but the plan given hashes to {})",
           manifest.string(), *sha, plan_sha256);
    }
  }

  const fs::path responses = dir / "responses.jsonl";
  if (!fs::exists(responses))
    fail(ErrorCode::kIo, "consensus analyze: {} does not exist", responses.string());

  std::unordered_map<std::string, std::size_t> index;
  index.reserve(plan.requests.size());
  for (std::size_t i = 0; i < plan.requests.size(); ++i) index.emplace(plan.requests[i].id, i);
  run.calls.assign(plan.requests.size(), CallResult{false, std::nullopt, false, "missing"});

  io::JsonlOptions options;
  options.torn = io::TornTail::kAppendLog;
  (void)io::read_jsonl(
      responses,
      [&](const io::Record& rec, std::size_t) {
        const std::string& where = rec.where();
        const std::string id = rec.string(kRequestIdField);
        auto it = index.find(id);
        if (it == index.end()) fail("{}: request '{}' is not in the plan", where, id);
        CallResult& c = run.calls[it->second];
        if (c.answered) fail("{}: a second record for request '{}'", where, id);
        const std::string response = rec.string("response");
        std::string finish = "stop";
        if (rec.contains("finish_reason")) finish = rec.opt_string("finish_reason").value_or("");
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
      },
      options);
  for (const auto& c : run.calls) {
    if (!c.answered) ++run.missing;
  }
  return run;
}

}  // namespace numcheck::consensus
