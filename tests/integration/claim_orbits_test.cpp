// The claim-orbit commands end to end through the real CLI: generate (byte-identical twice), run
// with external predictions, report (metrics.json, report.md, report.html), usage errors.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "cli_support.hpp"
#include "io/files.hpp"
#include "io/json.hpp"

namespace numcheck {
namespace {

namespace fs = std::filesystem;
using testing::Child;
using testing::fresh_dir;
using testing::run_cli;

using testing::kServer;

TEST(ClaimOrbitsCli, GenerateRunReport) {
  const fs::path d = fresh_dir("claim_orbits");
  io::write_file_atomic(
      d / "claims.jsonl",
      "{\"id\": \"a\", \"claim\": \"Families making $86k pay 80% of the tax\"}\n"
      "{\"id\": \"b\", \"claim\": \"In 2019 the <b>Part 1</b> plan cost Rs 4 lakh crore\"}\n");
  const auto g1 = run_cli(fmt::format("claims orbit generate --claims '{}' --out '{}'",
                                      (d / "claims.jsonl").string(), (d / "o1").string()));
  ASSERT_EQ(g1.exit_code, 0) << g1.err;
  const auto g2 = run_cli(fmt::format("claims orbit generate --claims '{}' --out '{}'",
                                      (d / "claims.jsonl").string(), (d / "o2").string()));
  ASSERT_EQ(g2.exit_code, 0) << g2.err;
  EXPECT_EQ(io::read_file(d / "o1" / "claims.jsonl"), io::read_file(d / "o2" / "claims.jsonl"));
  EXPECT_EQ(io::read_file(d / "o1" / "manifest.json"), io::read_file(d / "o2" / "manifest.json"));
  const auto m = io::read_json_file(d / "o1" / "manifest.json");
  EXPECT_EQ(m["claims"].get<int>(), 2);
  EXPECT_GT(m["variants"].get<int>(), 5);

  // An external system: True on the originals, False on the words variants, True elsewhere.
  std::string csv = "variant_id,verdict\na,True\nb,SUPPORTS\n";
  io::for_each_line(d / "o1" / "claims.jsonl", [&](const io::Line& l) {
    const auto j = io::parse_json(l.text, "claims.jsonl");
    for (const auto& v : j["variants"])
      csv += v["id"].get<std::string>() + "," + (v["form"] == "words" ? "False" : "True") + "\n";
  });
  io::write_file_atomic(d / "ext.csv", csv);
  const auto r =
      run_cli(fmt::format("claims orbit run --orbits '{}' --method external --predictions '{}' --out '{}'",
                          (d / "o1").string(), (d / "ext.csv").string(), (d / "run").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rep = run_cli(
      fmt::format("claims orbit report --orbits '{}' --predictions '{}' --out '{}' --draws 200",
                  (d / "o1").string(), (d / "run" / "predictions.csv").string(), (d / "rep").string()));
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_NE(rep.out.find("Claim orbits"), std::string::npos);
  const auto mj = io::read_json_file(d / "rep" / "metrics.json");
  const auto& s = mj["systems"][0];
  EXPECT_EQ(s["forms"]["words"]["invariance"].get<double>(), 0.0);
  EXPECT_EQ(s["forms"]["digits"]["invariance"].get<double>(), 1.0);
  EXPECT_EQ(s["orbit_invariance"]["invariant"].get<int>(), 0);
  const std::string html = io::read_file(d / "rep" / "report.html");
  EXPECT_NE(html.find("<mark>"), std::string::npos);
  EXPECT_EQ(html.find("<b>Part"), std::string::npos);  // claim text is escaped

  // A missing verdict: exit 3.
  io::write_file_atomic(d / "short.csv", "variant_id,verdict\na,True\n");
  const auto r3 =
      run_cli(fmt::format("claims orbit run --orbits '{}' --method external --predictions '{}' --out '{}'",
                          (d / "o1").string(), (d / "short.csv").string(), (d / "run3").string()));
  EXPECT_EQ(r3.exit_code, 3);
  // Usage errors: unknown form, unknown method.
  EXPECT_EQ(run_cli(fmt::format("claims orbit generate --claims '{}' --out '{}' --forms bogus",
                                (d / "claims.jsonl").string(), (d / "o3").string()))
                .exit_code,
            2);
  EXPECT_EQ(run_cli(fmt::format("claims orbit run --orbits '{}' --method magic --out '{}'",
                                (d / "o1").string(), (d / "run4").string()))
                .exit_code,
            2);
  fs::remove_all(d);
}

// `claims orbit run --folds K`: cross-validated verdicts of the trained verifier (a model per fold,
// trained on the other folds), deterministic; and `orbit report --claim-orbits` puts the section
// into the main report and metrics.json (file paths relative to the report).
TEST(ClaimOrbitsCli, CrossValidatedRunAndMainReportSection) {
  const fs::path d = fresh_dir("claim_orbits_cv");
  std::string ev;
  const char* kLabels[] = {"True", "False", "Conflicting"};
  const char* kText[] = {"Unemployment fell to {}% in {} from 5% a year earlier",
                         "The city spent ${} million on {} new buses",
                         "About {} thousand people moved to the state in {}"};
  for (int i = 0; i < 24; ++i) {
    const std::string claim = fmt::format(fmt::runtime(kText[i % 3]), 3 + i, 2000 + i);
    ev += fmt::format(
        R"({{"id":"c{}","claim":"{}","label":"{}","questions":[],"selection":"gold","evidence":[{{"doc_id":"d{}","text":"Official figures: {} and {} percent; reports said it {}."}}]}})"
        "\n",
        i, claim, kLabels[(i / 3) % 3], i, 3 + i, 10 + i, i % 2 == 0 ? "rose" : "fell");
  }
  io::write_file_atomic(d / "ev.jsonl", ev);
  auto r = run_cli(fmt::format("claims orbit generate --claims '{}' --out '{}'", (d / "ev.jsonl").string(),
                               (d / "o").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* run : {"cv1", "cv2"}) {
    r = run_cli(
        fmt::format("claims orbit run --orbits '{}' --evidence '{}' --method trained --folds 3 --numbers "
                    "surface --out '{}'",
                    (d / "o").string(), (d / "ev.jsonl").string(), (d / run).string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const std::string preds = io::read_file(d / "cv1" / "predictions.csv");
  EXPECT_EQ(preds, io::read_file(d / "cv2" / "predictions.csv"));
  for (int i = 0; i < 24; ++i) EXPECT_NE(preds.find(fmt::format("\nc{},", i)), std::string::npos) << i;
  const auto m = io::read_json_file(d / "cv1" / "run.json");
  EXPECT_EQ(m["cross_validation"]["folds"].get<int>(), 3);
  EXPECT_EQ(m["cross_validation"]["numbers"].get<std::string>(), "surface");
  EXPECT_EQ(m["missing"].get<int>(), 0);
  // Usage: --folds with a model, or without labelled evidence.
  EXPECT_EQ(run_cli(fmt::format("claims orbit run --orbits '{}' --evidence '{}' --method trained --folds 3 "
                                "--model x.json --out '{}'",
                                (d / "o").string(), (d / "ev.jsonl").string(), (d / "bad").string()))
                .exit_code,
            2);
  fs::copy_file(d / "cv1" / "predictions.csv", d / "trained_surface_cv3.csv");
  r = run_cli(
      fmt::format("claims orbit report --orbits '{}' --predictions '{}' --gold '{}' --draws 100 --out '{}'",
                  (d / "o").string(), (d / "trained_surface_cv3.csv").string(), (d / "ev.jsonl").string(),
                  (d / "rep").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;

  // The main report with the section: a small orbit run of the reference system.
  r = run_cli(fmt::format("orbit generate --out '{}'", (d / "bench").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli(
      fmt::format("orbit run --bench '{}' --out '{}' --system reference --bases 8 --progress none --no-fsync",
                  (d / "bench").string(), (d / "run").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli(fmt::format("orbit score --bench '{}' --responses '{}' --out '{}'", (d / "bench").string(),
                          (d / "run" / "responses.jsonl").string(), (d / "scores.jsonl").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli(fmt::format(
      "orbit report --bench '{}' --scores '{}' --bootstrap 50 --claim-orbits '{}' --out '{}'",
      (d / "bench").string(), (d / "scores.jsonl").string(), (d / "rep").string(), (d / "report").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string md = io::read_file(d / "report" / "report.md");
  EXPECT_NE(md.find("## Claim orbits"), std::string::npos);
  EXPECT_NE(md.find(R"(trained\_surface\_cv3)"), std::string::npos);
  const auto mj = io::read_json_file(d / "report" / "metrics.json");
  bool found = false;
  for (const auto& s : mj["extra_sections"]) {
    if (s["section"] != "claim_orbits") continue;
    found = true;
    EXPECT_EQ(s["files"][0]["file"].get<std::string>(), "../rep/metrics.json");
    EXPECT_EQ(s["metrics"][0]["system"].get<std::string>(), "trained_surface_cv3");
    EXPECT_EQ(s["metrics"][0], io::read_json_file(d / "rep" / "metrics.json")["systems"][0]);
  }
  EXPECT_TRUE(found);
  // A folder without metrics.json is a usage error.
  EXPECT_EQ(run_cli(fmt::format("orbit report --bench '{}' --scores '{}' --claim-orbits '{}' --out '{}'",
                                (d / "bench").string(), (d / "scores.jsonl").string(), (d / "o").string(),
                                (d / "report2").string()))
                .exit_code,
            2);
  fs::remove_all(d);
}

// Any verifier through the evidence file of the orbits: `claims orbit evidence`, the LLM verifier of
// `claims verify` against the test server (its verdict is a hash of the claim text unless the text
// carries a [true] marker), then `claims orbit run --method external` on its predictions.jsonl. An
// unparseable answer is no verdict: counted, reported missing, exit 3; never guessed.
TEST(ClaimOrbitsCli, LlmVerifierThroughTheOrbitsEvidenceFile) {
  const fs::path d = fresh_dir("claim_orbits_llm");
  std::string ev;
  const std::string claims[] = {"[true] Families making $86,000 pay 80% of the tax",
                                "[true] The city spent $1.5 million on 1,200 new buses",
                                "Unemployment fell to 3.5% for 14,940 workers",
                                "[malformed] The budget of $2,500 rose by 25%"};
  for (std::size_t i = 0; i < std::size(claims); ++i)
    ev += fmt::format(
        R"({{"id":"c{}","claim":"{}","label":"True","questions":[],"selection":"gold","evidence":[{{"doc_id":"d{}","text":"Figures."}}]}})"
        "\n",
        i, claims[i], i);
  io::write_file_atomic(d / "ev.jsonl", ev);
  auto r = run_cli(fmt::format("claims orbit generate --claims '{}' --out '{}'", (d / "ev.jsonl").string(),
                               (d / "o").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli(fmt::format("claims orbit evidence --orbits '{}' --evidence '{}' --out '{}'",
                          (d / "o").string(), (d / "ev.jsonl").string(), (d / "orbit-ev.jsonl").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::size_t records = 0, variants = 0;
  io::for_each_line(d / "o" / "claims.jsonl", [&](const io::Line& l) {
    variants += io::parse_json(l.text, "claims.jsonl")["variants"].size();
  });
  io::for_each_line(d / "orbit-ev.jsonl", [&](const io::Line& l) {
    const auto j = io::parse_json(l.text, "orbit-ev.jsonl");
    EXPECT_EQ(j["evidence"][0]["text"], "Figures.");  // the original's evidence for every variant
    ++records;
  });
  EXPECT_EQ(records, std::size(claims) + variants);

  Child server({kServer, "--claims"}, true);
  ASSERT_FALSE(server.first_line.empty());
  r =
      run_cli(fmt::format("claims verify --method llm --evidence '{}' --endpoint '{}' --model test-model "
                          "--no-cache --progress none "
                          "--out '{}'",
                          (d / "orbit-ev.jsonl").string(), server.first_line, (d / "llm").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  fs::copy_file(d / "llm" / "predictions.jsonl", d / "llm_test.jsonl");
  r = run_cli(fmt::format("claims orbit run --orbits '{}' --method external --predictions '{}' --out '{}'",
                          (d / "o").string(), (d / "llm_test.jsonl").string(), (d / "run").string()));
  EXPECT_EQ(r.exit_code, 3) << r.err;  // the [malformed] claim and its variants have no verdict
  const auto m = io::read_json_file(d / "run" / "run.json");
  EXPECT_GT(m["unparseable"].get<int>(), 0);
  EXPECT_EQ(m["unparseable"], m["missing"]);
  r = run_cli(fmt::format("claims orbit report --orbits '{}' --predictions '{}' --draws 100 --out '{}'",
                          (d / "o").string(), (d / "llm_test.jsonl").string(), (d / "rep").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s = io::read_json_file(d / "rep" / "metrics.json")["systems"][0];
  EXPECT_EQ(s["system"], "llm_test");
  EXPECT_GT(s["missing_original"].get<int>(), 0);
  fs::remove_all(d);
}

}  // namespace
}  // namespace numcheck
