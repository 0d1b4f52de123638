// The evidence file contract: round trip, errors naming file:line:field, claim ids and the
// builders from the val mapping file and the labelled test CSV.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "claims/evidence.hpp"
#include "claims/load.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "temp_dir.hpp"

namespace numcheck::claims {
namespace {
namespace fs = std::filesystem;

// A file in this process's folder, which goes when the tests end.
fs::path tmp_file(const std::string& name) {
  static const testing::ScopedTempDir dir(fs::temp_directory_path() /
                                          ("numcheck_evidence_" + std::to_string(::getpid())));
  fs::create_directories(dir.path());
  return dir.path() / name;
}

std::string error_of(const std::string& line) {
  const fs::path p = tmp_file("bad.jsonl");
  io::write_file_atomic(p, "\n" + line + "\n");
  try {
    (void)read_evidence(p);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Evidence, RoundTripAndManifest) {
  EvidenceRecord a;
  a.id = "c1";
  a.claim = "Unemployment rose to 5.4% in 2020.";
  a.label = Verdict::kConflicting;
  a.category = Category::kTemporal;
  a.questions = {"Did it rise?"};
  a.evidence.push_back({"d7", "text one", "Did it rise?", 12.5, 1});
  a.evidence.push_back({"d9", "text two", "", std::nullopt, std::nullopt});
  a.selection = "embeddings:bge-small";
  EvidenceRecord b;
  b.id = "c2";
  b.claim = "x";
  b.selection = "lexical";
  const fs::path p = tmp_file("ev.jsonl");
  EvidenceWriter w(p);
  w.write(a);
  w.write(b);
  const auto n = w.finish();
  EXPECT_EQ(n.records, 2u);
  EXPECT_EQ(n.documents, 2u);
  EXPECT_EQ(n.without_evidence, 1u);
  EXPECT_EQ(n.labelled, 1u);
  const auto back = read_evidence(p);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].id, "c1");
  EXPECT_EQ(back[0].label, Verdict::kConflicting);
  EXPECT_EQ(back[0].category, Category::kTemporal);
  ASSERT_EQ(back[0].evidence.size(), 2u);
  EXPECT_EQ(back[0].evidence[0].score, 12.5);
  EXPECT_EQ(back[0].evidence[0].rank, 1u);
  EXPECT_EQ(back[0].evidence[0].query, "Did it rise?");
  EXPECT_FALSE(back[0].evidence[1].score);
  EXPECT_EQ(back[0].selection, "embeddings:bge-small");
  EXPECT_FALSE(back[1].label);
  EXPECT_TRUE(back[1].evidence.empty());
  // The writer's bytes are what evidence_json produces, one line per record.
  EXPECT_EQ(io::read_file(p), io::to_line(evidence_json(a)) + "\n" + io::to_line(evidence_json(b)) + "\n");
  const auto m = io::read_json_file(evidence_manifest_path(p));
  EXPECT_EQ(m["counts"]["records"], 2);
  EXPECT_EQ(m["counts"]["by_selection"]["lexical"], 1);
  EXPECT_EQ(m["sha256"].get<std::string>().size(), 64u);
}

TEST(Evidence, ErrorsNameFileLineAndField) {
  const std::string ok = R"("id":"a","claim":"c","evidence":[],"selection":"gold")";
  EXPECT_EQ(error_of("{" + ok + "}"), "");
  EXPECT_NE(error_of(R"({"claim":"c","evidence":[],"selection":"gold"})").find("bad.jsonl:2"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"claim":"c","evidence":[],"selection":"gold"})").find("id"), std::string::npos);
  EXPECT_NE(error_of("{" + ok + R"(,"label":"Maybe"})").find("field 'label'"), std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","claim":"c","evidence":[],"selection":"bm42"})").find("field 'selection'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","claim":"c","evidence":[{"doc_id":"d"}],"selection":"gold"})")
                .find("evidence[0].text"),
            std::string::npos);
  EXPECT_NE(
      error_of(R"({"id":"a","claim":"c","evidence":[{"doc_id":"d","text":"t","rank":0}],"selection":"gold"})")
          .find("evidence[0].rank"),
      std::string::npos);
  EXPECT_NE(error_of("{not json").find("bad.jsonl:2"), std::string::npos);
  EXPECT_FALSE(valid_selection("embeddings:"));
  EXPECT_TRUE(valid_selection("claim-top3"));
}

