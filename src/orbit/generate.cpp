#include "orbit/generate.hpp"

#include <algorithm>
#include <exception>
#include <memory>
#include <mutex>
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

// One generation: the templates cut into tasks, rendered on threads, taken in order.
class Generator {
 public:
  Generator(const OrbitSpec& spec, const GenerateOptions& opts, const GenerateSink& sink,
            const num::UnitRegistry& units)
      : spec_(spec), opts_(opts), sink_(sink), units_(units) {
    for (const char* f : kFamilies) all_views_.emplace_back(f);
    all_views_.emplace_back("paraphrase1");
    all_views_.emplace_back("paraphrase2");
    n_views_ = all_views_.size();
    per_view_.assign(n_views_, 0);
    tcounts_.assign(n_views_, 0);
    // Per template: t.views[f] -> index into all_views_; its plan; its tasks.
    const std::size_t n_templates = spec.templates.size();
    family_index_.resize(n_templates);
    plans_.resize(n_templates);
    for (std::size_t ti = 0; ti < n_templates; ++ti) {
      const TemplateSpec& t = spec.templates[ti];
      for (const auto& v : t.views)
        family_index_[ti].push_back(static_cast<std::size_t>(
            std::find(all_views_.begin(), all_views_.end(), v.family) - all_views_.begin()));
      plans_[ti] = std::make_unique<Plan>();
      if (t.bases == 0) tasks_.push_back({ti, 0, 0});  // the template still gets its manifest entry
      for (std::size_t first = 0; first < t.bases; first += kTaskBases)
        tasks_.push_back({ti, first, std::min(t.bases, first + kTaskBases)});
    }
  }

  GeneratedBenchmark run() {
    const std::size_t threads = core::thread_count(opts_.threads);
    core::ordered_parallel<Piece>(
        tasks_.size(), threads, 4 * threads, [this](std::size_t k, Piece& out) { produce(k, out); },
        [this](std::size_t k, Piece& piece) { consume(k, piece); });
    g_.manifest_json = io::to_pretty(manifest());
    return std::move(g_);
  }

 private:
  [[nodiscard]] bool is_family(std::size_t v) const { return v >= 1 && v <= std::size(kFamilies); }

  const Plan& plan_of(std::size_t ti) {
    Plan& p = *plans_[ti];
    std::call_once(p.once, [&] {
      try {
        const TemplateSpec& t = spec_.templates[ti];
        Rng rng(opts_.seed, t.id);
        p.drawn = draw_bases(t, rng);
        p.elig = assign_quotas(t, rng);
      } catch (...) {
        p.error = std::current_exception();
      }
    });
    if (p.error) std::rethrow_exception(p.error);
    return p;
  }

  // Renders the bases of one task: the same lines, in the same order, as one pass over the
  // template would write.
  void produce(std::size_t k, Piece& out) {
    const Task& task = tasks_[k];
    const TemplateSpec& t = spec_.templates[task.tmpl];
    const Plan& plan = plan_of(task.tmpl);
    out.bases.clear();
    out.views.clear();
    out.counts.assign(n_views_, 0);
    const bool para = opts_.paraphrases && t.consensus_bases > 0;
    std::vector<std::size_t> base_views;  // indexes into all_views_
    std::string id, answer;
    for (std::size_t i = task.first; i < task.last; ++i) {
      const Drawn& d = plan.drawn[i];
      id = base_id(t, i);
      answer = d.answer.str();
      base_views.clear();
      base_views.push_back(0);
      for (std::size_t f = 0; f < t.views.size(); ++f)
        if (plan.elig[f][i]) base_views.push_back(family_index_[task.tmpl][f]);
      const bool in_consensus = i < t.consensus_bases;
      if (para && in_consensus) {
        base_views.push_back(n_views_ - 2);
        base_views.push_back(n_views_ - 1);
      }
      write_base(out.bases, t, d, id, answer, base_views, in_consensus);
      write_views(out, t, d, id, answer, base_views);
    }
  }

  // The base's line of bases.jsonl.
  void write_base(std::string& out, const TemplateSpec& t, const Drawn& d, const std::string& id,
                  const std::string& answer, const std::vector<std::size_t>& base_views,
                  bool in_consensus) const {
    io::JsonWriter w(out);
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
    for (const std::size_t v : base_views) w.value(all_views_[v]);
    w.end_array();
    w.key("consensus_subset").value(in_consensus);
    w.end_object();
    out += '\n';
  }

