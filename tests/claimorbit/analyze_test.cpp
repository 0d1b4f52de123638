// Claim-orbit statistics: a verifier invariant by construction scores invariance exactly 1.0, one
// keyed on surface digits scores below it, and every figure equals a direct computation.
#include "claimorbit/analyze.hpp"

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../support/table_width.hpp"
#include "claimorbit/render.hpp"
#include "core/error.hpp"
#include "core/prng.hpp"
#include "io/json.hpp"
#include "stats/bootstrap.hpp"
#include "stats/tests.hpp"

namespace numcheck::claimorbit {
namespace {

using claims::Verdict;

std::vector<ClaimOrbit> sample_orbits() {
  const std::vector<std::string> texts = {
      "Families making $86k pay 80% of the tax",
      "India spent Rs 4 lakh crore on 1,200 roads",
      "between 10 and 20 percent of voters",
      "The road is 5 km long and cost $1.5 million",
      "14,940 jobs were lost and 25,000 people left",
      "a quarter of voters paid $2,500",
      "A$275 fine for 3 drivers",
      "It weighs 5 short tons and 12,345 kg",
  };
  std::vector<ClaimOrbit> out;
  for (std::size_t i = 0; i < texts.size(); ++i)
    out.push_back(generate_orbit("c" + std::to_string(i), texts[i]));
  return out;
}

// Verdicts from a function of the text, for the original (keyed by claim id) and every variant.
template <typename F>
Verdicts verdicts_of(const std::vector<ClaimOrbit>& orbits, F f) {
  Verdicts v;
  for (const auto& o : orbits) {
    v[o.id] = f(o.claim);
    for (const auto& var : o.variants) v[var.id] = f(var.text);
  }
  return v;
}

Verdict from_hash(std::string_view s) { return claims::kVerdicts[static_cast<std::size_t>(fnv1a64(s) % 3)]; }

// Reads canonical quantities only: invariant by construction.
Verdict canonical_stub(const std::string& text) {
  std::string k;
  for (const auto& q : quantity_keys(text)) k += q + ";";
  return from_hash(k);
}

// Keys on the surface digits: changes when a number is written differently.
Verdict surface_stub(const std::string& text) {
  std::string digits;
  for (char c : text)
    if (c >= '0' && c <= '9') digits += c;
  return from_hash(digits);
}

TEST(ClaimOrbitAnalysis, InvariantVerifierScoresExactlyOne) {
  const auto orbits = sample_orbits();
  const auto a = analyze(orbits, verdicts_of(orbits, canonical_stub), {}, {}, {});
  ASSERT_GT(a.all.pairs, 20u);
  EXPECT_EQ(a.all.invariant, a.all.pairs);
  EXPECT_EQ(a.all.invariance(), 1.0);
  for (const auto& [f, s] : a.by_form) EXPECT_EQ(s.invariance(), 1.0) << f;
  EXPECT_EQ(a.orbits_invariant, a.orbits);
  EXPECT_TRUE(a.examples.empty());
  EXPECT_TRUE(a.all.flips.empty());
}

TEST(ClaimOrbitAnalysis, SurfaceDigitVerifierScoresBelowOne) {
  const auto orbits = sample_orbits();
  const auto a = analyze(orbits, verdicts_of(orbits, surface_stub), {}, {}, {});
  EXPECT_LT(a.all.invariance(), 1.0);
  EXPECT_LT(a.orbits_invariant, a.orbits);
  EXPECT_FALSE(a.examples.empty());
  std::size_t flips = 0;
  for (const auto& [k, v] : a.all.flips) flips += v;
  EXPECT_EQ(flips, a.all.pairs - a.all.invariant);
}

TEST(ClaimOrbitAnalysis, StatisticsEqualADirectComputation) {
  const auto orbits = sample_orbits();
  const auto verdicts = verdicts_of(orbits, surface_stub);
  std::map<std::string, Verdict> gold;
  for (std::size_t i = 0; i < orbits.size(); ++i) gold[orbits[i].id] = claims::kVerdicts[i % 3];
  AnalyzeOptions opt;
  opt.draws = 400;
  opt.seed = 11;
  const auto a = analyze(orbits, verdicts, gold, {}, opt);
  // Direct: pairs over claims with variants, in file order; clusters = claims.
  std::size_t pairs = 0, inv = 0, b = 0, c = 0, oc_sum = 0, vc_sum = 0;
  std::vector<std::array<double, 3>> per;
  for (const auto& o : orbits) {
    if (o.variants.empty()) continue;
    std::array<double, 3> q{0, 0, 0};
    const Verdict ov = verdicts.at(o.id), g = gold.at(o.id);
    for (const auto& v : o.variants) {
      const Verdict vv = verdicts.at(v.id);
      ++pairs;
      inv += ov == vv;
      const bool oc = ov == g, vc = vv == g;
      b += oc && !vc;
      c += vc && !oc;
      oc_sum += oc;
      vc_sum += vc;
      q[0] += 1;
      q[1] += oc;
      q[2] += vc;
    }
    per.push_back(q);
  }
  EXPECT_EQ(a.all.pairs, pairs);
  EXPECT_EQ(a.all.invariant, inv);
  EXPECT_EQ(a.all.original_only_correct, b);
  EXPECT_EQ(a.all.variant_only_correct, c);
  EXPECT_DOUBLE_EQ(a.all.mcnemar_p, stats::mcnemar_exact_p(b, c));
  EXPECT_DOUBLE_EQ(a.all.accuracy_original, double(oc_sum) / double(pairs));
  EXPECT_DOUBLE_EQ(a.all.accuracy_variant, double(vc_sum) / double(pairs));
  const auto w = stats::wilson(inv, pairs);
  EXPECT_DOUBLE_EQ(a.all.invariance_ci.lo, w.lo);
  EXPECT_DOUBLE_EQ(a.all.invariance_ci.hi, w.hi);
  const auto reps = stats::bootstrap_counts(per.size(), 400, 11, [&](const stats::ClusterCounts& k) {
    double n = 0, o = 0, v = 0;
    for (std::size_t i = 0; i < per.size(); ++i) {
      n += double(k[i]) * per[i][0];
      o += double(k[i]) * per[i][1];
      v += double(k[i]) * per[i][2];
    }
    return (v - o) / n;
  });
  const auto iv = stats::percentile_interval(reps);
  EXPECT_DOUBLE_EQ(a.all.diff_ci.lo, iv.lo);
  EXPECT_DOUBLE_EQ(a.all.diff_ci.hi, iv.hi);
  // Orbit level.
  std::size_t orbits_inv = 0, n_orbits = 0;
  for (const auto& o : orbits) {
    if (o.variants.empty()) continue;
    ++n_orbits;
    bool all = true;
    for (const auto& v : o.variants) all = all && verdicts.at(v.id) == verdicts.at(o.id);
    orbits_inv += all;
  }
  EXPECT_EQ(a.orbits, n_orbits);
  EXPECT_EQ(a.orbits_invariant, orbits_inv);
  // Per form pairs add up to all pairs.
  std::size_t sum = 0;
  for (const auto& [f, s] : a.by_form) sum += s.pairs;
  EXPECT_EQ(sum, pairs);
}

TEST(ClaimOrbitAnalysis, MissingVerdictsAreCountedNotGuessed) {
  const auto orbits = sample_orbits();
  auto v = verdicts_of(orbits, canonical_stub);
  v.erase(orbits[0].id);
  v.erase(orbits[1].variants[0].id);
  const auto a = analyze(orbits, v, {}, {}, {});
  EXPECT_EQ(a.missing_original, 1u);
  EXPECT_EQ(a.missing_variants, orbits[0].variants.size() + 1);
}

// A form with no scored pair says "no pairs" (a bold 0.0 read as a measured total failure), and
// every table of the section fits the page in HTML and LaTeX, two long system names side by side.
TEST(ClaimOrbitReport, NoScoredPairsSaysSoAndEveryTableFitsThePage) {
  const auto orbits = sample_orbits();
  std::map<std::string, Verdict> gold;
  for (std::size_t i = 0; i < orbits.size(); ++i) gold[orbits[i].id] = claims::kVerdicts[i % 3];
  AnalyzeOptions opt;
  opt.draws = 200;
  auto a = analyze(orbits, verdicts_of(orbits, surface_stub), gold, {}, opt, "trained_surface_gold249");
  const auto b =
      analyze(orbits, verdicts_of(orbits, canonical_stub), gold, {}, opt, "trained_canonical_gold249");
  a.by_form.emplace_back("scale_letter", PairStats{});  // a form no variant of these claims has
  doc::Document d;
  add_section(d, {a, b});
  const std::string md = d.to_markdown();
  EXPECT_NE(md.find("| scale\\_letter | 0 | no pairs | - |"), std::string::npos) << md;
  EXPECT_EQ(md.find("| scale\\_letter | 0 | **"), std::string::npos) << md;
  std::size_t tables = 0;
  for (const auto& blk : d.blocks()) {
    if (blk.kind != doc::Block::Kind::kTable) continue;
    ++tables;
    EXPECT_LE(testing::html_min_chars(blk.table), testing::kHtmlMaxChars) << blk.table.caption;
    if (blk.in_latex) {
      EXPECT_LE(testing::latex_chars(blk.table), testing::kLatexMaxChars) << blk.table.caption;
    }
  }
  EXPECT_GE(tables, 5u);
}

TEST(ClaimOrbitAnalysis, ChangedSpanIsMarkedAndEscaped) {
  const std::string text = "<b>x</b> paid $86 thousand & more";
  const std::vector<Span> spans = {{14, 26, num::Rational(86000), "$86k", "$86 thousand"}};
  EXPECT_EQ(marked_html(text, spans), "&lt;b&gt;x&lt;/b&gt; paid <mark>$86 thousand</mark> &amp; more");
  EXPECT_EQ(marked_text(text, spans), "<b>x</b> paid [[$86 thousand]] & more");
}

}  // namespace
}  // namespace numcheck::claimorbit

