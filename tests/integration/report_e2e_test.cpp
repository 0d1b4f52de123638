// End to end: generate the default benchmark, simulate a system with known injected error rates
// per view (responses written directly with numcheck::Rng), score it with `orbit score`, report it
// with `orbit report`, and check that the report recovers the injected rates within its
// intervals, for both layers, plus the orbit rate, family gaps, magnitude drops and tokens.
#include <cmath>
#include <map>

#include <gtest/gtest.h>

#include "cli_support.hpp"
#include "core/prng.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "orbit/benchmark.hpp"

namespace numcheck::testing {
namespace {

namespace fs = std::filesystem;

// Injected per view: w = parseable wrong value (expected x 10, a magnitude drop with k = -1),
// m = markdown-wrapped FINAL line (strict format_error, recovered by the audit), t = truncated
// (finish_reason "length": a failure in both layers).
struct Faults {
  double w, m, t;
};
const std::map<std::string, Faults> kFaults = {
    {"canonical", {0.02, 0.03, 0.00}}, {"fraction", {0.08, 0.02, 0.00}}, {"scientific", {0.03, 0.40, 0.02}},
    {"percent", {0.05, 0.00, 0.00}},   {"words", {0.01, 0.05, 0.00}},    {"unit", {0.25, 0.00, 0.01}},
};

// Interval level used for the checks: 99.9%, so that the ~30 simultaneous coverage checks below
// fail by chance with probability of about 3% at most (a 95% level would fail about 4 times in 5).
constexpr const char* kLevel = "0.999";

TEST(ReportEndToEnd, RecoversInjectedRatesWithinIntervals) {
  const fs::path dir = fresh_dir("report_e2e");
  auto g = run_cli(fmt::format("orbit generate --out '{}'", (dir / "bench").string()));
  ASSERT_EQ(g.exit_code, 0) << g.err;
  const orbit::Benchmark bench = orbit::load_benchmark(dir / "bench");

  // The simulated system: responses.jsonl plus run.json saying it is simulated.
  fs::create_directories(dir / "run");
  Rng rng(20260725, "report-e2e-simulated-system");
  std::string responses;
  for (const auto& v : bench.views) {
    const Faults f = kFaults.at(v.view);
    const double u = rng.unit();
    std::string text = fmt::format("Working...\nFINAL: {} {}", v.expected.str(), v.answer_unit);
    std::string finish = "stop";
    if (u < f.w) {
      text = fmt::format("Hmm.\nFINAL: {} {}", (v.expected * 10).str(), v.answer_unit);
    } else if (u < f.w + f.m) {
      text = fmt::format("**FINAL: {} {}**", v.expected.str(), v.answer_unit);
    } else if (u < f.w + f.m + f.t) {
      text = "Let me think step by step about";
      finish = "length";
    }
    io::OrderedJson r = io::OrderedJson::object();
    r["prompt_id"] = v.prompt_id;
    r["response"] = text;
    r["finish_reason"] = finish;
    r["usage"] = {{"completion_tokens", 40 + static_cast<int>(rng.below(80))}};
    responses += io::to_line(r) + "\n";
  }
  io::write_file_atomic(dir / "run" / "responses.jsonl", responses);
  io::write_file_atomic(dir / "run" / "run.json", R"({"model": "injected-faults", "simulated": true})");

  auto s =
      run_cli(fmt::format("orbit score --bench '{}' --responses '{}' --out '{}'", (dir / "bench").string(),
                          (dir / "run" / "responses.jsonl").string(), (dir / "sim.scores.jsonl").string()));
  ASSERT_EQ(s.exit_code, 0) << s.err;
  auto rep = run_cli(fmt::format(
      "orbit report --bench '{}' --scores '{}' --out '{}' --bootstrap 2000 --level {}",
      (dir / "bench").string(), (dir / "sim.scores.jsonl").string(), (dir / "report").string(), kLevel));
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  for (const char* f : {"metrics.json", "report.md", "report.html", "report.tex"}) {
    ASSERT_TRUE(fs::exists(dir / "report" / f)) << f;
  }

  const io::Json m = io::read_json_file(dir / "report" / "metrics.json");
  ASSERT_TRUE(m["systems"].contains("injected-faults")) << m["systems"].dump();
  const io::Json& sys = m["systems"]["injected-faults"];
  EXPECT_TRUE(sys["simulated"].get<bool>());
  EXPECT_EQ(sys["missing"], 0);

  auto within = [](const io::Json& ci, double truth, const std::string& what) {
    ASSERT_TRUE(ci.is_array()) << what;
    EXPECT_LE(ci[0].get<double>(), truth) << what;
    EXPECT_GE(ci[1].get<double>(), truth) << what;
  };
  for (const auto& [view, f] : kFaults) {
    const double strict_truth = 1.0 - f.w - f.m - f.t;
    const double audit_truth = 1.0 - f.w - f.t;
    within(sys["strict"]["views"][view]["wilson"], strict_truth, "strict " + view);
    within(sys["audit"]["views"][view]["wilson"], audit_truth, "audit " + view);
    // Injected truncations are the only length finishes.
    if (f.t == 0) {
      EXPECT_EQ(sys["strict"]["tokens"][view]["length_finishes"], 0) << view;
    } else {
      EXPECT_GT(sys["strict"]["tokens"][view]["length_finishes"].get<int>(), 0) << view;
    }
    // Every injected wrong value is a magnitude drop with k = -1 (parsed x 10^-1 = expected).
    const auto& fails = sys["audit"]["failures"][view];
    const auto& drops = sys["audit"]["magnitude_drops"]["by_view"];
    const int value_errors = fails["value_error"].get<int>();
    EXPECT_EQ(drops.contains(view) ? drops[view]["by_k"]["-1"].get<int>() : 0, value_errors) << view;
    // The audit recovers exactly the markdown-wrapped responses.
    EXPECT_EQ(sys["audit"]["recovery"][view]["recovered"].get<int>(),
              sys["audit"]["views"][view]["correct"].get<int>() -
                  sys["strict"]["views"][view]["correct"].get<int>())
        << view;
  }

  // Orbit correctness: the expected rate is the mean over bases of the product of the per-view
  // success probabilities of the base's eligible views (views fail independently).
  std::map<std::string, std::vector<std::string>> orbit_views;
  for (const auto& v : bench.views) {
    if (kFaults.count(v.view)) orbit_views[v.base_id].push_back(v.view);
  }
  double strict_orbit = 0, audit_orbit = 0;
  for (const auto& [base, views] : orbit_views) {
    double ps = 1, pa = 1;
    for (const auto& v : views) {
      const Faults f = kFaults.at(v);
      ps *= 1.0 - f.w - f.m - f.t;
      pa *= 1.0 - f.w - f.t;
    }
    strict_orbit += ps;
    audit_orbit += pa;
  }
  strict_orbit /= static_cast<double>(orbit_views.size());
  audit_orbit /= static_cast<double>(orbit_views.size());
  within(sys["strict"]["orbit"]["wilson"], strict_orbit, "strict orbit");
  within(sys["audit"]["orbit"]["wilson"], audit_orbit, "audit orbit");

  // Family gaps: canonical minus transformed success probability, inside the bootstrap interval.
  const Faults c = kFaults.at("canonical");
  for (const auto& [view, f] : kFaults) {
    if (view == "canonical") continue;
    within(sys["audit"]["families"][view]["ci"], (f.w + f.t) - (c.w + c.t), "audit gap " + view);
    within(sys["strict"]["families"][view]["ci"], (f.w + f.m + f.t) - (c.w + c.m + c.t),
           "strict gap " + view);
  }
  // The large injected unit and scientific gaps are material; H1 and H2 hold under strict.
  EXPECT_TRUE(sys["strict"]["families"]["unit"]["material"].get<bool>());
  EXPECT_TRUE(sys["strict"]["families"]["scientific"]["material"].get<bool>());
  EXPECT_FALSE(sys["audit"]["families"]["words"]["material"].get<bool>())
      << "words fail less often than canonical: a negative gap is never material";
  EXPECT_TRUE(sys["strict"]["h1"]["holds"].get<bool>());
  EXPECT_TRUE(sys["strict"]["h2"]["holds"].get<bool>());

  // Every report labels the simulated system.
  for (const char* f : {"report.md", "report.html", "report.tex"}) {
    const std::string text = io::read_file(dir / "report" / f);
    EXPECT_NE(text.find("injected-faults (simulated)"), std::string::npos) << f;
  }
  fs::remove_all(dir);
}

TEST(ReportEndToEnd, UsageErrors) {
  const fs::path dir = fresh_dir("report_usage");
  auto r = run_cli(fmt::format("orbit report --bench '{}' --out '{}'", dir.string(), dir.string()));
  // --scores is required: a CLI11 parse error (main.cpp maps those, not this command).
  EXPECT_NE(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("--scores"), std::string::npos) << r.err;
  r = run_cli(fmt::format("orbit report --bench '{}' --scores x --out '{}' --bootstrap 0", dir.string(),
                          dir.string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = run_cli(fmt::format("orbit report --bench '{}' --scores '{}' --out '{}'", (dir / "nope").string(),
                          (dir / "s.jsonl").string(), (dir / "out").string()));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("nope"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

// The score files are loaded side by side (one thread per core) but judged in order: the error is
// the first bad file's in command-line order, and a duplicate name before a bad file is reported
// as a one-by-one load would, whichever thread finishes first.
TEST(ReportEndToEnd, TheFirstBadScoresFileInOrderIsReported) {
  const fs::path dir = fresh_dir("report_load_order");
  auto g = run_cli(fmt::format("orbit generate --out '{}'", (dir / "bench").string()));
  ASSERT_EQ(g.exit_code, 0) << g.err;
  io::write_file_atomic(dir / "empty.jsonl", "");
  io::write_file_atomic(dir / "bad_b.jsonl", "{\"prompt_id\": \"nope-b\"}\n");
  io::write_file_atomic(dir / "bad_a.jsonl", "{\"prompt_id\": \"nope-a\"}\n");
  const auto report = [&](const std::vector<std::string>& files) {
    std::string scores;
    for (const auto& f : files) scores += fmt::format(" '{}'", (dir / f).string());
    return run_cli(fmt::format("orbit report --bench '{}' --scores{} --out '{}' --bootstrap 10",
                               (dir / "bench").string(), scores, (dir / "report").string()));
  };
  for (int round = 0; round < 3; ++round) {  // thread timing differs between rounds
    auto r = report({"empty.jsonl", "bad_a.jsonl", "bad_b.jsonl"});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("nope-a"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("nope-b"), std::string::npos) << r.err;
    r = report({"empty.jsonl", "bad_b.jsonl", "bad_a.jsonl"});
    EXPECT_NE(r.err.find("nope-b"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("nope-a"), std::string::npos) << r.err;
    r = report({"empty.jsonl", "empty.jsonl", "bad_b.jsonl"});
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.err.find("two systems are named 'empty'"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir / "report" / "metrics.json"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace numcheck::testing
