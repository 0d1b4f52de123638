// Trained-verifier throughput: verification (feature extraction + scoring) of 10,000 claims with
// their evidence, items/s = claims per second. The claims are the 3,084 labelled QuanTemp val
// claims with their top-3 snippets ($NUMCHECK_QUANTEMP, default ../shared/data/quantemp), repeated to 10,000;
// the model is trained on them once (outside the timing). Two variants: the 249 test claims with their gold
// evidence (long fact-checker justifications) repeated to 10,000, the stacked learner (XGBoost over
// the dense features and the linear model's probabilities), and 1 vs 2 threads. The CPU column is
// the whole process's CPU time per iteration (every thread's), so CPU per claim = CPU / 10,000.
#include <filesystem>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "../tests/support/quantemp_data.hpp"
#include "claims/evidence.hpp"
#include "claims/load.hpp"
#include "verify/model.hpp"

namespace {
namespace fs = std::filesystem;
using numcheck::claims::EvidenceRecord;

const fs::path kData = numcheck::testing::quantemp_dir();

std::vector<EvidenceRecord> load(const char* file) {
  std::vector<EvidenceRecord> v;
  if (!fs::exists(kData / file)) return v;
  for (const auto& c : numcheck::claims::load_claims(kData / file).claims)
    v.push_back(numcheck::claims::evidence_from_claim(c));
  return v;
}

struct Setup {
  std::vector<EvidenceRecord> val, gold;
  numcheck::verify::TrainedModel model, stacked;
};

const Setup& setup() {
  static const Setup* s = [] {
    auto* x = new Setup;
    x->val = load("val_claimonly_evidence_question_mapping.json");
    x->gold = load("model_gpt4o_test_results.csv");
    if (x->val.empty()) return x;
    const auto& settings = numcheck::verify::FeatureSettings::builtin();
    const auto f = numcheck::verify::extract_all(x->val, settings, 2);
    std::vector<const numcheck::verify::NamedFeatures*> p;
    std::vector<numcheck::claims::Verdict> y;
    for (std::size_t i = 0; i < x->val.size(); ++i) {
      p.push_back(&f[i]);
      y.push_back(*x->val[i].label);
    }
    x->model = numcheck::verify::train_model(p, y, settings);
    auto st = settings;
    st.learner.kind = "stacked";
    std::vector<const EvidenceRecord*> rp;
    for (const auto& r : x->val) rp.push_back(&r);
    x->stacked = numcheck::verify::train_model(p, y, st, numcheck::verify::claim_groups(rp));
    return x;
  }();
  return *s;
}

std::vector<EvidenceRecord> repeat_to(const std::vector<EvidenceRecord>& src, std::size_t n) {
  std::vector<EvidenceRecord> v;
  v.reserve(n);
  for (std::size_t i = 0; i < n; ++i) v.push_back(src[i % src.size()]);
  return v;
}

void run(benchmark::State& state, bool gold, bool stacked = false) {
  const auto& s = setup();
  if (s.val.empty() || (gold && s.gold.empty())) {
    static const std::string msg =
        "QuanTemp data not found under " + kData.string() + " (set NUMCHECK_QUANTEMP to the data folder)";
    state.SkipWithError(msg.c_str());
    return;
  }
  const auto recs = repeat_to(gold ? s.gold : s.val, 10000);
  const auto threads = static_cast<unsigned>(state.range(0));
  std::size_t t = 0;
  for (auto _ : state) {
    for (const auto& x : numcheck::verify::predict_all(recs, stacked ? s.stacked : s.model, threads))
      t += static_cast<std::size_t>(numcheck::verify::TrainedModel::argmax(x));
    benchmark::DoNotOptimize(t);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * recs.size()));
}

void BM_VerifyValTop3(benchmark::State& state) { run(state, false); }
void BM_VerifyGoldEvidence(benchmark::State& state) { run(state, true); }
void BM_VerifyValTop3Stacked(benchmark::State& state) { run(state, false, true); }
BENCHMARK(BM_VerifyValTop3)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();
BENCHMARK(BM_VerifyGoldEvidence)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();
BENCHMARK(BM_VerifyValTop3Stacked)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

}  // namespace

BENCHMARK_MAIN();
