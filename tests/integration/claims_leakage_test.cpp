// No leakage between training and the claims scored, through the real CLI: `claims stats` reports
// the near-duplicates across files (printed and as JSON), and `claims train --exclude` leaves the
// scored claims' near-duplicates out of training, saying how many and which.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "temp_dir.hpp"

namespace numcheck::testing {
namespace {

TEST(ClaimsLeakageCli, StatsReportsNearDuplicatesAndTrainLeavesThemOut) {
  const auto dir = fresh_dir("claims_leakage");
  const ScopedTempDir cleanup(dir);
  // Twelve labelled training claims on different subjects (no two are near-duplicates).
  const char* subjects[] = {"Wages",   "Rents",     "Exports",  "Crime",    "Taxes",    "Tuition",
                            "Imports", "Bus fares", "Salaries", "Deficits", "Pensions", "Tariffs"};
  const char* labels[] = {"True", "False", "Conflicting"};
  const std::string ev = (dir / "ev.jsonl").string();
  std::vector<nlohmann::json> recs;
  {
    std::ofstream f(ev);
    for (int i = 0; i < 12; ++i) {
      nlohmann::json j = {
          {"id", "val:" + std::to_string(i)},
          {"claim", std::string(subjects[i]) + " grew by " + std::to_string(i + 2) + "% in " +
                        std::to_string(2010 + i) + " across the state."},
          {"label", labels[i % 3]},
          {"questions", nlohmann::json::array({"Is it so?"})},
          {"evidence", nlohmann::json::array({nlohmann::json{
                           {"doc_id", "d" + std::to_string(i)},
                           {"text", std::string(subjects[i]) + " rose " + std::to_string(i) + "%"}}})},
          {"selection", "val-top3"}};
      f << j.dump() << "\n";
      recs.push_back(j);
    }
  }
  auto r = run_cli("claims stats '" + ev + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_GE(recs.size(), 3u);
  const std::string a = recs[0]["claim"], b = recs[1]["claim"];
  // The scored claims: the first training claim in curly quotes and upper case, the second with
  // a word added (reworded), and one unrelated claim.
  const std::string scored = (dir / "scored.jsonl").string();
  {
    std::string upper = a;
    for (auto& c : upper)
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    std::ofstream f(scored);
    f << nlohmann::json{{"id", "s1"}, {"claim", "\xE2\x80\x9C" + upper + "\xE2\x80\x9D"}, {"label", "True"}}
             .dump()
      << "\n"
      << nlohmann::json{{"id", "s2"}, {"claim", b + " indeed"}, {"label", "False"}}.dump() << "\n"
      << nlohmann::json{{"id", "s3"},
                        {"claim", "Penguins migrate 9000 kilometres across Antarctica"},
                        {"label", "False"}}
             .dump()
      << "\n";
  }
  const std::string nd = (dir / "nd.json").string();
  r = run_cli("claims stats '" + ev + "' '" + scored + "' --near-duplicates '" + nd + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Near-duplicates across files"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("s1 ~ " + recs[0]["id"].get<std::string>() + " (same text"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("s2 ~ " + recs[1]["id"].get<std::string>() + " (reworded"), std::string::npos)
      << r.out;
  std::ifstream nf(nd);
  const auto j = nlohmann::json::parse(nf);
  ASSERT_EQ(j["pairs"].size(), 1u);
  EXPECT_EQ(j["pairs"][0]["same_text"], 1);
  EXPECT_EQ(j["pairs"][0]["reworded"], 1);
  EXPECT_EQ(j["pairs"][0]["b_with_twin"], 2);
  EXPECT_EQ(j["rule"]["jaccard_at_least"], "3/5");
  EXPECT_EQ(run_cli("claims stats '" + ev + "' --near-duplicates '" + nd + "'").exit_code, 2);

  const std::string m = (dir / "m.json").string();
  r = run_cli("claims train --evidence '" + ev + "' --exclude '" + scored + "' --out '" + m + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("left out 2 training claims that are near-duplicates of the 3 claims to be scored: " +
                       recs[0]["id"].get<std::string>() + ", " + recs[1]["id"].get<std::string>()),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("trained on " + std::to_string(recs.size() - 2) + " claims"), std::string::npos)
      << r.out;
  std::ifstream mf(m);
  EXPECT_EQ(nlohmann::json::parse(mf)["training"]["near_duplicates_left_out"],
            (nlohmann::json{recs[0]["id"], recs[1]["id"]}));

  // The report's claims section says both: what training left out, and the counts across files.
  const std::string cv = (dir / "cv.json").string(), sec = (dir / "section.json").string();
  r = run_cli("claims cv --evidence '" + ev +
              "' --folds 2 --seeds 1 --draws 0 --no-ablation --no-variants --json '" + cv + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli("claims section --cv '" + cv + "' --ours trained --model '" + m + "' --near-duplicates '" + nd +
              "' --out '" + sec + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Training left out 2 claims that are near-duplicates of the claims it scores"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("2 of the 3 claims of scored.jsonl have a twin among the " +
                       std::to_string(recs.size()) + " of "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("(1 same text, 1 reworded)"), std::string::npos) << r.out;
  EXPECT_EQ(run_cli("claims section --cv '" + cv + "' --ours trained --near-duplicates '" + m + "' --out '" +
                    sec + "'")
                .exit_code,
            1);  // a model file is not a near-duplicates file
}

}  // namespace
}  // namespace numcheck::testing
