#include "orbit/score.hpp"

#include <array>
#include <map>
#include <unordered_map>

#include "core/error.hpp"
#include "core/version.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"

namespace numcheck::orbit {
namespace fs = std::filesystem;

namespace {

bool is_blank_line(std::string_view s) {
  for (const char c : s) {
    if (c != ' ' && c != '\t' && c != '\r' && c != '\v' && c != '\f') return false;
  }
  return true;
}

struct Parsed {
  std::string prompt_id;
  std::string response;
  std::string finish_reason;
  std::optional<std::int64_t> completion_tokens;
};

// Reads the completion token count: usage.completion_tokens, else top-level completion_tokens.
// Returns false when a present, non-null count is not a non-negative integer.
bool read_tokens(const io::Json& j, std::optional<std::int64_t>& out, std::string& why) {
  const io::Json* v = nullptr;
  std::string_view name;
  if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
    if (auto c = u->find("completion_tokens"); c != u->end() && !c->is_null()) {
      v = &*c;
      name = "usage.completion_tokens";
    }
  }
  if (v == nullptr) {
    if (auto c = j.find("completion_tokens"); c != j.end() && !c->is_null()) {
      v = &*c;
      name = "completion_tokens";
    }
  }
  if (v == nullptr) return true;
  if (v->is_number_unsigned() || (v->is_number_integer() && v->get<std::int64_t>() >= 0)) {
    out = v->get<std::int64_t>();
    return true;
  }
  why = fmt::format("field '{}' must be a non-negative integer", name);
  return false;
}

// Parses one record; on failure returns nullopt and sets `why`. `prompt_id` is set whenever the
// record has a string prompt_id, so that issues can name it.
std::optional<Parsed> parse_record(std::string_view text, std::string& prompt_id, std::string& why) {
  io::Json j;
  try {
    j = io::parse_json(text, "");
  } catch (const Error& e) {
    std::string_view m = e.what();
    if (m.starts_with(": ")) m.remove_prefix(2);
    why = fmt::format("not valid JSON ({})", m);
    return std::nullopt;
  }
  if (!j.is_object()) {
    why = "not a JSON object";
    return std::nullopt;
  }
  Parsed p;
  auto id = j.find("prompt_id");
  if (id == j.end() || !id->is_string()) {
    why = id == j.end() ? "missing field 'prompt_id'" : "field 'prompt_id' must be a string";
    return std::nullopt;
  }
  p.prompt_id = id->get<std::string>();
  prompt_id = p.prompt_id;
  auto resp = j.find("response");
  if (resp == j.end()) {
    why = "missing field 'response'";
    return std::nullopt;
  }
  if (resp->is_string()) {
    p.response = resp->get<std::string>();
  } else if (!resp->is_null()) {
    why = "field 'response' must be a string or null";
    return std::nullopt;
  }
  auto fr = j.find("finish_reason");
  if (fr == j.end()) {
    why = "missing field 'finish_reason'";
    return std::nullopt;
  }
  if (fr->is_string()) {
    p.finish_reason = fr->get<std::string>();
  } else if (!fr->is_null()) {
    why = "field 'finish_reason' must be a string or null";
    return std::nullopt;
  }
  if (!read_tokens(j, p.completion_tokens, why)) return std::nullopt;
  return p;
}

io::OrderedJson outcome_counts() {
  io::OrderedJson o = io::OrderedJson::object();
  for (const auto oc :
       {grade::Outcome::kCorrect, grade::Outcome::kTruncationError, grade::Outcome::kFormatError,
        grade::Outcome::kParseError, grade::Outcome::kUnitError, grade::Outcome::kValueError}) {
    o[std::string(grade::outcome_name(oc))] = 0;
  }
  return o;
}

void bump(io::OrderedJson& counts, grade::Outcome oc) {
  auto& c = counts[std::string(grade::outcome_name(oc))];
  c = c.get<std::size_t>() + 1;
}

}  // namespace

std::string_view issue_kind_name(ScoreIssueKind k) noexcept {
  switch (k) {
    case ScoreIssueKind::kMalformed:
      return "malformed";
    case ScoreIssueKind::kUnknownPrompt:
      return "unknown_prompt";
    case ScoreIssueKind::kDuplicate:
      return "duplicate";
    case ScoreIssueKind::kMissing:
      return "missing";
  }
  return "unknown";
}

std::size_t Scores::count(ScoreIssueKind k) const {
  std::size_t n = 0;
  for (const auto& i : issues) n += i.kind == k ? 1 : 0;
  return n;
}