TEST(Evidence, RepeatedClaimIdIsRefusedNamingTheIdAndBothLines) {
  const fs::path p = tmp_file("dup.jsonl");
  io::write_file_atomic(p,
                        "{\"id\":\"a\",\"claim\":\"c\",\"evidence\":[],\"selection\":\"gold\"}\n"
                        "{\"id\":\"b\",\"claim\":\"c\",\"evidence\":[],\"selection\":\"gold\"}\n"
                        "\n"
                        "{\"id\":\"a\",\"claim\":\"d\",\"evidence\":[],\"selection\":\"gold\"}\n");
  std::string what;
  try {
    (void)read_evidence(p);
  } catch (const Error& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("dup.jsonl"), std::string::npos) << what;
  EXPECT_NE(what.find("claim id 'a'"), std::string::npos) << what;
  EXPECT_NE(what.find("lines 1 and 4"), std::string::npos) << what;
  std::size_t streamed = 0;
  EXPECT_THROW(for_each_evidence(p, [&](EvidenceRecord&&) { ++streamed; }), Error);
  EXPECT_EQ(streamed, 2u);  // the records before the repeat, never the repeat itself
}

TEST(Evidence, ClaimIdIsExplicitIdElseStemAndRecord) {
  Claim c;
  c.source = "val_mapping.json";
  c.record = 17;
  EXPECT_EQ(claim_id(c), "val_mapping:17");
  c.id = "42";
  EXPECT_EQ(claim_id(c), "42");
}

TEST(Evidence, BuildersFromValMappingAndGoldCsv) {
  const auto val = parse_claims(
      R"([{"claim":"A rose 5%.","label":"Half True/False","evidences":[{"questions":"A rose 5%.","top_k_doc":["s1","s2"]}]},
          {"claim":"B.","label":"True","evidences":[{"questions":"B.","top_k_doc":[]}]}])",
      "val_map.json");
  ASSERT_EQ(val.claims.size(), 2u);
  const auto r = evidence_from_claim(val.claims[0]);
  EXPECT_EQ(r.id, "val_map:1");
  EXPECT_EQ(r.selection, "val-top3");
  EXPECT_EQ(r.label, Verdict::kConflicting);
  ASSERT_EQ(r.evidence.size(), 2u);
  EXPECT_EQ(r.evidence[1].doc_id, "val_map:1#2");
  EXPECT_EQ(r.evidence[1].text, "s2");
  EXPECT_EQ(r.evidence[1].rank, 2u);
  EXPECT_EQ(r.evidence[1].query, "");  // the claim itself was the query
  const auto r2 = evidence_from_claim(val.claims[1]);
  EXPECT_EQ(r2.selection, "val-top3");
  EXPECT_TRUE(r2.evidence.empty());

  const auto gold = parse_claims(
      ",features,true_label,pred_label\n7,\"[Claim]:X grew 3%[Evidences]:The report says 3%.\",True,False\n",
      "gold.csv");
  ASSERT_EQ(gold.claims.size(), 1u);
  const auto g = evidence_from_claim(gold.claims[0]);
  EXPECT_EQ(g.id, "7");
  EXPECT_EQ(g.claim, "X grew 3%");
  EXPECT_EQ(g.selection, "gold");
  ASSERT_EQ(g.evidence.size(), 1u);
  EXPECT_EQ(g.evidence[0].text, "The report says 3%.");
  EXPECT_EQ(g.evidence[0].doc_id, "7#gold");

  Claim bare;
  bare.source = "c.jsonl";
  bare.record = 3;
  bare.text = "t";
  EXPECT_EQ(evidence_from_claim(bare, "claim-top3").selection, "claim-top3");
}

}  // namespace
}  // namespace numcheck::claims
