// The claims section from evaluate/cv JSON: our row first, the paper's rows marked as other data,
// paired tests, rendering escapes model text.
#include <gtest/gtest.h>

#include "../support/table_width.hpp"
#include "core/error.hpp"
#include "verify/section.hpp"

namespace numcheck::verify {
namespace {

TEST(Section, BuildsTable2PairedAndCvRows) {
  const auto eval = io::Json::parse(R"({"systems": {
      "zeta": {"n": 3, "unparseable": 0, "macro_f1": 0.5, "macro_f1_ci95": [0.4, 0.6], "weighted_f1": 0.55,
               "per_class": {"True": {"f1": 0.1}, "False": {"f1": 0.2}, "Conflicting": {"f1": 0.3}},
               "categories": {"temporal": {"macro_f1": 0.7, "weighted_f1": 0.8}}},
      "ours<b>": {"n": 3, "unparseable": 1, "macro_f1": 0.6, "weighted_f1": 0.65,
               "per_class": {"True": {"f1": 0.4}, "False": {"f1": 0.5}, "Conflicting": {"f1": 0.6}}}},
    "comparisons": [{"a": "ours<b>", "b": "zeta", "n": 3, "macro_f1_a": 0.6, "macro_f1_b": 0.5,
                     "mcnemar": {"a_only_correct": 2, "b_only_correct": 1, "p": 1.0},
                     "bootstrap_macro_f1": {"diff": 0.1, "lo": -0.1, "hi": 0.3, "p": 0.5}}]})");
  const auto paper =
      io::Json::parse(R"({"rows": [{"system": "P", "values": [1,2,3,4,5,6,7,8,9,10,11,12,13]}]})");
  const auto cv = io::Json::parse(R"({"folds": 5, "records": 10, "claim_texts": 9, "seeds": 2, "systems": [
      {"name": "trained", "kind": "model", "macro_f1": 0.5, "macro_f1_ci95": [0.4, 0.6], "weighted_f1": 0.6,
       "class_f1": {"True": 0.1, "False": 0.2, "Conflicting": 0.3},
       "vs_trained": {"macro_f1_diff": 0, "ci95": [0, 0], "mcnemar_p": 1}}]})");
  const auto s = build_claims_section(eval, cv, paper, {"ours<b>"}, "note");
  ASSERT_EQ(s.table2.size(), 3u);
  EXPECT_EQ(s.table2[0].system, "ours<b>");
  EXPECT_FALSE(s.table2[0].other_data);
  EXPECT_TRUE(s.table2[2].other_data);
  EXPECT_DOUBLE_EQ(*s.table2[2].macro.value, 0.12);
  EXPECT_DOUBLE_EQ(*s.table2[1].categories[2].value, 0.7);  // temporal macro
  EXPECT_DOUBLE_EQ(*s.table2[1].macro.lo, 0.4);
  ASSERT_EQ(s.paired.size(), 1u);
  EXPECT_EQ(s.paired[0].a_only, 2u);
  ASSERT_EQ(s.cv.size(), 1u);
  const auto d = section_document(s);
  const auto html = d.to_html("t");
  EXPECT_EQ(html.find("ours<b>"), std::string::npos);  // escaped
  EXPECT_NE(html.find("ours&lt;b&gt;"), std::string::npos);
  EXPECT_NE(d.to_markdown().find("other data"), std::string::npos);
  EXPECT_EQ(section_json(s)["table2"].size(), 3u);
  EXPECT_THROW((void)section_from_file_json(io::Json::parse(R"({"format": "x"})"), "f"), Error);
}

