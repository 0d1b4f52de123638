// Benchmark of `numcheck orbit report`: the full report (load 5 score files, compute both layers'
// metrics with 10,000 base-clustered bootstrap draws, write metrics.json, Markdown, HTML, LaTeX)
// on the default benchmark, plus its parts. Five simulated systems are generated once (responses
// with injected faults, graded by the real grader).
//
// It also exports the bootstrap's input (per-base 0/1 and -1/0/1 columns of every resampling
// frame) and the report's metrics.json to $TMPDIR/numcheck_bench_report/, where
// bench/numpy_bootstrap.py runs the same clustered bootstrap in numpy (multinomial resample counts
// per base times the columns) and compares timings and intervals:
//   build/release/bench/bench_report
//   /usr/bin/python3 bench/numpy_bootstrap.py /tmp/numcheck_bench_report
// With NUMCHECK_BENCH_REPORT_RUNS=DIR it uses DIR/bench and the score files DIR/system1..5/scores.jsonl
// instead (bench/compare.sh: runs written by `orbit run`) and exports to DIR.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "core/prng.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "orbit/benchmark.hpp"
#include "orbit/generate.hpp"
#include "orbit/score.hpp"
#include "orbit/spec.hpp"
#include "report/metrics.hpp"
#include "report/orbit_report.hpp"
#include "report/scores.hpp"

namespace {

namespace fs = std::filesystem;
using namespace numcheck;

constexpr std::size_t kSystems = 5;
constexpr std::size_t kDraws = 10000;

struct Faults {
  double wrong, markdown, sci_times, unit_slip, truncation;
};

// Five systems with different fault profiles (rates per response).
const Faults kProfiles[kSystems] = {
    {0.02, 0.02, 0.60, 0.01, 0.01}, {0.03, 0.01, 0.80, 0.02, 0.05}, {0.04, 0.01, 0.75, 0.02, 0.08},
    {0.01, 0.00, 0.05, 0.00, 0.00}, {0.05, 0.02, 0.50, 0.25, 0.01},
};

struct Fixture {
  fs::path dir;
  orbit::Benchmark bench;
  std::vector<fs::path> scores;

  Fixture() {
    // Score files made elsewhere (bench/compare.sh: runs `orbit run` wrote, scored by `orbit
    // score`): DIR/bench and DIR/system1..5/scores.jsonl; the bootstrap's input goes to DIR.
    if (const char* runs = std::getenv("NUMCHECK_BENCH_REPORT_RUNS"); runs != nullptr && *runs != '\0') {
      dir = runs;
      bench = orbit::load_benchmark(dir / "bench");
      for (std::size_t s = 0; s < kSystems; ++s)
        scores.push_back(dir / fmt::format("system{}", s + 1) / "scores.jsonl");
      export_frames();
      return;
    }
    dir = fs::temp_directory_path() / "numcheck_bench_report";
    fs::create_directories(dir);
    (void)orbit::generate_to_dir(dir / "bench", orbit::default_spec());
    bench = orbit::load_benchmark(dir / "bench");
    for (std::size_t s = 0; s < kSystems; ++s) {
      const Faults& f = kProfiles[s];
      Rng rng(20260725 + s, "bench-report-system");
      std::string lines;
      for (const auto& v : bench.views) {
        const std::string ans = v.expected.to_decimal().value_or(v.expected.str());
        std::string text =
            fmt::format("Adding the two amounts gives the total.\nFINAL: {} {}", ans, v.answer_unit);
        std::string finish = "stop";
        const double u = rng.unit();
        if (v.view == "scientific" && u < f.sci_times) {
          const auto p = ans.size() > 1 ? fmt::format("{}.{}", ans[0], ans.substr(1)) : ans;
          text = fmt::format("FINAL: {} x 10^{} {}", p, ans.size() - 1, v.answer_unit);
        } else if (v.view == "unit" && u < f.unit_slip) {
          text = fmt::format("FINAL: {} {}", (v.expected * 1000).str(), v.answer_unit);
        } else if (u < f.wrong) {
          text = fmt::format("FINAL: {} {}", (v.expected + 1).str(), v.answer_unit);
        } else if (u < f.wrong + f.markdown) {
          text = fmt::format("**FINAL: {} {}**", ans, v.answer_unit);
        } else if (u < f.wrong + f.markdown + f.truncation) {
          text = "Let me compute";
          finish = "length";
        }
        io::OrderedJson r = io::OrderedJson::object();
        r["prompt_id"] = v.prompt_id;
        r["response"] = text;
        r["finish_reason"] = finish;
        r["usage"] = {{"completion_tokens", 30 + static_cast<int>(rng.below(200))}};
        lines += io::to_line(r) + "\n";
      }
      const fs::path run = dir / fmt::format("system{}", s + 1);
      fs::create_directories(run);
      io::write_file_atomic(run / "responses.jsonl", lines);
      io::write_file_atomic(run / "run.json",
                            fmt::format(R"({{"model": "simulated-{}", "simulated": true}})", s + 1));
      const auto graded = orbit::score_responses(bench, run / "responses.jsonl");
      const fs::path out = run / "scores.jsonl";
      orbit::write_scores(bench, graded, run / "responses.jsonl", out, false);
      scores.push_back(out);
    }
    export_frames();
  }

