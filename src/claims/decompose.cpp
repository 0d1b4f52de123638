#include "claims/decompose.hpp"

#include <filesystem>
#include <regex>

#include <fmt/format.h>

#include "core/ascii.hpp"
#include "core/error.hpp"
#include "io/files.hpp"

namespace numcheck::claims {

namespace {

using ascii::trim;

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i <= text.size()) {
    std::size_t j = text.find('\n', i);
    if (j == std::string_view::npos) j = text.size();
    out.push_back(text.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    char a = s[i], b = prefix[i];
    if (a >= 'A' && a <= 'Z') a = static_cast<char>(a - 'A' + 'a');
    if (b >= 'A' && b <= 'Z') b = static_cast<char>(b - 'A' + 'a');
    if (a != b) return false;
  }
  return true;
}

constexpr std::size_t kMaxStepBytes = 4000;

std::string shorten(std::string_view s) {
  std::string out(s.substr(0, 80));
  if (s.size() > 80) out += "...";
  return out;
}

// Removes one leading list marker.
std::string_view strip_marker(std::string_view s) {
  static const std::regex marker_re(R"(^(?:Next Question:|\[?Q\d+\]?\s*[:.)]|\d+\s*[.)]|[-*])\s*)",
                                    std::regex::icase);
  std::cmatch m;
  // A marker is short: match on the first bytes only (std::regex recurses per character).
  const std::string_view head = s.substr(0, 32);
  if (std::regex_search(head.begin(), head.end(), m, marker_re))
    s.remove_prefix(static_cast<std::size_t>(m.length(0)));
  return trim(s);
}

}  // namespace

std::string_view decomp_method_name(DecompMethod m) noexcept {
  return m == DecompMethod::kClaimDecomp ? "claimdecomp" : "programfc";
}

std::optional<DecompMethod> decomp_method_from_name(std::string_view name) noexcept {
  if (name == "claimdecomp") return DecompMethod::kClaimDecomp;
  if (name == "programfc") return DecompMethod::kProgramFc;
  return std::nullopt;
}

DecompParse parse_claimdecomp(std::string_view response) {
  DecompParse p;
  std::size_t n = 0;
  for (std::string_view line : lines_of(response)) {
    ++n;
    line = trim(line);
    if (line.empty()) continue;
    if (starts_with_ci(line, "questions:") && trim(line.substr(10)).empty()) continue;
    const std::string_view q = strip_marker(line);
    if (q.empty() || q.back() != '?') {
      p.questions.clear();
      p.reason = fmt::format("line {} is not a question: \"{}\"", n, shorten(line));
      return p;
    }
    p.questions.emplace_back(q);
  }
  if (p.questions.empty()) {
    p.reason = "no questions";
    return p;
  }
  p.ok = true;
  return p;
}

DecompParse parse_programfc(std::string_view response) {
  DecompParse p;
  std::vector<std::string_view> lines = lines_of(response);
  // One surrounding ``` fence.
  std::size_t first = 0, last = lines.size();
  while (first < last && trim(lines[first]).empty()) ++first;
  while (last > first && trim(lines[last - 1]).empty()) --last;
  if (first < last && trim(lines[first]).substr(0, 3) == "```") {
    if (last - first < 2 || trim(lines[last - 1]) != "```") {
      p.reason = "a ``` fence that is not closed on the last line";
      return p;
    }
    ++first;
    --last;
  }
  static const std::regex step_re(
      R"re(^(fact|answer)_(\d+)\s*=\s*(Verify|Question)\(\s*f?(?:"(.*)"|'(.*)')\s*\)$)re");
  static const std::regex predict_re(R"(^label\s*=\s*Predict\((.+)\)$)");
  bool predicted = false;
  for (std::size_t i = first; i < last; ++i) {
    const std::string_view line = trim(lines[i]);
    if (line.empty()) continue;
    const std::size_t no = i + 1;
    if (p.program.empty() && (starts_with_ci(line, "# the claim is that") || line == "def program():"))
      continue;
    if (predicted) {
      p.reason = fmt::format("line {} comes after label = Predict(...): \"{}\"", no, shorten(line));
      p.program.clear();
      p.questions.clear();
      return p;
    }
    // std::regex recurses per character: refuse absurd lines before matching.
    if (line.size() > kMaxStepBytes) {
      p.reason = fmt::format("line {} is longer than {} bytes", no, kMaxStepBytes);
      p.program.clear();
      p.questions.clear();
      return p;
    }
    std::cmatch m;
    if (std::regex_match(line.begin(), line.end(), m, step_re)) {
      const bool fact = m[1].str() == "fact";
      const bool verify = m[3].str() == "Verify";
      if (fact != verify) {
        p.reason = fmt::format("line {}: {} goes with {}_N: \"{}\"", no, m[3].str(),
                               verify ? "fact" : "answer", shorten(line));
        p.program.clear();
        p.questions.clear();
        return p;
      }
      p.questions.push_back(m[4].matched ? m[4].str() : m[5].str());
      p.program.emplace_back(line);
      continue;
    }
    if (std::regex_match(line.begin(), line.end(), m, predict_re)) {
      p.program.emplace_back(line);
      predicted = true;
      continue;
    }
    p.reason = fmt::format("line {} is not a program step: \"{}\"", no, shorten(line));
    p.program.clear();
    p.questions.clear();
    return p;
  }
  if (p.questions.empty()) {
    p.reason = "no Verify(...) or Question(...) step";
    p.program.clear();
    return p;
  }
  if (!predicted) {
    p.reason = "no final label = Predict(...)";
    p.program.clear();
    p.questions.clear();
    return p;
  }
  p.ok = true;
  return p;
}