// What a main job with the LLM verifier writes: two systems of ours (the trained one and the LLM
// verifier, whose answers all failed to parse), three released prediction files with long names,
// the paper's rows, paired tests and a cv file of the current format.
ClaimsSection full_section() {
  auto sys = [](double m, std::size_t unparseable) {
    io::Json o = io::Json::parse(R"({"n": 249, "macro_f1_ci95": [0.41, 0.583], "weighted_f1_ci95": [0.5, 0.6],
        "per_class": {"True": {"f1": 0.45}, "False": {"f1": 0.71}, "Conflicting": {"f1": 0.33}}})");
    o["macro_f1"] = m;
    o["weighted_f1"] = m + 0.05;
    o["unparseable"] = unparseable;
    for (const char* c : {"statistical", "temporal", "interval", "comparison"})
      o["categories"][c] = io::Json::parse(
          R"({"macro_f1": 0.5123, "macro_f1_ci95": [0.401, 0.623], "weighted_f1": 0.55, "weighted_f1_ci95": [0.45, 0.66]})");
    return o;
  };
  io::Json eval;
  eval["systems"]["numcheck_trained"] = sys(0.5123, 0);
  eval["systems"]["numcheck_llm"] = sys(0.0, 249);
  eval["systems"]["finqa_roberta_claimdecomp_test"] = sys(0.61, 0);
  eval["systems"]["unified_claimdecomp_final"] = sys(0.58, 0);
  eval["systems"]["claim_only_numdecomp_final_5"] = sys(0.55, 3);
  eval["comparisons"] = io::Json::array();
  for (const char* b : {"finqa_roberta_claimdecomp_test", "unified_claimdecomp_final", "numcheck_llm"})
    eval["comparisons"].push_back(io::Json{
        {"a", "numcheck_trained"},
        {"b", b},
        {"n", 249},
        {"macro_f1_a", 0.51},
        {"macro_f1_b", 0.61},
        {"mcnemar", {{"a_only_correct", 31}, {"b_only_correct", 44}, {"p", 0.1655}}},
        {"bootstrap_macro_f1", {{"diff", -0.1012}, {"lo", -0.1834}, {"hi", -0.0211}, {"p", 0.012}}}});
  io::Json cv = io::Json::parse(R"({"folds": 5, "records": 3084, "claim_texts": 3002, "seeds": 3,
      "figures": "means over seeds", "systems": []})");
  for (const char* n : {"trained", "majority", "claim-only NB", "trained, learner xgboost",
                        "trained -alignment", "trained, surface numbers"})
    cv["systems"].push_back(io::Json::parse(std::string(R"({"name": ")") + n + R"(", "kind": "ablation",
        "macro_f1": 0.5143, "macro_f1_ci95": [0.4921, 0.5372], "weighted_f1": 0.6012, "weighted_f1_ci95": [0.5811, 0.6213],
        "class_f1": {"True": 0.4, "False": 0.7, "Conflicting": 0.4},
        "vs_trained": {"macro_f1_diff": -0.0123, "ci95": [-0.0311, 0.0101], "bootstrap_p": 0.2468, "mcnemar_p": 0.01}})"));
  const io::Json paper = io::Json::parse(
      R"js({"rows": [{"system": "FinQA-Roberta-Large + ClaimDecomp (paper, Table 3)",
                      "values": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]}]})js");
  return build_claims_section(eval, cv, paper, {"numcheck_trained", "numcheck_llm"}, "note");
}

// numcheck's LLM verifier is ours, not "released predictions"; the number of unparsed answers
// stands beside the F1 figures, and a system none of whose answers parsed is said to be so.
TEST(Section, OurVerifiersAreOursAndUnparsedAnswersAreCounted) {
  const auto s = full_section();
  ASSERT_GE(s.table2.size(), 6u);
  EXPECT_EQ(s.table2[0].system, "numcheck_trained");
  EXPECT_EQ(s.table2[1].system, "numcheck_llm");
  EXPECT_EQ(s.table2[1].data, "ours");
  EXPECT_TRUE(s.table2[1].ours);
  EXPECT_EQ(s.table2[2].data, "released");
  const std::string md = section_document(s).to_markdown();
  EXPECT_EQ(md.find("released predictions, same claims"), std::string::npos);
  EXPECT_NE(md.find("| numcheck\\_llm | ours | 249 | 249 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| claim\\_only\\_numdecomp\\_final\\_5 | released | 249 | 3 |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("numcheck\\_llm: none of its 249 answers could be parsed"), std::string::npos) << md;
  EXPECT_NE(md.find("3 of 249 answers could not be parsed"), std::string::npos) << md;
  // Only the first of ours is in bold.
  EXPECT_NE(md.find("**51.23 \\[41.0, 58.3\\]**"), std::string::npos) << md;
  EXPECT_EQ(md.find("**0.00"), std::string::npos) << md;
  // The section file's "ours" may be one name (older files) or a list.
  io::Json file = {
      {"format", "numcheck-claims-section"}, {"ours", {"a", "b"}}, {"eval", nullptr}, {"cv", nullptr}};
  EXPECT_NO_THROW((void)section_from_file_json(file, "f"));
}

// Every table of the section fits the page: HTML within the content width at 1400 px, LaTeX at a
// readable size (the full-set figures, per-class and overall M-F1, in one narrow table; the
// per-category figures in a long table of their own).
TEST(Section, EveryTableFitsThePage) {
  const auto d = section_document(full_section());
  std::size_t tables = 0;
  for (const auto& b : d.blocks()) {
    if (b.kind != doc::Block::Kind::kTable) continue;
    ++tables;
    EXPECT_LE(b.table.header.size(), 9u) << b.table.caption;
    EXPECT_LE(testing::html_min_chars(b.table), testing::kHtmlMaxChars) << b.table.caption;
    EXPECT_LE(testing::latex_chars(b.table), testing::kLatexMaxChars) << b.table.caption;
  }
  EXPECT_EQ(tables, 5u);
  // The key column is there: overall M-F1 of each system in the first table.
  const std::string md = d.to_markdown();
  EXPECT_NE(md.find("M-F1 \\[95% CI\\] | W-F1 |"), std::string::npos) << md;
}

// One source per row in the cv tables, said in the note, and each test named by what it tests.
TEST(Section, CvRowsHaveOneSourceAndTestsSayWhatTheyTest) {
  const auto s = full_section();
  EXPECT_NE(s.cv_note.find("Every figure of a row is a mean over the seeds"), std::string::npos) << s.cv_note;
  const std::string md = section_document(s).to_markdown();
  EXPECT_EQ(md.find("McNemar p |"), std::string::npos) << md;  // no bare "McNemar p" beside an F1 difference
  EXPECT_NE(md.find("| trained -alignment | -1.23 \\[-3.1, 1.0\\] | 0.247 |"), std::string::npos) << md;
  EXPECT_NE(md.find("p (acc.): exact McNemar test on per-claim correctness"), std::string::npos) << md;
  EXPECT_NE(md.find("p (M-F1): paired bootstrap over claims of the macro-F1"), std::string::npos) << md;
  // An older cv file (no "figures" field) is said to mix sources.
  io::Json old_cv =
      io::Json::parse(R"({"folds": 5, "records": 10, "claim_texts": 9, "seeds": 3, "systems": []})");
  const auto o = build_claims_section(io::Json(), old_cv, io::Json(), {"x"}, "");
  EXPECT_NE(o.cv_note.find("first seed only"), std::string::npos) << o.cv_note;
}

}  // namespace
}  // namespace numcheck::verify

