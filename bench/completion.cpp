// The runner's per-answer work on a llama-server-shaped chat completion body (about 600 bytes:
// content with a FINAL line, reasoning, usage, timings): parsing it with the fast path (simdjson's
// walk, llm::detail::parse_completion_fast) against the DOM path (nlohmann, parse_completion_dom),
// and writing a cache entry directly (llm::completion_line) against to_line of the DOM
// (completion_to_json). Bodies/s.
#include <benchmark/benchmark.h>

#include <string>

#include "io/json.hpp"
#include "llm/cache.hpp"
#include "llm/http_backend.hpp"

namespace {

namespace llm = numcheck::llm;

const std::string kBody =
    R"({"choices":[{"finish_reason":"stop","index":0,"message":{"role":"assistant","content":"The jug holds )"
    R"(8.4 L and the bottle 4.4 L; together 12.8 L.\n\nFINAL: 12.8 L","reasoning_content":"Add the two )"
    R"(volumes: 8.4 + 4.4 = 12.8."}}],"created":1764600000,"model":"qwen3-8b-q4","system_fingerprint":)"
    R"("b6500-1a2b3c","object":"chat.completion","usage":{"completion_tokens":41,"prompt_tokens":87,)"
    R"("total_tokens":128},"id":"chatcmpl-abc","timings":{"prompt_n":87,"prompt_ms":21.5,)"
    R"("prompt_per_second":4046.5,"predicted_n":41,"predicted_ms":512.25,"predicted_per_second":80.04}})";

void BM_ParseCompletionFast(benchmark::State& state) {
  for (auto _ : state) {
    llm::Completion c;
    const bool ok = llm::detail::parse_completion_fast(kBody, llm::Api::kChat, c);
    benchmark::DoNotOptimize(ok);
    benchmark::DoNotOptimize(c.content.data());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(kBody.size()));
}
BENCHMARK(BM_ParseCompletionFast);

void BM_ParseCompletionDom(benchmark::State& state) {
  for (auto _ : state) {
    const llm::ParsedBody p = llm::detail::parse_completion_dom(kBody, llm::Api::kChat);
    benchmark::DoNotOptimize(p.completion.content.data());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(kBody.size()));
}
BENCHMARK(BM_ParseCompletionDom);

void BM_CacheEntryDirect(benchmark::State& state) {
  const llm::Completion c = llm::parse_completion_body(kBody, llm::Api::kChat).completion;
  for (auto _ : state) {
    const std::string line = llm::completion_line(c);
    benchmark::DoNotOptimize(line.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CacheEntryDirect);

void BM_CacheEntryDom(benchmark::State& state) {
  const llm::Completion c = llm::parse_completion_body(kBody, llm::Api::kChat).completion;
  for (auto _ : state) {
    const std::string line = numcheck::io::to_line(llm::completion_to_json(c));
    benchmark::DoNotOptimize(line.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CacheEntryDom);

}  // namespace

BENCHMARK_MAIN();