namespace numcheck::claimorbit {
namespace {

// `orbit report --claim-orbits` reads the analysis back from metrics.json: the round trip keeps every
// figure (and the forms' order), and a damaged file is an error naming the field.
TEST(ClaimOrbitAnalysis, JsonRoundTripsAndDamageIsAnError) {
  const auto orbits = sample_orbits();
  std::map<std::string, Verdict> gold;
  for (std::size_t i = 0; i < orbits.size(); ++i) gold[orbits[i].id] = claims::kVerdicts[i % 3];
  AnalyzeOptions opt;
  opt.draws = 200;
  const auto a = analyze(orbits, verdicts_of(orbits, surface_stub), gold, {}, opt, "surface");
  ASSERT_FALSE(a.examples.empty());
  const std::string text = io::to_pretty(analysis_json(a));
  const auto back = analysis_from_json(io::parse_json(text, "m.json"), "m.json");
  EXPECT_EQ(io::to_pretty(analysis_json(back)), text);
  ASSERT_EQ(back.by_form.size(), a.by_form.size());
  for (std::size_t i = 0; i < a.by_form.size(); ++i) EXPECT_EQ(back.by_form[i].first, a.by_form[i].first);

  io::Json bad = io::parse_json(text, "m.json");
  bad["examples"][0]["spans"][0]["end"] = 100000;
  EXPECT_THROW((void)analysis_from_json(bad, "m.json"), Error);
  bad = io::parse_json(text, "m.json");
  bad["all_forms"]["invariant"] = bad["all_forms"]["pairs"].get<std::size_t>() + 1;
  try {
    (void)analysis_from_json(bad, "m.json");
    ADD_FAILURE() << "loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("all_forms.invariant"), std::string::npos) << e.what();
  }
  bad = io::parse_json(text, "m.json");
  bad["examples"][0]["original_verdict"] = "Maybe";
  EXPECT_THROW((void)analysis_from_json(bad, "m.json"), Error);
}

}  // namespace
}  // namespace numcheck::claimorbit