namespace numcheck::verify {
namespace {

// The section says what the trained verifier was trained on (from its model file), names the fold
// scheme next to every p value of a fold-based test, and gives the spread of the t-test's p over
// claim orders and the cv's p per fold draw.
TEST(Section, TrainedOnFoldSchemesAndSpreadOfP) {
  io::Json eval;
  eval["systems"]["numcheck_trained"] = io::Json::parse(R"({"n": 249, "macro_f1": 0.5, "weighted_f1": 0.6})");
  eval["systems"]["other"] = io::Json::parse(R"({"n": 249, "macro_f1": 0.55, "weighted_f1": 0.6})");
  eval["comparisons"] = io::Json::parse(R"([{"a": "numcheck_trained", "b": "other", "n": 249,
      "macro_f1_a": 0.5, "macro_f1_b": 0.55,
      "mcnemar": {"a_only_correct": 3, "b_only_correct": 4, "p": 0.9},
      "bootstrap_macro_f1": {"diff": -0.05, "lo": -0.1, "hi": 0.01, "p": 0.2},
      "ttest_kfold": {"folds": 10, "seed": 42, "macro_f1": {"p": 0.297},
                      "macro_f1_p_over_claim_orders": {"orders": 20, "min": 0.061, "median": 0.25, "max": 0.74}}}])");
  const auto cv =
      io::Json::parse(R"js({"folds": 5, "records": 10, "claim_texts": 9, "seeds": 3, "figures": "x",
      "fold_scheme": "grouped stratified 5-fold (groups: exact claim text), fold draws seeded 1, 2, 3 (numcheck::Rng)",
      "systems": [
      {"name": "trained", "kind": "model", "macro_f1": 0.5, "weighted_f1": 0.6,
       "class_f1": {"True": 0.1, "False": 0.2, "Conflicting": 0.3}, "vs_trained": {"macro_f1_diff": 0}},
      {"name": "claim-only TF-IDF LR", "kind": "baseline", "macro_f1": 0.48, "weighted_f1": 0.6,
       "class_f1": {"True": 0.1, "False": 0.2, "Conflicting": 0.3},
       "vs_trained": {"macro_f1_diff": 0.02, "ci95": [0.01, 0.03], "bootstrap_p": 0.01,
                      "bootstrap_p_per_seed": [0.004, 0.03, 0.2]}}]})js");
  const auto model = io::Json::parse(R"({"format": "numcheck-verifier-model", "learner": "liblinear 247",
      "settings": {"numbers": "canonical"},
      "training": {"data_sha256": "0123456789abcdef0123", "records": 3084,
                   "labels": {"True": 617, "False": 1795, "Conflicting": 672}}})");
  auto s = build_claims_section(eval, cv, io::Json(), {"numcheck_trained"}, "");
  s.trained_on =
      trained_on_note(model, "numcheck_trained", "the val split with its shipped snippets", "m.json");
  EXPECT_EQ(
      s.trained_on,
      "numcheck_trained is numcheck's trained verifier (liblinear 247, canonical numbers), trained on the "
      "val split with its shipped snippets: 3084 labelled claims (True 617, False 1795, Conflicting 672) "
      "with their evidence (SHA-256 of the training records 0123456789abcdef...).");
  EXPECT_THROW((void)trained_on_note(io::Json::parse(R"({"format": "x"})"), "a", "", "m"), Error);
  const auto d = section_document(s);
  const std::string md = d.to_markdown();
  EXPECT_NE(md.find("numcheck\\_trained is numcheck's trained verifier"), std::string::npos) << md;
  EXPECT_NE(
      md.find("| numcheck\\_trained | other | 10 shuffled folds, numcheck::Rng seed 42 | 0.297 | 0.061 / "
              "0.25 / 0.74 (20 orders) |"),
      std::string::npos)
      << md;
  EXPECT_NE(md.find("| claim-only TF-IDF LR | 2.00 \\[1.0, 3.0\\] | 0.01 | 0.004 0.03 0.2 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("Folds: grouped stratified 5-fold (groups: exact claim text), fold draws seeded 1, 2, 3"),
            std::string::npos)
      << md;
  for (const auto& b : d.blocks()) {
    if (b.kind != doc::Block::Kind::kTable) continue;
    EXPECT_LE(testing::html_min_chars(b.table), testing::kHtmlMaxChars) << b.table.caption;
    EXPECT_LE(testing::latex_chars(b.table), testing::kLatexMaxChars) << b.table.caption;
  }
  // Kept through the section file (what `orbit report --claims` reads).
  io::Json file = {{"format", "numcheck-claims-section"},
                   {"ours", "numcheck_trained"},
                   {"eval", eval},
                   {"cv", cv},
                   {"paper", nullptr},
                   {"trained_on", s.trained_on}};
  EXPECT_EQ(section_from_file_json(file, "f").trained_on, s.trained_on);
  EXPECT_EQ(section_json(s)["paired"][0]["ttest_kfold"]["p_median"].get<double>(), 0.25);
}

