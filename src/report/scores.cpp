#include "report/scores.hpp"

#include <algorithm>
#include <unordered_set>

#include "core/error.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"

namespace numcheck::report {

namespace fs = std::filesystem;
using OJ = io::OrderedJson;

std::string_view outcome_name(Outcome o) noexcept { return kOutcomeNames[static_cast<std::size_t>(o)]; }

std::optional<Outcome> outcome_from_name(std::string_view name) noexcept {
  for (std::size_t i = 0; i + 1 < kOutcomeCount; ++i) {  // "missing" is never read from a file
    if (kOutcomeNames[i] == name) return static_cast<Outcome>(i);
  }
  return std::nullopt;
}

bool is_orbit_view(std::string_view view) noexcept {
  if (view == "canonical") return true;
  for (const char* f : orbit::kFamilies) {
    if (view == f) return true;
  }
  return false;
}

std::optional<fs::path> find_sidecar(const fs::path& scores) {
  fs::path a = scores;
  a += ".manifest.json";
  if (fs::exists(a)) return a;
  fs::path b = scores;
  b.replace_extension(".manifest.json");
  if (b != a && fs::exists(b)) return b;
  return std::nullopt;
}

namespace {

const OJ* field(const OJ& obj, std::string_view key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::optional<std::string> opt_string(const OJ& obj, std::string_view key, std::string_view where) {
  const OJ* v = field(obj, key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  if (!v->is_string()) fail("{}: field '{}' must be a string", where, key);
  return v->get<std::string>();
}

bool opt_bool(const OJ& obj, std::string_view key, std::string_view where) {
  const OJ* v = field(obj, key);
  if (v == nullptr || v->is_null()) return false;
  if (!v->is_boolean()) fail("{}: field '{}' must be true or false", where, key);
  return v->get<bool>();
}

LayerScore read_layer(const OJ& rec, std::string_view layer, const orbit::View& view,
                      std::string_view where) {
  const OJ* obj = field(rec, layer);
  if (obj == nullptr || !obj->is_object()) fail("{}: missing object '{}'", where, layer);
  const auto oname = opt_string(*obj, "outcome", where);
  if (!oname) fail("{}: missing field '{}.outcome'", where, layer);
  const auto outcome = outcome_from_name(*oname);
  if (!outcome) {
    fail(
        "{}: {}.outcome '{}' is not one of correct, truncation_error, format_error, parse_error, "
        "unit_error, value_error",
        where, layer, *oname);
  }
  LayerScore s;
  s.outcome = *outcome;
  if (const auto v = opt_string(*obj, "value", where)) {
    auto r = num::Rational::from_string(*v);
    if (!r) fail("{}: {}.value '{}' is not an exact 'p/q' rational", where, layer, *v);
    s.value = std::move(*r);
  }
  // The outcome and the value must agree with the benchmark's exact answer: this catches scores
  // graded against another benchmark (or a damaged file) instead of reporting nonsense.
  if (s.outcome == Outcome::kCorrect || s.outcome == Outcome::kValueError) {
    if (!s.value) fail("{}: {}.outcome is {} but {}.value is null", where, layer, *oname, layer);
    const bool equal = *s.value == view.expected;
    if (s.outcome == Outcome::kCorrect && !equal) {
      fail(
          "{}: {} says correct but the value {} differs from the benchmark's expected {} for {} "
          "(scores for another benchmark?)",
          where, layer, s.value->str(), view.expected.str(), view.prompt_id);
    }
    if (s.outcome == Outcome::kValueError && equal) {
      fail("{}: {} says value_error but the value {} equals the expected answer for {}", where, layer,
           s.value->str(), view.prompt_id);
    }
  }
  return s;
}

void check_matches(const OJ& rec, std::string_view key, std::string_view expected, std::string_view where) {
  if (const auto v = opt_string(rec, key, where); v && *v != expected) {
    fail("{}: {} '{}' does not match the benchmark's '{}'", where, key, *v, expected);
  }
}

template <typename Fn>
void read_jsonl(const fs::path& path, Fn&& fn) {
  if (!fs::exists(path)) fail(ErrorCode::kIo, "{}: file not found", path.string());
  io::for_each_line(path, [&](const io::Line& line) {
    const std::string where = fmt::format("{}:{}", path.string(), line.number);
    if (line.text.find_first_not_of(" \t\r") == std::string_view::npos) {
      if (!line.terminated) return;  // a trailing blank fragment
      fail("{}: empty line (one JSON object per line expected)", where);
    }
    if (!line.terminated) fail("{}: last line is not terminated (file truncated?)", where);
    const OJ j = io::parse_ordered_json(line.text, where);
    if (!j.is_object()) fail("{}: expected a JSON object", where);
    fn(j, where, line.number);
  });
}

}  // namespace

SystemScores load_scores(const fs::path& scores, const orbit::Benchmark& bench,
                         const std::optional<std::string>& name, const std::optional<fs::path>& responses) {
  SystemScores sys;
  sys.scores_path = scores;
  sys.by_view.resize(bench.views.size());
  sys.manifest_path = find_sidecar(scores);
  if (sys.manifest_path) {
    const std::string text = io::read_file(*sys.manifest_path);
    sys.manifest = io::parse_ordered_json(text, sys.manifest_path->string());
    if (!sys.manifest.is_object()) fail("{}: expected a JSON object", sys.manifest_path->string());
    const std::string where = sys.manifest_path->string();
    // `system` is {"name", "simulated", "source"} as `orbit score` writes it; a plain string
    // name and a top-level `simulated` are accepted too.
    if (const OJ* sj = field(sys.manifest, "system"); sj != nullptr && sj->is_object()) {
      if (auto s = opt_string(*sj, "name", where)) sys.name = *s;
      sys.simulated = opt_bool(*sj, "simulated", where);
    } else if (auto s = opt_string(sys.manifest, "system", where)) {
      sys.name = *s;
    }
    sys.simulated = sys.simulated || opt_bool(sys.manifest, "simulated", where);
    // Scores made for another benchmark: the hashes of its files must match.
    if (const OJ* b = field(sys.manifest, "benchmark"); b != nullptr && b->is_object()) {
      if (const OJ* files = field(*b, "files"); files != nullptr && files->is_object()) {
        for (const auto& [file, hex] : bench.file_sha256) {
          if (auto h = opt_string(*files, file, where); h && *h != hex) {
            fail(
                "{}: the scores were made for a different {} (sha256 {}, the benchmark at {} "
                "has {})",
                where, file, *h, bench.dir.string(), hex);
          }
        }
      }
    }
  }
  if (name) sys.name = *name;
  if (sys.name.empty()) sys.name = scores.stem().string();

  read_jsonl(scores, [&](const OJ& rec, const std::string& where, std::size_t line) {
    ++sys.records;
    const auto pid = opt_string(rec, "prompt_id", where);
    if (!pid) fail("{}: missing field 'prompt_id'", where);
    auto it = bench.prompt_index.find(*pid);
    if (it == bench.prompt_index.end()) {
      fail("{}: prompt_id '{}' is not in the benchmark at {}", where, *pid, bench.dir.string());
    }
    const orbit::View& view = bench.views[it->second];
    ScoredPrompt& sp = sys.by_view[it->second];
    if (sp.present) {
      fail("{}: duplicate record for prompt_id '{}' (first at line {})", where, *pid, sp.line);
    }
    check_matches(rec, "base_id", view.base_id, where);
    check_matches(rec, "view", view.view, where);
    check_matches(rec, "template", view.template_id, where);
    if (const OJ* fam = field(rec, "family"); fam != nullptr && !fam->is_null()) {
      if (!fam->is_string()) fail("{}: field 'family' must be a string or null", where);
      if (!view.family || *view.family != fam->get<std::string>()) {
        fail("{}: family '{}' does not match the benchmark's '{}'", where, fam->get<std::string>(),
             view.family.value_or("null"));
      }
    }
    sp.present = true;
    sp.line = line;
    sp.layer[0] = read_layer(rec, "strict", view, where);
    sp.layer[1] = read_layer(rec, "audit", view, where);
    sp.finish_reason = opt_string(rec, "finish_reason", where).value_or("");
    if (const OJ* t = field(rec, "completion_tokens"); t != nullptr && !t->is_null()) {
      if (!t->is_number_unsigned() && !(t->is_number_integer() && t->get<std::int64_t>() >= 0)) {
        fail("{}: field 'completion_tokens' must be a non-negative integer", where);
      }
      sp.completion_tokens = t->get<std::uint64_t>();
    }
    sp.multiple_final = opt_bool(rec.value("strict", OJ::object()), "multiple_final", where);
    const OJ& audit = rec["audit"];
    sp.recovered = opt_bool(audit, "recovered", where);
    if (const OJ* rules = field(audit, "rules"); rules != nullptr && !rules->is_null()) {
      if (!rules->is_array()) fail("{}: field 'audit.rules' must be a list of strings", where);
      for (const auto& r : *rules) {
        if (!r.is_string()) fail("{}: field 'audit.rules' must be a list of strings", where);
        sp.rules.push_back(r.get<std::string>());
      }
    }
    if (const OJ* k = field(audit, "magnitude_k"); k != nullptr && !k->is_null()) {
      if (!k->is_number_integer() || k->get<std::int64_t>() < -1000 || k->get<std::int64_t>() > 1000) {
        fail("{}: field 'audit.magnitude_k' must be a small integer or null", where);
      }
      sp.magnitude_k = static_cast<int>(k->get<std::int64_t>());
    }
    if (sp.recovered &&
        (sp.layer[0].outcome == Outcome::kCorrect || sp.layer[1].outcome != Outcome::kCorrect)) {
      fail("{}: audit.recovered is true but strict is {} and audit is {}", where,
           outcome_name(sp.layer[0].outcome), outcome_name(sp.layer[1].outcome));
    }
    if (auto r = opt_string(rec, "response", where)) sp.response = std::move(*r);
    if (is_orbit_view(view.view)) {
      ++sys.scored_orbit_prompts;
    } else {
      ++sys.ignored;
    }
  });

  for (std::size_t i = 0; i < bench.views.size(); ++i) {
    if (!sys.by_view[i].present && is_orbit_view(bench.views[i].view)) ++sys.missing;
  }

  // Response text for the examples: an explicit responses file, else the sidecar's.
  std::optional<fs::path> rpath = responses;
  if (!rpath && sys.manifest_path && sys.manifest.is_object()) {
    std::optional<std::string> r;
    if (const OJ* rj = field(sys.manifest, "responses"); rj != nullptr && rj->is_object()) {
      r = opt_string(*rj, "path", sys.manifest_path->string());
    } else {
      r = opt_string(sys.manifest, "responses", sys.manifest_path->string());
    }
    std::optional<std::string> sha;
    if (const OJ* rj = field(sys.manifest, "responses"); rj != nullptr && rj->is_object()) {
      sha = opt_string(*rj, "sha256", sys.manifest_path->string());
    }
    if (r) {
      // As recorded (relative to where `score` ran), else relative to the sidecar's folder; used
      // only when its content is the file that was scored (same sha256, when recorded).
      std::vector<fs::path> candidates{fs::path(*r)};
      if (fs::path(*r).is_relative()) {
        candidates.push_back(sys.manifest_path->parent_path() / fs::path(*r).filename());
      }
      for (const auto& p : candidates) {
        std::error_code ec;
        if (!fs::is_regular_file(p, ec)) continue;
        if (sha && io::sha256_file(p) != *sha) continue;
        rpath = p;
        break;
      }
    }
  }
  if (rpath) {
    read_jsonl(*rpath, [&](const OJ& rec, const std::string& where, std::size_t) {
      const auto pid = opt_string(rec, "prompt_id", where);
      if (!pid) fail("{}: missing field 'prompt_id'", where);
      auto it = bench.prompt_index.find(*pid);
      if (it == bench.prompt_index.end()) return;  // not ours to judge here; `score` checks it
      if (auto r = opt_string(rec, "response", where)) sys.by_view[it->second].response = *r;
    });
  }
  for (const auto& sp : sys.by_view) {
    if (sp.response) ++sys.responses_attached;
  }
  return sys;
}

}  // namespace numcheck::report
