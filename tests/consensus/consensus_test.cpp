// The consensus study's library: plan construction and the plan file, the per-base decision
// rule, arm-level analysis with exact AURC, the paired bootstrap, and the outputs.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "consensus/analyze.hpp"
#include "consensus/plan.hpp"
#include "consensus/study.hpp"
#include "core/error.hpp"
#include "io/files.hpp"

namespace numcheck::consensus {
namespace {

using num::Rational;
namespace fs = std::filesystem;

// A small in-memory benchmark: `per` bases of each template, in shuffled file order, each with
// canonical, fraction, unit (percent for FC), paraphrase1 and paraphrase2 views.
orbit::Benchmark small_bench(const std::vector<std::string>& templates, int per, bool paraphrases = true) {
  orbit::Benchmark b;
  b.dir = "mem";
  for (const auto& t : templates) {
    for (int i = per; i >= 1; --i) {  // reverse id order: the plan must sort by id
      orbit::Base base;
      base.base_id = fmt::format("{}-{:04d}", t, i);
      base.template_id = t;
      base.canonical_unit = t == "DD" ? "km" : (t == "RL" ? "m" : "L");
      base.answer = Rational(10 * i + 1) / Rational(4);
      base.views = {"canonical", "fraction", t == "FC" ? "percent" : "unit"};
      if (paraphrases) {
        base.views.push_back("paraphrase1");
        base.views.push_back("paraphrase2");
      }
      for (const auto& v : base.views) {
        orbit::View view;
        view.prompt_id = base.base_id + ":" + v;
        view.base_id = base.base_id;
        view.template_id = t;
        view.view = v;
        view.prompt = fmt::format("prompt of {} <{}>", base.base_id, v);
        view.expected = base.answer;
        view.answer_unit = base.canonical_unit;
        b.views.push_back(view);
      }
      b.bases.push_back(base);
    }
  }
  b.reindex();
  b.file_sha256 = {{"bases.jsonl", "aa"}, {"views.jsonl", "bb"}};
  return b;
}

PlanOptions small_options(std::vector<std::string> templates, std::size_t per) {
  PlanOptions o;
  o.templates = std::move(templates);
  o.per_template = per;
  o.seed = 100;
  o.max_tokens = 512;
  return o;
}

// ---- plan --------------------------------------------------------------------------------------

TEST(ConsensusPlan, SubsetArmsSeedsAndSharedRequests) {
  const auto bench = small_bench({"CV", "FC"}, 3);
  const Plan p = make_plan(bench, small_options({"CV", "FC"}, 2));
  EXPECT_EQ(p.bases, (std::vector<std::string>{"CV-0001", "CV-0002", "FC-0001", "FC-0002"}));
  // 3 + 2 arms per base; 7 stochastic + 5 deterministic distinct requests per base.
  EXPECT_EQ(p.arms.size(), 4u * 5u);
  EXPECT_EQ(p.requests.size(), 4u * 12u);
  std::set<std::string> ids;
  for (const auto& r : p.requests) {
    EXPECT_TRUE(ids.insert(r.id).second) << r.id;
    EXPECT_EQ(r.seed, 100 + r.seed_offset);
    EXPECT_EQ(r.max_tokens, 512);
    if (r.tier == "deterministic") {
      EXPECT_EQ(r.sampling.temperature, 0.0);
      EXPECT_EQ(r.sampling.top_k, 1);
    } else {
      EXPECT_EQ(r.sampling.temperature, 0.7);
      EXPECT_EQ(r.sampling.top_p, 0.95);
      EXPECT_EQ(r.sampling.top_k, 20);
    }
  }
  for (const auto& a : p.arms) {
    // Position i of every arm is seed s + i, and position 0 is the tier's one canonical request.
    for (std::size_t i = 0; i < kCalls; ++i) EXPECT_EQ(p.requests[a.requests[i]].seed_offset, i);
    EXPECT_EQ(p.requests[a.requests[0]].id, fmt::format("{}:{}:canonical@0", a.tier, a.base_id));
    const std::string v1 = p.requests[a.requests[1]].view, v2 = p.requests[a.requests[2]].view;
    if (a.arm == "self_consistency") {
      EXPECT_EQ(a.tier, "stochastic");
      EXPECT_EQ(v1, "canonical");
      EXPECT_EQ(v2, "canonical");
    } else if (a.arm == "paraphrase") {
      EXPECT_EQ(v1, "paraphrase1");
      EXPECT_EQ(v2, "paraphrase2");
    } else {
      EXPECT_EQ(v1, "fraction");
      EXPECT_EQ(v2, a.base_id.rfind("FC", 0) == 0 ? "percent" : "unit");
    }
  }
  EXPECT_EQ(tier_arms("deterministic"), (std::vector<std::string>{"paraphrase", "representation"}));
}

TEST(ConsensusPlan, NeedsParaphrasesAndEnoughBases) {
  const auto no_para = small_bench({"CV"}, 3, false);
  try {
    (void)make_plan(no_para, small_options({"CV"}, 2));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--paraphrases"), std::string::npos) << e.what();
  }
  const auto few = small_bench({"CV"}, 3);
  EXPECT_THROW((void)make_plan(few, small_options({"CV"}, 4)), Error);
  EXPECT_THROW((void)make_plan(few, small_options({"CV", "CV"}, 1)), Error);
  auto o = small_options({"CV"}, 1);
  o.tiers = {"greedy"};
  EXPECT_THROW((void)make_plan(few, o), Error);
  o = small_options({"CV"}, 1);
  o.stochastic.top_p = 0;
  EXPECT_THROW((void)make_plan(few, o), Error);
}

TEST(ConsensusPlan, DeterministicOnlyTier) {
  auto o = small_options({"CV"}, 2);
  o.tiers = {"deterministic"};
  const Plan p = make_plan(small_bench({"CV"}, 2), o);
  EXPECT_EQ(p.arms.size(), 4u);
  EXPECT_EQ(p.requests.size(), 10u);
}

TEST(ConsensusPlan, JsonRoundTripAndTampering) {
  const Plan p = make_plan(small_bench({"CV", "FC"}, 2), small_options({"CV", "FC"}, 2));
  const io::OrderedJson j = plan_to_json(p);
  const Plan q = plan_from_json(io::Json::parse(j.dump()), "plan.json");
  EXPECT_EQ(plan_to_json(q).dump(), j.dump());
  EXPECT_EQ(q.requests.size(), p.requests.size());
  EXPECT_EQ(q.expected.at("FC-0002"), p.expected.at("FC-0002"));

  auto tamper = [&](const std::function<void(io::Json&)>& f) {
    io::Json t = io::Json::parse(j.dump());
    f(t);
    return t;
  };
  EXPECT_THROW((void)plan_from_json(tamper([](io::Json& t) { t["kind"] = "other"; }), "p"), Error);
  EXPECT_THROW((void)plan_from_json(tamper([](io::Json& t) { t["arms"][0]["requests"][1] = "nope"; }), "p"),
               Error);
  EXPECT_THROW((void)plan_from_json(tamper([](io::Json& t) { t["requests"][0]["seed_offset"] = 2; }), "p"),
               Error);
  EXPECT_THROW(
      (void)plan_from_json(tamper([](io::Json& t) { t["requests"][1]["id"] = t["requests"][0]["id"]; }), "p"),
      Error);
  EXPECT_THROW((void)plan_from_json(tamper([](io::Json& t) { t["requests"][0]["expected"] = "1/0"; }), "p"),
               Error);
  EXPECT_THROW((void)plan_from_json(tamper([](io::Json& t) { t["requests"][0]["expected"] = "999"; }), "p"),
               Error);
  EXPECT_THROW((void)plan_from_json(tamper([](io::Json& t) { t["arms"].erase(t["arms"].begin()); }), "p"),
               Error);
  EXPECT_THROW((void)plan_from_json(tamper([](io::Json& t) {
                                      t["arms"][0]["arm"] = "self_consistency";
                                      t["arms"][0]["tier"] = "deterministic";
                                    }),
                                    "p"),
               Error);
  EXPECT_THROW((void)plan_from_json(io::Json::array(), "p"), Error);
  EXPECT_THROW(
      (void)plan_from_json(tamper([](io::Json& t) { t["requests"][0]["max_tokens"] = 10000000000LL; }), "p"),
      Error);
  EXPECT_THROW((void)plan_from_json(tamper([](io::Json& t) { t["requests"][0]["top_k"] = -1; }), "p"), Error);
  EXPECT_THROW((void)plan_from_json(tamper([](io::Json& t) { t["requests"][0]["seed"] = -1; }), "p"), Error);
  try {
    (void)plan_from_json(tamper([](io::Json& t) { t["requests"][3].erase("prompt"); }), "plan.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("plan.json: missing field 'requests[3].prompt'"), std::string::npos)
        << e.what();
  }
}

// ---- the decision rule -------------------------------------------------------------------------

std::optional<Rational> v(long long x) { return Rational(x); }
const std::optional<Rational> kNone;
constexpr std::array<std::size_t, 3> k123 = {0, 1, 2}, k231 = {1, 2, 0}, k312 = {2, 0, 1};

TEST(ConsensusDecide, AgreementPredictionAndFallback) {
  struct Case {
    std::array<std::optional<Rational>, 3> values;
    std::array<std::size_t, 3> order;
    int agreement;
    std::optional<long long> predicted;
    std::optional<long long> fallback;
  };
  const std::vector<Case> cases = {
      {{v(5), v(5), v(5)}, k123, 3, 5, 5},
      {{v(5), v(7), v(5)}, k231, 2, 5, 5},   // the modal value, whatever the order
      {{v(7), v(7), v(5)}, k312, 2, 7, 7},   // a wrong majority is the prediction
      {{v(5), v(7), v(9)}, k123, 1, {}, 5},  // all differ: first parsed in priority order
      {{v(5), v(7), v(9)}, k231, 1, {}, 7},
      {{v(5), v(7), v(9)}, k312, 1, {}, 9},
      {{kNone, v(7), v(9)}, k123, 1, {}, 7},  // unparsed calls are skipped
      {{v(5), v(7), kNone}, k312, 1, {}, 5},
      {{kNone, kNone, v(9)}, k123, 1, {}, 9},
      {{kNone, v(4), v(4)}, k123, 2, 4, 4},
      {{kNone, kNone, kNone}, k123, 0, {}, {}},  // no parse: wrong
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    const Decision d = decide(c.values, Rational(5), c.order);
    EXPECT_EQ(d.agreement, c.agreement) << "case " << i;
    EXPECT_EQ(d.predicted.has_value(), c.predicted.has_value()) << "case " << i;
    if (c.predicted && d.predicted) {
      EXPECT_EQ(*d.predicted, Rational(*c.predicted)) << "case " << i;
    }
    EXPECT_EQ(d.fallback.has_value(), c.fallback.has_value()) << "case " << i;
    if (c.fallback && d.fallback) {
      EXPECT_EQ(*d.fallback, Rational(*c.fallback)) << "case " << i;
    }
    EXPECT_EQ(d.fallback_correct, c.fallback && *c.fallback == 5) << "case " << i;
  }
}

TEST(ConsensusDecide, ExactRationalEquality) {
  // 5/2 and 2.5 are one value; 1/3 and 0.333... are not.
  const std::array<std::optional<Rational>, 3> a = {Rational(5) / Rational(2), Rational(25) / Rational(10),
                                                    kNone};
  EXPECT_EQ(decide(a, Rational(5) / Rational(2), k123).agreement, 2);
  const std::array<std::optional<Rational>, 3> b = {Rational(1) / Rational(3),
                                                    Rational(333333333) / Rational(1000000000), kNone};
  EXPECT_EQ(decide(b, Rational(1) / Rational(3), k123).agreement, 1);
}

// ---- arm analysis ------------------------------------------------------------------------------

// Calls for the 4-base plan of CV and FC (2 each), by base index and view/position:
//   base 0: everything correct;
//   base 1: canonical@0 correct, fraction wrong (answer + 1), third view unparsed;
//   base 2: canonical@0 correct, fraction and third view both answer + 1 (a wrong majority);
//   base 3: nothing parses.
// Every other call (paraphrases, resampled canonical) is correct except on base 3.
std::vector<CallResult> scripted_calls(const Plan& p) {
  std::vector<CallResult> calls;
  for (const auto& r : p.requests) {
    const auto b =
        static_cast<std::size_t>(std::find(p.bases.begin(), p.bases.end(), r.base_id) - p.bases.begin());
    const Rational right = p.expected.at(r.base_id);
    CallResult c{true, right, true, "correct"};
    const bool third = r.view == "unit" || r.view == "percent";
    if (b == 3 || (b == 1 && third)) c = {true, std::nullopt, false, "format_error"};
    if ((b == 1 || b == 2) && r.view == "fraction") c = {true, right + Rational(1), false, "value_error"};
    if (b == 2 && third) c = {true, right + Rational(1), false, "value_error"};
    calls.push_back(c);
  }
  return calls;
}

TEST(ConsensusAnalyze, RepresentationArmCountsAndExactAurc) {
  const Plan p = make_plan(small_bench({"CV", "FC"}, 2), small_options({"CV", "FC"}, 2));
  const auto calls = scripted_calls(p);
  const SystemResult s = analyze_system(p, "sys", calls);
  for (const char* tier : {"stochastic", "deterministic"}) {
    const ArmResult& r = s.tiers.at(tier).at("representation");
    EXPECT_EQ(r.n_bases, 4u);
    EXPECT_EQ(r.agreement, (std::array<std::uint64_t, 4>{1, 1, 1, 1}));
    EXPECT_EQ(r.predictions, 2u);
    EXPECT_EQ(r.prediction_correct, 1u);
    EXPECT_EQ(r.prediction_wrong, 1u);
    EXPECT_EQ(r.abstentions, 2u);
    EXPECT_EQ(r.unanimous_correct, 1u);
    EXPECT_EQ(r.non_unanimous, 3u);
    // No ties: levels 3, 2, 1, 0 with losses 0, 1, 0, 1 -> (0/1 + 1/2 + 1/3 + 2/4) / 4 = 1/3.
    EXPECT_EQ(r.orders[0].aurc_exact, Rational(1) / Rational(3));
    EXPECT_DOUBLE_EQ(r.orders[0].aurc, 1.0 / 3.0);
    EXPECT_EQ(r.orders[0].useful_flags, 2u);
    EXPECT_EQ(r.orders[0].false_alarms, 1u);
    // Order 2-3-1 makes base 1 fall back on the wrong fraction call: losses 0, 1, 1, 1 -> 23/48.
    EXPECT_EQ(r.orders[1].order, (std::array<std::size_t, 3>{1, 2, 0}));
    EXPECT_EQ(r.orders[1].aurc_exact, Rational(23) / Rational(48));
    EXPECT_EQ(r.orders[1].useful_flags, 3u);
    EXPECT_EQ(r.orders[1].false_alarms, 0u);
    // Order 3-1-2: the third call did not parse, so the canonical call decides: as order 1-2-3.
    EXPECT_EQ(r.orders[2].aurc_exact, Rational(1) / Rational(3));
    EXPECT_EQ(r.orders[2].useful_flags, 2u);
    ASSERT_EQ(r.operating_points.size(), 4u);
    EXPECT_EQ(r.operating_points[0].threshold, 3);
    EXPECT_EQ(r.operating_points[0].accepted, 1u);
    EXPECT_EQ(r.operating_points[1].accepted, 2u);
    EXPECT_EQ(r.operating_points[1].errors, 1u);
    EXPECT_EQ(r.operating_points[2].accepted, 3u);
    EXPECT_EQ(r.operating_points[3].accepted, 4u);
    EXPECT_EQ(r.operating_points[3].errors, 2u);
    EXPECT_EQ(r.parsed, (std::array<std::uint64_t, 3>{3, 3, 2}));
    EXPECT_EQ(r.correct, (std::array<std::uint64_t, 3>{3, 1, 1}));
    EXPECT_EQ(r.curve.size(), 4u);
  }
  // Paraphrase: bases 0-2 unanimous and right, base 3 unparsed: 3/4 levels 3, loss only last.
  const ArmResult& para = s.tiers.at("stochastic").at("paraphrase");
  EXPECT_EQ(para.agreement, (std::array<std::uint64_t, 4>{1, 0, 0, 3}));
  // Tie of three correct at level 3, then one wrong: (0 + 0 + 0 + 1/4) / 4 = 1/16.
  EXPECT_EQ(para.orders[0].aurc_exact, Rational(1) / Rational(16));
  EXPECT_EQ(para.orders[0].useful_flags, 1u);
  EXPECT_EQ(para.orders[0].false_alarms, 0u);
  EXPECT_EQ(s.tiers.at("deterministic").count("self_consistency"), 0u);
}

TEST(ConsensusAnalyze, MissingCallsCountAsUnparsed) {
  const Plan p = make_plan(small_bench({"CV"}, 2), small_options({"CV"}, 2));
  std::vector<CallResult> calls(p.requests.size(), CallResult{true, std::nullopt, false, "format_error"});
  for (std::size_t i = 0; i < p.requests.size(); ++i) calls[i].value = p.expected.at(p.requests[i].base_id);
  calls[0] = CallResult{};  // never answered
  const SystemResult s = analyze_system(p, "sys", calls);
  std::uint64_t missing = 0;
  for (const auto& [arm, r] : s.tiers.at(p.requests[0].tier)) missing += r.missing_calls;
  EXPECT_EQ(missing, 3u);  // the shared canonical@0 request belongs to all three arms
  EXPECT_EQ(s.tiers.at(p.requests[0].tier).at("paraphrase").agreement[2], 1u);
  EXPECT_THROW((void)analyze_system(p, "sys", std::vector<CallResult>(2)), Error);
}

TEST(ConsensusBootstrap, DegenerateCellsGiveExactZeroIntervals) {
  const Plan p = make_plan(small_bench({"CV", "FC"}, 2), small_options({"CV", "FC"}, 2));
  std::vector<CallResult> calls;
  for (const auto& r : p.requests)
    calls.push_back(CallResult{true, p.expected.at(r.base_id), true, "correct"});
  SystemResult s = analyze_system(p, "perfect", calls);
  AnalysisOptions o;
  o.bootstrap = 500;
  const auto comps = bootstrap_system(s, o);
  ASSERT_EQ(comps.size(), 4u);  // 3 stochastic pairs + 1 deterministic
  for (const auto& c : comps) {
    EXPECT_EQ(c.difference, 0.0);
    EXPECT_TRUE(c.difference_exact.is_zero());
    ASSERT_TRUE(c.ci.has_value());
    EXPECT_EQ(c.ci->lo, 0.0);
    EXPECT_EQ(c.ci->hi, 0.0);
  }
  EXPECT_EQ(s.tiers.at("stochastic").at("paraphrase").aurc_ci->hi, 0.0);
}

TEST(ConsensusBootstrap, ReproducibleAndIndependentOfThreads) {
  const Plan p = make_plan(small_bench({"CV", "FC"}, 2), small_options({"CV", "FC"}, 2));
  const auto calls = scripted_calls(p);
  SystemResult a = analyze_system(p, "x", calls), b = analyze_system(p, "x", calls);
  AnalysisOptions o1, o2;
  o1.bootstrap = o2.bootstrap = 400;
  o1.threads = 1;
  o2.threads = 2;
  const auto ca = bootstrap_system(a, o1), cb = bootstrap_system(b, o2);
  ASSERT_EQ(ca.size(), cb.size());
  bool some_spread = false;
  for (std::size_t i = 0; i < ca.size(); ++i) {
    EXPECT_EQ(ca[i].ci->lo, cb[i].ci->lo);
    EXPECT_EQ(ca[i].ci->hi, cb[i].ci->hi);
    EXPECT_LE(ca[i].ci->lo, ca[i].ci->hi);
    some_spread |= ca[i].ci->hi > ca[i].ci->lo;
  }
  EXPECT_TRUE(some_spread);
  // representation - paraphrase in the stochastic tier: 1/3 - 1/16 = 13/48.
  for (const auto& c : ca) {
    if (c.tier == "stochastic" && c.arm == "representation" && c.baseline == "paraphrase") {
      EXPECT_EQ(c.difference_exact, Rational(13) / Rational(48));
    }
  }
  AnalysisOptions none;
  none.bootstrap = 0;
  SystemResult d = analyze_system(p, "x", calls);
  for (const auto& c : bootstrap_system(d, none)) EXPECT_FALSE(c.ci.has_value());
}

// ---- outputs -----------------------------------------------------------------------------------

TEST(ConsensusOutputs, JsonShapeAndEscapedReports) {
  Analysis an;
  an.plan = make_plan(small_bench({"CV", "FC"}, 2), small_options({"CV", "FC"}, 2));
  const std::string hostile = "<script>alert(1)</script>|x";
  an.runs.push_back(SystemRun{hostile, "dir", hostile, true, 48, 0});
  an.systems.push_back(analyze_system(an.plan, hostile, scripted_calls(an.plan)));
  an.options.bootstrap = 200;
  an.comparisons = bootstrap_system(an.systems[0], an.options);

  const io::OrderedJson j = analysis_to_json(an);
  for (const char* tier : {"stochastic", "deterministic"}) {
    for (const auto& arm : tier_arms(tier)) {
      ASSERT_TRUE(j.at("systems").at(hostile).at(tier).at(arm).contains("aurc")) << tier << " " << arm;
    }
  }
  EXPECT_EQ(j.at("systems").at(hostile).at("stochastic").at("representation").at("aurc_exact"), "1/3");
  EXPECT_EQ(j.at("systems").at(hostile).at("stochastic").at("representation").at("sensitivity").size(), 3u);
  EXPECT_EQ(j.at("comparisons").size(), 4u);
  EXPECT_TRUE(j.at("runs").at(hostile).at("simulated").get<bool>());

  // The standalone outputs are the report section rendered: the same Document as
  // `orbit report --consensus` embeds, every outside string escaped, figures under figures/.
  const fs::path dir = fs::temp_directory_path() / fmt::format("numcheck_consensus_out_{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir / "figures");
  io::write_file_atomic(dir / "figures" / "09-consensus-rc-9-stochastic.svg", "stale");  // earlier analysis
  io::write_file_atomic(dir / "figures" / "01-other.svg", "kept");                       // not ours
  const std::vector<fs::path> written = write_outputs(an, dir);
  const doc::Document d = report_section(an);
  const std::string html = io::read_file(dir / "consensus.html");
  const std::string md = io::read_file(dir / "consensus.md");
  EXPECT_EQ(html, d.to_html("numcheck consensus study"));
  EXPECT_EQ(md, d.to_markdown());
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(html.find("id=\"consensus-sensitivity\""), std::string::npos);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  // Every element id of the section once (headings and tables used to share three).
  for (const char* id : {"consensus", "consensus-stochastic", "consensus-design", "consensus-arms-stochastic",
                         "consensus-operating-stochastic", "consensus-rc-1-stochastic",
                         "consensus-differences", "consensus-differences-table", "consensus-sensitivity",
                         "consensus-sensitivity-table", "consensus-calls", "consensus-calls-table"}) {
    const std::string attr = fmt::format("id=\"{}\"", id);
    const auto first = html.find(attr);
    EXPECT_NE(first, std::string::npos) << id;
    EXPECT_EQ(html.find(attr, first + 1), std::string::npos) << id;
  }
  EXPECT_NE(html.find("H3 verdict: "), std::string::npos);
  EXPECT_NE(html.find("Systems marked (simulated)"), std::string::npos);
  EXPECT_EQ(md.find("<script>"), std::string::npos);
  EXPECT_NE(md.find("\\|x"), std::string::npos);
  EXPECT_NE(md.find("H3 verdict: "), std::string::npos);
  EXPECT_NE(md.find("> **Note:** Systems marked (simulated)"), std::string::npos);
  EXPECT_NE(md.find("### Consensus: fallback-order sensitivity"), std::string::npos);
  EXPECT_NE(md.find("### Consensus: deterministic (greedy) tier"), std::string::npos);
  EXPECT_NE(md.find("**Calls by position**"), std::string::npos);
  // One figure per tier (one system), linked from consensus.md and written where it points.
  const auto figs = d.figure_files();
  ASSERT_EQ(figs.size(), 2u);
  for (const auto& [file, svg] : figs) {
    EXPECT_NE(md.find("](figures/" + file + ")"), std::string::npos) << file;
    EXPECT_EQ(io::read_file(dir / "figures" / file), svg) << file;
    EXPECT_NE(svg.find("<style>"), std::string::npos);
    EXPECT_EQ(svg.find("<script>"), std::string::npos);
  }
  EXPECT_EQ(figs[0].first, "01-consensus-rc-1-stochastic.svg");
  EXPECT_FALSE(fs::exists(dir / "figures" / "09-consensus-rc-9-stochastic.svg"));
  EXPECT_TRUE(fs::exists(dir / "figures" / "01-other.svg"));
  EXPECT_EQ(written.size(), 5u);  // two figures, consensus.json, consensus.md, consensus.html
  fs::remove_all(dir);
}

TEST(ConsensusOutputs, ReportSectionFromConsensusJson) {
  Analysis an;
  an.plan = make_plan(small_bench({"CV", "FC"}, 2), small_options({"CV", "FC"}, 2));
  const std::string hostile = "<b>x</b>|y";
  an.runs.push_back(SystemRun{hostile, "dir", "m", true, 48, 0});
  an.systems.push_back(analyze_system(an.plan, hostile, scripted_calls(an.plan)));
  an.runs.push_back(SystemRun{"a-second", "dir2", "m2", false, 48, 0});
  an.systems.push_back(analyze_system(an.plan, "a-second", scripted_calls(an.plan)));
  an.options.bootstrap = 100;
  for (auto& sys : an.systems) {
    auto c = bootstrap_system(sys, an.options);
    an.comparisons.insert(an.comparisons.end(), c.begin(), c.end());
  }
  an.plan_sha256 = std::string(64, 'a');
  const std::string text = io::to_pretty(analysis_to_json(an));
  const Analysis back = analysis_from_json(text, "c.json");
  // The systems keep their order (not sorted by name) and every table and figure is identical.
  ASSERT_EQ(back.systems.size(), 2u);
  EXPECT_EQ(back.systems[0].name, hostile);
  EXPECT_EQ(back.systems[1].name, "a-second");
  const doc::Document d1 = report_section(an), d2 = report_section(back);
  EXPECT_EQ(d1.to_markdown(), d2.to_markdown());
  EXPECT_EQ(d1.to_html("t"), d2.to_html("t"));
  EXPECT_EQ(d1.figure_files().size(), 4u);  // two systems x two tiers
  const std::string md = d2.to_markdown();
  EXPECT_NE(md.find("## Consensus study (H3)"), std::string::npos);
  EXPECT_NE(md.find("&lt;b&gt;x&lt;/b&gt;\\|y"), std::string::npos);
  EXPECT_EQ(md.find("<b>"), std::string::npos);
  EXPECT_NE(md.find("](figures/01-consensus-rc-1-stochastic.svg)"), std::string::npos);
  const std::string html = d2.to_html("t");
  EXPECT_EQ(html.find("<b>x"), std::string::npos);
  EXPECT_NE(html.find("id=\"consensus-rc-2-deterministic\""), std::string::npos);

  // Foreign or damaged files: one readable error naming the file and field.
  auto j = analysis_to_json(an);
  j["kind"] = "something";
  EXPECT_THROW((void)analysis_from_json(io::to_pretty(j), "c.json"), Error);
  j = analysis_to_json(an);
  j["systems"][hostile]["stochastic"]["paraphrase"].erase("sensitivity");
  try {
    (void)analysis_from_json(io::to_pretty(j), "c.json");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("c.json: missing field 'systems."), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("stochastic.paraphrase.sensitivity'"), std::string::npos)
        << e.what();
  }
  j = analysis_to_json(an);
  j["comparisons"][0]["aurc_difference_exact"] = "0.1x";
  EXPECT_THROW((void)analysis_from_json(io::to_pretty(j), "c.json"), Error);
  EXPECT_THROW((void)analysis_from_json("{", "c.json"), Error);
  EXPECT_THROW((void)analysis_from_json("[]", "c.json"), Error);
}

TEST(ConsensusVerdict, H3FromTheIntervalsOfRepresentationMinusEachControl) {
  Analysis an;
  an.plan = make_plan(small_bench({"CV", "FC"}, 2), small_options({"CV", "FC"}, 2));
  an.systems.push_back(SystemResult{"A", {}});
  an.systems.push_back(SystemResult{"B", {}});
  auto cmp = [](std::string sys, std::string tier, std::string base, double lo, double hi) {
    Comparison c;
    c.system = std::move(sys);
    c.tier = std::move(tier);
    c.arm = "representation";
    c.baseline = std::move(base);
    c.difference = (lo + hi) / 2;
    c.ci = stats::Interval{lo, hi};
    return c;
  };
  // A, stochastic: below 0 against both controls -> supports. A, deterministic: paraphrase
  // interval includes 0 -> does not. B: both include 0.
  an.comparisons = {cmp("A", "stochastic", "paraphrase", -0.2, -0.1),
                    cmp("A", "stochastic", "self_consistency", -0.3, -0.01),
                    cmp("A", "deterministic", "paraphrase", -0.1, 0.0),
                    cmp("B", "stochastic", "paraphrase", 0.0, 0.0),
                    cmp("B", "stochastic", "self_consistency", -0.1, 0.1),
                    cmp("B", "deterministic", "paraphrase", -0.1, 0.2)};
  H3Verdict v = h3_verdict(an);
  EXPECT_EQ(v.status, "mixed");
  EXPECT_EQ(v.cells, 4u);
  EXPECT_EQ(v.supporting, 1u);
  EXPECT_NE(v.text.find("1 of 4"), std::string::npos) << v.text;
  EXPECT_TRUE(v.json["by_cell"][0]["supports"].get<bool>());
  EXPECT_FALSE(v.json["by_cell"][1]["supports"].get<bool>());

  // One control below 0 is not enough: representation must beat both.
  an.comparisons[1] = cmp("A", "stochastic", "self_consistency", -0.3, 0.01);
  EXPECT_EQ(h3_verdict(an).status, "unsupported");
  for (auto& c : an.comparisons) c.ci = stats::Interval{-0.5, -0.1};
  EXPECT_EQ(h3_verdict(an).status, "supported");
  an.comparisons[0].ci.reset();  // no bootstrap: cannot decide
  EXPECT_EQ(h3_verdict(an).status, "undetermined");
  an.comparisons.clear();
  EXPECT_EQ(h3_verdict(an).status, "undetermined");
}

TEST(ConsensusOutputs, TablesShowDecimalsNotLongFractions) {
  Analysis an;
  an.plan = make_plan(small_bench({"CV", "FC"}, 2), small_options({"CV", "FC"}, 2));
  an.runs.push_back(SystemRun{"s", "dir", "m", false, 48, 0});
  an.systems.push_back(SystemResult{"s", {}});
  Comparison c;
  c.system = "s";
  c.tier = "stochastic";
  c.arm = "representation";
  c.baseline = "paraphrase";
  // A difference with a 70-digit denominator, as exact AURC averages produce.
  mpz_class big;
  mpz_ui_pow_ui(big.get_mpz_t(), 7, 80);
  c.difference_exact = num::Rational(mpz_class(69), mpz_class(1000000)) + num::Rational(mpz_class(1), big);
  c.difference = c.difference_exact.to_double();
  c.ci = stats::Interval{0.0, 0.000419};
  an.comparisons.push_back(c);
  Comparison z = c;
  z.arm = "paraphrase";
  z.baseline = "self_consistency";
  z.difference_exact = num::Rational(0);
  z.difference = 0;
  an.comparisons.push_back(z);
  const std::string md = report_section(an).to_markdown();
  EXPECT_EQ(md.find(c.difference_exact.str()), std::string::npos);
  EXPECT_NE(md.find("~0.000069000"), std::string::npos) << md;
  EXPECT_NE(md.find("0 (exactly)"), std::string::npos);
  // consensus.json keeps the exact fraction.
  EXPECT_EQ(analysis_to_json(an)["comparisons"][0]["aurc_difference_exact"], c.difference_exact.str());
}

}  // namespace
}  // namespace numcheck::consensus
