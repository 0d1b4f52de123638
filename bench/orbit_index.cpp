// Loading the compact benchmark index that `orbit score` grades with (orbit/index.hpp): from
// bases.jsonl and views.jsonl (parsed, checked and hashed on 1 or 2 threads) against from the
// benchmark index cache (one binary file read back and its hash checked; the files' own hashes are
// computed beside the caller and waited for here, as orbit score waits before it writes). The
// benchmark: 10 copies of the default one (86,000 prompts, 37 MB of views.jsonl), generated into a
// temporary folder at start. items/s = prompts loaded per second.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <fmt/core.h>

#include "orbit/benchmark.hpp"
#include "orbit/generate.hpp"
#include "orbit/index.hpp"
#include "orbit/spec.hpp"

namespace {

namespace fs = std::filesystem;
namespace orbit = numcheck::orbit;

struct Fixture {
  fs::path root = fs::temp_directory_path() / fmt::format("numcheck_bench_index_{}", ::getpid());
  fs::path bench = root / "bench";
  fs::path cache = root / "cache";
  std::size_t prompts = 0;
  Fixture() {
    orbit::OrbitSpec spec = orbit::default_spec();
    const auto templates = spec.templates;
    for (int k = 1; k < 10; ++k) {
      for (auto t : templates) {
        t.id += std::to_string(k);
        spec.templates.push_back(std::move(t));
      }
    }
    fs::remove_all(root);
    prompts = orbit::generate_to_dir(bench, spec).prompts;
  }
  ~Fixture() { fs::remove_all(root); }
  Fixture(const Fixture&) = delete;
  Fixture& operator=(const Fixture&) = delete;
};

const Fixture& fixture() {
  static const Fixture f;
  return f;
}

void BM_LoadIndexFromFiles(benchmark::State& state) {
  const Fixture& f = fixture();
  for (auto _ : state) {
    const orbit::BenchmarkIndex x =
        orbit::load_benchmark_index(f.bench, static_cast<std::size_t>(state.range(0)));
    benchmark::DoNotOptimize(x.size());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * f.prompts));
}
BENCHMARK(BM_LoadIndexFromFiles)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_LoadIndexFromCache(benchmark::State& state) {
  const Fixture& f = fixture();
  const orbit::IndexCache cache{f.cache, true};
  (void)orbit::load_benchmark_index(f.bench, 2, cache);  // writes the cache file
  for (auto _ : state) {
    const orbit::BenchmarkIndex x = orbit::load_benchmark_index(f.bench, 2, cache);
    if (!x.from_cache() || !x.confirmed()) state.SkipWithError("the cache was not used");
    benchmark::DoNotOptimize(x.size());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * f.prompts));
}
BENCHMARK(BM_LoadIndexFromCache)->Unit(benchmark::kMillisecond)->UseRealTime();

// The whole benchmark as `orbit run` loads it (orbit/benchmark.hpp: every base and view with its
// exact values, both indexes, the files' hashes), for comparison with the compact index above, on
// 1 or 2 threads (`orbit run` uses one per core).
void BM_LoadBenchmark(benchmark::State& state) {
  const Fixture& f = fixture();
  for (auto _ : state) {
    const orbit::Benchmark b = orbit::load_benchmark(f.bench, static_cast<std::size_t>(state.range(0)));
    benchmark::DoNotOptimize(b.views.size());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * f.prompts));
}
BENCHMARK(BM_LoadBenchmark)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
