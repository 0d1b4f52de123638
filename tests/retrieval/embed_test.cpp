// Re-ranking embeddings through the runner against the embeddings test server: vectors arrive,
// retryable faults are retried, malformed vectors are errors that are recorded and never cached,
// a wrong dimension is dropped, a resumed run asks for nothing again, and a cached vector of one
// model is never served for another.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "embeddings_server.hpp"
#include "retrieval/embed.hpp"
#include "retrieval/pipeline.hpp"
#include "retrieval/synthetic.hpp"

namespace numcheck::retrieval {
namespace {

namespace fs = std::filesystem;

struct EmbedFixture : ::testing::Test {
  testing::EmbeddingsServer server;
  fs::path dir;
  void SetUp() override {
    server.start();
    dir = fs::temp_directory_path() /
          ("numcheck_embed_test_" +
           std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override {
    server.stop();
    fs::remove_all(dir);
  }
  EmbedOptions opts(const std::string& run) {
    EmbedOptions o;
    o.endpoints = {server.base_url()};
    o.model = "hash-bow-64";
    o.run_dir = dir / run;
    o.cache_path = dir / "cache.sqlite3";
    o.retries = 3;
    o.retry_base_s = 0.001;
    o.concurrency = 2;
    return o;
  }
};

const std::vector<std::string> kTexts = {"unemployment fell to 3.5 percent",
                                         "the budget deficit",
                                         "unemployment rose",
                                         "retry me please",
                                         "broken vector here",
                                         "odd dimension text"};

TEST_F(EmbedFixture, VectorsRetriesAndErrors) {
  server.set_faults({{"retry me", "429", 1},
                     {"retry me", "500", 1},
                     {"broken", "malformed", -1},
                     {"odd dimension", "dimension", -1}});
  const Embeddings e = embed_texts(kTexts, opts("run1"));
  EXPECT_EQ(e.dimension, 64u);
  EXPECT_EQ(e.summary.unanswered, 1u);  // the malformed one: retries ran out
  EXPECT_EQ(e.wrong_dimension, 1u);
  ASSERT_TRUE(e.by_text.count("retry me please"));
  EXPECT_EQ(e.by_text.at("unemployment rose"), server.vector_for("unemployment rose"));
  EXPECT_FALSE(e.by_text.count("broken vector here"));
  EXPECT_FALSE(e.by_text.count("odd dimension text"));
  EXPECT_TRUE(fs::exists(dir / "run1" / "errors.jsonl"));
  EXPECT_GT(cosine(e.by_text.at("unemployment rose"), e.by_text.at("unemployment fell to 3.5 percent")), 0.3);
  EXPECT_NEAR(cosine(e.by_text.at("the budget deficit"), e.by_text.at("the budget deficit")), 1.0, 1e-12);

  // The error was not cached: a fresh run asks again (and gets a vector once the fault is gone).
  server.set_faults({});
  const std::size_t before = server.post_count();
  const Embeddings again = embed_texts(kTexts, opts("run2"));
  EXPECT_EQ(again.summary.unanswered, 0u);
  EXPECT_TRUE(again.by_text.count("broken vector here"));
  EXPECT_GE(server.post_count() - before, 1u);
  EXPECT_LT(server.post_count() - before, kTexts.size());  // the others came from the cache
}

TEST_F(EmbedFixture, ResumeAsksForNothingTwice) {
  auto o = opts("run");
  const Embeddings e = embed_texts(kTexts, o);
  EXPECT_EQ(e.summary.unanswered, 0u);
  const std::size_t posts = server.post_count();
  o.resume = true;
  o.use_cache = false;
  const Embeddings r = embed_texts(kTexts, o);
  EXPECT_EQ(server.post_count(), posts);
  EXPECT_EQ(r.by_text.size(), e.by_text.size());
}

TEST_F(EmbedFixture, NeverAVectorOfAnotherModel) {
  (void)embed_texts(kTexts, opts("a"));
  const std::size_t posts = server.post_count();
  server.set_model("other-model");  // same name requested, but the server now reports another model
  auto o = opts("b");
  o.model = "other-model";
  const Embeddings e = embed_texts(kTexts, o);
  EXPECT_EQ(server.post_count() - posts, kTexts.size());  // nothing from the first model's cache
  EXPECT_EQ(e.summary.unanswered, 0u);
}

TEST(Selection, PaperRules) {
  // Two questions: top-1 each above the threshold; a snippet already taken is skipped.
  std::vector<std::pair<std::string, std::vector<Scored>>> pq = {
      {"q1", {{7, 1, 9.0, 0.9}, {8, 2, 8.0, 0.8}}},
      {"q2", {{7, 1, 9.0, 0.95}, {9, 2, 7.0, 0.7}}},
      {"q3", {{5, 1, 9.0, 0.4}}},  // below 0.5: nothing
  };
  const auto sel = select_evidence(pq, false, {});
  ASSERT_EQ(sel.size(), 2u);
  EXPECT_EQ(sel[0].doc, 7u);
  EXPECT_EQ(sel[1].doc, 9u);
  EXPECT_EQ(sel[1].rank, 2u);
  // Claim only: top 3, no threshold.
  const auto c = select_evidence(
      {{"claim", {{1, 1, 3, 0.1}, {2, 2, 2, 0.05}, {3, 3, 1, 0.01}, {4, 4, 1, 0.0}}}}, true, {});
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[2].doc, 3u);
}

// The lexical re-ranker reads quantity agreement from the index's number-term postings; it must
// equal the definition (BM25 / best + 0.5 x share of the query's distinct number terms that the
// snippet's text also has, number terms read from the texts), stable on ties, on random synthetic
// queries whose numbers are in every written form.
TEST(Lexical, EqualsTheDefinitionReadFromTexts) {
  SyntheticSpec spec;
  spec.vocabulary = 2000;
  SyntheticCollection coll(spec);
  IndexBuilder b;
  for (std::size_t i = 0; i < 3000; ++i) b.add({SyntheticCollection::document_id(i), coll.document(i), ""});
  const Index ix = b.build(2);
  Searcher s(ix, {});
  std::size_t with_agreement = 0;
  for (std::size_t qi = 0; qi < 300; ++qi) {
    // Every third query borrows a snippet's numbers, so agreement is often partial, not only 0.
    std::string query = coll.query(qi);
    if (qi % 3 == 0) query += " " + coll.document(qi * 7).substr(0, 200);
    const auto hits = s.search(make_query(query, ix.tokenizer()), 100);
    auto qn = number_terms(query);
    std::sort(qn.begin(), qn.end());
    qn.erase(std::unique(qn.begin(), qn.end()), qn.end());
    std::vector<Scored> want;
    for (std::size_t i = 0; i < hits.size(); ++i) {
      auto dn = number_terms(ix.doc_text(hits[i].doc));
      std::size_t shared = 0;
      for (const auto& q : qn)
        if (std::find(dn.begin(), dn.end(), q) != dn.end()) ++shared;
      const double agree = qn.empty() ? 0.0 : static_cast<double>(shared) / static_cast<double>(qn.size());
      if (shared > 0) ++with_agreement;
      want.push_back({hits[i].doc, i + 1, hits[i].score, hits[i].score / hits.front().score + 0.5 * agree});
    }
    std::stable_sort(want.begin(), want.end(),
                     [](const Scored& x, const Scored& y) { return x.score > y.score; });
    const auto got = rerank_lexical(ix, ix.tokenizer(), query, hits);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t r = 0; r < got.size(); ++r) {
      ASSERT_EQ(got[r].doc, want[r].doc) << "query " << qi << " rank " << r;
      ASSERT_EQ(got[r].rank, want[r].rank);
      ASSERT_EQ(got[r].score, want[r].score);
    }
  }
  EXPECT_GT(with_agreement, 100u);
}

}  // namespace
}  // namespace numcheck::retrieval
