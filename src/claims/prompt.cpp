#include "claims/prompt.hpp"

#include "core/error.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"

namespace numcheck::claims {

PromptSpec load_prompt(const std::filesystem::path& path) {
  const std::string bytes = io::read_file(path);
  const std::string where = path.string();
  const io::Json j = io::parse_json(bytes, where);
  if (!j.is_object()) fail(ErrorCode::kInvalidInput, "{}: a prompt file must be a JSON object", where);
  PromptSpec p;
  p.path = where;
  p.sha256 = io::sha256_hex(bytes);
  p.method = io::require_string(j, "method", where);
  p.source = io::require_string(j, "source", where);
  p.user = io::require_string(j, "user", where);
  if (j.contains("system") && !j["system"].is_null()) {
    if (!j["system"].is_string())
      fail(ErrorCode::kInvalidInput, "{}: 'system' must be a string or null", where);
    p.system = j["system"].get<std::string>();
  }
  if (j.contains("example")) p.example = io::require_string(j, "example", where);
  if (j.contains("example_separator"))
    p.example_separator = io::require_string(j, "example_separator", where);
  if (j.contains("verdict_marker")) p.verdict_marker = io::require_string(j, "verdict_marker", where);
  if (j.contains("examples")) {
    if (!j["examples"].is_array()) fail(ErrorCode::kInvalidInput, "{}: 'examples' must be an array", where);
    p.examples = j["examples"];
  }
  if (j.contains("sampling")) {
    if (!j["sampling"].is_object()) fail(ErrorCode::kInvalidInput, "{}: 'sampling' must be an object", where);
    for (auto it = j["sampling"].begin(); it != j["sampling"].end(); ++it) {
      if (!it.value().is_number())
        fail(ErrorCode::kInvalidInput, "{}: sampling.{} must be a number", where, it.key());
    }
    p.sampling = j["sampling"];
  }
  if (p.source.empty())
    fail(ErrorCode::kInvalidInput, "{}: 'source' must name where the prompt comes from", where);
  return p;
}

PromptSpec builtin_prompt(std::string_view name) {
  return load_prompt(io::data_path(std::string("claims/prompts/") + std::string(name) + ".json"));
}

std::string render_template(std::string_view tmpl, const PromptVars& vars, std::string_view where) {
  std::string out;
  out.reserve(tmpl.size() + 256);
  std::size_t i = 0;
  while (i < tmpl.size()) {
    const std::size_t open = tmpl.find("{{", i);
    if (open == std::string_view::npos) {
      out.append(tmpl.substr(i));
      break;
    }
    out.append(tmpl.substr(i, open - i));
    const std::size_t close = tmpl.find("}}", open + 2);
    if (close == std::string_view::npos) fail(ErrorCode::kInvalidInput, "{}: '{{{{' without '}}}}'", where);
    const std::string_view name = tmpl.substr(open + 2, close - open - 2);
    bool found = false;
    for (const auto& [k, v] : vars) {
      if (k == name) {
        out += v;
        found = true;
        break;
      }
    }
    if (!found) fail(ErrorCode::kInvalidInput, "{}: placeholder {{{{{}}}}} has no value", where, name);
    i = close + 2;
  }
  return out;
}

}  // namespace numcheck::claims