DecompParse parse_decomposition(DecompMethod m, std::string_view response) {
  return m == DecompMethod::kClaimDecomp ? parse_claimdecomp(response) : parse_programfc(response);
}

std::string decomposition_prompt(const PromptSpec& spec, DecompMethod m, std::string_view claim) {
  std::string examples;
  std::size_t k = 0;
  for (const auto& ex : spec.examples) {
    const std::string where = fmt::format("{}: examples[{}]", spec.path, k++);
    if (!ex.is_object()) fail(ErrorCode::kInvalidInput, "{}: not an object", where);
    PromptVars vars{{"claim", io::require_string(ex, "claim", where)}};
    const char* list = m == DecompMethod::kClaimDecomp ? "questions" : "program";
    const io::Json& items = io::require(ex, list, where);
    if (!items.is_array())
      fail(ErrorCode::kInvalidInput, "{}: '{}' must be an array of strings", where, list);
    std::string joined;
    for (const auto& s : items) {
      if (!s.is_string()) fail(ErrorCode::kInvalidInput, "{}: '{}' must be an array of strings", where, list);
      if (!joined.empty()) joined += '\n';
      if (m == DecompMethod::kProgramFc) joined += "    ";
      joined += s.get<std::string>();
    }
    vars.emplace_back(list, joined);
    if (!examples.empty()) examples += spec.example_separator;
    examples += render_template(spec.example, vars, where);
  }
  return render_template(spec.user, {{"examples", examples}, {"claim", std::string(claim)}}, spec.path);
}

io::OrderedJson decomposition_json(const Decomposition& d) {
  io::OrderedJson j = io::OrderedJson::object();
  j["id"] = d.id;
  j["claim"] = d.claim;
  j["method"] = d.method;
  j["questions"] = d.questions;
  if (d.program) j["program"] = *d.program;
  j["status"] = d.status;
  if (!d.reason.empty()) j["reason"] = d.reason;
  if (d.raw) j["raw"] = *d.raw;
  return j;
}

Decomposition decomposition_from_record(const io::Record& r) {
  Decomposition d;
  d.id = r.string("id");
  d.claim = r.string("claim");
  d.method = r.opt_string("method").value_or("");
  d.questions = r.strings("questions");
  d.program = r.opt_strings("program");
  d.status = r.opt_string("status").value_or("ok");
  d.reason = r.opt_string("reason").value_or("");
  d.raw = r.opt_string("raw");
  return d;
}

Decomposition decomposition_from_json(const io::Json& j, std::string_view where) {
  return decomposition_from_record(io::Record::of(j, where));
}

std::vector<Decomposition> load_decompositions(const std::filesystem::path& path) {
  std::vector<Decomposition> out;
  (void)io::read_jsonl(
      path, [&](const io::Record& r, std::size_t) { out.push_back(decomposition_from_record(r)); });
  return out;
}

std::vector<Decomposition> released_decompositions(const std::vector<Claim>& claims) {
  std::vector<Decomposition> out;
  out.reserve(claims.size());
  for (const auto& c : claims) {
    Decomposition d;
    d.id = claim_id(c);
    d.claim = c.text;
    d.method = "claimdecomp-released";
    for (const auto& q : c.questions) {
      const std::string_view t = trim(q);
      if (!t.empty()) d.questions.emplace_back(t);
    }
    if (d.questions.empty()) {
      d.status = "parse_failure";
      d.reason = "no questions in the file";
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace numcheck::claims
