// Quantity-segment extraction throughput over the 9,935 QuanTemp training claims
// (filtered_claims.json in $NUMCHECK_QUANTEMP, default ../shared/data/quantemp): items/s = claims
// per second.
#include <filesystem>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "../tests/support/quantemp_data.hpp"
#include "claims/load.hpp"
#include "claims/segment.hpp"

namespace {

const std::vector<std::string>* train_claims() {
  static const std::vector<std::string>* claims = [] {
    const auto p = numcheck::testing::quantemp_dir() / "filtered_claims.json";
    auto* v = new std::vector<std::string>();
    if (!std::filesystem::exists(p)) return v;
    for (auto& c : numcheck::claims::load_claims(p).claims) v->push_back(std::move(c.text));
    return v;
  }();
  return claims;
}

void BM_ExtractTrainClaims(benchmark::State& state) {
  const auto* claims = train_claims();
  if (claims->empty()) {
    static const std::string msg = "QuanTemp data not found: no " +
                                   (numcheck::testing::quantemp_dir() / "filtered_claims.json").string() +
                                   " (set NUMCHECK_QUANTEMP to the data folder)";
    state.SkipWithError(msg.c_str());
    return;
  }
  (void)numcheck::claims::Lexicon::builtin();
  std::size_t segments = 0;
  for (auto _ : state) {
    for (const auto& c : *claims) {
      auto s = numcheck::claims::find_segments(c);
      segments += s.size();
      benchmark::DoNotOptimize(s);
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * claims->size()));
  state.counters["claims"] = static_cast<double>(claims->size());
  state.counters["segments_per_claim"] =
      static_cast<double>(segments) / static_cast<double>(state.iterations() * claims->size());
}
BENCHMARK(BM_ExtractTrainClaims)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
