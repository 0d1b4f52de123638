// The loaders against the real QuanTemp files in the folder NUMCHECK_QUANTEMP names (skipped with a message
// when that folder is absent): record counts and label distributions must match the data README.
#include <filesystem>
#include <map>
#include <unordered_map>

#include <gtest/gtest.h>

#include "../support/quantemp_data.hpp"
#include "claims/evaluate.hpp"
#include "claims/load.hpp"
#include "claims/segment.hpp"

namespace numcheck::claims {
namespace {

namespace fs = std::filesystem;

fs::path data_dir() { return numcheck::testing::quantemp_dir(); }

#define REQUIRE_DATA(file)                                       \
  const fs::path path = data_dir() / (file);                     \
  if (!fs::exists(path))                                         \
  GTEST_SKIP() << "QuanTemp data not found at " << path.string() \
               << " (set NUMCHECK_QUANTEMP to the QuanTemp data folder)"

std::map<std::string, std::size_t> label_counts(const LoadResult& r) {
  std::map<std::string, std::size_t> m;
  for (const auto& c : r.claims) ++m[c.label ? std::string(verdict_name(*c.label)) : "none"];
  return m;
}

TEST(QuanTempData, ValMappingFile) {
  REQUIRE_DATA("val_claimonly_evidence_question_mapping.json");
  const auto r = load_claims(path);
  EXPECT_TRUE(r.issues.empty());
  EXPECT_EQ(r.format, "json:checkthat-mapping");
  ASSERT_EQ(r.claims.size(), 3084u);
  const auto m = label_counts(r);
  EXPECT_EQ(m.at("False"), 1795u);
  EXPECT_EQ(m.at("Conflicting"), 672u);  // "Half True/False"
  EXPECT_EQ(m.at("True"), 617u);
  std::size_t snippets = 0, none = 0;
  for (const auto& c : r.claims) {
    std::size_t k = 0;
    for (const auto& e : c.evidences) k += e.top_k_doc.size();
    snippets += k;
    none += k == 0 ? 1 : 0;
  }
  EXPECT_EQ(snippets, 8368u);
  EXPECT_EQ(none, 154u);
  std::unordered_map<std::string, int> texts;
  std::size_t dups = 0;
  for (const auto& c : r.claims) dups += texts[c.text]++ > 0 ? 1 : 0;
  EXPECT_EQ(dups, 11u);
}

TEST(QuanTempData, TrainClaims) {
  REQUIRE_DATA("filtered_claims.json");
  const auto r = load_claims(path);
  EXPECT_TRUE(r.issues.empty());
  ASSERT_EQ(r.claims.size(), 9935u);
  EXPECT_EQ(label_counts(r).at("none"), 9935u);
  std::unordered_map<std::string, int> texts;
  std::size_t dups = 0;
  for (const auto& c : r.claims) dups += texts[c.text]++ > 0 ? 1 : 0;
  EXPECT_EQ(dups, 6u);
  EXPECT_EQ(r.claims[0].country_of_origin, "india");
  EXPECT_EQ(r.claims[0].crawled_date, "2019-07-06");
}

TEST(QuanTempData, TestClaimDecomp) {
  REQUIRE_DATA("test_claimdecomp.csv");
  const auto r = load_claims(path);
  EXPECT_TRUE(r.issues.empty());
  EXPECT_EQ(r.format, "csv:@");
  ASSERT_EQ(r.claims.size(), 2495u);
  EXPECT_EQ(r.claims[0].questions.size(), 3u);
  EXPECT_EQ(r.claims[0].text.front(), '"');  // the claim keeps its quotes, as in the predictions
}

TEST(QuanTempData, CategorizedSubset) {
  REQUIRE_DATA("complex_num_facts_categorized_subset.csv");
  const auto r = load_claims(path);
  EXPECT_TRUE(r.issues.empty());
  ASSERT_EQ(r.claims.size(), 309u);
  std::map<std::string, std::size_t> m;
  for (const auto& c : r.claims) {
    ASSERT_TRUE(c.category.has_value()) << c.record;
    ++m[std::string(category_name(*c.category))];
  }
  EXPECT_EQ(m["temporal"], 185u);  // one label is "temporal   "
  EXPECT_EQ(m["statistical"], 91u);
  EXPECT_EQ(m["comparison"], 21u);
  EXPECT_EQ(m["interval"], 12u);
}

TEST(QuanTempData, Gpt4oSampleAndSpanish) {
  REQUIRE_DATA("model_gpt4o_test_results.csv");
  const auto r = load_claims(path);
  EXPECT_TRUE(r.issues.empty());
  ASSERT_EQ(r.claims.size(), 249u);
  const auto m = label_counts(r);
  EXPECT_EQ(m.at("False"), 154u);
  EXPECT_EQ(m.at("Conflicting"), 48u);
  EXPECT_EQ(m.at("True"), 47u);
  for (const auto& c : r.claims) {
    EXPECT_FALSE(c.doc.empty());
    EXPECT_FALSE(c.pred_label.empty());
  }
  const fs::path es = data_dir() / "val_spanish_claims.json";
  if (!fs::exists(es)) return;
  const auto s = load_claims(es);
  EXPECT_TRUE(s.issues.empty());
  ASSERT_EQ(s.claims.size(), 377u);
  const auto sm = label_counts(s);
  EXPECT_EQ(sm.at("False"), 299u);
  EXPECT_EQ(sm.at("Conflicting"), 48u);
  EXPECT_EQ(sm.at("True"), 30u);
  EXPECT_TRUE(s.claims[0].numerical.value_or(false));
  EXPECT_EQ(s.claims[0].lang, "es");
}

TEST(QuanTempData, PredictionsJoinAllLabelledTestClaims) {
  REQUIRE_DATA("model_gpt4o_test_results.csv");
  LoadOptions g;
  g.labels = LabelPolicy::kRequired;
  const auto gold = load_claims(path, g);
  for (const char* f : {"finqa_roberta_claimdecomp_test.csv", "unified_claimdecomp_final.csv",
                        "claim_only_numdecomp_final_5.csv"}) {
    const fs::path pp = data_dir() / "predictions" / f;
    if (!fs::exists(pp)) GTEST_SKIP() << "predictions missing: " << pp.string();
    LoadOptions po;
    po.labels = LabelPolicy::kRequired;
    po.require_text = false;
    const auto pred = load_claims(pp, po);
    EXPECT_TRUE(pred.issues.empty());
    ASSERT_EQ(pred.claims.size(), 2495u);
    JoinReport rep;
    const auto joined = join_predictions(gold.claims, pred.claims, rep);
    EXPECT_EQ(rep.by_text, 249u) << f;
    EXPECT_EQ(rep.gold_without_prediction, 0u);
    EXPECT_EQ(rep.unused_predictions, 2495u - 249u);
  }
}

TEST(QuanTempData, NumericalFilterPassesMostClaims) {
  // The files hold claims that passed the seed's filter; ours should agree on the large majority.
  REQUIRE_DATA("test_claimdecomp.csv");
  const auto r = load_claims(path);
  std::size_t pass = 0;
  for (const auto& c : r.claims) pass += passes_numerical_filter(find_segments(c.text)) ? 1 : 0;
  EXPECT_GT(pass, r.claims.size() * 9 / 10);
}

}  // namespace
}  // namespace numcheck::claims
