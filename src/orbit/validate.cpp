#include "orbit/validate.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "grade/grade.hpp"
#include "io/json.hpp"
#include "orbit/generate.hpp"
#include "orbit/render.hpp"
#include "orbit/solver.hpp"

namespace numcheck::orbit {

namespace {

using Counts = std::map<std::string, std::uint64_t>;

// Flattens {"templates": {"CV": {"bases": 200}}} into {"templates.CV.bases": 200}, dropping zeros.
void flatten(const io::Json& j, const std::string& prefix, Counts& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items())
      flatten(v, prefix.empty() ? k : fmt::format("{}.{}", prefix, k), out);
  } else if (j.is_number_unsigned() || j.is_number_integer()) {
    const auto v = j.get<std::int64_t>();
    if (v != 0) out[prefix] = static_cast<std::uint64_t>(v);
  } else {
    out[prefix + " (not a count)"] = 1;
  }
}

void compare_counts(const Counts& want, const Counts& got, const std::string& what_want,
                    const std::string& what_got, ValidationReport& r) {
  std::set<std::string> keys;
  for (const auto& [k, _] : want) keys.insert(k);
  for (const auto& [k, _] : got) keys.insert(k);
  for (const auto& k : keys) {
    const auto a = want.count(k) ? want.at(k) : 0;
    const auto b = got.count(k) ? got.at(k) : 0;
    if (a != b)
      r.issues.push_back({"manifest.json", "counts",
                          fmt::format("{}: {} says {}, {} has {}", k, what_want, a, what_got, b)});
  }
}

bool is_family(std::string_view v) {
  return std::any_of(std::begin(kFamilies), std::end(kFamilies), [&](const char* f) { return v == f; });
}

// Manifest: format, hashes, spec hash. Returns whether it says the paraphrase views were made.
bool check_manifest(const Benchmark& b, const io::Json& m, const OrbitSpec& spec, ValidationReport& r) {
  if (!m.is_object() || !m.contains("format") || m["format"] != kBenchmarkFormat)
    r.issues.push_back({"manifest.json", "manifest", fmt::format("format is not \"{}\"", kBenchmarkFormat)});
  for (const char* name : {"bases.jsonl", "views.jsonl"}) {
    const auto files = m.find("files");
    if (files == m.end() || !files->is_object() || !files->contains(name) || !(*files)[name].is_object() ||
        !(*files)[name].contains("sha256") || !(*files)[name]["sha256"].is_string()) {
      r.issues.push_back({"manifest.json", "manifest", fmt::format("files.{}.sha256 is missing", name)});
      continue;
    }
    const std::string want = (*files)[name]["sha256"].get<std::string>();
    const auto it = b.file_sha256.find(name);
    const std::string got = it == b.file_sha256.end() ? "" : it->second;
    if (want != got)
      r.issues.push_back({name, "manifest", fmt::format("SHA-256 is {}, the manifest says {}", got, want)});
    const auto& rec = (*files)[name];
    const std::size_t records = std::string(name) == "bases.jsonl" ? b.bases.size() : b.views.size();
    if (rec.contains("records") && rec["records"].is_number() && rec["records"].get<std::size_t>() != records)
      r.issues.push_back(
          {name, "manifest",
           fmt::format("{} records, the manifest says {}", records, rec["records"].get<std::size_t>())});
  }
  if (m.contains("spec_sha256") && m["spec_sha256"] != spec.sha256)
    r.issues.push_back({"manifest.json", "manifest", "spec_sha256 does not match the embedded spec"});
  if (m.contains("prompt_version") && m["prompt_version"] != spec.prompt_version)
    r.issues.push_back({"manifest.json", "manifest", "prompt_version does not match the embedded spec"});
  return m.contains("paraphrases") && m["paraphrases"] == true;
}

