#include "cli/orbit_steps.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "claimorbit/analyze.hpp"
#include "claimorbit/render.hpp"
#include "cli/cli_util.hpp"
#include "consensus/plan.hpp"
#include "consensus/study.hpp"
#include "core/error.hpp"
#include "doc/document.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"
#include "llm/reference.hpp"
#include "orbit/benchmark.hpp"
#include "orbit/score.hpp"
#include "verify/section.hpp"

namespace numcheck::cli {

namespace {
// Problems printed one per line before the summary; the sidecar manifest lists all of them.
constexpr std::size_t kMaxPrintedIssues = 20;
}  // namespace

void set_orbit_fields(llm::WorkItem& it, const orbit::View& v) {
  // Appended to an object sized for them: operator[] would search the keys and grow the object
  // twice, for each of thousands of items.
  auto& fields = it.fields.get_ref<io::OrderedJson::object_t&>();
  fields.clear();
  fields.reserve(3);
  fields.emplace_back("base_id", v.base_id);
  fields.emplace_back("template", v.template_id);
  fields.emplace_back("view", v.view);
}

std::vector<llm::WorkItem> orbit_items(orbit::Benchmark& bench, const std::string& bench_dir,
                                       const orbit::SelectionSpec& spec, bool take_prompts,
                                       llm::RunSettings& s) {
  const orbit::Selection sel = orbit::select(bench, spec);
  const orbit::AskedViews asked = orbit::asked_views(bench, sel);
  const std::vector<const orbit::View*>& chosen = asked.views;
  std::vector<llm::WorkItem> items;
  items.reserve(chosen.size());
  for (const orbit::View* v : chosen) {
    llm::WorkItem& it = items.emplace_back();
    it.item_id = v->prompt_id;
    if (take_prompts) {
      it.prompt = std::move(bench.views[static_cast<std::size_t>(v - bench.views.data())].prompt);
    } else {
      it.prompt = v->prompt;
    }
    set_orbit_fields(it, *v);
  }
  if (items.empty()) fail(ErrorCode::kUsage, "no prompts selected (check --views, --templates, --base-ids)");
  s.kind = "orbit run";
  s.id_field = "prompt_id";
  io::OrderedJson files = io::OrderedJson::object();
  for (const auto& [name, hash] : bench.file_sha256) files[name] = hash;
  files["manifest.json"] = io::sha256_hex(bench.manifest_json);
  s.binding["benchmark_sha256"] = files;
  s.info["benchmark"] = orbit::generator_provenance(bench);
  io::OrderedJson selection = io::OrderedJson::object();
  selection["benchmark_dir"] = bench_dir;
  for (const auto& [k, v] : asked.record.items()) selection[k] = v;
  s.info["selection"] = selection;
  return items;
}

llm::RunSummary run_orbit(const OrbitRunRequest& r) {
  // Options first (a usage error should not wait for the benchmark to load); the reference
  // system's solver is bound once the benchmark is loaded.
  require_output_dir(r.out);
  llm::SolveFn solver;
  auto backend =
      llm::make_backend(r.options, [&solver](std::string_view id, std::string_view prompt, std::string* why) {
        return solver(id, prompt, why);
      });
  llm::RunSettings s = llm::settings_from(r.options);
  // A new cache is made while the benchmark loads (7 ms of fdatasyncs the run waited for after it).
  if (s.use_cache && !r.dry_run) s.cache_ahead = llm::open_cache_ahead(s.cache_path);
  auto bench = std::make_shared<orbit::Benchmark>(orbit::load_benchmark(r.bench_dir));
  orbit::verify_benchmark(*bench);
  if (backend->simulated()) solver = llm::benchmark_solver(bench);  // only the reference system solves
  auto owned_items = std::make_shared<std::vector<llm::WorkItem>>();
  std::vector<llm::WorkItem>& items = *owned_items;
  if (r.keep_until_exit) {
    keep_until_exit(bench);
    keep_until_exit(owned_items);
  }
  // Only the reference system reads the benchmark's prompts once the items are made (its solver
  // finds a prompt by its text). For any other backend the items take the prompts over instead of
  // copying them: for 172,000 prompts, about 60 MB less fresh memory to fault in before the first
  // request (docs/performance.md, eighteenth round).
  items = orbit_items(*bench, r.bench_dir, r.selection, !backend->simulated(), s);
  if (r.dry_run) {
    llm::RunSummary dry;
    dry.total = items.size();
    return dry;
  }
  for (const auto& [k, v] : r.info.items()) s.info[k] = v;
  if (backend->simulated()) {
    s.info["inject"] = llm::to_json(llm::parse_fault_rates(r.options.inject));
  }
  return run_session(items, s, *backend, r.out);
}

namespace {

// Thrown inside score_orbit when the index read from the index cache turns out stale.
struct StaleIndexCache {};

// score_orbit with the benchmark's index loaded; throws StaleIndexCache (before anything is printed
// or written) when that index came from the cache and its check failed.
OrbitScoreResult score_with_index(const orbit::BenchmarkIndex& full, const std::string& responses,
                                  const std::string& out, bool allow_partial, bool whole,
                                  std::size_t threads) {
  // A run of a selection (orbit run --bases/--templates/--views/--base-ids) is graded against
  // the benchmark restricted to it: only its prompts can be missing, and records for prompts
  // outside it (left by an earlier, larger session) are counted, not graded.
  // A benchmark that does not match its own manifest is named as such first; then responses of a run
  // on another benchmark are refused before the selection (which names that benchmark's bases).
  orbit::verify_benchmark(full);
  orbit::check_run_benchmark(responses, full);
  const auto sel = whole ? std::nullopt : orbit::run_selection(responses, full);
  // No copy of the whole benchmark when there is no selection.
  std::optional<orbit::BenchmarkIndex> restricted;
  if (sel && !sel->whole()) restricted = orbit::restrict(full, *sel);
  const orbit::BenchmarkIndex& bench = restricted ? *restricted : full;
  const orbit::ScoreTally scores = orbit::score_to_file(
      bench, responses, out, allow_partial,
      [&](orbit::ScoreTally& t) {
        if (!full.confirmed()) throw StaleIndexCache{};  // before anything is printed
        if (!bench.selection.is_null()) {
          std::erase_if(t.issues, [&](const orbit::ScoreIssue& i) {
            const bool outside = i.kind == orbit::ScoreIssueKind::kUnknownPrompt && full.find(i.prompt_id);
            t.outside_selection += outside ? 1 : 0;
            return outside;
          });
        }
        std::size_t printed = 0;
        for (const auto& issue : t.issues) {
          if (printed == kMaxPrintedIssues) {
            fmt::print(stderr,
                       "numcheck: ... and {} more (all are listed in the manifest with --allow-partial)\n",
                       t.issues.size() - printed);
            break;
          }
          fmt::print(stderr, "numcheck: {}{}\n", allow_partial ? "warning: " : "",
                     orbit::format_issue(issue, responses));
          ++printed;
        }
        if (!allow_partial) orbit::check_complete(t, responses);
      },
      num::UnitRegistry::builtin(), threads);
  OrbitScoreResult r;
  r.scored = scores.counts.records;
  r.prompts = bench.size();
  r.problems = scores.issues.size();
  r.strict_correct = scores.counts.strict_count(grade::Outcome::kCorrect);
  r.audit_correct = scores.counts.audit_count(grade::Outcome::kCorrect);
  if (!bench.selection.is_null()) {
    r.scope = fmt::format(" of the run's selection ({} of {} bases)", bench.base_count(), full.base_count());
  }
  return r;
}

}  // namespace

OrbitScoreResult score_orbit(const std::string& bench_dir, const std::string& responses,
                             const std::string& out, bool allow_partial, bool whole, std::size_t threads,
                             bool index_cache) {
  // Grading needs only the compact index (ids, expected answers, units), not the prompts. With the
  // index cache, an index read from it is used at once while its checks run beside the grading
  // (the cache file's hash, and bases.jsonl and views.jsonl's unless their settled stamps stand for
  // them: index_cache.hpp); if a check fails, everything it led to (the result or an error) is
  // dropped before anything is printed or written and the files are read.
  orbit::IndexCache cache;
  if (index_cache) cache = orbit::default_index_cache();
  cache.warn = [](const std::string& w) { fmt::print(stderr, "numcheck: warning: {}\n", w); };
  // An index built from the files is written to the cache while the responses are graded (the
  // write is declared after the index: it ends first).
  std::optional<orbit::BenchmarkIndex> full;
  orbit::IndexCacheWrite cache_write;
  full = orbit::load_benchmark_index(bench_dir, threads, cache, &cache_write);
  cache_write.start(*full);
  if (full->from_cache()) {
    try {
      return score_with_index(*full, responses, out, allow_partial, whole, threads);
    } catch (const StaleIndexCache&) {
    } catch (const Error&) {
      if (full->confirmed()) throw;
    }
    full.reset();
    cache.read = false;
    full = orbit::load_benchmark_index(bench_dir, threads, cache, &cache_write);
    cache_write.start(*full);
  }
  return score_with_index(*full, responses, out, allow_partial, whole, threads);
}

llm::RunSummary run_consensus(const std::string& plan_path, const std::string& bench_dir,
                              const llm::RunOptions& options, const std::string& out,
                              const io::OrderedJson& info_extra) {
  const std::string plan_text = io::read_file(plan_path, std::size_t{1} << 30);
  const std::string plan_sha = io::sha256_hex(plan_text);
  const consensus::Plan plan = consensus::plan_from_json(io::parse_json(plan_text, plan_path), plan_path);

  llm::SolveFn solve;
  if (options.system == "reference") {
    const std::string dir = bench_dir.empty() ? plan.benchmark_dir : bench_dir;
    auto bench = std::make_shared<const orbit::Benchmark>(orbit::load_benchmark(dir));
    for (const auto& [file, hash] : plan.bench_sha256) {
      auto it = bench->file_sha256.find(file);
      if (it == bench->file_sha256.end() || it->second != hash) {
        fail("{}: {} differs from the benchmark the plan was made from (sha256 {})", dir, file, hash);
      }
    }
    solve = llm::benchmark_solver(bench);
  } else {
    solve = [](std::string_view, std::string_view, std::string* why) -> std::optional<llm::SolvedAnswer> {
      if (why != nullptr) *why = "no reference solver outside --system reference";
      return std::nullopt;
    };
  }

  std::vector<llm::WorkItem> items;
  items.reserve(plan.requests.size());
  for (const auto& r : plan.requests) {
    llm::WorkItem it;
    it.item_id = r.id;
    it.prompt = r.prompt;
    it.sampling.temperature = r.sampling.temperature;
    it.sampling.top_p = r.sampling.top_p;
    if (options.top_k) it.sampling.top_k = r.sampling.top_k;  // --no-top-k: none is sent
    it.sampling.seed = r.seed;
    it.sampling.max_tokens = r.max_tokens;
    it.fields["tier"] = r.tier;
    it.fields["prompt_id"] = r.prompt_id;
    it.fields["base_id"] = r.base_id;
    it.fields["template"] = r.template_id;
    it.fields["view"] = r.view;
    it.fields["seed_offset"] = r.seed_offset;
    items.push_back(std::move(it));
  }
  auto backend = llm::make_backend(options, solve);
  llm::RunSettings s = llm::settings_from(options);
  s.kind = "orbit consensus run";
  s.id_field = consensus::kRequestIdField;
  // The plan fixes sampling and cap per call: run.json records them as sent, per tier.
  s.sampling_kind_field = "tier";
  s.binding["plan_sha256"] = plan_sha;
  io::OrderedJson info = io::OrderedJson::object();
  info["plan"] = plan_path;
  info["requests"] = items.size();
  info["benchmark"] = plan.bench_generator;
  s.info["consensus"] = info;
  for (const auto& [k, v] : info_extra.items()) s.info[k] = v;
  if (backend->simulated()) s.info["inject"] = llm::to_json(llm::parse_fault_rates(options.inject));
  return run_session(items, s, *backend, out);
}

void add_consensus_section(const std::string& analysis_dir, report::ReportInputs& in) {
  const std::filesystem::path file = std::filesystem::path(analysis_dir) / "consensus.json";
  if (!std::filesystem::is_regular_file(file)) {
    fail(ErrorCode::kUsage,
         "--consensus {}: no consensus.json there (run `orbit consensus analyze --out {}`)", analysis_dir,
         analysis_dir);
  }
  const std::string text = io::read_file(file, std::size_t{1} << 30);
  const auto analysis = consensus::analysis_from_json(text, file.string());
  in.extra_sections.push_back(consensus::report_section(analysis));
  const auto h3 = consensus::h3_verdict(analysis);
  in.hypothesis_notes.push_back(h3.text + " (Details: the consensus study section.)");
  io::OrderedJson src = io::OrderedJson::object();
  src["section"] = "consensus";
  src["file"] = file.string();
  src["sha256"] = io::sha256_hex(text);
  src["h3"] = h3.json;
  in.extra_sources.push_back(std::move(src));
}

void add_claims_section(const std::string& section_file, report::ReportInputs& in) {
  const std::string text = io::read_file(section_file, std::size_t{1} << 30);
  const auto section = verify::section_from_file_json(
      io::parse_json(text, section_file), std::filesystem::path(section_file).filename().string());
  in.extra_sections.push_back(verify::section_document(section));
  io::OrderedJson src = io::OrderedJson::object();
  src["section"] = "claims";
  src["file"] = section_file;
  src["sha256"] = io::sha256_hex(text);
  src["metrics"] = verify::section_json(section);
  in.extra_sources.push_back(std::move(src));
}

void add_claim_orbits_section(const std::vector<std::string>& dirs, report::ReportInputs& in) {
  std::vector<claimorbit::OrbitAnalysis> systems;
  io::OrderedJson src = io::OrderedJson::object();
  src["section"] = "claim_orbits";
  src["files"] = io::OrderedJson::array();
  for (const auto& dir : dirs) {
    const std::filesystem::path file = std::filesystem::path(dir) / "metrics.json";
    if (!std::filesystem::is_regular_file(file)) {
      fail(ErrorCode::kUsage, "--claim-orbits {}: no metrics.json there (run `claims orbit report --out {}`)",
           dir, dir);
    }
    const std::string text = io::read_file(file, std::size_t{1} << 30);
    const io::Json j = io::parse_json(text, file.string());
    const auto& list = io::Record::of(j, file.string()).array("systems");
    for (std::size_t i = 0; i < list.size(); ++i)
      systems.push_back(
          claimorbit::analysis_from_json(list[i], fmt::format("{}: systems[{}]", file.string(), i)));
    // Relative to the report folder, so the same inputs elsewhere give the same bytes.
    src["files"].push_back(
        {{"file", std::filesystem::absolute(file)
                      .lexically_normal()
                      .lexically_relative(std::filesystem::absolute(in.out_dir).lexically_normal())
                      .generic_string()},
         {"sha256", io::sha256_hex(text)}});
  }
  doc::Document d;
  claimorbit::add_section(d, systems);
  in.extra_sections.push_back(std::move(d));
  src["metrics"] = io::OrderedJson::array();
  for (const auto& s : systems) src["metrics"].push_back(claimorbit::analysis_json(s));
  in.extra_sources.push_back(std::move(src));
}

void add_study_section(const io::OrderedJson& source, report::ReportInputs& in) {
  const auto r = io::OrderedRecord::of(source, "the study section's record");
  const std::vector<std::string> names = r.strings("systems");
  const std::vector<std::string> unfinished = r.strings("unfinished");
  std::size_t total = names.size();
  if (r.contains("systems_in_study")) {
    total = r.unsigned_integer("systems_in_study");
  } else {  // every system is either in the report or unfinished
    for (const auto& u : unfinished) total += u.ends_with(" (consensus)") ? 0 : 1;
  }
  doc::Document d;
  d.heading(2, "study", "Study");
  d.paragraph(fmt::format("Study file {} (sha256 {}): {} systems; {} in this report ({}).",
                          r.string("study_file"), r.string("sha256"), total, names.size(),
                          fmt::join(names, ", ")));
  if (!unfinished.empty()) {
    d.warning(fmt::format("Not in this report (run not complete): {}.", fmt::join(unfinished, ", ")));
  }
  in.extra_sections.push_back(std::move(d));
  in.extra_sources.push_back(source);
}

void print_results_table(const report::MetricsModel& metrics) {
  using doc::html::Cell;
  auto rate = [](double r) { return Cell::num(std::isnan(r) ? std::string("-") : fmt::format("{:.3f}", r)); };
  auto gap = [](const report::LayerMetrics& l) {
    const double g = l.orbit.gap();
    if (std::isnan(g)) return Cell::num("-");
    auto s = fmt::format("{:+.3f}", g);
    if (l.orbit_gap_ci) s += fmt::format(" [{:+.3f}, {:+.3f}]", l.orbit_gap_ci->lo, l.orbit_gap_ci->hi);
    return Cell::num(s);
  };
  doc::html::Table t;
  t.header = {"system", "view", "n", "strict", "audit"};
  for (const auto& s : metrics.systems) {
    const report::LayerMetrics& strict = s.layers[0];
    const report::LayerMetrics& audit = s.layers[1];
    std::string label = s.label();
    for (const auto& [view, v] : strict.views) {
      const report::ViewMetrics* a = report::find_key(audit.views, view);
      t.rows.push_back({Cell::txt(label), Cell::txt(view), Cell::num(std::to_string(v.n)), rate(v.rate()),
                        rate(a != nullptr ? a->rate() : std::nan(""))});
      label.clear();
    }
    t.rows.push_back({Cell::txt(""), Cell::txt("orbit"), Cell::num(std::to_string(strict.orbit.n)),
                      rate(strict.orbit.rate()), rate(audit.orbit.rate())});
    t.rows.push_back({Cell::txt(""), Cell::txt("gap"), Cell::num(""), gap(strict), gap(audit)});
  }
  doc::Document d;
  d.table(std::move(t));
  fmt::print("\n{}", d.to_markdown());
}

}  // namespace numcheck::cli
