// The claims section from evaluate/cv JSON: our row first, the paper's rows marked as other data,
// paired tests, rendering escapes model text.
#include <gtest/gtest.h>

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
  const auto s = build_claims_section(eval, cv, paper, "ours<b>", "note");
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

}  // namespace
}  // namespace numcheck::verify
