// Reading JSONL records: read_jsonl (nlohmann, a DOM per line) against read_jsonl_fast (simdjson,
// flat values; io/json.hpp) on 10,000 response records shaped like bench/make_responses.py's
// (about 450 bytes: prompt id, ~300 bytes of reasoning and a FINAL line, finish reason, usage).
// Each iteration reads every record and its fields as orbit score does. MB/s and records/s.
#include <benchmark/benchmark.h>

#include <string>

#include <fmt/core.h>

#include "io/json.hpp"

namespace {

namespace io = numcheck::io;

const std::string& text() {
  static const std::string t = [] {
    std::string out;
    for (int i = 0; i < 10000; ++i) {
      out += fmt::format(
          R"({{"prompt_id": "CV-{:04d}:canonical", "response": "We need the quantity the question asks for. First we )"
          R"(read the given amounts and convert them to the same unit, because mixing units is the most common )"
          R"(mistake. Then we combine them as the question describes and check the result against a rough )"
          R"(estimate.\n\nFINAL: {}.{} L", "finish_reason": "stop", "usage": {{"completion_tokens": {}}}}})"
          "\n",
          i, i * 7, i % 100, 60 + i % 200);
    }
    return out;
  }();
  return t;
}

void BM_ReadJsonlNlohmann(benchmark::State& state) {
  std::size_t n = 0;
  for (auto _ : state) {
    (void)io::read_jsonl_text<io::Json>(text(), "r.jsonl", [&](const io::Record& r, std::size_t) {
      n += r.string("prompt_id").size() + r.string("response").size() + r.string("finish_reason").size();
      n += static_cast<std::size_t>(r.object("usage").integer("completion_tokens", 0));
    });
  }
  benchmark::DoNotOptimize(n);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text().size()));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * 10000));
}
BENCHMARK(BM_ReadJsonlNlohmann)->Unit(benchmark::kMillisecond);

void BM_ReadJsonlFast(benchmark::State& state) {
  std::size_t n = 0;
  for (auto _ : state) {
    (void)io::read_jsonl_fast_text(text(), "r.jsonl", [&](const io::LineRecord& r, std::size_t) {
      n += r.string("prompt_id").size() + r.string("response").size() + r.string("finish_reason").size();
      n += static_cast<std::size_t>(r.object("usage").integer("completion_tokens", 0));
    });
  }
  benchmark::DoNotOptimize(n);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text().size()));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * 10000));
}
BENCHMARK(BM_ReadJsonlFast)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