Scores score_responses(const Benchmark& bench, const fs::path& responses, const num::UnitRegistry& units) {
  verify_benchmark(bench);
  for (const auto& v : bench.views) {
    if (!v.answer_unit.empty() && grade::resolve_unit(v.answer_unit, units) == nullptr) {
      fail("{}: prompt '{}' asks for unit '{}', which the unit registry does not know",
           (bench.dir / "views.jsonl").string(), v.prompt_id, v.answer_unit);
    }
  }
  if (!fs::is_regular_file(responses)) fail(ErrorCode::kIo, "{}: file not found", responses.string());

  Scores s;
  std::vector<std::size_t> first_line(bench.views.size(), 0);  // line of the scored record, 0 = none
  std::vector<ScoredPrompt> by_view(bench.views.size());
  io::for_each_line(responses, [&](const io::Line& line) {
    s.lines = line.number;
    if (is_blank_line(line.text)) {
      ++s.blank_lines;
      return;
    }
    std::string prompt_id;
    std::string why;
    auto rec = parse_record(line.text, prompt_id, why);
    if (!rec) {
      if (!line.terminated) why += " (last line is not terminated: torn by a crash?)";
      s.issues.push_back({ScoreIssueKind::kMalformed, line.number, prompt_id, why});
      return;
    }
    const auto it = bench.prompt_index.find(rec->prompt_id);
    if (it == bench.prompt_index.end()) {
      s.issues.push_back({ScoreIssueKind::kUnknownPrompt, line.number, rec->prompt_id,
                          fmt::format("prompt_id '{}' is not in the benchmark", rec->prompt_id)});
      return;
    }
    const std::size_t idx = it->second;
    if (first_line[idx] != 0) {
      s.issues.push_back({ScoreIssueKind::kDuplicate, line.number, rec->prompt_id,
                          fmt::format("duplicate prompt_id '{}' (first record at line {})", rec->prompt_id,
                                      first_line[idx])});
      return;
    }
    first_line[idx] = line.number;
    const View& v = bench.views[idx];
    ScoredPrompt& p = by_view[idx];
    p.view_index = idx;
    p.line = line.number;
    p.completion_tokens = rec->completion_tokens;
    p.grade = grade::grade_response(rec->response, grade::Question{v.expected, v.answer_unit},
                                    rec->finish_reason, units);
    p.finish_reason = std::move(rec->finish_reason);
  });
  for (std::size_t i = 0; i < bench.views.size(); ++i) {
    if (first_line[i] == 0) {
      s.issues.push_back({ScoreIssueKind::kMissing, 0, bench.views[i].prompt_id,
                          fmt::format("prompt '{}' has no response record", bench.views[i].prompt_id)});
    } else {
      s.records.push_back(std::move(by_view[i]));
    }
  }
  return s;
}

std::string format_issue(const ScoreIssue& issue, const fs::path& responses) {
  if (issue.line == 0) return fmt::format("{}: {}", responses.string(), issue.message);
  return fmt::format("{}:{}: {}", responses.string(), issue.line, issue.message);
}

void check_complete(const Scores& scores, const fs::path& responses) {
  if (scores.issues.empty()) return;
  const std::size_t malformed = scores.count(ScoreIssueKind::kMalformed);
  const std::size_t unknown = scores.count(ScoreIssueKind::kUnknownPrompt);
  const std::size_t duplicate = scores.count(ScoreIssueKind::kDuplicate);
  const std::size_t missing = scores.count(ScoreIssueKind::kMissing);
  const std::string first = format_issue(scores.issues.front(), responses);
  if (malformed + unknown + duplicate > 0) {
    fail(ErrorCode::kInvalidInput,
         "{}: {} malformed, {} unknown prompt_id, {} duplicate, {} missing; first: {}; nothing written "
         "(--allow-partial scores the valid records)",
         responses.string(), malformed, unknown, duplicate, missing, first);
  }
  fail(ErrorCode::kIncomplete,
       "{}: {} of the benchmark's prompts have no response record; first: {}; nothing written "
       "(--allow-partial scores the answered prompts)",
       responses.string(), missing, first);
}

io::OrderedJson score_record(const Benchmark& bench, const ScoredPrompt& p) {
  const View& v = bench.views.at(p.view_index);
  io::OrderedJson r = io::OrderedJson::object();
  r["prompt_id"] = v.prompt_id;
  r["base_id"] = v.base_id;
  r["view"] = v.view;
  r["family"] = v.family ? io::OrderedJson(*v.family) : io::OrderedJson(nullptr);
  r["template"] = v.template_id;
  r["expected"] = v.expected.str();
  r["answer_unit"] = v.answer_unit;
  r["finish_reason"] = p.finish_reason;
  if (p.completion_tokens) r["completion_tokens"] = *p.completion_tokens;
  r["line"] = p.line;
  io::OrderedJson g = grade::to_json(p.grade);
  r["strict"] = std::move(g["strict"]);
  r["audit"] = std::move(g["audit"]);
  return r;
}

SystemInfo read_system_info(const fs::path& responses) {
  SystemInfo info;
  info.name = responses.stem().string();
  info.source = "file_name";
  const fs::path run = responses.parent_path() / "run.json";
  std::error_code ec;
  if (!fs::is_regular_file(run, ec)) return info;
  const io::Json j = io::read_json_file(run);
  if (!j.is_object()) fail("{}: expected a JSON object", run.string());
  if (auto m = j.find("model"); m != j.end() && !m->is_null()) {
    if (!m->is_string() || m->get<std::string>().empty())
      fail("{}: field 'model' must be a non-empty string", run.string());
    info.name = m->get<std::string>();
    info.source = "run.json";
  }
  if (auto sim = j.find("simulated"); sim != j.end() && !sim->is_null()) {
    if (!sim->is_boolean()) fail("{}: field 'simulated' must be true or false", run.string());
    info.simulated = sim->get<bool>();
  }
  return info;
}

