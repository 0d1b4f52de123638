#pragma once
// Whole-orbit subsets of a benchmark (`orbit run --bases/--templates/--views/--base-ids`, see
// docs/orbit.md "Subsets"). A selection is a set of bases and a set of views; a selected base
// brings every selected view it is eligible for, so an orbit is never cut in half. The run records
// its selection (run.json `selection`), `orbit score` grades only the selected prompts and writes
// the selection into its manifest, and `orbit report` computes every metric on the benchmark
// restricted to it: unasked prompts are in no denominator.
//
// `--bases N` is a stratified, seeded sample: seats go to templates one at a time by the
// Huntington-Hill divisor rule (priority size / sqrt(k (k + 1)), so every template gets one base
// before any gets two, and the rest is proportional to template size), and within a template the
// bases are taken in the order of a shuffle of its bases by Rng(seed, "selection:<template>"), seed = the
// benchmark's generation seed unless given. Both steps only add as N grows, so the sample for N is contained
// in the sample for N + 1.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "io/json.hpp"
#include "orbit/benchmark.hpp"
#include "orbit/index.hpp"

namespace numcheck::orbit {

// What the user asked for. Filters compose: base ids file, then templates, then the sample.
struct SelectionSpec {
  std::optional<std::size_t> bases;    // stratified sample of this many bases (of those left)
  std::vector<std::string> templates;  // empty: every template
  // Views: empty = every view except the paraphrases ("default"); {"all"} = every view.
  std::vector<std::string> views;
  std::optional<std::filesystem::path> base_ids_file;  // one base id per line, '#' comments
  // Seed of the sample; default: the benchmark's generation seed (manifest.json "seed"), so
  // `--bases N` names the same bases for every system run on one benchmark.
  std::optional<std::uint64_t> seed;
};

struct Selection {
  // Chosen bases in benchmark order; every base of the benchmark when nothing filtered bases.
  std::vector<std::string> base_ids;
  std::vector<std::string> views;  // chosen view names, in order of first appearance
  bool all_bases = true;           // no base filter applied
  bool default_views = true;       // the default views (every view except the paraphrases)
  io::OrderedJson spec;            // how it was asked: bases, templates, views, base_ids_file, seed

  // True when the selection is the whole benchmark with the default views (a full run).
  [[nodiscard]] bool whole() const noexcept { return all_bases && default_views; }
};

// Resolves a spec against a benchmark. Throws Error(kUsage) for an unknown template, view or base
// id, a views list without "canonical" (every orbit metric is relative to it), --bases 0, or an
// empty result.
[[nodiscard]] Selection select(const Benchmark& bench, const SelectionSpec& spec);

// The Huntington-Hill allocation of `n` seats to groups of the given sizes (exposed for tests):
// result[i] <= sizes[i], sum = min(n, sum of sizes).
[[nodiscard]] std::vector<std::size_t> allocate_seats(const std::vector<std::size_t>& sizes, std::size_t n);

// The recorded form: {"spec": {...}, "bases": k, "of_bases": K, "views": [...], "prompts": n,
// "base_ids": [...] or "all"}. `prompts` is the number of selected prompts in `bench`.
[[nodiscard]] io::OrderedJson to_json(const Selection& s, const Benchmark& bench);
// Reads the recorded form back (what run.json and the scores manifest carry); `where` names the
// file in errors. Base ids are checked against `bench`. Against a BenchmarkIndex, a selection of
// every base ("all") has all_bases set and base_ids empty (restrict and whole() need no list).
[[nodiscard]] Selection selection_from_json(const io::OrderedJson& j, const Benchmark& bench,
                                            const std::string& where);
[[nodiscard]] Selection selection_from_json(const io::OrderedJson& j, const BenchmarkIndex& bench,
                                            const std::string& where);

// The selection a run recorded: run.json next to `responses` (its "selection" with "views" and
// "base_ids"), read against `bench`; nullopt when there is no run.json or it records none (a
// responses file from elsewhere is scored against the whole benchmark).
[[nodiscard]] std::optional<Selection> run_selection(const std::filesystem::path& responses,
                                                     const Benchmark& bench);
[[nodiscard]] std::optional<Selection> run_selection(const std::filesystem::path& responses,
                                                     const BenchmarkIndex& bench);

// True when the prompt belongs to the selection.
[[nodiscard]] bool selected(const Selection& s, const View& v);

// The benchmark restricted to the selection: its bases (benchmark order) and their selected
// views, indices rebuilt; dir, manifest and file hashes unchanged (they name the whole benchmark).
// `selection` of the result holds to_json(s) unless s.whole().
[[nodiscard]] Benchmark restrict(const Benchmark& bench, const Selection& s);
// The same on the compact index (`orbit score`): the same prompts, in the same order.
[[nodiscard]] BenchmarkIndex restrict(const BenchmarkIndex& bench, const Selection& s);

// The views restrict(bench, s) keeps, in benchmark order, without copying them (`orbit run` asks
// exactly these prompts).
[[nodiscard]] std::vector<const View*> selected_views(const Benchmark& bench, const Selection& s);
// Both selected_views(bench, s) and to_json(s, bench) from one pass over the benchmark (what
// `orbit run` needs; each of the two alone makes that pass).
struct AskedViews {
  std::vector<const View*> views;
  io::OrderedJson record;
};
[[nodiscard]] AskedViews asked_views(const Benchmark& bench, const Selection& s);

}  // namespace numcheck::orbit
