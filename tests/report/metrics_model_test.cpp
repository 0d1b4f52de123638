// The typed metrics model: metrics.json is written from it (to_json) and read back into it
// (metrics_from_json) without losing a byte, and the reader names the field it misses.
#include "report/metrics_model.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "fixture.hpp"
#include "io/files.hpp"
#include "orbit/benchmark.hpp"
#include "report/metrics.hpp"
#include "report/orbit_report.hpp"
#include "report/supplement.hpp"

namespace numcheck::report {
namespace {

using namespace numcheck::report::testing;
namespace fs = std::filesystem;

// model -> JSON -> model -> JSON gives the same bytes.
void expect_round_trip(const MetricsModel& m) {
  const std::string first = io::to_pretty(to_json(m));
  const MetricsModel back = metrics_from_json(io::parse_ordered_json(first, "first"), "first");
  EXPECT_EQ(io::to_pretty(to_json(back)), first);
}

// Two systems on a small benchmark (comparisons, families, magnitude drops, recovery).
struct TwoSystems {
  fs::path dir = fresh_dir("metrics_model");
  orbit::Benchmark bench;
  std::vector<SystemScores> systems;
  TwoSystems() {
    std::vector<FxBase> bases;
    std::vector<FxScore> a, b;
    for (int i = 1; i <= 40; ++i) {
      const std::string id = fmt::format("CV-{:04d}", i);
      bases.push_back({id, i % 3 == 0 ? "LV" : "CV", "2", {"canonical", "fraction", "unit"}});
      a.push_back(both(id + ":canonical", i % 11 == 0 ? "format_error" : "correct",
                       i % 11 == 0 ? std::nullopt : std::optional<std::string>("2")));
      a.push_back(both(id + ":fraction", i % 5 == 0 ? "value_error" : "correct", i % 5 ? "2" : "20"));
      a.push_back(both(id + ":unit", i % 7 == 0 ? "value_error" : "correct", i % 7 ? "2" : "3"));
      b.push_back(both(id + ":canonical", "correct", "2"));
      b.push_back(both(id + ":fraction", i % 4 == 0 ? "value_error" : "correct", i % 4 ? "2" : "1/5"));
      if (i % 9 != 0) b.push_back(both(id + ":unit", "correct", "2"));  // some missing records
    }
    write_bench(dir / "bench", bases);
    write_scores(dir / "a.jsonl", a);
    write_scores(dir / "b.jsonl", b);
    bench = orbit::load_benchmark(dir / "bench");
    systems = {load_scores(dir / "a.jsonl", bench), load_scores(dir / "b.jsonl", bench)};
  }
  ~TwoSystems() { fs::remove_all(dir); }
  [[nodiscard]] MetricsModel metrics(std::size_t draws = 200) const {
    ReportOptions o;
    o.bootstrap_draws = draws;
    o.seed = 11;
    o.threads = 2;
    return compute_metrics(bench, systems, o);
  }
};

TEST(MetricsModel, ComputedMetricsRoundTrip) {
  const TwoSystems f;
  const MetricsModel m = f.metrics();
  ASSERT_EQ(m.systems.size(), 2u);
  ASSERT_EQ(m.comparisons.size(), 1u);
  expect_round_trip(m);
  expect_round_trip(f.metrics(0));  // no bootstrap: every interval null
}

TEST(MetricsModel, TheGoldenMetricsJsonReadsBackByteIdentical) {
  // The main job's metrics.json (tests/golden): provenance, extra sections and the consensus study's
  // source included.
  const fs::path file = fs::path(NUMCHECK_SOURCE_DIR) / "tests/golden/main-job/metrics.json";
  const std::string text = io::read_file(file);
  const MetricsModel m = metrics_from_json(io::parse_ordered_json(text, file.string()), file.string());
  EXPECT_EQ(io::to_pretty(to_json(m)), text);
  ASSERT_FALSE(m.systems.empty());
  EXPECT_TRUE(m.systems[0].provenance.has_value());
}

TEST(MetricsModel, TheReportIsTheSameFromTheReadBackModel) {
  const TwoSystems f;
  const MetricsModel m = f.metrics();
  const MetricsModel back = metrics_from_json(to_json(m), "metrics.json");
  EXPECT_EQ(build_document(back, f.bench, f.systems, 2).to_markdown(),
            build_document(m, f.bench, f.systems, 2).to_markdown());
}

TEST(MetricsModel, DerivedValuesFollowTheCounts) {
  const TwoSystems f;
  const MetricsModel m = f.metrics();
  const io::OrderedJson j = to_json(m);
  const LayerMetrics& strict = m.system("a").layers[0];
  const auto& lj = j["systems"]["a"]["strict"];
  EXPECT_EQ(lj["orbit"]["rate"].get<double>(), strict.orbit.rate());
  EXPECT_EQ(lj["orbit_gap"]["material"].get<bool>(), strict.orbit.gap_material());
  EXPECT_EQ(lj["h2"]["holds"].get<bool>(), strict.orbit.gap_material());
  EXPECT_EQ(lj["h1"]["families"].size(), strict.h1_families().size());
  const FamilyTest* fraction = find_key(strict.families, "fraction");
  ASSERT_NE(fraction, nullptr);
  EXPECT_EQ(lj["families"]["fraction"]["gap"].get<double>(), fraction->gap());
  EXPECT_EQ(lj["magnitude_drops"]["total"].get<std::uint64_t>(), total(strict.magnitude_drops.by_k));
  EXPECT_THROW((void)m.system("nobody"), Error);
}

// The reader's error for `j` names `field`.
void expect_error_naming(const io::OrderedJson& j, const std::string& field) {
  try {
    (void)metrics_from_json(j, "out/metrics.json");
    ADD_FAILURE() << "no error for " << field;
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("out/metrics.json"), std::string::npos) << what;
    EXPECT_NE(what.find(field), std::string::npos) << what;
  }
}

TEST(MetricsModel, TheReaderNamesTheMissingOrMalformedField) {
  const TwoSystems f;
  const io::OrderedJson good = to_json(f.metrics());
  {
    auto j = good;
    j["systems"]["a"]["strict"]["orbit"].erase("n");
    expect_error_naming(j, "systems.a.strict.orbit.n");
  }
  {
    auto j = good;
    j["systems"]["b"]["audit"]["families"]["fraction"]["p_holm"] = "small";
    expect_error_naming(j, "systems.b.audit.families.fraction.p_holm");
  }
  {
    auto j = good;
    j["systems"]["a"]["audit"]["views"]["unit"]["wilson"] = io::OrderedJson::array({0.5});
    expect_error_naming(j, "systems.a.audit.views.unit.wilson");
  }
  {
    auto j = good;
    j["systems"]["a"]["strict"]["magnitude_drops"]["by_k"]["ten"] = 1;
    expect_error_naming(j, "systems.a.strict.magnitude_drops.by_k.ten");
  }
  {
    auto j = good;
    j["systems"]["a"]["strict"]["h2_independence"]["observed_gap"]["exact"] = "0.5x";
    expect_error_naming(j, "systems.a.strict.h2_independence.observed_gap.exact");
  }
  {
    // Counts that contradict each other (the derived rates and gaps would be nonsense).
    auto j = good;
    j["systems"]["a"]["strict"]["orbit"]["correct"] = 1000;
    expect_error_naming(j, "systems.a.strict.orbit.correct");
  }
  {
    auto j = good;
    j["systems"]["b"]["strict"]["families"]["unit"]["t"] = 1000;
    expect_error_naming(j, "systems.b.strict.families.unit.t");
  }
  {
    auto j = good;
    j["system_order"].push_back("c");
    expect_error_naming(j, "systems.c");
  }
  {
    auto j = good;
    j["system_order"].erase(1);
    expect_error_naming(j, "system_order");
  }
  {
    auto j = good;
    j.erase("allocation");
    expect_error_naming(j, "allocation");
  }
  EXPECT_THROW((void)metrics_from_json(io::OrderedJson::array(), "m.json"), Error);
}

TEST(MetricsModel, TheSupplementReadsMetricsJsonThroughTheTypedReader) {
  const TwoSystems f;
  io::OrderedJson j = to_json(f.metrics());
  j["settings"].erase("seed");
  const fs::path report = f.dir / "report";
  io::write_file_atomic(report / "metrics.json", io::to_pretty(j));
  try {
    (void)build_supplement(report, 3);
    ADD_FAILURE() << "no error for a metrics.json without settings.seed";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("metrics.json"), std::string::npos) << what;
    EXPECT_NE(what.find("settings.seed"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace numcheck::report
