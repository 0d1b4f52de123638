// The consensus study end to end through the real CLI: generate (with paraphrases), plan, run the
// simulated reference system with injected faults, analyze; then re-derive every arm-level count
// from the faults the run recorded (independently of the grader and the analysis code) and compare.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "stats/selective.hpp"

namespace numcheck::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json read_json(const fs::path& p) { return json::parse(slurp(p)); }

const char* kConsensusInject = "times_ten=0.1,markdown=0.08,unit_slip=0.12,truncation=0.05";

class ConsensusE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fresh_dir("consensus_e2e"));
    const fs::path& d = *dir_;
    auto r = run_cli(fmt::format("orbit generate --out '{}' --paraphrases", (d / "bench").string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_cli(fmt::format("orbit consensus plan --bench '{}' --out '{}'", (d / "bench").string(),
                            (d / "plan.json").string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r =
        run_cli(fmt::format("orbit consensus run --plan '{}' --out '{}' --system reference --inject {} "
                            "--progress none --no-cache --no-fsync",
                            (d / "plan.json").string(), (d / "run").string(), kConsensusInject));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_cli(fmt::format("orbit consensus analyze --plan '{}' --run '{}' --out '{}' --bootstrap 300",
                            (d / "plan.json").string(), (d / "run").string(), (d / "out").string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static fs::path* dir_;
};
fs::path* ConsensusE2E::dir_ = nullptr;

// What the reference system's recorded fault implies for a strict-graded call: the right value,
// no parse (multiplication-form scientific notation, markdown, truncation), or a wrong value
// (a power-of-ten unit slip: the same wrong value for every call of a base).
enum class Cls { kRight, kNoParse, kWrong };

Cls class_of(const std::string& fault) {
  if (fault == "none") return Cls::kRight;
  if (fault == "unit_slip") return Cls::kWrong;
  return Cls::kNoParse;
}

struct Expected {
  std::array<std::uint64_t, 4> agreement{};
  std::uint64_t predictions = 0, prediction_wrong = 0, abstentions = 0, unanimous = 0, unanimous_wrong = 0,
                non_unanimous = 0;
  std::array<std::uint64_t, 3> useful{}, false_alarms{};
  std::vector<std::int64_t> level;
  std::array<std::vector<std::uint8_t>, 3> wrong;
};

TEST_F(ConsensusE2E, ArmCountsFollowFromTheInjectedFaults) {
  const fs::path& d = *dir_;
  const json plan = read_json(d / "plan.json");
  ASSERT_EQ(plan["bases"].size(), 120u);
  ASSERT_EQ(plan["requests"].size(), 120u * 12u);

  std::map<std::string, Cls> cls;
  std::map<std::string, std::uint64_t> fault_counts;
  for (const auto& rec : read_jsonl(d / "run" / "responses.jsonl")) {
    const std::string id = rec.at("request_id");
    ASSERT_TRUE(rec.contains("simulated_fault")) << id;
    const std::string fault = rec.at("simulated_fault");
    ++fault_counts[fault];
    ASSERT_TRUE(cls.emplace(id, class_of(fault)).second) << "duplicate record " << id;
    // The request went out with the plan's per-call sampling.
    const json& body = rec.at("request");
    const std::string tier = rec.at("tier");
    EXPECT_EQ(body.at("seed").get<std::uint64_t>(), 20260725u + rec.at("seed_offset").get<std::uint64_t>());
    EXPECT_EQ(body.at("temperature").get<double>(), tier == "deterministic" ? 0.0 : 0.7);
    EXPECT_EQ(body.at("max_tokens").get<std::int64_t>(), 2048);
  }
  ASSERT_EQ(cls.size(), plan["requests"].size());
  // Every injected fault kind occurred, so the comparison below is not vacuous.
  for (const char* f : {"none", "times_ten", "markdown", "unit_slip", "truncation"}) {
    EXPECT_GT(fault_counts[f], 0u) << f;
  }

  std::map<std::string, std::size_t> base_pos;
  for (std::size_t i = 0; i < plan["bases"].size(); ++i) base_pos[plan["bases"][i]["base_id"]] = i;
  std::map<std::pair<std::string, std::string>, Expected> expected;
  const std::array<std::array<int, 3>, 3> orders = {{{0, 1, 2}, {1, 2, 0}, {2, 0, 1}}};
  for (const auto& arm : plan["arms"]) {
    Expected& e = expected[{arm["tier"], arm["arm"]}];
    if (e.level.empty()) {
      e.level.assign(120, -1);
      for (auto& w : e.wrong) w.assign(120, 1);
    }
    std::array<Cls, 3> c{};
    for (int i = 0; i < 3; ++i) c[i] = cls.at(arm["requests"][i]);
    int right = 0, wrong = 0;
    for (Cls x : c) {
      right += x == Cls::kRight;
      wrong += x == Cls::kWrong;
    }
    const int level = std::max(right, wrong);  // all wrong values of a base are equal
    const std::size_t b = base_pos.at(arm["base_id"]);
    e.level[b] = level;
    ++e.agreement[level];
    if (level >= 2) {
      ++e.predictions;
      if (wrong >= 2) ++e.prediction_wrong;
    } else {
      ++e.abstentions;
    }
    if (level == 3) {
      ++e.unanimous;
      if (wrong == 3) ++e.unanimous_wrong;  // three identical unit slips: consistently wrong
    } else {
      ++e.non_unanimous;
    }
    for (int o = 0; o < 3; ++o) {
      bool ok = false;
      if (level >= 2) {
        ok = right >= 2;
      } else {
        for (int p : orders[o]) {
          if (c[p] != Cls::kNoParse) {
            ok = c[p] == Cls::kRight;
            break;
          }
        }
      }
      e.wrong[o][b] = ok ? 0 : 1;
      if (level < 3) ++(ok ? e.false_alarms[o] : e.useful[o]);
    }
  }
  ASSERT_EQ(expected.size(), 5u);  // 3 stochastic arms + 2 deterministic

  const json out = read_json(d / "out" / "consensus.json");
  ASSERT_TRUE(out["systems"].contains("reference")) << out["systems"].dump().substr(0, 200);
  EXPECT_TRUE(out["runs"]["reference"]["simulated"].get<bool>());
  std::uint64_t wrong_predictions = 0, level1 = 0;
  for (const auto& [key, e] : expected) {
    const auto& [tier, arm] = key;
    SCOPED_TRACE(tier + " " + arm);
    const json& a = out["systems"]["reference"][tier][arm];
    ASSERT_TRUE(a.is_object());
    EXPECT_EQ(a["n_bases"], 120);
    for (int l = 0; l <= 3; ++l)
      EXPECT_EQ(a["agreement"][std::to_string(l)].get<std::uint64_t>(), e.agreement[l]);
    EXPECT_EQ(a["predictions"].get<std::uint64_t>(), e.predictions);
    EXPECT_EQ(a["prediction_wrong"].get<std::uint64_t>(), e.prediction_wrong);
    EXPECT_EQ(a["abstentions"].get<std::uint64_t>(), e.abstentions);
    EXPECT_EQ(a["unanimous"]["decisions"].get<std::uint64_t>(), e.unanimous);
    EXPECT_EQ(a["unanimous"]["wrong"].get<std::uint64_t>(), e.unanimous_wrong);
    EXPECT_EQ(a["non_unanimous"].get<std::uint64_t>(), e.non_unanimous);
    ASSERT_EQ(a["sensitivity"].size(), 3u);
    for (int o = 0; o < 3; ++o) {
      EXPECT_EQ(a["sensitivity"][o]["useful_flags"].get<std::uint64_t>(), e.useful[o]) << "order " << o;
      EXPECT_EQ(a["sensitivity"][o]["false_alarms"].get<std::uint64_t>(), e.false_alarms[o]) << "order " << o;
      const auto g = stats::tie_groups(e.level, e.wrong[o]);
      EXPECT_NEAR(a["sensitivity"][o]["aurc"].get<double>(), stats::aurc(g), 1e-12);
    }
    EXPECT_EQ(a["useful_flags"], a["sensitivity"][0]["useful_flags"]);
    const auto g = stats::tie_groups(e.level, e.wrong[0]);
    EXPECT_NEAR(a["aurc"].get<double>(), stats::aurc(g), 1e-12);
    // Operating points 3, 2, 1, 0 at the group boundaries.
    ASSERT_EQ(a["operating_points"].size(), 4u);
    for (int t = 3, i = 0; t >= 0; --t, ++i) {
      const auto p = stats::operating_point(g, t);
      EXPECT_EQ(a["operating_points"][i]["threshold"], t);
      EXPECT_EQ(a["operating_points"][i]["accepted"].get<std::uint64_t>(), p.accepted);
      EXPECT_EQ(a["operating_points"][i]["errors"].get<std::uint64_t>(), p.errors);
    }
    ASSERT_TRUE(a["aurc_ci"].is_array());
    EXPECT_LE(a["aurc_ci"][0].get<double>(), a["aurc"].get<double>() + 1e-12);
    wrong_predictions += e.prediction_wrong;
    level1 += e.agreement[1];
  }
  // The injected rates produce wrong majorities and order-dependent fallbacks somewhere.
  EXPECT_GT(wrong_predictions, 0u);
  EXPECT_GT(level1, 0u);
  EXPECT_EQ(out["comparisons"].size(), 4u);
}

TEST_F(ConsensusE2E, ReportShowsBothTiersAllArmsAndSensitivity) {
  const fs::path& d = *dir_;
  const std::string md = slurp(d / "out" / "consensus.md");
  const std::string html = slurp(d / "out" / "consensus.html");
  // Both files are the one consensus section (consensus::report_section) rendered: the verdict
  // line, the simulated note, every table and the figures.
  for (const std::string& s :
       {std::string("H3 verdict: "), std::string("Consensus: stochastic tier"),
        std::string("Consensus: deterministic (greedy) tier"), std::string("self-consistency"),
        std::string("paraphrase"), std::string("representation"), std::string("fallback-order sensitivity"),
        std::string("AURC differences"), std::string("Calls by position"), std::string("(simulated)"),
        std::string("Systems marked (simulated) are the built-in reference system")}) {
    EXPECT_NE(md.find(s), std::string::npos) << s;
    EXPECT_NE(html.find(s), std::string::npos) << s;
  }
  for (const char* f : {"01-consensus-rc-1-stochastic.svg", "02-consensus-rc-1-deterministic.svg"}) {
    EXPECT_TRUE(fs::exists(d / "out" / "figures" / f)) << f;
    EXPECT_NE(md.find(std::string("](figures/") + f + ")"), std::string::npos) << f;
  }
  EXPECT_NE(html.find("id=\"consensus-rc-1-stochastic\""), std::string::npos);
  EXPECT_NE(html.find("id=\"consensus-rc-1-deterministic\""), std::string::npos);
  EXPECT_NE(html.find("id=\"consensus-sensitivity\""), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST_F(ConsensusE2E, RunManifestRecordsTheSamplingAsSentPerTier) {
  // The plan fixes each call's sampling and cap: run.json must say what was sent (the stochastic
  // tier at 0.7 / 0.95 / 20, the deterministic one greedy, every call capped at 2,048), not the
  // run-wide defaults (temperature 0, 1,024) that no call used.
  const fs::path& d = *dir_;
  const json run = read_json(d / "run" / "run.json");
  const json& by = run["sampling"]["by_tier"];
  ASSERT_TRUE(by.is_object()) << run["sampling"].dump();
  EXPECT_EQ(by["stochastic"]["temperature"], 0.7);
  EXPECT_EQ(by["stochastic"]["top_p"], 0.95);
  EXPECT_EQ(by["stochastic"]["top_k"], 20);
  EXPECT_EQ(by["stochastic"]["max_tokens"], 2048);
  EXPECT_EQ(by["deterministic"]["temperature"], 0.0);
  EXPECT_EQ(by["deterministic"]["top_k"], 1);
  EXPECT_EQ(by["deterministic"]["max_tokens"], 2048);
  // Seeds s, s + 1, s + 2 of the call positions.
  EXPECT_EQ(by["stochastic"]["seed"], json::array({20260725, 20260726, 20260727}));
  EXPECT_EQ(by["stochastic"]["calls"].get<std::size_t>() + by["deterministic"]["calls"].get<std::size_t>(),
            run["counts"]["items"].get<std::size_t>());
  EXPECT_EQ(run["binding"]["sampling"], run["sampling"]);
  // The benchmark's generator provenance rides along in the run and the analysis.
  EXPECT_EQ(run["consensus"]["benchmark"]["seed"], 20260725);
  EXPECT_TRUE(run["consensus"]["benchmark"]["prompt_version"].is_string());
  const json analysis = read_json(d / "out" / "consensus.json");
  EXPECT_EQ(analysis["benchmark"]["seed"], 20260725);
  EXPECT_TRUE(analysis["benchmark"]["generator_version"].is_string());
  EXPECT_TRUE(analysis["numcheck_version"].is_string());
}

// With --no-top-k no call carries the plan's top_k, so a server that refuses the field (OpenAI's
// API) answers every call, and run.json's sampling per tier says that none was sent.
TEST_F(ConsensusE2E, NoTopKRunsThePlanOnAServerThatRefusesTheField) {
  const fs::path& d = *dir_;
  Child server({kServer, "--bench", (d / "bench").string(), "--openai-fields"}, true);
  const std::string run = fmt::format(
      "orbit consensus run --plan '{}' --endpoint '{}' --model test-model "
      "--progress none --no-cache --no-fsync --concurrency 4",
      (d / "plan.json").string(), server.first_line);
  auto r = run_cli(fmt::format("{} --out '{}' --stop-after-same-errors 3", run, (d / "run_topk").string()));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.out.find("run again with --no-top-k"), std::string::npos) << r.out;

  r = run_cli(fmt::format("{} --out '{}' --no-top-k", run, (d / "run_notopk").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const json manifest = read_json(d / "run_notopk" / "run.json");
  const json& by = manifest["sampling"]["by_tier"];
  ASSERT_TRUE(by.is_object()) << manifest["sampling"].dump();
  for (const char* tier : {"stochastic", "deterministic"}) {
    EXPECT_FALSE(by[tier].contains("top_k")) << by.dump();
    EXPECT_TRUE(by[tier].contains("temperature")) << by.dump();
  }
  EXPECT_EQ(count_lines(d / "run_notopk" / "responses.jsonl"),
            manifest["counts"]["items"].get<std::size_t>());
  // The analysis of both runs says which sent no top_k, in consensus.json and the design table.
  r = run_cli(fmt::format(
      "orbit consensus analyze --plan '{}' --run '{}' --name ref --run '{}' --name hosted --out '{}' "
      "--bootstrap 0",
      (d / "plan.json").string(), (d / "run").string(), (d / "run_notopk").string(),
      (d / "out_notopk").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json analysis = read_json(d / "out_notopk" / "consensus.json");
  EXPECT_FALSE(analysis["runs"]["ref"].contains("top_k_sent")) << analysis["runs"].dump();
  EXPECT_EQ(analysis["runs"]["hosted"]["top_k_sent"], false) << analysis["runs"].dump();
  const std::string md = slurp(d / "out_notopk" / "consensus.md");
  EXPECT_NE(md.find("Runs made with --no-top-k sent no top\\_k (the column is the plan's): hosted."),
            std::string::npos)
      << md.substr(0, 3000);
}

TEST_F(ConsensusE2E, IncompleteForeignAndMalformedRunsAreRefused) {
  const fs::path& d = *dir_;
  const fs::path partial = d / "partial";
  fs::create_directories(partial);
  fs::copy_file(d / "run" / "run.json", partial / "run.json");
  const std::string records = slurp(d / "run" / "responses.jsonl");
  const auto first_nl = records.find('\n');
  {
    std::ofstream f(partial / "responses.jsonl", std::ios::binary);
    f << records.substr(first_nl + 1);  // drop the first record
  }
  const std::string plan = (d / "plan.json").string();
  auto r = run_cli(fmt::format("orbit consensus analyze --plan '{}' --run '{}' --out '{}' --bootstrap 0",
                               plan, partial.string(), (d / "o2").string()));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("--allow-partial"), std::string::npos) << r.err;
  // Two systems in one analysis, named in order; the partial one counts its missing call as unparsed.
  r = run_cli(
      fmt::format("orbit consensus analyze --plan '{}' --run '{}' --run '{}' --name full --name partial "
                  "--out '{}' --bootstrap 50 --allow-partial",
                  plan, (d / "run").string(), partial.string(), (d / "o2").string()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json two = read_json(d / "o2" / "consensus.json");
  EXPECT_EQ(two["runs"]["partial"]["missing_calls"], 1);
  EXPECT_EQ(two["runs"]["full"]["missing_calls"], 0);
  EXPECT_EQ(two["comparisons"].size(), 8u);
  const json first = read_json(d / "out" / "consensus.json");
  EXPECT_EQ(two["systems"]["full"]["deterministic"]["paraphrase"]["agreement"],
            first["systems"]["reference"]["deterministic"]["paraphrase"]["agreement"]);
  EXPECT_TRUE(fs::exists(d / "o2" / "figures" / "02-consensus-rc-2-stochastic.svg"));

  // A duplicated record names its line.
  {
    std::ofstream f(partial / "responses.jsonl", std::ios::binary);
    f << records << records.substr(0, first_nl + 1);
  }
  r = run_cli(fmt::format("orbit consensus analyze --plan '{}' --run '{}' --out '{}'", plan, partial.string(),
                          (d / "o3").string()));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("responses.jsonl:"), std::string::npos) << r.err;

  // A run made from another plan is refused.
  r = run_cli(fmt::format("orbit consensus plan --bench '{}' --out '{}' --per-template 2",
                          (d / "bench").string(), (d / "plan2.json").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli(fmt::format("orbit consensus analyze --plan '{}' --run '{}' --out '{}'",
                          (d / "plan2.json").string(), (d / "run").string(), (d / "o4").string()));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("different plan"), std::string::npos) << r.err;

  // Sampling is the plan's: the run-level sampling flags are usage errors.
  r = run_cli(fmt::format("orbit consensus run --plan '{}' --out '{}' --system reference --temperature 1",
                          plan, (d / "run2").string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

TEST(ConsensusCli, PlanNeedsParaphrasedBenchmark) {
  const fs::path d = fresh_dir("consensus_nopara");
  auto r = run_cli(fmt::format("orbit generate --out '{}'", (d / "bench").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli(fmt::format("orbit consensus plan --bench '{}' --out '{}'", (d / "bench").string(),
                          (d / "plan.json").string()));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--paraphrases"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d / "plan.json"));
  fs::remove_all(d);
}

}  // namespace
}  // namespace numcheck::testing