// Counts: from the records, from the manifest, and from the spec.
void check_counts(const Benchmark& b, const io::Json& m, const OrbitSpec& spec, bool paraphrases,
                  ValidationReport& r) {
  Counts actual, demanded;
  actual["bases"] = b.bases.size();
  actual["prompts"] = b.views.size();
  for (const auto& base : b.bases) ++actual["templates." + base.template_id + ".bases"];
  for (const auto& v : b.views) {
    ++actual["templates." + v.template_id + ".prompts"];
    ++actual["templates." + v.template_id + ".views." + v.view];
    ++actual["views." + v.view];
    if (v.family) ++actual["families." + *v.family];
  }
  {
    Counts manifest_counts;
    if (auto c = m.find("counts"); c != m.end()) flatten(*c, "", manifest_counts);
    compare_counts(manifest_counts, actual, "the manifest", "the benchmark", r);
  }
  std::size_t db = 0, dp = 0;
  for (const auto& t : spec.templates) {
    const std::string tp = "templates." + t.id + ".";
    std::size_t prompts = t.bases;
    demanded[tp + "bases"] = t.bases;
    demanded[tp + "views.canonical"] = t.bases;
    demanded["views.canonical"] += t.bases;
    for (const auto& v : t.views) {
      if (v.quota == 0) continue;
      demanded[tp + "views." + v.family] = v.quota;
      demanded["views." + v.family] += v.quota;
      demanded["families." + v.family] += v.quota;
      prompts += v.quota;
    }
    if (paraphrases && t.consensus_bases > 0) {
      for (const char* p : {"paraphrase1", "paraphrase2"}) {
        demanded[tp + "views." + p] = t.consensus_bases;
        demanded[std::string("views.") + p] += t.consensus_bases;
      }
      prompts += 2 * t.consensus_bases;
    }
    demanded[tp + "prompts"] = prompts;
    db += t.bases;
    dp += prompts;
  }
  demanded["bases"] = db;
  demanded["prompts"] = dp;
  compare_counts(demanded, actual, "the spec", "the benchmark", r);
}

// Bases: template, id, params, answer, views.
void check_bases(const Benchmark& b, const OrbitSpec& spec, ValidationReport& r) {
  std::map<std::string, std::vector<std::string>> views_of_base;
  for (const auto& v : b.views) views_of_base[v.base_id].push_back(v.view);
  std::map<std::string, std::size_t> next_index;
  for (const auto& base : b.bases) {
    const TemplateSpec* t = spec.find(base.template_id);
    if (!t) {
      r.issues.push_back(
          {base.base_id, "base", fmt::format("template '{}' is not in the spec", base.template_id)});
      continue;
    }
    const std::size_t idx = next_index[t->id]++;
    const std::size_t width = std::max<std::size_t>(4, std::to_string(t->bases).size());
    if (base.base_id != fmt::format("{}-{:0{}}", t->id, idx + 1, width))
      r.issues.push_back(
          {base.base_id, "base", "base ids must be the template id, a dash and the index from 0001"});
    if (base.dimension != t->dimension || base.canonical_unit != t->canonical_unit)
      r.issues.push_back({base.base_id, "base", "dimension or canonical unit differs from the spec"});
    bool params_ok = base.params.size() == t->params.size();
    std::vector<num::Rational> vals;
    for (std::size_t i = 0; params_ok && i < t->params.size(); ++i) {
      params_ok = base.params[i].first == t->params[i].name;
      vals.push_back(base.params[i].second);
    }
    if (!params_ok) {
      r.issues.push_back({base.base_id, "base", "params do not match the template's parameters"});
      continue;
    }
    const auto answer = t->program.eval(vals);
    if (!answer || *answer != base.answer)
      r.issues.push_back({base.base_id, "base",
                          fmt::format("answer {} differs from the program's {}", base.answer.str(),
                                      answer ? answer->str() : std::string("(division by zero)"))});
    if (views_of_base[base.base_id] != base.views)
      r.issues.push_back({base.base_id, "base", "the 'views' list differs from the views in views.jsonl"});
    if (idx < t->consensus_bases)
      for (const auto& f : t->consensus_views)
        if (std::find(base.views.begin(), base.views.end(), f) == base.views.end())
          r.issues.push_back({base.base_id, "base", fmt::format("consensus base without its {} view", f)});
  }
}

