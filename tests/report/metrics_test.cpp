// Pins the report's metric definitions on hand-built benchmarks: orbit correctness, invariance
// (exact rational comparison), consistent-wrong, canonical-only bases, missing records, family
// tests with the exact materiality threshold, Holm, H1/H2, strata, tokens, magnitude drops, and
// paired cross-system intervals.
#include "report/metrics.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "fixture.hpp"
#include "orbit/benchmark.hpp"
#include "report/scores.hpp"
#include "stats/tests.hpp"

namespace numcheck::report {
namespace {

using namespace numcheck::report::testing;

ReportOptions quick(std::size_t draws = 400, unsigned threads = 2) {
  ReportOptions o;
  o.bootstrap_draws = draws;
  o.seed = 7;
  o.threads = threads;
  return o;
}

class Definitions : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_dir("defs");
    write_bench(dir_ / "bench", {
                                    {"CV-0001", "CV", "1", {"canonical", "fraction", "unit"}},
                                    {"CV-0002", "CV", "1", {"canonical", "fraction", "unit"}},
                                    {"CV-0003", "CV", "1", {"canonical", "fraction", "unit"}},
                                    {"LV-0001", "LV", "7", {"canonical"}},
                                    {"LV-0002", "LV", "7", {"canonical"}},
                                    {"LV-0003", "LV", "7", {"canonical"}},
                                    {"FC-0001", "FC", "1/2", {"canonical", "fraction"}},
                                    {"FC-0002", "FC", "3", {"canonical", "fraction"}},
                                    {"FC-0003", "FC", "3", {"canonical", "fraction", "unit"}},
                                    {"FC-0004", "FC", "3", {"canonical", "fraction"}},
                                });
    FxScore recovered;
    recovered.prompt_id = "FC-0001:fraction";
    recovered.strict_outcome = "format_error";
    recovered.audit_outcome = "correct";
    recovered.audit_value = "1/2";
    recovered.recovered = true;
    recovered.rules = {"strip_bold"};
    write_scores(dir_ / "a.scores.jsonl",
                 {
                     // CV-0001: all correct -> correct, invariant.
                     both("CV-0001:canonical", "correct", "1"),
                     both("CV-0001:fraction", "correct", "1"),
                     both("CV-0001:unit", "correct", "1"),
                     // CV-0002: one view parsed a different wrong value -> neither.
                     both("CV-0002:canonical", "correct", "1"),
                     both("CV-0002:fraction", "value_error", "2"),
                     both("CV-0002:unit", "correct", "1"),
                     // CV-0003: the same wrong value everywhere -> consistent-wrong.
                     both("CV-0003:canonical", "value_error", "3"),
                     both("CV-0003:fraction", "value_error", "3"),
                     both("CV-0003:unit", "value_error", "3"),
                     // Canonical-only bases: invariant iff the canonical view parses.
                     both("LV-0001:canonical", "correct", "7"),
                     both("LV-0002:canonical", "value_error", "70"),
                     both("LV-0003:canonical", "format_error", std::nullopt),
                     // FC-0001: strict fails the fraction view, the audit recovers it.
                     both("FC-0001:canonical", "correct", "1/2"),
                     recovered,
                     // FC-0002: equal values written differently ("10/4" reads as 5/2).
                     both("FC-0002:canonical", "value_error", "10/4"),
                     both("FC-0002:fraction", "value_error", "5/2"),
                     // FC-0003: the unit record is missing.
                     both("FC-0003:canonical", "correct", "3"),
                     both("FC-0003:fraction", "correct", "3"),
                     // FC-0004: unit errors carry no value -> not invariant.
                     both("FC-0004:canonical", "unit_error", std::nullopt),
                     both("FC-0004:fraction", "unit_error", std::nullopt),
                 });
    bench_ = orbit::load_benchmark(dir_ / "bench");
    sys_ = load_scores(dir_ / "a.scores.jsonl", bench_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  BaseFlags flags(const std::string& base, Layer layer) {
    const OrbitLayout L = make_layout(bench_);
    for (const auto& b : L.bases) {
      if (bench_.bases[b.base].base_id == base) return base_flags(b, sys_, layer);
    }
    ADD_FAILURE() << "no base " << base;
    return {};
  }

  std::filesystem::path dir_;
  orbit::Benchmark bench_;
  SystemScores sys_;
};

void expect_flags(const BaseFlags& f, bool canonical, bool correct, bool invariant, bool cw,
                  const char* what) {
  EXPECT_EQ(f.canonical_correct, canonical) << what;
  EXPECT_EQ(f.orbit_correct, correct) << what;
  EXPECT_EQ(f.invariant, invariant) << what;
  EXPECT_EQ(f.consistent_wrong, cw) << what;
}

TEST_F(Definitions, PerBaseFlags) {
  const auto S = Layer::kStrict, A = Layer::kAudit;
  expect_flags(flags("CV-0001", S), true, true, true, false, "all correct");
  expect_flags(flags("CV-0002", S), true, false, false, false, "different values");
  expect_flags(flags("CV-0003", S), false, false, true, true, "same wrong value");
  expect_flags(flags("LV-0001", S), true, true, true, false, "canonical-only, correct");
  expect_flags(flags("LV-0002", S), false, false, true, true, "canonical-only, parsed wrong");
  expect_flags(flags("LV-0003", S), false, false, false, false, "canonical-only, unparsed");
  expect_flags(flags("FC-0001", S), true, false, false, false, "strict format_error");
  expect_flags(flags("FC-0001", A), true, true, true, false, "audit recovered");
  expect_flags(flags("FC-0002", S), false, false, true, true, "10/4 equals 5/2 exactly");
  expect_flags(flags("FC-0003", S), true, false, false, false, "missing unit record");
  expect_flags(flags("FC-0004", S), false, false, false, false, "unit errors do not parse");
  EXPECT_EQ(sys_.missing, 1u);
  EXPECT_EQ(sys_.records, 20u);
}

TEST_F(Definitions, AggregatedMetrics) {
  const auto m = to_json(compute_metrics(bench_, {sys_}, quick()));
  const auto& st = m["systems"]["a.scores"]["strict"];
  const auto& au = m["systems"]["a.scores"]["audit"];
  // Orbit over 10 bases. Strict: correct CV-0001, LV-0001; invariant + CV-0003, LV-0002,
  // FC-0002; consistent-wrong CV-0003, LV-0002, FC-0002.
  EXPECT_EQ(st["orbit"]["n"], 10);
  EXPECT_EQ(st["orbit"]["correct"], 2);
  EXPECT_EQ(st["orbit"]["invariant"], 5);
  EXPECT_EQ(st["orbit"]["consistent_wrong"], 3);
  EXPECT_EQ(au["orbit"]["correct"], 3);  // + FC-0001
  EXPECT_EQ(au["orbit"]["invariant"], 6);
  EXPECT_DOUBLE_EQ(st["orbit"]["rate"].get<double>(), 0.2);
  // Canonical correct: CV-0001, CV-0002, LV-0001, FC-0001, FC-0003 = 5 of 10.
  EXPECT_EQ(st["orbit"]["canonical_correct"], 5);
  EXPECT_DOUBLE_EQ(st["orbit_gap"]["value"].get<double>(), 0.3);
  const auto w = stats::wilson(2, 10);
  EXPECT_DOUBLE_EQ(st["orbit"]["wilson"][0].get<double>(), w.lo);
  EXPECT_DOUBLE_EQ(st["orbit"]["wilson"][1].get<double>(), w.hi);
  // Views: denominators are the eligible bases.
  EXPECT_EQ(st["views"]["canonical"]["n"], 10);
  EXPECT_EQ(st["views"]["fraction"]["n"], 7);
  EXPECT_EQ(st["views"]["fraction"]["correct"], 2);  // CV-0001, FC-0003
  EXPECT_EQ(au["views"]["fraction"]["correct"], 3);
  EXPECT_EQ(st["views"]["unit"]["n"], 4);
  EXPECT_EQ(st["views"]["unit"]["correct"], 2);
  EXPECT_FALSE(st.contains("recovery"));
  EXPECT_EQ(au["recovery"]["fraction"]["recovered"], 1);
  EXPECT_EQ(au["recovery"]["fraction"]["rules"]["strip_bold"], 1);
  // Failures per outcome, including the missing record.
  EXPECT_EQ(st["failures"]["unit"]["missing"], 1);
  EXPECT_EQ(st["failures"]["fraction"]["format_error"], 1);
  EXPECT_EQ(au["failures"]["fraction"]["format_error"], 0);
  EXPECT_EQ(st["failures"]["canonical"]["unit_error"], 1);
  // Magnitude drops: LV-0002 (70 for 7, k = -1) only; 2 vs 1 and 3 vs 1 are not powers of ten.
  EXPECT_EQ(st["magnitude_drops"]["total"], 1);
  EXPECT_EQ(st["magnitude_drops"]["by_k"]["-1"], 1);
  EXPECT_EQ(st["magnitude_drops"]["by_template"]["LV"]["total"], 1);
  // Templates.
  EXPECT_EQ(st["templates"]["LV"]["n_bases"], 3);
  EXPECT_EQ(st["templates"]["LV"]["orbit"]["correct"], 1);
  EXPECT_EQ(st["templates"]["LV"]["orbit"]["invariant"], 2);
  EXPECT_FALSE(st["templates"]["LV"]["views"].contains("fraction"));
  // No token counts in these records: no tokens section.
  EXPECT_FALSE(st.contains("tokens"));
  // Family fraction on its 7 bases: canonical correct CV-0001, CV-0002, FC-0001, FC-0003;
  // transformed correct CV-0001, FC-0003 -> c = 2, t = 0.
  const auto& fr = st["families"]["fraction"];
  EXPECT_EQ(fr["n"], 7);
  EXPECT_EQ(fr["c"], 2);
  EXPECT_EQ(fr["t"], 0);
  EXPECT_DOUBLE_EQ(fr["p"].get<double>(), stats::mcnemar_exact_p(2, 0));
  EXPECT_FALSE(fr["material"].get<bool>());
  EXPECT_FALSE(st["families"].contains("percent")) << "families absent from the benchmark";
  EXPECT_TRUE(st["h2"]["holds"].get<bool>());  // 30 points
  EXPECT_FALSE(st["h1"]["holds"].get<bool>());
  EXPECT_TRUE(au["h1"]["descriptive"].get<bool>());
}

// 1,000 paired bases: fraction gap exactly 30/1000 (material), unit gap 29/1000 (not).
TEST(Families, MaterialThresholdIsExactAndHolmApplies) {
  const auto dir = fresh_dir("material");
  std::vector<FxBase> bases;
  std::vector<FxScore> scores;
  for (int i = 1; i <= 1000; ++i) {
    const std::string id = fmt::format("RL-{:04d}", i);
    bases.push_back({id, "RL", "5", {"canonical", "fraction", "unit"}});
    scores.push_back(both(id + ":canonical", "correct", "5"));
    scores.push_back(i <= 30 ? both(id + ":fraction", "value_error", "6")
                             : both(id + ":fraction", "correct", "5"));
    scores.push_back(i > 500 && i <= 529 ? both(id + ":unit", "value_error", "50")
                                         : both(id + ":unit", "correct", "5"));
  }
  write_bench(dir / "bench", bases);
  write_scores(dir / "s.jsonl", scores);
  const auto bench = orbit::load_benchmark(dir / "bench");
  const auto sys = load_scores(dir / "s.jsonl", bench, "sys");
  const auto m = to_json(compute_metrics(bench, {sys}, quick(1000)));
  const auto& fams = m["systems"]["sys"]["strict"]["families"];
  EXPECT_EQ(fams["fraction"]["c"], 30);
  EXPECT_EQ(fams["unit"]["c"], 29);
  EXPECT_TRUE(fams["fraction"]["material"].get<bool>()) << "gap = 0.03 exactly is material";
  EXPECT_FALSE(fams["unit"]["material"].get<bool>()) << "gap = 0.029 is not";
  const auto adj = stats::holm({stats::mcnemar_exact_p(30, 0), stats::mcnemar_exact_p(29, 0)});
  EXPECT_DOUBLE_EQ(fams["fraction"]["p_holm"].get<double>(), adj[0]);
  EXPECT_DOUBLE_EQ(fams["unit"]["p_holm"].get<double>(), adj[1]);
  const auto& h1 = m["systems"]["sys"]["strict"]["h1"];
  EXPECT_TRUE(h1["holds"].get<bool>());
  ASSERT_EQ(h1["families"].size(), 1u);
  EXPECT_EQ(h1["families"][0], "fraction");
  // Bootstrap interval of the fraction gap: the 30 discordant bases resampled; contains 0.03,
  // lies above 0 and is no wider than a few binomial standard errors.
  const double lo = fams["fraction"]["ci"][0].get<double>();
  const double hi = fams["fraction"]["ci"][1].get<double>();
  EXPECT_LE(lo, 0.03);
  EXPECT_GE(hi, 0.03);
  EXPECT_GT(lo, 0.01);
  EXPECT_LT(hi, 0.05);
  // Orbit gap: 59 of 1000 bases lose orbit correctness.
  EXPECT_DOUBLE_EQ(m["systems"]["sys"]["strict"]["orbit_gap"]["value"].get<double>(), 0.059);
  EXPECT_EQ(m["systems"]["sys"]["strict"]["magnitude_drops"]["by_k"]["-1"], 29);
  std::filesystem::remove_all(dir);
}

TEST(Bootstrap, MetricsIdenticalWhateverTheThreadCount) {
  const auto dir = fresh_dir("threads");
  std::vector<FxBase> bases;
  std::vector<FxScore> a, b;
  for (int i = 1; i <= 300; ++i) {
    const std::string id = fmt::format("CV-{:04d}", i);
    bases.push_back({id, "CV", "2", {"canonical", "fraction", "unit"}});
    a.push_back(both(id + ":canonical", i % 17 == 0 ? "format_error" : "correct",
                     i % 17 == 0 ? std::nullopt : std::optional<std::string>("2")));
    a.push_back(both(id + ":fraction", i % 5 == 0 ? "value_error" : "correct", i % 5 ? "2" : "3"));
    a.push_back(both(id + ":unit", i % 7 == 0 ? "value_error" : "correct", i % 7 ? "2" : "20"));
    b.push_back(both(id + ":canonical", "correct", "2"));
    b.push_back(both(id + ":fraction", i % 4 == 0 ? "value_error" : "correct", i % 4 ? "2" : "3"));
    b.push_back(both(id + ":unit", "correct", "2"));
  }
  write_bench(dir / "bench", bases);
  write_scores(dir / "a.jsonl", a);
  write_scores(dir / "b.jsonl", b);
  const auto bench = orbit::load_benchmark(dir / "bench");
  const std::vector<SystemScores> systems = {load_scores(dir / "a.jsonl", bench),
                                             load_scores(dir / "b.jsonl", bench)};
  const auto one = to_json(compute_metrics(bench, systems, quick(500, 1)));
  const auto three = to_json(compute_metrics(bench, systems, quick(500, 3)));
  EXPECT_EQ(io::to_line(one), io::to_line(three));
  // A system's intervals do not depend on which other systems are reported with it.
  const auto alone = to_json(compute_metrics(bench, {systems[0]}, quick(500, 2)));
  EXPECT_EQ(io::to_line(alone["systems"]["a"]), io::to_line(one["systems"]["a"]));
  std::filesystem::remove_all(dir);
}

TEST(Comparisons, PairedDifferences) {
  const auto dir = fresh_dir("paired");
  std::vector<FxBase> bases;
  std::vector<FxScore> a, b;
  for (int i = 1; i <= 1000; ++i) {
    const std::string id = fmt::format("CV-{:04d}", i);
    bases.push_back({id, "CV", "2", {"canonical", "fraction"}});
    // A: 100 fraction errors; B: the same 100 plus 20 more.
    const bool a_wrong = i % 10 == 0;
    const bool b_wrong = a_wrong || (i % 10 == 3 && i <= 200);
    a.push_back(both(id + ":canonical", "correct", "2"));
    b.push_back(both(id + ":canonical", "correct", "2"));
    a.push_back(a_wrong ? both(id + ":fraction", "value_error", "3")
                        : both(id + ":fraction", "correct", "2"));
    b.push_back(b_wrong ? both(id + ":fraction", "value_error", "3")
                        : both(id + ":fraction", "correct", "2"));
  }
  write_bench(dir / "bench", bases);
  write_scores(dir / "a.jsonl", a);
  write_scores(dir / "b.jsonl", b);
  const auto bench = orbit::load_benchmark(dir / "bench");
  const auto m = to_json(compute_metrics(
      bench, {load_scores(dir / "a.jsonl", bench), load_scores(dir / "b.jsonl", bench)}, quick(2000)));
  ASSERT_EQ(m["comparisons"].size(), 1u);
  const auto& c = m["comparisons"][0];
  EXPECT_EQ(c["a"], "a");
  EXPECT_EQ(c["b"], "b");
  const auto& gap = c["strict"]["families"]["fraction"]["gap"];
  EXPECT_DOUBLE_EQ(gap["difference"].get<double>(), -0.02);
  // Paired: every draw's difference is minus the resampled share of the 20 extra errors, so the
  // interval lies strictly below 0 and around -0.02 (an unpaired interval would straddle 0).
  EXPECT_LT(gap["ci"][1].get<double>(), 0.0);
  EXPECT_LT(gap["ci"][0].get<double>(), -0.02);
  EXPECT_GT(gap["ci"][0].get<double>(), -0.04);
  const auto& can = c["strict"]["canonical_correct"];
  EXPECT_EQ(can["difference"].get<double>(), 0.0);
  EXPECT_EQ(can["ci"][0].get<double>(), 0.0);
  EXPECT_EQ(can["ci"][1].get<double>(), 0.0);
  std::filesystem::remove_all(dir);
}

TEST(Tokens, InclusiveQuartilesAndLengthFinishes) {
  const auto dir = fresh_dir("tokens");
  std::vector<FxBase> bases;
  std::vector<FxScore> s;
  const int tokens[] = {10, 20, 30, 40};
  for (int i = 1; i <= 4; ++i) {
    const std::string id = fmt::format("LV-{:04d}", i);
    bases.push_back({id, "LV", "9", {"canonical", "scientific"}});
    FxScore c = both(id + ":canonical", "correct", "9");
    c.tokens = tokens[i - 1];
    s.push_back(c);
    FxScore t = both(id + ":scientific", i == 4 ? "truncation_error" : "correct",
                     i == 4 ? std::nullopt : std::optional<std::string>("9"));
    if (i == 4) t.finish_reason = "length";
    t.tokens = 100 * i;
    s.push_back(t);
  }
  write_bench(dir / "bench", bases);
  write_scores(dir / "s.jsonl", s);
  const auto bench = orbit::load_benchmark(dir / "bench");
  const auto m = to_json(compute_metrics(bench, {load_scores(dir / "s.jsonl", bench)}, quick(50)));
  const auto& t = m["systems"]["s"]["strict"]["tokens"];
  EXPECT_DOUBLE_EQ(t["canonical"]["median"].get<double>(), 25.0);
  EXPECT_DOUBLE_EQ(t["canonical"]["q1"].get<double>(), 17.5);
  EXPECT_DOUBLE_EQ(t["canonical"]["q3"].get<double>(), 32.5);
  EXPECT_EQ(t["canonical"]["length_finishes"], 0);
  EXPECT_EQ(t["scientific"]["length_finishes"], 1);
  EXPECT_EQ(t["scientific"]["count"], 4);
  EXPECT_EQ(m["systems"]["s"]["audit"]["tokens"], t) << "the same in both layers";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace numcheck::report
