#include "claims/labels.hpp"

#include <algorithm>
#include <mutex>

#include "core/ascii.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "io/json.hpp"

namespace numcheck::claims {

std::string_view verdict_name(Verdict v) noexcept {
  switch (v) {
    case Verdict::kTrue:
      return "True";
    case Verdict::kFalse:
      return "False";
    case Verdict::kConflicting:
      return "Conflicting";
  }
  return "?";
}

std::string normalize_label(std::string_view in) {
  std::string s;
  s.reserve(in.size());
  bool space = false;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(in[i]);
    // U+2018/U+2019 (E2 80 98/99) -> ', U+201C/U+201D (E2 80 9C/9D) -> "
    if (c == 0xE2 && i + 2 < in.size() && static_cast<unsigned char>(in[i + 1]) == 0x80) {
      const unsigned char d = static_cast<unsigned char>(in[i + 2]);
      if (d == 0x98 || d == 0x99 || d == 0x9C || d == 0x9D) {
        if (space && !s.empty()) s.push_back(' ');
        space = false;
        s.push_back(d <= 0x99 ? '\'' : '"');
        i += 2;
        continue;
      }
    }
    if (ascii::is_space(static_cast<char>(c))) {
      space = true;
      continue;
    }
    if (space && !s.empty()) s.push_back(' ');
    space = false;
    s.push_back(ascii::to_lower(static_cast<char>(c)));
  }
  return s;
}

namespace {

std::optional<Verdict> class_from_name(std::string_view name) {
  for (Verdict v : kVerdicts)
    if (name == verdict_name(v)) return v;
  return std::nullopt;
}

}  // namespace

LabelMap LabelMap::parse(std::string_view json_text, std::string_view where) {
  const io::Json j = io::parse_json(json_text, where);
  if (!j.is_object()) fail("{}: the label map must be a JSON object", where);
  LabelMap m;
  const io::Json& classes = io::require(j, "classes", where);
  if (!classes.is_object()) fail("{}: 'classes' must be an object", where);
  // label -> classes it is listed under (in table order)
  std::vector<std::pair<std::string, std::vector<Verdict>>> listed;
  std::unordered_map<std::string, std::size_t> index;
  for (auto it = classes.begin(); it != classes.end(); ++it) {
    const auto v = class_from_name(it.key());
    if (!v) fail("{}: classes: unknown class '{}' (expected True, False or Conflicting)", where, it.key());
    if (!it.value().is_array()) fail("{}: classes.{} must be an array of strings", where, it.key());
    for (const auto& e : it.value()) {
      if (!e.is_string()) fail("{}: classes.{} must hold only strings", where, it.key());
      const std::string k = normalize_label(e.get<std::string>());
      if (k.empty()) fail("{}: classes.{} holds an empty label", where, it.key());
      auto [pos, fresh] = index.emplace(k, listed.size());
      if (fresh) listed.push_back({k, {}});
      listed[pos->second].second.push_back(*v);
    }
  }
  // The class order in a JSON object with sorted keys is alphabetical; table order within a class
  // is kept. Resolution of labels under two classes:
  std::unordered_map<std::string, Verdict> resolved;
  if (j.contains("double_listed")) {
    const io::Json& d = j["double_listed"];
    if (!d.is_object()) fail("{}: 'double_listed' must be an object", where);
    if (d.contains("rule")) {
      if (!d["rule"].is_string()) fail("{}: double_listed.rule must be a string", where);
      m.rule_ = d["rule"].get<std::string>();
    }
    if (d.contains("resolved")) {
      if (!d["resolved"].is_object()) fail("{}: double_listed.resolved must be an object", where);
      for (auto it = d["resolved"].begin(); it != d["resolved"].end(); ++it) {
        if (!it.value().is_string())
          fail("{}: double_listed.resolved.{} must be a class name", where, it.key());
        const auto v = class_from_name(it.value().get<std::string>());
        if (!v)
          fail("{}: double_listed.resolved.{}: unknown class '{}'", where, it.key(),
               it.value().get<std::string>());
        resolved[normalize_label(it.key())] = *v;
      }
    }
  }
  for (const auto& [label, under] : listed) {
    std::vector<Verdict> distinct;
    for (Verdict v : under)
      if (std::find(distinct.begin(), distinct.end(), v) == distinct.end()) distinct.push_back(v);
    if (distinct.size() == 1) {
      if (under.size() > 1) m.repeated_.push_back(label);
      if (resolved.count(label) != 0)
        fail("{}: double_listed.resolved.{}: the label is listed under one class only", where, label);
      m.map_[label] = distinct[0];
      continue;
    }
    auto r = resolved.find(label);
    if (r == resolved.end())
      fail("{}: label '{}' is listed under several classes and has no entry in double_listed.resolved", where,
           label);
    if (std::find(distinct.begin(), distinct.end(), r->second) == distinct.end())
      fail("{}: double_listed.resolved.{}: resolves to a class the label is not listed under", where, label);
    m.map_[label] = r->second;
    m.double_listed_.push_back({label, distinct, r->second});
  }
  for (const auto& [label, v] : resolved)
    if (index.count(label) == 0)
      fail("{}: double_listed.resolved.{}: the label is not in 'classes'", where, label);
  std::sort(m.double_listed_.begin(), m.double_listed_.end(),
            [](const DoubleListed& a, const DoubleListed& b) { return a.label < b.label; });
  std::sort(m.repeated_.begin(), m.repeated_.end());
  if (j.contains("variants")) {
    const io::Json& vs = j["variants"];
    if (!vs.is_object()) fail("{}: 'variants' must be an object", where);
    for (auto it = vs.begin(); it != vs.end(); ++it) {
      if (!it.value().is_string()) fail("{}: variants.{} must be a class name", where, it.key());
      const auto v = class_from_name(it.value().get<std::string>());
      if (!v) fail("{}: variants.{}: unknown class '{}'", where, it.key(), it.value().get<std::string>());
      const std::string k = normalize_label(it.key());
      auto existing = m.map_.find(k);
      if (existing != m.map_.end() && existing->second != *v)
        fail("{}: variants.{} contradicts the class the label has in 'classes'", where, it.key());
      m.map_[k] = *v;
    }
  }
  // The class names themselves always map to their class.
  for (Verdict v : kVerdicts) {
    const std::string k = normalize_label(verdict_name(v));
    auto existing = m.map_.find(k);
    if (existing != m.map_.end() && existing->second != v)
      fail("{}: the class name '{}' is mapped to another class", where, verdict_name(v));
    m.map_[k] = v;
  }
  return m;
}

LabelMap LabelMap::load(const std::filesystem::path& path) {
  return parse(io::read_file(path), path.string());
}

const LabelMap& LabelMap::builtin() {
  static const LabelMap m = load(io::data_path("claims/labels.json"));
  return m;
}

std::optional<Verdict> LabelMap::map(std::string_view label) const {
  auto it = map_.find(normalize_label(label));
  if (it == map_.end()) return std::nullopt;
  return it->second;
}

}  // namespace numcheck::claims
