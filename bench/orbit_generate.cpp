// Generation throughput of the orbit benchmark (prompts per second): the default spec
// (3,600 bases, 8,600 prompts) and the same spec scaled 100x (360,000 bases, 860,000 prompts).
// Generation is in memory (rendering, JSONL, hashes, manifest); writing the files is not timed.
// Cost must grow linearly: prompts/s should be about the same for both sizes.
#include <benchmark/benchmark.h>

#include "io/json.hpp"
#include "orbit/generate.hpp"
#include "orbit/spec.hpp"

namespace {

using namespace numcheck;

// The default spec with every base count and quota multiplied by `factor`; domains too small for
// that many distinct tuples are widened (the first grid parameter gets `factor` times the points).
orbit::OrbitSpec scaled_spec(std::size_t factor) {
  const orbit::OrbitSpec& base = orbit::default_spec();
  auto j = io::parse_ordered_json(base.canonical_json, "default spec");
  for (std::size_t i = 0; i < base.templates.size(); ++i) {
    auto& t = j["templates"][i];
    const auto& ts = base.templates[i];
    t["bases"] = ts.bases * factor;
    for (auto& [fam, v] : t["views"].items()) v["quota"] = v["quota"].get<std::size_t>() * factor;
    double tuples = 1;
    for (const auto& p : ts.params) tuples *= static_cast<double>(p.domain.size);
    if (tuples >= 20.0 * static_cast<double>(ts.bases * factor)) continue;
    for (std::size_t k = 0; k < ts.params.size(); ++k) {
      const auto& d = ts.params[k].domain;
      if (d.kind != orbit::Domain::Kind::kGrid) continue;
      const num::Rational max = d.min + d.step * num::Rational(static_cast<long long>(d.size * factor - 1));
      t["params"][k]["domain"]["max"] = *max.to_decimal();
      break;
    }
  }
  return orbit::parse_spec(j.dump(), "default_spec_x" + std::to_string(factor) + ".json");
}

// In memory: the whole benchmark as strings (what tests and small specs use).
void run_in_memory(benchmark::State& state, const orbit::OrbitSpec& spec) {
  std::size_t prompts = 0;
  for (auto _ : state) {
    auto g = orbit::generate(spec);
    prompts = g.prompts;
    benchmark::DoNotOptimize(g.views_jsonl.data());
  }
  state.counters["prompts"] = static_cast<double>(prompts);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * prompts));
}

// Streamed (what `numcheck orbit generate` does, minus the disk): chunks are hashed and dropped,
// so memory stays bounded and cost per prompt does not depend on the benchmark's size.
void run_streamed(benchmark::State& state, const orbit::OrbitSpec& spec) {
  std::size_t prompts = 0, bytes = 0;
  for (auto _ : state) {
    bytes = 0;
    orbit::GenerateSink sink;
    sink.bases = [&bytes](std::string_view c) { bytes += c.size(); };
    sink.views = [&bytes](std::string_view c) { bytes += c.size(); };
    auto g = orbit::generate_stream(spec, {}, sink);
    prompts = g.prompts;
    benchmark::DoNotOptimize(g.manifest_json.data());
  }
  state.counters["prompts"] = static_cast<double>(prompts);
  state.counters["MB"] = static_cast<double>(bytes) / 1e6;
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * prompts));
}

const orbit::OrbitSpec& x100() {
  static const orbit::OrbitSpec spec = scaled_spec(100);
  return spec;
}

void BM_GenerateDefault(benchmark::State& state) { run_in_memory(state, orbit::default_spec()); }
BENCHMARK(BM_GenerateDefault)->Unit(benchmark::kMillisecond);

void BM_StreamDefault(benchmark::State& state) { run_streamed(state, orbit::default_spec()); }
BENCHMARK(BM_StreamDefault)->Unit(benchmark::kMillisecond);

void BM_StreamDefaultX100(benchmark::State& state) { run_streamed(state, x100()); }
BENCHMARK(BM_StreamDefaultX100)->Unit(benchmark::kMillisecond)->Iterations(2);

void BM_GenerateDefaultX100InMemory(benchmark::State& state) { run_in_memory(state, x100()); }
BENCHMARK(BM_GenerateDefaultX100InMemory)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
