#pragma once
// Small hand-built benchmarks and score files for the report's unit tests: each test states its
// bases, views and graded outcomes explicitly, so every expected metric can be counted by hand.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "io/files.hpp"
#include "io/json.hpp"

namespace numcheck::report::testing {

namespace fs = std::filesystem;
using OJ = io::OrderedJson;

// One view of a fixture base.
struct FxView {
  std::string view;  // "canonical" or a family
};

struct FxBase {
  std::string id;                  // "CV-0001"
  std::string tpl;                 // "CV"
  std::string answer;              // exact "p/q"
  std::vector<std::string> views;  // canonical first
};

inline fs::path fresh_dir(const std::string& name) {
  static int counter = 0;
  const fs::path d =
      fs::temp_directory_path() / fmt::format("numcheck_report_{}_{}_{}", name, ::getpid(), counter++);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// Writes bases.jsonl, views.jsonl and manifest.json in the format orbit::load_benchmark reads.
inline void write_bench(const fs::path& dir, const std::vector<FxBase>& bases) {
  std::string b, v;
  for (const auto& base : bases) {
    OJ j = OJ::object();
    j["base_id"] = base.id;
    j["template"] = base.tpl;
    j["dimension"] = "volume";
    j["canonical_unit"] = "L";
    j["params"] = OJ::object();
    j["answer"] = base.answer;
    j["views"] = base.views;
    b += io::to_line(j) + "\n";
    for (const auto& view : base.views) {
      OJ w = OJ::object();
      w["prompt_id"] = base.id + ":" + view;
      w["base_id"] = base.id;
      w["template"] = base.tpl;
      w["view"] = view;
      w["family"] = view == "canonical" || view.rfind("paraphrase", 0) == 0 ? OJ(nullptr) : OJ(view);
      w["prompt"] = "How many liters? FINAL: <number> <unit>";
      w["expected"] = base.answer;
      w["answer_unit"] = "L";
      v += io::to_line(w) + "\n";
    }
  }
  io::write_file_atomic(dir / "bases.jsonl", b);
  io::write_file_atomic(dir / "views.jsonl", v);
  io::write_file_atomic(dir / "manifest.json", "{\"seed\": 1}\n");
}

// One graded response for a score file.
struct FxScore {
  std::string prompt_id;
  std::string strict_outcome = "correct";
  std::optional<std::string> strict_value;  // defaults to nullopt (null)
  std::string audit_outcome = "correct";
  std::optional<std::string> audit_value;
  bool recovered = false;
  std::vector<std::string> rules;
  std::optional<int> tokens;
  std::string finish_reason = "stop";
  std::optional<std::string> response;
};

inline std::string score_line(const FxScore& s) {
  OJ j = OJ::object();
  j["prompt_id"] = s.prompt_id;
  j["finish_reason"] = s.finish_reason;
  if (s.tokens) j["completion_tokens"] = *s.tokens;
  j["strict"] = {{"outcome", s.strict_outcome},
                 {"value", s.strict_value ? OJ(*s.strict_value) : OJ(nullptr)},
                 {"multiple_final", false}};
  j["audit"] = {{"outcome", s.audit_outcome},
                {"value", s.audit_value ? OJ(*s.audit_value) : OJ(nullptr)},
                {"recovered", s.recovered},
                {"rules", s.rules},
                {"magnitude_k", nullptr}};
  if (s.response) j["response"] = *s.response;
  return io::to_line(j) + "\n";
}

// Same outcome and value in both layers.
inline FxScore both(const std::string& pid, const std::string& outcome, std::optional<std::string> value) {
  FxScore s;
  s.prompt_id = pid;
  s.strict_outcome = s.audit_outcome = outcome;
  s.strict_value = s.audit_value = std::move(value);
  return s;
}

inline void write_scores(const fs::path& path, const std::vector<FxScore>& scores,
                         const std::optional<std::string>& sidecar = std::nullopt) {
  std::string text;
  for (const auto& s : scores) text += score_line(s);
  io::write_file_atomic(path, text);
  if (sidecar) {
    fs::path m = path;
    m += ".manifest.json";
    io::write_file_atomic(m, *sidecar);
  }
}

}  // namespace numcheck::report::testing
