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
using testing::fresh_dir;
using testing::run_cli;

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

}  // namespace
}  // namespace numcheck
