#include "report/scores.hpp"

#include <algorithm>
#include <map>
#include <unordered_set>

#include "core/error.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"

namespace numcheck::report {

namespace fs = std::filesystem;
using OJ = io::OrderedJson;

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

using OR = io::OrderedRecord;

// A JSON object (or nullptr) at key of a plain value, for the sidecar's optional parts.
std::optional<OR> object_at(const OR& r, std::string_view key) {
  const OJ* v = r.find(key);
  if (v == nullptr || !v->is_object()) return std::nullopt;
  return r.object(key);
}

// Score records are read with io::read_jsonl_fast (simdjson; the same rule and errors as read_jsonl).
using LR = io::LineRecord;

LayerScore read_layer(const LR& rec, std::string_view layer, const orbit::View& view) {
  const auto where = rec.where();
  const io::FlatValue* lj = rec.find(layer);
  if (lj == nullptr || !lj->is_object()) fail("{}: missing object '{}'", where, layer);
  const LR obj = rec.object(layer);
  const std::string oname = obj.string("outcome");
  const auto outcome = outcome_from_name(oname);
  if (!outcome) {
    fail(
        "{}: {}.outcome '{}' is not one of correct, truncation_error, format_error, parse_error, "
        "unit_error, value_error",
        where, layer, oname);
  }
  LayerScore s;
  s.outcome = *outcome;
  if (const auto v = obj.opt_string("value")) {
    auto r = num::Rational::from_string(*v);
    if (!r) fail("{}: {}.value '{}' is not an exact 'p/q' rational", where, layer, *v);
    s.value = std::move(*r);
  }
  // The outcome and the value must agree with the benchmark's exact answer: this catches scores
  // graded against another benchmark (or a damaged file) instead of reporting nonsense.
  if (s.outcome == Outcome::kCorrect || s.outcome == Outcome::kValueError) {
    if (!s.value) fail("{}: {}.outcome is {} but {}.value is null", where, layer, oname, layer);
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

void check_matches(const LR& rec, std::string_view key, std::string_view expected) {
  if (const auto v = rec.opt_string_view(key); v && *v != expected) {
    fail("{}: {} '{}' does not match the benchmark's '{}'", rec.where(), key, *v, expected);
  }
}

// The sidecar manifest: the system's name and whether it is simulated; scores made for another
// benchmark (other file hashes) are refused.
void read_sidecar(SystemScores& sys, const orbit::Benchmark& bench) {
  const std::string where = sys.manifest_path->string();
  sys.manifest = io::read_ordered_json_file(*sys.manifest_path);
  const OR m = OR::of(sys.manifest, where);
  // `system` is {"name", "simulated", "source"} as `orbit score` writes it; a plain string
  // name and a top-level `simulated` are accepted too.
  if (const auto sj = object_at(m, "system")) {
    if (auto s = sj->opt_string("name")) sys.name = *s;
    sys.simulated = sj->opt_boolean("simulated").value_or(false);
  } else if (auto s = m.opt_string("system")) {
    sys.name = *s;
  }
  sys.simulated = sys.simulated || m.opt_boolean("simulated").value_or(false);
  // Scores made for another benchmark: the hashes of its files must match.
  if (const auto b = object_at(m, "benchmark")) {
    if (const auto files = object_at(*b, "files")) {
      for (const auto& [file, hex] : bench.file_sha256) {
        if (auto h = files->opt_string(file); h && *h != hex) {
          fail(
              "{}: the scores were made for a different {} (sha256 {}, the benchmark at {} "
              "has {})",
              where, file, *h, bench.dir.string(), hex);
        }
      }
    }
  }
}

// The responses file a sidecar names: where to look for it (as recorded, relative to where `score`
// ran, then beside the sidecar) and the sha256 recorded for it; it is used only when its content
// is the file that was scored (that hash, when recorded). nullopt: the sidecar names none.
struct NamedResponses {
  std::vector<fs::path> candidates;
  std::optional<std::string> sha256;
};
std::optional<NamedResponses> named_responses(const OJ& manifest, const fs::path& manifest_path) {
  if (!manifest.is_object()) return std::nullopt;
  const OR m = OR::of(manifest, manifest_path.string());
  std::optional<std::string> r;
  NamedResponses out;
  if (const auto rj = object_at(m, "responses")) {
    r = rj->opt_string("path");
    out.sha256 = rj->opt_string("sha256");
  } else {
    r = m.opt_string("responses");
  }
  if (!r) return std::nullopt;
  out.candidates.emplace_back(*r);
  if (fs::path(*r).is_relative())
    out.candidates.push_back(manifest_path.parent_path() / fs::path(*r).filename());
  return out;
}

// One record of a scores file into its prompt's slot.
void read_score_record(SystemScores& sys, const orbit::Benchmark& bench, const LR& rec, std::size_t line) {
  const auto where = rec.where();
  ++sys.records;
  const std::string_view pid = rec.string_view("prompt_id");
  const auto at = bench.view_position(pid);
  if (!at) fail("{}: prompt_id '{}' is not in the benchmark at {}", where, pid, bench.dir.string());
  const orbit::View& view = bench.views[*at];
  ScoredPrompt& sp = sys.by_view[*at];
  if (sp.present) fail("{}: duplicate record for prompt_id '{}' (first at line {})", where, pid, sp.line);
  check_matches(rec, "base_id", view.base_id);
  check_matches(rec, "view", view.view);
  check_matches(rec, "template", view.template_id);
  if (const auto fam = rec.opt_string_view("family"); fam && (!view.family || *view.family != *fam)) {
    fail("{}: family '{}' does not match the benchmark's '{}'", where, *fam, view.family.value_or("null"));
  }
  sp.present = true;
  sp.line = line;
  sp.layer[0] = read_layer(rec, "strict", view);
  sp.layer[1] = read_layer(rec, "audit", view);
  sp.finish_reason = rec.opt_string("finish_reason").value_or("");
  if (auto t = rec.opt_integer("completion_tokens", 0)) sp.completion_tokens = static_cast<std::uint64_t>(*t);
  const LR strict = rec.object("strict");
  const LR audit = rec.object("audit");
  sp.multiple_final = strict.opt_boolean("multiple_final").value_or(false);
  sp.recovered = audit.opt_boolean("recovered").value_or(false);
  if (auto rules = audit.opt_strings("rules")) sp.rules = std::move(*rules);
  if (auto k = audit.opt_integer("magnitude_k", -1000, 1000)) sp.magnitude_k = static_cast<int>(*k);
  if (sp.recovered &&
      (sp.layer[0].outcome == Outcome::kCorrect || sp.layer[1].outcome != Outcome::kCorrect)) {
    fail("{}: audit.recovered is true but strict is {} and audit is {}", where,
         outcome_name(sp.layer[0].outcome), outcome_name(sp.layer[1].outcome));
  }
  if (auto r = rec.opt_string("response")) sp.response = std::move(*r);
  if (is_orbit_view(view.view)) {
    ++sys.scored_orbit_prompts;
  } else {
    ++sys.ignored;
  }
}

}  // namespace

SystemScores load_scores(const fs::path& scores, const orbit::Benchmark& bench,
                         const std::optional<std::string>& name, const std::optional<fs::path>& responses,
                         std::size_t examples_per_view, const FileHashes* hashes) {
  SystemScores sys;
  sys.scores_path = scores;
  sys.by_view.resize(bench.views.size());
  sys.manifest_path = find_sidecar(scores);
  if (sys.manifest_path) read_sidecar(sys, bench);
  if (name) sys.name = *name;
  if (sys.name.empty()) sys.name = scores.stem().string();

  (void)io::read_jsonl_fast(
      scores, [&](const LR& rec, std::size_t line) { read_score_record(sys, bench, rec, line); });

  for (std::size_t i = 0; i < bench.views.size(); ++i) {
    if (!sys.by_view[i].present && is_orbit_view(bench.views[i].view)) ++sys.missing;
  }

  // Response text for the examples: an explicit responses file, else the sidecar's.
  std::optional<fs::path> rpath = responses;
  if (!rpath && sys.manifest_path) {
    if (const auto named = named_responses(sys.manifest, *sys.manifest_path)) {
      for (const auto& p : named->candidates) {
        std::error_code ec;
        if (!fs::is_regular_file(p, ec)) continue;
        if (named->sha256) {
          std::string hex;
          if (hashes != nullptr) {
            if (const auto known = hashes->find(p); known != hashes->end()) hex = known->second;
          }
          if (hex.empty()) hex = io::sha256_file(p);
          if (hex != *named->sha256) continue;
        }
        rpath = p;
        break;
      }
    }
  }
  // Which prompts had text before the responses file (the score records' own `response`).
  std::vector<bool> has_text(bench.views.size(), false);
  for (std::size_t i = 0; i < bench.views.size(); ++i) has_text[i] = sys.by_view[i].response.has_value();
  if (rpath) {
    sys.responses_path = *rpath;
    // The file's text replaces a record's. Only texts the report can show are kept: per view, the
    // first `examples_per_view` (benchmark order) audit failures the file has text for; a later
    // one is never shown, since that many failures with text come before it.
    std::map<std::string, std::vector<std::pair<std::size_t, std::string>>, std::less<>> kept;
    (void)io::read_jsonl_fast(*rpath, [&](const LR& rec, std::size_t) {
      const auto at = bench.view_position(rec.string_view("prompt_id"));
      if (!at) return;  // not ours to judge here; `score` checks it
      const std::size_t i = *at;
      if (const io::FlatValue* r = rec.find("response"); r != nullptr && !r->is_null()) {
        if (!r->is_string()) rec.fail_field("response", "must be a string or null");
        has_text[i] = true;
        const ScoredPrompt& sp = sys.by_view[i];
        if (examples_per_view == kAllResponses) {
          sys.by_view[i].response = std::string(r->text);
        } else if (sp.present && sp.layer[1].outcome != Outcome::kCorrect && examples_per_view > 0) {
          auto& k = kept[bench.views[i].view];
          const auto pos = std::find_if(k.begin(), k.end(), [&](const auto& e) { return e.first >= i; });
          if (pos != k.end() && pos->first == i) {
            pos->second = std::string(r->text);  // a second record: the last one wins, as before
          } else if (k.size() < examples_per_view || pos != k.end()) {
            k.insert(pos, {i, std::string(r->text)});
            if (k.size() > examples_per_view) k.pop_back();
          }
        }
      }
      if (auto fp = rec.opt_string("system_fingerprint");
          fp && std::find(sys.fingerprints.begin(), sys.fingerprints.end(), *fp) == sys.fingerprints.end()) {
        sys.fingerprints.push_back(*fp);
      }
    });
    for (auto& [view, k] : kept) {
      for (auto& [i, text] : k) sys.by_view[i].response = std::move(text);
    }
  }
  // The run's manifest, for the systems table (model as served, server build, sampling, dates):
  // the run.json beside the responses that were scored (never a guess from another folder).
  if (rpath) {
    const fs::path rj = (rpath->parent_path().empty() ? fs::path(".") : rpath->parent_path()) / "run.json";
    std::error_code ec;
    if (fs::is_regular_file(rj, ec)) {
      sys.run = io::read_ordered_json_file(rj);
      if (!sys.run.is_object()) fail("{}: run.json must be a JSON object", rj.string());
      sys.run_path = rj;
    }
  }
  for (const bool t : has_text) sys.responses_attached += t ? 1 : 0;
  return sys;
}

FileHashes hash_named_responses(const std::vector<fs::path>& scores) {
  FileHashes out;
  for (const auto& file : scores) {
    try {
      const auto sidecar = find_sidecar(file);
      if (!sidecar) continue;
      const auto named = named_responses(io::read_ordered_json_file(*sidecar), *sidecar);
      if (!named || !named->sha256) continue;
      for (const auto& p : named->candidates) {
        std::error_code ec;
        if (!fs::is_regular_file(p, ec)) continue;
        auto [at, fresh] = out.try_emplace(p);
        if (fresh) at->second = io::sha256_file(p);
        if (at->second == *named->sha256) break;  // load_scores takes the first that matches
      }
    } catch (const std::exception&) {
      // Left to load_scores, which reads the same files and says what is wrong.
    }
  }
  return out;
}

}  // namespace numcheck::report
