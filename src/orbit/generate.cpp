#include "orbit/generate.hpp"

#include <algorithm>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "core/error.hpp"
#include "core/ordered_parallel.hpp"
#include "core/prng.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "io/json_writer.hpp"
#include "io/sha256.hpp"
#include "orbit/benchmark.hpp"
#include "orbit/render.hpp"

namespace numcheck::orbit {

namespace {

// Draws one value and appends a key that identifies the value (not the draw) to `key`: the grid
// or set index, or the normalized (mantissa, exponent) pair, so duplicate tuples are found without
// printing rationals.
num::Rational draw(Rng& rng, const Domain& d, std::string& key) {
  auto put = [&key](std::uint64_t x) {
    char buf[sizeof x];
    std::memcpy(buf, &x, sizeof x);
    key.append(buf, sizeof x);
  };
  switch (d.kind) {
    case Domain::Kind::kGrid: {
      const auto k = rng.below(d.size);
      put(k);
      return d.min + d.step * num::Rational(static_cast<long long>(k));
    }
    case Domain::Kind::kSet: {
      const auto k = rng.below(d.size);
      put(k);
      return d.values[static_cast<std::size_t>(k)];
    }
    case Domain::Kind::kScaled: {
      auto m = rng.between(d.mantissa_min, d.mantissa_max);
      auto e = rng.between(d.exponent_min, d.exponent_max);
      num::Rational v = num::Rational(static_cast<long long>(m)) * num::Rational::pow10(static_cast<int>(e));
      while (m % 10 == 0) m /= 10, ++e;
      put(static_cast<std::uint64_t>(m));
      put(static_cast<std::uint64_t>(e));
      return v;
    }
  }
  return {};
}

bool domain_allows(const Domain& d, const num::Rational& v) { return d.integers || !v.is_integer(); }

struct Drawn {
  std::vector<num::Rational> values;
  num::Rational answer;
};

// Draws `t.bases` distinct argument tuples from the template's stream.
std::vector<Drawn> draw_bases(const TemplateSpec& t, Rng& rng) {
  std::vector<Drawn> out;
  out.reserve(t.bases);
  std::unordered_set<std::string> seen;
  seen.reserve(t.bases * 2);
  const std::size_t limit = t.bases * 200 + 10000;
  std::size_t attempts = 0;
  std::vector<num::Rational> vals(t.params.size());
  std::vector<num::Rational> with_answer(t.params.size() + 1);
  std::string key;
  while (out.size() < t.bases) {
    if (++attempts > limit)
      fail(
          "template {}: found only {} of {} distinct argument tuples that satisfy the constraints after {} "
          "draws; "
          "widen the parameter domains or lower 'bases'",
          t.id, out.size(), t.bases, limit);
    bool ok = true;
    key.clear();
    for (std::size_t i = 0; i < t.params.size(); ++i) {
      vals[i] = draw(rng, t.params[i].domain, key);
      ok = ok && domain_allows(t.params[i].domain, vals[i]);
    }
    if (!ok) continue;
    const auto answer = t.program.eval(vals);
    if (!answer) continue;  // division by zero
    if (t.answer_finite_decimal && !answer->has_finite_decimal()) continue;
    if (!t.constraints.empty()) {
      std::copy(vals.begin(), vals.end(), with_answer.begin());
      with_answer.back() = *answer;
      if (!std::all_of(t.constraints.begin(), t.constraints.end(),
                       [&](const Constraint& c) { return c.holds(with_answer); }))
        continue;
    }
    if (!seen.insert(key).second) continue;  // duplicate argument tuple
    out.push_back({vals, *answer});
  }
  return out;
}

// eligible[f][i]: base i has the view of t.views[f]. The consensus subset (the first
// consensus_bases bases) always has its consensus views; the rest of each quota is the head of a
// shuffle of the remaining indices by the template's stream, taken in family order.
std::vector<std::vector<char>> assign_quotas(const TemplateSpec& t, Rng& rng) {
  std::vector<std::vector<char>> elig;
  for (const auto& v : t.views) {
    std::vector<char> e(t.bases, 0);
    const bool consensus =
        std::find(t.consensus_views.begin(), t.consensus_views.end(), v.family) != t.consensus_views.end();
    const std::size_t forced = consensus ? std::min(t.consensus_bases, v.quota) : 0;
    for (std::size_t i = 0; i < forced; ++i) e[i] = 1;
    std::vector<std::size_t> rest;
    rest.reserve(t.bases - forced);
    for (std::size_t i = forced; i < t.bases; ++i) rest.push_back(i);
    if (v.quota - forced < rest.size()) rng.shuffle(rest);  // a full quota needs no draw
    for (std::size_t k = 0; k < v.quota - forced; ++k) e[rest[k]] = 1;
    elig.push_back(std::move(e));
  }
  return elig;
}

std::string base_id(const TemplateSpec& t, std::size_t index) {
  const std::size_t width = std::max<std::size_t>(4, std::to_string(t.bases).size());
  return fmt::format("{}-{:0{}}", t.id, index + 1, width);
}

}  // namespace

namespace {

// A template's draws: its bases and the views each base has (one pass of its private stream),
// made once by whichever thread first needs them.
struct Plan {
  std::once_flag once;
  std::exception_ptr error;
  std::vector<Drawn> drawn;
  std::vector<std::vector<char>> elig;
};

// A run of consecutive bases of one template, rendered by one task.
struct Task {
  std::size_t tmpl = 0;
  std::size_t first = 0, last = 0;  // bases [first, last)
};

// What a task gives: its lines of bases.jsonl and views.jsonl, and its prompts per view.
struct Piece {
  std::string bases, views;
  std::vector<std::size_t> counts;  // indexed like all_views
};

// Bases per task: small enough to spread a template over the threads and keep the window's
// memory small, large enough that scheduling costs nothing next to rendering.
constexpr std::size_t kTaskBases = 128;

}  // namespace

GeneratedBenchmark generate_stream(const OrbitSpec& spec, const GenerateOptions& opts,
                                   const GenerateSink& sink, const num::UnitRegistry& units) {
  GeneratedBenchmark g;
  io::Sha256 bases_hash, views_hash;
  std::size_t bases_bytes = 0, views_bytes = 0;
  // Each task's lines go to the sink as they are (no copy into a larger buffer).
  auto emit = [&](const std::string& bases, const std::string& views) {
    bases_hash.update(bases);
    bases_bytes += bases.size();
    if (sink.bases && !bases.empty()) sink.bases(bases);
    views_hash.update(views);
    views_bytes += views.size();
    if (sink.views && !views.empty()) sink.views(views);
  };
  // View names in output order; counts are indexed like this list.
  std::vector<std::string> all_views = {"canonical"};
  for (const char* f : kFamilies) all_views.emplace_back(f);
  all_views.emplace_back("paraphrase1");
  all_views.emplace_back("paraphrase2");
  const std::size_t n_views = all_views.size();
  auto is_family = [&](std::size_t v) { return v >= 1 && v <= std::size(kFamilies); };
  std::vector<std::size_t> per_view(n_views, 0);
  io::OrderedJson per_template = io::OrderedJson::object();
  io::OrderedJson consensus = io::OrderedJson::object();

  // Per template: t.views[f] -> index into all_views; its plan; its tasks.
  const std::size_t n_templates = spec.templates.size();
  std::vector<std::vector<std::size_t>> family_index(n_templates);
  std::vector<std::unique_ptr<Plan>> plans(n_templates);
  std::vector<Task> tasks;
  for (std::size_t ti = 0; ti < n_templates; ++ti) {
    const TemplateSpec& t = spec.templates[ti];
    for (const auto& v : t.views)
      family_index[ti].push_back(static_cast<std::size_t>(
          std::find(all_views.begin(), all_views.end(), v.family) - all_views.begin()));
    plans[ti] = std::make_unique<Plan>();
    if (t.bases == 0) tasks.push_back({ti, 0, 0});  // the template still gets its manifest entry
    for (std::size_t first = 0; first < t.bases; first += kTaskBases)
      tasks.push_back({ti, first, std::min(t.bases, first + kTaskBases)});
  }
  auto plan_of = [&](std::size_t ti) -> const Plan& {
    Plan& p = *plans[ti];
    std::call_once(p.once, [&] {
      try {
        const TemplateSpec& t = spec.templates[ti];
        Rng rng(opts.seed, t.id);
        p.drawn = draw_bases(t, rng);
        p.elig = assign_quotas(t, rng);
      } catch (...) {
        p.error = std::current_exception();
      }
    });
    if (p.error) std::rethrow_exception(p.error);
    return p;
  };

  // Renders the bases of one task: the same lines, in the same order, as one pass over the
  // template would write.
  auto produce = [&](std::size_t k, Piece& out) {
    const Task& task = tasks[k];
    const TemplateSpec& t = spec.templates[task.tmpl];
    const Plan& plan = plan_of(task.tmpl);
    out.bases.clear();
    out.views.clear();
    out.counts.assign(n_views, 0);
    const bool para = opts.paraphrases && t.consensus_bases > 0;
    std::vector<std::size_t> base_views;  // indexes into all_views
    std::string id, answer, prompt_id, prompt;
    std::vector<std::string> canonical;
    for (std::size_t i = task.first; i < task.last; ++i) {
      const Drawn& d = plan.drawn[i];
      id = base_id(t, i);
      answer = d.answer.str();
      base_views.clear();
      base_views.push_back(0);
      for (std::size_t f = 0; f < t.views.size(); ++f)
        if (plan.elig[f][i]) base_views.push_back(family_index[task.tmpl][f]);
      const bool in_consensus = i < t.consensus_bases;
      if (para && in_consensus) {
        base_views.push_back(n_views - 2);
        base_views.push_back(n_views - 1);
      }

      {
        io::JsonWriter w(out.bases);
        w.begin_object();
        w.key("base_id").value(id);
        w.key("template").value(t.id);
        w.key("dimension").value(t.dimension);
        w.key("canonical_unit").value(t.canonical_unit);
        w.key("params").begin_object();
        for (std::size_t p = 0; p < t.params.size(); ++p) w.key(t.params[p].name).value(d.values[p].str());
        w.end_object();
        w.key("answer").value(answer);
        w.key("views").begin_array();
        for (const std::size_t v : base_views) w.value(all_views[v]);
        w.end_array();
        w.key("consensus_subset").value(in_consensus);
        w.end_object();
        out.bases += '\n';
      }

      canonical.clear();
      for (std::size_t p = 0; p < t.params.size(); ++p)
        canonical.push_back(render_quantity(spec, t, p, d.values[p], "canonical", units));
      for (const std::size_t vi : base_views) {
        const std::string& vn = all_views[vi];
        prompt_id.assign(id).append(":").append(vn);
        prompt.clear();
        render_prompt_into(prompt, spec, t, vn, d.values, &canonical, units);
        io::JsonWriter w(out.views);
        w.begin_object();
        w.key("prompt_id").value(prompt_id);
        w.key("base_id").value(id);
        w.key("template").value(t.id);
        w.key("view").value(vn);
        w.key("family");
        if (is_family(vi)) {
          w.value(vn);
        } else {
          w.null();
        }
        w.key("prompt").value(prompt);
        w.key("expected").value(answer);
        w.key("answer_unit").value(t.canonical_unit);
        w.end_object();
        out.views += '\n';
        ++out.counts[vi];
      }
    }
  };

  // Takes the pieces in order: the files' bytes and hashes, and each template's counts when its
  // last piece is in (its plan is then freed).
  std::vector<std::size_t> tcounts(n_views, 0);
  auto consume = [&](std::size_t k, Piece& piece) {
    const Task& task = tasks[k];
    const TemplateSpec& t = spec.templates[task.tmpl];
    emit(piece.bases, piece.views);
    for (std::size_t v = 0; v < n_views; ++v) tcounts[v] += piece.counts[v];
    if (task.last < t.bases) return;
    const auto& fi = family_index[task.tmpl];
    std::size_t tprompts = 0;
    for (std::size_t v = 0; v < n_views; ++v) {
      per_view[v] += tcounts[v];
      tprompts += tcounts[v];
    }
    const bool para = opts.paraphrases && t.consensus_bases > 0;
    if (t.consensus_bases > 0) consensus[t.id] = {{"bases", t.consensus_bases}, {"views", t.consensus_views}};
    io::OrderedJson tviews = io::OrderedJson::object();
    tviews["canonical"] = tcounts[0];
    for (std::size_t f = 0; f < t.views.size(); ++f) tviews[t.views[f].family] = tcounts[fi[f]];
    if (para) {
      tviews["paraphrase1"] = tcounts[n_views - 2];
      tviews["paraphrase2"] = tcounts[n_views - 1];
    }
    per_template[t.id] = {{"bases", t.bases}, {"prompts", tprompts}, {"views", std::move(tviews)}};
    g.bases += t.bases;
    g.prompts += tprompts;
    std::fill(tcounts.begin(), tcounts.end(), std::size_t{0});
    plans[task.tmpl].reset();
  };

  const std::size_t threads =
      opts.threads == 0 ? std::max(1U, std::thread::hardware_concurrency()) : opts.threads;
  core::ordered_parallel<Piece>(tasks.size(), threads, 4 * threads, produce, consume);

  io::OrderedJson families = io::OrderedJson::object();
  io::OrderedJson views = io::OrderedJson::object();
  for (std::size_t v = 0; v < n_views; ++v) {
    if (is_family(v)) families[all_views[v]] = per_view[v];
    if (v < n_views - 2 || opts.paraphrases) views[all_views[v]] = per_view[v];
  }
  io::OrderedJson m;
  m["format"] = kBenchmarkFormat;
  m["generator_version"] = kGeneratorVersion;
  m["prompt_version"] = spec.prompt_version;
  m["seed"] = opts.seed;
  m["spec_name"] = spec.name;
  m["spec_sha256"] = spec.sha256;
  m["paraphrases"] = opts.paraphrases;
  m["counts"] = {{"bases", g.bases},
                 {"prompts", g.prompts},
                 {"families", std::move(families)},
                 {"views", std::move(views)},
                 {"templates", std::move(per_template)}};
  m["consensus_subset"] = consensus;
  m["files"] = {
      {"bases.jsonl", {{"sha256", bases_hash.hex_digest()}, {"bytes", bases_bytes}, {"records", g.bases}}},
      {"views.jsonl", {{"sha256", views_hash.hex_digest()}, {"bytes", views_bytes}, {"records", g.prompts}}}};
  m["spec"] = io::parse_ordered_json(spec.canonical_json, "spec");
  g.manifest_json = io::to_pretty(m);
  return g;
}

GeneratedBenchmark generate(const OrbitSpec& spec, const GenerateOptions& opts,
                            const num::UnitRegistry& units) {
  std::string bases, views;
  GenerateSink sink;
  sink.bases = [&bases](std::string_view chunk) { bases += chunk; };
  sink.views = [&views](std::string_view chunk) { views += chunk; };
  GeneratedBenchmark g = generate_stream(spec, opts, sink, units);
  g.bases_jsonl = std::move(bases);
  g.views_jsonl = std::move(views);
  return g;
}

GeneratedBenchmark generate_to_dir(const std::filesystem::path& dir, const OrbitSpec& spec,
                                   const GenerateOptions& opts, const num::UnitRegistry& units) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail(ErrorCode::kIo, "{}: cannot create directory: {}", dir.string(), ec.message());
  std::filesystem::remove(dir / "manifest.json", ec);
  io::AtomicFile bases(dir / "bases.jsonl"), views(dir / "views.jsonl");
  GenerateSink sink;
  sink.bases = [&bases](std::string_view chunk) { bases.write(chunk); };
  sink.views = [&views](std::string_view chunk) { views.write(chunk); };
  GeneratedBenchmark g = generate_stream(spec, opts, sink, units);
  bases.commit();
  views.commit();
  io::write_file_atomic(dir / "manifest.json", g.manifest_json);
  return g;
}

void write_benchmark(const std::filesystem::path& dir, const GeneratedBenchmark& g) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail(ErrorCode::kIo, "{}: cannot create directory: {}", dir.string(), ec.message());
  // The manifest goes last and is removed first: a directory with a manifest is a finished one.
  std::filesystem::remove(dir / "manifest.json", ec);
  io::write_file_atomic(dir / "bases.jsonl", g.bases_jsonl);
  io::write_file_atomic(dir / "views.jsonl", g.views_jsonl);
  io::write_file_atomic(dir / "manifest.json", g.manifest_json);
}

}  // namespace numcheck::orbit
