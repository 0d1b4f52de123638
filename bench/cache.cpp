// bench_cache: what the response cache (a SQLite database) costs a run per request. A lookup that
// misses and one that hits, in a cache of N entries; opening a connection to a cache of 100,000
// entries; storing answers in commits of 256 and of 16,384 (per answer), and 172,000 answers in
// commits of 2,048 into a cache that grows with them; the hashing every entry needs before it is
// stored. Figures in docs/runner.md ("The response cache").
//
//   build/release/bench/bench_cache
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "io/json.hpp"
#include "llm/cache.hpp"

namespace {

namespace fs = std::filesystem;
using namespace numcheck;

// A fresh cache folder per benchmark, removed at the end.
struct Folder {
  fs::path dir;
  explicit Folder(const std::string& name)
      : dir(fs::temp_directory_path() / fmt::format("numcheck_bench_cache_{}_{}", name, ::getpid())) {
    fs::remove_all(dir);
  }
  ~Folder() { fs::remove_all(dir); }
  Folder(const Folder&) = delete;
  Folder& operator=(const Folder&) = delete;
};

const io::Json& identity() {
  static const io::Json id = {{"model", "canned"}, {"build", nullptr}, {"model_path", nullptr}};
  return id;
}

// A request body and a completion of the benchmark's size (about 500 and 200 bytes).
io::Json body(std::size_t i) {
  return {
      {"model", "canned"},
      {"messages",
       {{{"role", "user"},
         {"content", fmt::format("A jug holds {}.4 liters of water and a bottle holds 4.4 liters of water. "
                                 "Both are emptied into a large bucket that was empty before. How many "
                                 "liters of water are in the bucket?\nReturn exactly one final line in "
                                 "this form: FINAL: <number> <unit>",
                                 i)}}}},
      {"temperature", 0},
      {"seed", 20260725},
      {"max_tokens", 512}};
}

llm::Completion completion() {
  llm::Completion c;
  c.content = "The bucket holds 12.8 liters.\nFINAL: 12.8 L";
  c.finish_reason = "stop";
  c.model = "canned";
  c.usage = {{"prompt_tokens", 61}, {"completion_tokens", 17}, {"total_tokens", 78}};
  return c;
}

// Fills `cache` with entries 0 .. n-1.
void fill(llm::ResponseCache& cache, std::size_t n) {
  cache.set_batch_size(16384);
  const llm::Completion c = completion();
  for (std::size_t i = 0; i < n; ++i) {
    const io::Json b = body(i);
    cache.put(llm::cache_key(identity(), b), llm::request_hash(b), "canned", identity(), c);
  }
  cache.commit();
}

void BM_CacheLookup(benchmark::State& state, bool hit) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const Folder folder(hit ? "hit" : "miss");
  llm::ResponseCache cache(folder.dir / "responses.sqlite3");
  fill(cache, n);
  // Keys of entries present (hits) or absent (misses), cycled through.
  std::vector<std::pair<std::string, std::string>> keys;
  for (std::size_t i = 0; i < 1024; ++i) {
    const io::Json b = body(hit ? (i * 7919) % n : n + i);
    keys.emplace_back(llm::cache_key(identity(), b), llm::request_hash(b));
  }
  std::size_t k = 0, served = 0;
  for (auto _ : state) {
    const auto& [key, req] = keys[k++ % keys.size()];
    served += cache.get(key, req).has_value() ? 1 : 0;
  }
  if (served != (hit ? k : 0)) state.SkipWithError("unexpected hit or miss");
  state.SetItemsProcessed(static_cast<std::int64_t>(k));
}
void BM_CacheLookupMiss(benchmark::State& state) { BM_CacheLookup(state, false); }
void BM_CacheLookupHit(benchmark::State& state) { BM_CacheLookup(state, true); }
BENCHMARK(BM_CacheLookupMiss)->Arg(8600)->Arg(100000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CacheLookupHit)->Arg(8600)->Arg(100000)->Unit(benchmark::kMicrosecond);

// Opening a new connection to a cache of N entries and looking one entry up: what each of a run's
// event loops does once.
void BM_CacheOpen(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const Folder folder("open");
  {
    llm::ResponseCache filled(folder.dir / "responses.sqlite3");
    fill(filled, n);
  }
  const io::Json b = body(n / 2);
  const std::string key = llm::cache_key(identity(), b), req = llm::request_hash(b);
  for (auto _ : state) {
    llm::ResponseCache cache(folder.dir / "responses.sqlite3");
    if (!cache.get(key, req)) state.SkipWithError("no hit");
  }
}
BENCHMARK(BM_CacheOpen)->Arg(100000)->Unit(benchmark::kMillisecond);

// The entries of answers 0 .. n-1, made as the runner makes them.
std::vector<llm::ResponseCache::Entry> make_entries(std::size_t n) {
  std::vector<llm::ResponseCache::Entry> entries;
  entries.reserve(n);
  const llm::Completion c = completion();
  for (std::size_t i = 0; i < n; ++i) {
    const io::Json b = body(i);
    entries.push_back(llm::ResponseCache::make_entry(llm::cache_key(identity(), b), llm::request_hash(b), c));
  }
  return entries;
}

// Storing `answers` answers into a fresh cache in commits of `batch`; items = answers.
void put_answers(benchmark::State& state, std::size_t answers, std::size_t batch) {
  const std::vector<llm::ResponseCache::Entry> entries = make_entries(answers);
  const std::string identity_line = io::to_line(identity());
  for (auto _ : state) {
    state.PauseTiming();
    const Folder folder("put");
    llm::ResponseCache cache(folder.dir / "responses.sqlite3");
    cache.set_batch_size(batch);
    auto copy = entries;
    state.ResumeTiming();
    for (auto& e : copy) cache.put_entry(std::move(e), "canned", identity_line);
    cache.commit();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(answers));
}

// The default benchmark's 8,600 answers in commits of 256 (a slow server's ticks) or in one.
void BM_CachePut(benchmark::State& state) {
  put_answers(state, 8600, static_cast<std::size_t>(state.range(0)));
}
BENCHMARK(BM_CachePut)->Arg(256)->Arg(16384)->Unit(benchmark::kMillisecond);

// A large run's answers (20 times the default benchmark's prompts) in commits of 2,048 (the
// runner's early writes): what a run pays as the cache grows. (With SQLite, each commit of random
// keys rewrote the key index's pages it landed on; the append-only store writes each entry once.)
void BM_CachePutMany(benchmark::State& state) {
  put_answers(state, static_cast<std::size_t>(state.range(0)), static_cast<std::size_t>(state.range(1)));
}
BENCHMARK(BM_CachePutMany)->Args({172000, 2048})->Iterations(3)->Unit(benchmark::kMillisecond);

// The work a cache entry needs before any storage, per answer, as the runner does it: the key (the
// identity's part hashed once, CacheKeyHasher), the request hash, and the entry (the completion's
// line and the check over key, request hash and completion): three SHA-256s over about 1.3 KB.
// Any cache keyed and checked this way pays it, whatever stores the entries.
void BM_CacheEntryWork(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<std::string> bodies;
  bodies.reserve(n);
  for (std::size_t i = 0; i < n; ++i) bodies.push_back(io::to_line(body(i)));
  const llm::Completion c = completion();
  const llm::CacheKeyHasher hasher(io::to_line(identity()));
  for (auto _ : state) {
    for (const auto& b : bodies) {
      auto e = llm::ResponseCache::make_entry(hasher.key(b), llm::request_hash_from_line(b), c);
      benchmark::DoNotOptimize(e);
    }
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_CacheEntryWork)->Arg(8600)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