  // The bootstrap's input, frame by frame, in the report's quantity order.
  void export_frames() {
    std::vector<report::SystemScores> systems;
    for (const auto& s : scores) systems.push_back(report::load_scores(s, bench));
    const auto L = report::make_layout(bench);
    io::OrderedJson frames = io::OrderedJson::array();
    auto add_frame = [&](const std::string& name, const std::vector<std::size_t>& bases, int fam) {
      io::OrderedJson fr = io::OrderedJson::object();
      fr["name"] = name;
      fr["n"] = bases.size();
      io::OrderedJson cols = io::OrderedJson::array();
      for (std::size_t s = 0; s < systems.size(); ++s) {
        for (std::size_t l = 0; l < 2; ++l) {
          std::vector<int> a, b, g;
          for (std::size_t bi : bases) {
            const auto flags = report::base_flags(L.bases[bi], systems[s], report::Layer(l));
            const int cc = flags.canonical_correct ? 1 : 0;
            int other = flags.orbit_correct ? 1 : 0;
            if (fam >= 0) {
              other =
                  systems[s].by_view[L.bases[bi].family[fam]].layer[l].outcome == report::Outcome::kCorrect
                      ? 1
                      : 0;
            }
            a.push_back(cc);
            b.push_back(other);
            g.push_back(cc - other);
          }
          for (const auto* col : {&a, &b, &g}) cols.push_back(*col);
        }
      }
      fr["columns"] = cols;  // [system][layer][canonical, other, gap] flattened
      frames.push_back(fr);
    };
    std::vector<std::size_t> all(L.bases.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    add_frame("orbit", all, -1);
    for (int f = 0; f < 5; ++f) add_frame(orbit::kFamilies[f], L.family_bases[f], f);
    io::OrderedJson j = io::OrderedJson::object();
    j["draws"] = kDraws;
    j["systems"] = kSystems;
    j["frames"] = frames;
    io::write_file_atomic(dir / "frames.json", io::to_line(j));
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

report::ReportInputs inputs(unsigned threads) {
  report::ReportInputs in;
  in.bench_dir = fixture().dir / "bench";
  in.scores = fixture().scores;
  in.out_dir = fixture().dir / "report";
  in.options.bootstrap_draws = kDraws;
  in.options.threads = threads;
  return in;
}

// The whole command: load benchmark and 5 score files, metrics, all four output files.
void BM_ReportFull(benchmark::State& state) {
  const auto in = inputs(static_cast<unsigned>(state.range(0)));
  for (auto _ : state) {
    auto out = report::run_orbit_report(in);
    benchmark::DoNotOptimize(out);
  }
  state.counters["systems"] = kSystems;  // time per system = real time / systems
}
BENCHMARK(BM_ReportFull)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

// Metrics only (both layers, 10,000 draws, 5 systems), the score files already loaded.
void BM_ComputeMetrics(benchmark::State& state) {
  const auto& f = fixture();
  std::vector<report::SystemScores> systems;
  for (const auto& s : f.scores) systems.push_back(report::load_scores(s, f.bench));
  report::ReportOptions opt;
  opt.bootstrap_draws = kDraws;
  opt.threads = static_cast<unsigned>(state.range(0));
  for (auto _ : state) {
    auto m = report::compute_metrics(f.bench, systems, opt);
    benchmark::DoNotOptimize(m);
  }
}
BENCHMARK(BM_ComputeMetrics)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

// Loading and checking the 5 score files against the benchmark.
void BM_LoadScores(benchmark::State& state) {
  const auto& f = fixture();
  for (auto _ : state) {
    for (const auto& s : f.scores) {
      auto sys = report::load_scores(s, f.bench);
      benchmark::DoNotOptimize(sys);
    }
  }
}
BENCHMARK(BM_LoadScores)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  (void)fixture();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  // Leave one report with the default settings for the numpy comparison.
  (void)report::run_orbit_report(inputs(0));
  fmt::print("inputs for bench/numpy_bootstrap.py: {}\n", fixture().dir.string());
  return 0;
}