fs::path score_manifest_path(const fs::path& out) {
  fs::path p = out;
  p += ".manifest.json";
  return p;
}

io::OrderedJson score_manifest(const Benchmark& bench, const Scores& scores, const fs::path& responses,
                               const fs::path& out, std::string_view scores_sha256, bool allow_partial) {
  const SystemInfo sys = read_system_info(responses);
  io::OrderedJson m = io::OrderedJson::object();
  m["format"] = "numcheck-orbit-scores/1";
  m["numcheck_version"] = kVersion;
  m["grader"] = {{"strict", "appendix_b"}, {"audit", "audit_v2"}};
  m["system"] = {{"name", sys.name}, {"simulated", sys.simulated}, {"source", sys.source}};

  io::OrderedJson b = io::OrderedJson::object();
  b["dir"] = bench.dir.string();
  b["manifest_sha256"] = io::sha256_hex(bench.manifest_json);
  const io::Json bm = io::parse_json(bench.manifest_json, (bench.dir / "manifest.json").string());
  for (const char* key : {"generator_version", "prompt_version", "seed", "spec_sha256"}) {
    if (auto it = bm.find(key); it != bm.end()) b[key] = *it;
  }
  io::OrderedJson files = io::OrderedJson::object();
  const auto recorded = manifest_file_hashes(bench);
  for (const auto& [name, hash] : bench.file_sha256) files[name] = hash;
  for (const auto& [name, hash] : recorded) {
    if (!files.contains(name)) files[name] = hash;
  }
  b["files"] = std::move(files);
  b["prompts"] = bench.views.size();
  m["benchmark"] = std::move(b);

  m["responses"] = {{"path", responses.string()},
                    {"sha256", io::sha256_file(responses)},
                    {"lines", scores.lines},
                    {"blank_lines", scores.blank_lines}};
  m["scores"] = {
      {"path", out.string()}, {"sha256", std::string(scores_sha256)}, {"records", scores.records.size()}};
  m["partial"] = !scores.issues.empty();
  m["allow_partial"] = allow_partial;

  io::OrderedJson strict = outcome_counts();
  io::OrderedJson audit = outcome_counts();
  std::size_t recovered = 0;
  std::size_t multiple = 0;
  std::map<int, std::size_t> drops;
  for (const auto& p : scores.records) {
    bump(strict, p.grade.strict.outcome);
    bump(audit, p.grade.audit.outcome);
    recovered += p.grade.audit.recovered ? 1 : 0;
    multiple += p.grade.strict.multiple_final ? 1 : 0;
    if (p.grade.audit.magnitude_k) ++drops[*p.grade.audit.magnitude_k];
  }
  io::OrderedJson mag = io::OrderedJson::object();
  for (const auto& [k, n] : drops) mag[std::to_string(k)] = n;
  m["counts"] = {{"records", scores.records.size()}, {"strict", std::move(strict)},
                 {"audit", std::move(audit)},        {"recovered", recovered},
                 {"multiple_final", multiple},       {"magnitude_drops", std::move(mag)}};

  io::OrderedJson issues = io::OrderedJson::object();
  for (const auto k : {ScoreIssueKind::kMalformed, ScoreIssueKind::kUnknownPrompt, ScoreIssueKind::kDuplicate,
                       ScoreIssueKind::kMissing}) {
    io::OrderedJson list = io::OrderedJson::array();
    for (const auto& i : scores.issues) {
      if (i.kind != k) continue;
      if (k == ScoreIssueKind::kMissing) {
        list.push_back(i.prompt_id);
      } else {
        io::OrderedJson e = {{"line", i.line}, {"message", i.message}};
        if (!i.prompt_id.empty()) e["prompt_id"] = i.prompt_id;
        list.push_back(std::move(e));
      }
    }
    issues[std::string(issue_kind_name(k))] = std::move(list);
  }
  m["issues"] = std::move(issues);
  return m;
}

void write_scores(const Benchmark& bench, const Scores& scores, const fs::path& responses,
                  const fs::path& out, bool allow_partial) {
  std::string body;
  body.reserve(scores.records.size() * 512);
  for (const auto& p : scores.records) {
    body += io::to_line(score_record(bench, p));
    body.push_back('\n');
  }
  const std::string sha = io::sha256_hex(body);
  // The manifest is computed before anything is written so that a failure leaves no half output.
  const std::string manifest =
      io::to_pretty(score_manifest(bench, scores, responses, out, sha, allow_partial));
  io::write_file_atomic(out, body);
  io::write_file_atomic(score_manifest_path(out), manifest);
}

}  // namespace numcheck::orbit
