// CSV reader, label map and loaders on small hand-written inputs, including malformed ones.
#include <gtest/gtest.h>

#include "claims/csv.hpp"
#include "claims/labels.hpp"
#include "claims/load.hpp"
#include "core/error.hpp"

namespace numcheck::claims {
namespace {

TEST(Csv, QuotedFieldsSeparatorsAndLineNumbers) {
  const auto t = parse_csv("a@b\n\"x@y\"@\"line1\nline2 \"\"q\"\"\"\r\nplain@2\n", '@');
  ASSERT_TRUE(t.issues.empty());
  ASSERT_EQ(t.header, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(t.records.size(), 2u);
  EXPECT_EQ(t.records[0].fields[0], "x@y");
  EXPECT_EQ(t.records[0].fields[1], "line1\nline2 \"q\"");
  EXPECT_EQ(t.records[0].line, 2u);
  EXPECT_EQ(t.records[1].line, 4u);  // the quoted line break counts
  EXPECT_EQ(t.records[1].number, 2u);
}

TEST(Csv, MalformedRecordsAreReportedWithLines) {
  const auto t = parse_csv("a,b\n1,2,3\n\"x\"y,2\nok,1\n\n\"open,4\n", ',');
  ASSERT_EQ(t.records.size(), 1u);
  EXPECT_EQ(t.records[0].fields[0], "ok");
  ASSERT_EQ(t.issues.size(), 4u);
  EXPECT_EQ(t.issues[0].line, 2u);
  EXPECT_NE(t.issues[0].message.find("3 fields"), std::string::npos);
  EXPECT_EQ(t.issues[1].line, 3u);
  EXPECT_NE(t.issues[1].message.find("closing quote"), std::string::npos);
  EXPECT_EQ(t.issues[2].line, 5u);  // blank line
  EXPECT_NE(t.issues[3].message.find("never closed"), std::string::npos);
  EXPECT_EQ(t.issues[3].line, 6u);
}

TEST(Csv, LiteralQuoteInUnquotedFieldAndBom) {
  const auto t = parse_csv(
      "\xEF\xBB\xBF"
      "c\nsaid \"hi\" there\n",
      ',');
  ASSERT_TRUE(t.issues.empty());
  EXPECT_EQ(t.header[0], "c");
  EXPECT_EQ(t.records[0].fields[0], "said \"hi\" there");
}

TEST(Labels, TableNineAndVariants) {
  const auto& m = LabelMap::builtin();
  EXPECT_EQ(m.map("True"), Verdict::kTrue);
  EXPECT_EQ(m.map("Half True/False"), Verdict::kConflicting);
  EXPECT_EQ(m.map("  Pants on   Fire "), Verdict::kFalse);
  EXPECT_EQ(m.map("Mostly True"), Verdict::kConflicting);
  EXPECT_EQ(m.map("can\xE2\x80\x99t be proven"), Verdict::kFalse);  // curly apostrophe
  EXPECT_EQ(m.map("SUPPORTS"), Verdict::kTrue);
  EXPECT_EQ(m.map("refutes"), Verdict::kFalse);
  EXPECT_EQ(m.map("verified"), Verdict::kTrue);
  EXPECT_FALSE(m.map("Other").has_value());
  // Double-listed labels resolve by the documented rule and are reported.
  EXPECT_EQ(m.map("Two Pinocchios"), Verdict::kConflicting);
  EXPECT_EQ(m.map("misleading"), Verdict::kConflicting);
  std::vector<std::string> d;
  for (const auto& x : m.double_listed()) d.push_back(x.label);
  EXPECT_EQ(d, (std::vector<std::string>{"edited video", "misleading", "not connected", "three pinocchios",
                                         "two pinocchios"}));
  EXPECT_FALSE(m.rule().empty());
  EXPECT_NE(std::find(m.repeated().begin(), m.repeated().end(), "ambiguous"), m.repeated().end());
}

TEST(Labels, UnresolvedDoubleListingIsAnError) {
  EXPECT_THROW((void)LabelMap::parse(R"({"classes": {"True": ["x"], "False": ["x"]}})", "t.json"), Error);
  EXPECT_THROW((void)LabelMap::parse(R"({"classes": {"Maybe": ["x"]}})", "t.json"), Error);
  const auto m = LabelMap::parse(
      R"({"classes": {"True": ["x"], "False": ["x"]}, "double_listed": {"resolved": {"x": "False"}}})",
      "t.json");
  EXPECT_EQ(m.map("X"), Verdict::kFalse);
}

TEST(Loaders, JsonArrayRecordsAndIssues) {
  const std::string j = R"([
    {"claim": "A 5% rise", "label": "True", "taxonomy_label": "statistical", "doc": "d", "numerical": true},
    {"claim": "B", "label": "Maybe"},
    {"label": "False"},
    {"claim": "C", "label_original": "Pants on Fire", "country_of_origin": null, "extra": 3},
    7,
    {"claim": "D", "label": "False", "taxonomy_label": "weird", "url": 5}
  ])";
  const auto r = parse_claims(j, "x.json");
  ASSERT_EQ(r.claims.size(), 3u);
  EXPECT_EQ(r.claims[0].category, Category::kStatistical);
  EXPECT_EQ(r.claims[0].record, 1u);
  EXPECT_EQ(r.claims[1].text, "C");
  EXPECT_EQ(r.claims[1].label, Verdict::kFalse);
  EXPECT_EQ(r.claims[1].label_original, "Pants on Fire");
  EXPECT_EQ(r.claims[1].extra.size(), 1u);
  EXPECT_EQ(r.claims[2].record, 6u);
  ASSERT_EQ(r.issues.size(), 5u);
  EXPECT_EQ(r.issues[0].record, 2u);  // unknown label
  EXPECT_TRUE(r.issues[0].skipped);
  EXPECT_EQ(r.issues[1].record, 3u);  // no claim text
  EXPECT_EQ(r.issues[2].record, 5u);  // not an object
  EXPECT_FALSE(r.issues[3].skipped);  // unknown taxonomy label: kept
  EXPECT_NE(r.issues[0].str().find("x.json: record 2"), std::string::npos);
  EXPECT_THROW((void)parse_claims("{not json", "y.json"), Error);
  EXPECT_THROW((void)parse_claims("[{\"claim\": 1e999}]", "y.json"), Error);  // found by fuzz_claims_loaders
  EXPECT_EQ(parse_claims("{\"claim\": 1e999}\n", "y.jsonl").issues.size(), 1u);
  EXPECT_THROW((void)parse_claims("{\"claim\": 1}", "y.json"), Error);  // a JSON file must be an array
}

TEST(Loaders, JsonlPredictionsWithIdsAndLineNumbers) {
  LoadOptions o;
  o.labels = LabelPolicy::kRequired;
  o.require_text = false;
  const auto r = parse_claims("{\"id\": 3, \"label\": \"True\"}\n\n{bad\n{\"claim\": \"x\"}\n", "p.jsonl", o);
  ASSERT_EQ(r.claims.size(), 1u);
  EXPECT_EQ(r.claims[0].id, "3");
  ASSERT_EQ(r.issues.size(), 2u);
  EXPECT_EQ(r.issues[0].line, 3u);
  EXPECT_EQ(r.issues[0].record, 2u);
  EXPECT_EQ(r.issues[1].line, 4u);  // no label
}

TEST(Loaders, CsvFormsOfTheQuanTempCode) {
  const auto a = parse_claims(
      ",features,true_label,pred_label\n0,\"[Claim]:\"\"X 5\"\"[Evidences]:doc text\",False,True\n", "g.csv");
  ASSERT_EQ(a.claims.size(), 1u);
  EXPECT_EQ(a.claims[0].id, "0");
  EXPECT_EQ(a.claims[0].text, "\"X 5\"");
  EXPECT_EQ(a.claims[0].doc, "doc text");
  EXPECT_EQ(a.claims[0].label, Verdict::kFalse);
  EXPECT_EQ(a.claims[0].pred_label, "True");
  const auto b = parse_claims("claims@questions\nQ 1@\"Is it? \nNext Question: Was it?\"\n", "t.csv");
  ASSERT_EQ(b.claims.size(), 1u);
  EXPECT_EQ(b.claims[0].questions, (std::vector<std::string>{"Is it?", "Was it?"}));
  const auto c = parse_claims("claim,verdict\nfoo,Conflicting\nbar,Nope\n", "p.csv");
  ASSERT_EQ(c.claims.size(), 1u);
  ASSERT_EQ(c.issues.size(), 1u);
  EXPECT_EQ(c.issues[0].line, 3u);
  EXPECT_THROW((void)parse_claims("a,b\n1,2\n", "n.csv"), Error);  // no claim column
}

}  // namespace
}  // namespace numcheck::claims
