// `claims index` and `claims retrieve` through the real CLI: a small JSONL collection, claims with
// questions, lexical re-ranking into an evidence file; deterministic output whatever the threads;
// a damaged index file and duplicate ids are clear errors (exit 1).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "cli_support.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "temp_dir.hpp"

namespace numcheck {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary);
  f << s;
}

TEST(ClaimsRetrieveCli, IndexRetrieveSelect) {
  const fs::path d = testing::fresh_dir("claims_retrieve_cli");
  const testing::ScopedTempDir cleanup(d);
  const fs::path fx = fs::path(NUMCHECK_SOURCE_DIR) / "tests" / "retrieval" / "fixtures";
  write(d / "claims.jsonl",
        "{\"id\": \"c1\", \"claim\": \"Teachers are paid $86,000 a year\", \"questions\": \"Are teachers "
        "paid 86,000 "
        "dollars? Next Question: Did pay rise from $80k?\"}\n"
        "{\"id\": \"c2\", \"claim\": \"The deficit hit 1.2 trillion dollars in 2020\"}\n");
  auto r = testing::run_cli(fmt::format("claims index --corpus {} --out {}",
                                        (fx / "regression_corpus.jsonl").string(), (d / "idx").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(d / "idx" / "manifest.json"));
  for (int threads : {1, 2}) {
    r = testing::run_cli(fmt::format(
        "claims retrieve --index {} --claims {} --k 5 --threads {} --out {} --rerank lexical --evidence {}",
        (d / "idx").string(), (d / "claims.jsonl").string(), threads,
        (d / fmt::format("r{}.jsonl", threads)).string(), (d / fmt::format("e{}.jsonl", threads)).string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_EQ(io::read_file(d / "r1.jsonl"), io::read_file(d / "r2.jsonl"));
  EXPECT_EQ(io::read_file(d / "e1.jsonl"), io::read_file(d / "e2.jsonl"));
  std::vector<io::Json> ev;
  io::for_each_line(d / "e1.jsonl", [&](const io::Line& l) { ev.push_back(io::parse_json(l.text, "e1")); });
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0]["selection"], "lexical");
  std::set<std::string> ids;  // the questions select; "$86k"/"$80k" in edu-1 met "86,000"/"$80k"
  for (const auto& e : ev[0]["evidence"]) ids.insert(e["doc_id"].get<std::string>());
  EXPECT_TRUE(ids.count("edu-1")) << ev[0].dump();
  EXPECT_EQ(ev[1]["evidence"][0]["doc_id"], "budget-1");
  const io::Json first =
      io::parse_json(io::read_file(d / "r1.jsonl").substr(0, io::read_file(d / "r1.jsonl").find('\n')), "r1");
  EXPECT_EQ(first["scoring"], "bm25-lucene(k1=1.2,b=0.75)");
  EXPECT_EQ(first["queries"].size(), 3u);  // the claim and its two questions

  // A truncated index file: a clear error, never a ranking.
  const std::string bytes = io::read_file(d / "idx" / "index.bin");
  write(d / "idx" / "index.bin", bytes.substr(0, bytes.size() / 2));
  r = testing::run_cli(fmt::format("claims retrieve --index {} --claims {} --out {}", (d / "idx").string(),
                                   (d / "claims.jsonl").string(), (d / "bad.jsonl").string()));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("truncated or corrupt"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d / "bad.jsonl"));

  // Duplicate ids: an error naming the id.
  write(d / "dup.jsonl", "{\"id\": \"x\", \"text\": \"a\"}\n{\"id\": \"x\", \"text\": \"b\"}\n");
  r = testing::run_cli(
      fmt::format("claims index --corpus {} --out {}", (d / "dup.jsonl").string(), (d / "idx2").string()));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("duplicate document id 'x'"), std::string::npos) << r.err;
}

// --gold-recall: a claim's relevant documents are its own gold passages. g1's passage shares its
// number (86,000 = $86k) and words; g2's passage shares nothing with its claim, and a distractor
// shares "zebras" and "moon", so recall is 1/2 at every k and so is MRR.
TEST(ClaimsRetrieveCli, GoldRecall) {
  const fs::path d = testing::fresh_dir("claims_retrieve_gold_recall");
  const testing::ScopedTempDir cleanup(d);
  write(d / "gold.jsonl",
        "{\"id\": \"g1\", \"claim\": \"Teachers earn 86,000 dollars a year\", \"doc\": \"The average "
        "teacher salary is $86k per year according to the union.\"}\n"
        "{\"id\": \"g2\", \"claim\": \"Zebras fly over the moon\", \"doc\": \"Budget deficits rose in 2020 "
        "to 3 trillion.\"}\n");
  write(d / "corpus.jsonl",
        "{\"id\": \"a\", \"text\": \"zebras are striped animals living in Africa near the moon\"}\n"
        "{\"id\": \"b\", \"text\": \"unrelated text about cooking\"}\n");
  auto r = testing::run_cli(fmt::format("claims index --corpus {} --gold {} --out {}",
                                        (d / "corpus.jsonl").string(), (d / "gold.jsonl").string(),
                                        (d / "idx").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = testing::run_cli(
      fmt::format("claims retrieve --index {} --claims {} --queries claim --k 5 --gold-recall --out {}",
                  (d / "idx").string(), (d / "gold.jsonl").string(), (d / "r.jsonl").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("gold recall, claim queries (n=2): R@1 0.5000 R@3 0.5000 R@5 0.5000 MRR@5 0.5000"),
            std::string::npos)
      << r.out;
  const io::Json m = io::parse_json(io::read_file(d / "r.jsonl.manifest.json"), "manifest");
  EXPECT_EQ(m["gold_recall"]["claim"]["queries"], 2);
  EXPECT_EQ(m["gold_recall"]["claim"]["recall@1"], 0.5);
  EXPECT_FALSE(m["gold_recall"].contains("question"));
}

}  // namespace
}  // namespace numcheck