  // The base's lines of views.jsonl, one per view it has.
  void write_views(Piece& out, const TemplateSpec& t, const Drawn& d, const std::string& id,
                   const std::string& answer, const std::vector<std::size_t>& base_views) const {
    std::vector<std::string> canonical;
    for (std::size_t p = 0; p < t.params.size(); ++p)
      canonical.push_back(render_quantity(spec_, t, p, d.values[p], "canonical", units_));
    std::string prompt_id, prompt;
    for (const std::size_t vi : base_views) {
      const std::string& vn = all_views_[vi];
      prompt_id.assign(id).append(":").append(vn);
      prompt.clear();
      render_prompt_into(prompt, spec_, t, vn, d.values, &canonical, units_);
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

  // Each task's lines go to the sink as they are (no copy into a larger buffer).
  void emit(const std::string& bases, const std::string& views) {
    bases_hash_.update(bases);
    bases_bytes_ += bases.size();
    if (sink_.bases && !bases.empty()) sink_.bases(bases);
    views_hash_.update(views);
    views_bytes_ += views.size();
    if (sink_.views && !views.empty()) sink_.views(views);
  }

  // Takes the pieces in order: the files' bytes and hashes, and each template's counts when its
  // last piece is in (its plan is then freed).
  void consume(std::size_t k, Piece& piece) {
    const Task& task = tasks_[k];
    const TemplateSpec& t = spec_.templates[task.tmpl];
    emit(piece.bases, piece.views);
    for (std::size_t v = 0; v < n_views_; ++v) tcounts_[v] += piece.counts[v];
    if (task.last < t.bases) return;
    const auto& fi = family_index_[task.tmpl];
    std::size_t tprompts = 0;
    for (std::size_t v = 0; v < n_views_; ++v) {
      per_view_[v] += tcounts_[v];
      tprompts += tcounts_[v];
    }
    const bool para = opts_.paraphrases && t.consensus_bases > 0;
    if (t.consensus_bases > 0)
      consensus_[t.id] = {{"bases", t.consensus_bases}, {"views", t.consensus_views}};
    io::OrderedJson tviews = io::OrderedJson::object();
    tviews["canonical"] = tcounts_[0];
    for (std::size_t f = 0; f < t.views.size(); ++f) tviews[t.views[f].family] = tcounts_[fi[f]];
    if (para) {
      tviews["paraphrase1"] = tcounts_[n_views_ - 2];
      tviews["paraphrase2"] = tcounts_[n_views_ - 1];
    }
    per_template_[t.id] = {{"bases", t.bases}, {"prompts", tprompts}, {"views", std::move(tviews)}};
    g_.bases += t.bases;
    g_.prompts += tprompts;
    std::fill(tcounts_.begin(), tcounts_.end(), std::size_t{0});
    plans_[task.tmpl].reset();
  }

  io::OrderedJson manifest() {
    io::OrderedJson families = io::OrderedJson::object();
    io::OrderedJson views = io::OrderedJson::object();
    for (std::size_t v = 0; v < n_views_; ++v) {
      if (is_family(v)) families[all_views_[v]] = per_view_[v];
      if (v < n_views_ - 2 || opts_.paraphrases) views[all_views_[v]] = per_view_[v];
    }
    io::OrderedJson m;
    m["format"] = kBenchmarkFormat;
    m["generator_version"] = kGeneratorVersion;
    m["prompt_version"] = spec_.prompt_version;
    m["seed"] = opts_.seed;
    m["spec_name"] = spec_.name;
    m["spec_sha256"] = spec_.sha256;
    m["paraphrases"] = opts_.paraphrases;
    m["counts"] = {{"bases", g_.bases},
                   {"prompts", g_.prompts},
                   {"families", std::move(families)},
                   {"views", std::move(views)},
                   {"templates", std::move(per_template_)}};
    m["consensus_subset"] = consensus_;
    m["files"] = {{"bases.jsonl",
                   {{"sha256", bases_hash_.hex_digest()}, {"bytes", bases_bytes_}, {"records", g_.bases}}},
                  {"views.jsonl",
                   {{"sha256", views_hash_.hex_digest()}, {"bytes", views_bytes_}, {"records", g_.prompts}}}};
    m["spec"] = io::parse_ordered_json(spec_.canonical_json, "spec");
    return m;
  }

  const OrbitSpec& spec_;
  const GenerateOptions& opts_;
  const GenerateSink& sink_;
  const num::UnitRegistry& units_;
  std::vector<std::string> all_views_ = {"canonical"};  // view names in output order
  std::size_t n_views_ = 0;
  std::vector<std::vector<std::size_t>> family_index_;
  std::vector<std::unique_ptr<Plan>> plans_;
  std::vector<Task> tasks_;
  GeneratedBenchmark g_;
  io::Sha256 bases_hash_, views_hash_;
  std::size_t bases_bytes_ = 0, views_bytes_ = 0;
  std::vector<std::size_t> per_view_, tcounts_;  // indexed like all_views_
  io::OrderedJson per_template_ = io::OrderedJson::object();
  io::OrderedJson consensus_ = io::OrderedJson::object();
};

}  // namespace

GeneratedBenchmark generate_stream(const OrbitSpec& spec, const GenerateOptions& opts,
                                   const GenerateSink& sink, const num::UnitRegistry& units) {
  return Generator(spec, opts, sink, units).run();
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
