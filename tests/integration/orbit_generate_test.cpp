// `numcheck orbit generate` and `numcheck orbit validate` as scripts see them: files, hashes,
// byte-identical regeneration, exit codes, and the errors of a bad spec.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cli_support.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "io/sha256.hpp"

namespace numcheck::testing {
namespace {

namespace fs = std::filesystem;

TEST(OrbitGenerateCli, DefaultBenchmarkIsCompleteValidAndReproducible) {
  const fs::path d = fresh_dir("orbit_gen");
  const auto g1 = run_cli("orbit generate --out " + quoted(d / "a"));
  ASSERT_EQ(g1.exit_code, 0) << g1.err;
  EXPECT_NE(g1.out.find("3600 bases and 8600 prompts"), std::string::npos) << g1.out;
  const auto g2 = run_cli("orbit generate --seed 20260725 --out " + quoted(d / "b"));
  ASSERT_EQ(g2.exit_code, 0) << g2.err;
  for (const char* f : {"bases.jsonl", "views.jsonl", "manifest.json"})
    EXPECT_EQ(io::sha256_file(d / "a" / f), io::sha256_file(d / "b" / f)) << f;

  const io::Json m = io::read_json_file(d / "a" / "manifest.json");
  EXPECT_EQ(m["counts"]["bases"], 3600);
  EXPECT_EQ(m["counts"]["prompts"], 8600);
  for (const char* f : {"fraction", "scientific", "percent", "words", "unit"})
    EXPECT_EQ(m["counts"]["families"][f], 1000);
  EXPECT_EQ(m["files"]["views.jsonl"]["sha256"], io::sha256_file(d / "a" / "views.jsonl"));
  EXPECT_EQ(m["files"]["bases.jsonl"]["sha256"], io::sha256_file(d / "a" / "bases.jsonl"));

  const auto v = run_cli("orbit validate " + quoted(d / "a"));
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  EXPECT_NE(v.out.find("reference solver 8600/8600"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("strict round trip 8600/8600"), std::string::npos) << v.out;
  EXPECT_EQ(v.err, "");  // not a TTY: no progress display

  const auto g3 = run_cli("orbit generate --seed 1 --out " + quoted(d / "c"));
  ASSERT_EQ(g3.exit_code, 0) << g3.err;
  EXPECT_NE(io::sha256_file(d / "a" / "views.jsonl"), io::sha256_file(d / "c" / "views.jsonl"));
  EXPECT_EQ(io::read_json_file(d / "c" / "manifest.json")["counts"], m["counts"]);
  fs::remove_all(d);
}

TEST(OrbitGenerateCli, ValidateCatchesAMutatedPromptNumber) {
  const fs::path d = fresh_dir("orbit_mut");
  ASSERT_EQ(run_cli("orbit generate --out " + quoted(d)).exit_code, 0);
  // Change "holds 8" to "holds 9"-style: the first digit after "holds " in one unit-view prompt.
  std::string views = io::read_file(d / "views.jsonl");
  const auto at = views.find("\"prompt_id\":\"CV-0007:unit\"");
  ASSERT_NE(at, std::string::npos);
  auto p = views.find("holds ", at) + 6;
  views[p] = views[p] == '9' ? '1' : static_cast<char>(views[p] + 1);
  io::write_file_atomic(d / "views.jsonl", views);
  // Keep the manifest consistent so the hash check alone cannot be what catches it.
  auto m = io::parse_ordered_json(io::read_file(d / "manifest.json"), "manifest");
  m["files"]["views.jsonl"]["sha256"] = io::sha256_hex(views);
  io::write_file_atomic(d / "manifest.json", io::to_pretty(m));

  const auto v = run_cli("orbit validate " + quoted(d));
  EXPECT_EQ(v.exit_code, 3) << v.out << v.err;
  EXPECT_NE(v.out.find("FAIL CV-0007:unit [solver]"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("reference solver 8599/8600"), std::string::npos) << v.out;
  fs::remove_all(d);
}

TEST(OrbitGenerateCli, BadSpecIsOneLineNamingTheField) {
  const fs::path d = fresh_dir("orbit_spec");
  std::string spec = io::read_file(fs::path(NUMCHECK_SOURCE_DIR) / "data/orbit/default_spec.json");
  const auto at = spec.find("\"program\": \"n * a\"");
  ASSERT_NE(at, std::string::npos);
  spec.replace(at, 18, "\"program\": \"n * x\"");
  io::write_file_atomic(d / "bad.json", spec);
  const auto r = run_cli("orbit generate --spec " + quoted(d / "bad.json") + " --out " + quoted(d / "out"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("bad.json:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("template RL"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("field 'program'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown name 'x'"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(fs::exists(d / "out" / "manifest.json"));

  const auto missing =
      run_cli("orbit generate --spec " + quoted(d / "nope.json") + " --out " + quoted(d / "out"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("nope.json"), std::string::npos) << missing.err;
  fs::remove_all(d);
}

TEST(OrbitGenerateCli, ParaphrasesAndCustomSpec) {
  const fs::path d = fresh_dir("orbit_para");
  const auto g = run_cli("orbit generate --paraphrases --out " + quoted(d / "p"));
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_NE(g.out.find("3600 bases and 8840 prompts"), std::string::npos) << g.out;
  const auto v = run_cli("orbit validate " + quoted(d / "p"));
  EXPECT_EQ(v.exit_code, 0) << v.out;

  // A user spec: one template only, other counts.
  auto spec = io::parse_ordered_json(
      io::read_file(fs::path(NUMCHECK_SOURCE_DIR) / "data/orbit/default_spec.json"), "spec");
  auto cv = spec["templates"][0];
  cv["bases"] = 50;
  cv["views"]["fraction"]["quota"] = 40;
  cv["views"]["unit"]["quota"] = 35;
  spec["templates"] = io::OrderedJson::array({cv});
  io::write_file_atomic(d / "small.json", spec.dump(2));
  ASSERT_EQ(
      run_cli("orbit generate --spec " + quoted(d / "small.json") + " --out " + quoted(d / "s")).exit_code,
      0);
  const io::Json m = io::read_json_file(d / "s" / "manifest.json");
  EXPECT_EQ(m["counts"]["bases"], 50);
  EXPECT_EQ(m["counts"]["prompts"], 125);
  EXPECT_EQ(m["spec_name"], "small.json");
  const auto vs = run_cli("orbit validate " + quoted(d / "s"));
  EXPECT_EQ(vs.exit_code, 0) << vs.out;
  fs::remove_all(d);
}

TEST(OrbitGenerateCli, HelpAndUsage) {
  const auto h = run_cli("orbit generate --help");
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("--paraphrases"), std::string::npos);
  EXPECT_NE(h.out.find("--seed"), std::string::npos);
  EXPECT_EQ(run_cli("orbit validate --help").exit_code, 0);
  EXPECT_EQ(run_cli("orbit generate").exit_code, 2);  // --out is required
  const auto missing = run_cli("orbit validate /nonexistent/bench");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("/nonexistent/bench"), std::string::npos);
}

}  // namespace
}  // namespace numcheck::testing