// One view: consistency, round trip through the strict parser, rendering, and the reference
// solver.
void check_view(const Benchmark& b, const OrbitSpec& spec, const View& v, ValidationReport& r) {
  const Base* base = b.find_base(v.base_id);
  const TemplateSpec* t = spec.find(v.template_id);
  if (!base || !t || base->template_id != v.template_id) {
    r.issues.push_back({v.prompt_id, "view", "template differs from its base's, or is not in the spec"});
    return;
  }
  if (v.expected != base->answer)
    r.issues.push_back(
        {v.prompt_id, "view",
         fmt::format("expected {} differs from the base answer {}", v.expected.str(), base->answer.str())});
  if (v.answer_unit != base->canonical_unit)
    r.issues.push_back({v.prompt_id, "view", "answer_unit differs from the base's canonical unit"});
  const bool fam = is_family(v.view);
  if ((fam && v.family != v.view) || (!fam && v.family))
    r.issues.push_back(
        {v.prompt_id, "view", "family must be the view name for a family view and null otherwise"});
  if (!fam && v.view != "canonical" && v.view != "paraphrase1" && v.view != "paraphrase2")
    r.issues.push_back({v.prompt_id, "view", fmt::format("unknown view '{}'", v.view)});

  const std::string response = v.answer_unit.empty()
                                   ? "FINAL: " + v.expected.str()
                                   : fmt::format("FINAL: {} {}", v.expected.str(), v.answer_unit);
  const grade::Grade g = grade::grade_response(response, grade::Question{v.expected, v.answer_unit});
  if (g.strict.outcome == grade::Outcome::kCorrect) {
    ++r.round_trips;
  } else {
    r.issues.push_back({v.prompt_id, "roundtrip",
                        fmt::format("'{}' grades as {}", response, grade::outcome_name(g.strict.outcome))});
  }

  std::vector<num::Rational> vals;
  for (const auto& [_, val] : base->params) vals.push_back(val);
  if (vals.size() == t->params.size()) {
    try {
      if (render_prompt(spec, *t, v.view, vals, num::UnitRegistry::builtin()) != v.prompt)
        r.issues.push_back({v.prompt_id, "render", "the prompt differs from the rendering of its base"});
    } catch (const Error& e) {
      r.issues.push_back({v.prompt_id, "render", e.what()});
    }
  }

  const SolveResult s = solve_prompt(*t, v.view, v.prompt, spec.instruction);
  if (!s) {
    r.issues.push_back({v.prompt_id, "solver", "the text does not determine the label: " + s.error});
  } else if (*s.value != v.expected) {
    r.issues.push_back({v.prompt_id, "solver",
                        fmt::format("the text gives {}, expected {}", s.value->str(), v.expected.str())});
  } else {
    ++r.solved;
  }
}

}  // namespace

ValidationReport validate_benchmark(const Benchmark& b,
                                    const std::function<void(std::size_t, std::size_t)>& progress) {
  ValidationReport r;
  r.bases = b.bases.size();
  r.prompts = b.views.size();
  const std::string mwhere = (b.dir / "manifest.json").string();
  const io::Json m = io::parse_json(b.manifest_json, mwhere);
  const OrbitSpec& spec = benchmark_spec(b);
  const bool paraphrases = check_manifest(b, m, spec, r);
  check_counts(b, m, spec, paraphrases, r);
  check_bases(b, spec, r);
  std::size_t done = 0;
  for (const auto& v : b.views) {
    if (progress && (done % 256 == 0)) progress(done, b.views.size());
    ++done;
    check_view(b, spec, v, r);
  }
  if (progress) progress(b.views.size(), b.views.size());
  return r;
}

}  // namespace numcheck::orbit