TEST(Section, NearDuplicatesAndTrainingLeftOut) {
  auto model = io::Json::parse(R"({"format": "numcheck-verifier-model", "learner": "liblinear 247",
      "settings": {"numbers": "canonical"},
      "training": {"data_sha256": "0123456789abcdef0123", "records": 3081,
                   "labels": {"True": 616, "False": 1794, "Conflicting": 671},
                   "near_duplicates_left_out": ["val-12", "val-40", "val-977"]}})");
  const std::string note = trained_on_note(model, "t", "", "m.json");
  EXPECT_NE(note.find("3081 labelled claims"), std::string::npos) << note;
  EXPECT_NE(
      note.find(
          " Training left out 3 claims that are near-duplicates of the claims it scores (same text "
          "after Unicode normalisation, or at least 3/5 of their words shared): val-12, val-40, val-977."),
      std::string::npos)
      << note;
  model["training"]["near_duplicates_left_out"] = io::Json::array();
  EXPECT_NE(
      trained_on_note(model, "t", "", "m.json").find("Training left out 0 claims that are near-duplicates"),
      std::string::npos);
  model["training"].erase("near_duplicates_left_out");  // trained without --exclude: nothing said
  EXPECT_EQ(trained_on_note(model, "t", "", "m.json").find("left out"), std::string::npos);

  const auto nd = io::Json::parse(R"({"rule": {}, "pairs": [
      {"a": "/data/val.json", "b": "/data/test.csv", "a_claims": 3084, "b_claims": 249, "same_text": 1,
       "reworded": 2, "b_with_twin": 3, "items": []}]})");
  const std::string para = near_duplicates_note(nd, "nd.json");
  EXPECT_NE(
      para.find("3 of the 249 claims of test.csv have a twin among the 3084 of val.json (1 same text, 2 "
                "reworded)."),
      std::string::npos)
      << para;
  EXPECT_THROW((void)near_duplicates_note(io::Json::parse(R"({"pairs": 3})"), "nd.json"), Error);
  EXPECT_THROW((void)near_duplicates_note(io::Json::parse(R"({"pairs": [{"a": "x"}]})"), "nd.json"), Error);
  io::Json eval;
  eval["systems"]["t"] = io::Json::parse(R"({"n": 249, "macro_f1": 0.5, "weighted_f1": 0.6})");
  auto s = build_claims_section(eval, io::Json(), io::Json(), {"t"}, "");
  s.near_duplicates = para;
  EXPECT_NE(section_document(s).to_markdown().find("Near-duplicates across the claim files"),
            std::string::npos);
  io::Json file = {{"format", "numcheck-claims-section"},
                   {"ours", "t"},
                   {"eval", eval},
                   {"cv", nullptr},
                   {"paper", nullptr},
                   {"near_duplicates", para}};
  EXPECT_EQ(section_from_file_json(file, "f").near_duplicates, para);
}

}  // namespace
}  // namespace numcheck::verify
