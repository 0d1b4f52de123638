// The embeddings client (claims retrieve's re-ranking, claims questions-quality's relevance) through
// the runner against the embeddings test server: vectors arrive in batches (one request per
// batch_size texts), retryable faults are retried, malformed vectors are errors that are recorded
// and never cached, a wrong dimension or a batch answered with a vector missing is rejected naming
// the text, a resumed run asks for nothing again, the cache serves texts one by one whatever batch
// they came in, and a cached vector of one model is never served for another.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <ranges>
#include <sstream>
#include <string_view>

#include "core/error.hpp"
#include "embeddings_server.hpp"
#include "io/files.hpp"
#include "llm/embeddings.hpp"

namespace numcheck::llm {
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
    o.cache_path = dir / "responses.cache";
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
  EXPECT_EQ(e.summary.unanswered, 2u);  // the malformed one and the wrong dimension: retries ran out
  EXPECT_EQ(e.rejected, 1u);            // the wrong dimension was rejected, not stored
  EXPECT_EQ(e.wrong_dimension, 0u);
  ASSERT_TRUE(e.by_text.count("retry me please"));
  EXPECT_EQ(e.by_text.at("unemployment rose"), server.vector_for("unemployment rose"));
  EXPECT_FALSE(e.by_text.count("broken vector here"));
  EXPECT_FALSE(e.by_text.count("odd dimension text"));
  EXPECT_TRUE(fs::exists(dir / "run1" / "errors.jsonl"));
  EXPECT_GT(cosine(e.by_text.at("unemployment rose"), e.by_text.at("unemployment fell to 3.5 percent")), 0.3);
  EXPECT_NEAR(cosine(e.by_text.at("the budget deficit"), e.by_text.at("the budget deficit")), 1.0, 1e-12);

  // Neither error was cached: a fresh run asks again for exactly those two (plus the probe) and
  // gets vectors once the faults are gone; the others come from the cache.
  server.set_faults({});
  const std::size_t before = server.post_count();
  const Embeddings again = embed_texts(kTexts, opts("run2"));
  EXPECT_EQ(again.summary.unanswered, 0u);
  EXPECT_TRUE(again.by_text.count("broken vector here"));
  EXPECT_EQ(again.by_text.at("odd dimension text"), server.vector_for("odd dimension text"));
  EXPECT_EQ(server.post_count() - before, 2u);  // the probe and one batch of the two
  EXPECT_EQ(again.summary.from_cache, kTexts.size() - 2);
}

TEST_F(EmbedFixture, ResumeAsksForNothingTwice) {
  auto o = opts("run");
  const Embeddings e = embed_texts(kTexts, o);
  EXPECT_EQ(e.summary.unanswered, 0u);
  const std::size_t posts = server.post_count();
  o.resume = true;
  o.use_cache = false;
  const Embeddings r = embed_texts(kTexts, o);
  EXPECT_EQ(server.post_count(), posts + 1);  // the dimension probe only
  EXPECT_EQ(r.by_text.size(), e.by_text.size());
}

TEST_F(EmbedFixture, NeverAVectorOfAnotherModel) {
  (void)embed_texts(kTexts, opts("a"));
  const std::size_t posts = server.post_count();
  server.set_model("other-model");  // same name requested, but the server now reports another model
  auto o = opts("b");
  o.model = "other-model";
  const Embeddings e = embed_texts(kTexts, o);
  EXPECT_EQ(server.post_count() - posts,
            2u);  // the probe and one batch; nothing from the first model's cache
  EXPECT_EQ(e.summary.unanswered, 0u);
}

std::size_t errors_mentioning(const fs::path& run, std::string_view what) {
  if (!fs::exists(run / "errors.jsonl")) return 0;
  std::size_t n = 0;
  std::istringstream lines(io::read_file(run / "errors.jsonl"));
  for (std::string l; std::getline(lines, l);)
    if (l.find(what) != std::string::npos) ++n;
  return n;
}

// A vector of the wrong dimension is never stored in the cache: retried (a good second answer is
// used), and when every answer is wrong the text is an error and a later run asks again.
TEST_F(EmbedFixture, WrongDimensionIsNeverCached) {
  server.set_faults({{"budget", "dimension", 1}, {"odd dimension", "dimension", -1}});
  const Embeddings e = embed_texts(kTexts, opts("a"));
  EXPECT_EQ(e.by_text.at("the budget deficit"), server.vector_for("the budget deficit"));  // the retry's
  EXPECT_FALSE(e.by_text.count("odd dimension text"));
  EXPECT_EQ(e.rejected, 1u);
  // The batch's error names the text; the text's own request (after the batch failed) is one more.
  EXPECT_EQ(errors_mentioning(dir / "a", "answer rejected: a vector of dimension 65, not 64"), 2u);
  EXPECT_EQ(errors_mentioning(dir / "a", "for text t"), 1u);
  EXPECT_EQ(errors_mentioning(dir / "a", "\\\"odd dimension text\\\""), 1u);
  server.set_faults({});
  const std::size_t posts = server.post_count();
  const Embeddings again = embed_texts(kTexts, opts("b"));
  EXPECT_EQ(server.post_count() - posts, 2u);  // the probe and the text that had no good answer
  EXPECT_EQ(again.by_text.at("odd dimension text"), server.vector_for("odd dimension text"));
  EXPECT_EQ(again.by_text.at("the budget deficit"), server.vector_for("the budget deficit"));
}

// A cached vector of another dimension is never served: a server with the same model identity but
// 32-dimensional vectors gets every text asked again, and the resumed run directory of the
// 64-dimensional server refuses it.
TEST_F(EmbedFixture, CachedVectorOfAnotherDimensionIsNeverServed) {
  (void)embed_texts(kTexts, opts("a"));
  testing::EmbeddingsServer narrow("hash-bow-64", 32);  // same /v1/models answer, other vectors
  narrow.start();
  auto o = opts("b");
  o.endpoints = {narrow.base_url()};
  const Embeddings e = embed_texts(kTexts, o);
  EXPECT_EQ(e.dimension, 32u);
  EXPECT_EQ(narrow.post_count(), 2u);  // the probe and one batch
  EXPECT_EQ(e.summary.from_cache, 0u);
  EXPECT_EQ(e.summary.cache_refused, kTexts.size());
  EXPECT_EQ(e.summary.cache_rejected, 0u);  // the entries themselves are intact
  for (const auto& t : kTexts) EXPECT_EQ(e.by_text.at(t), narrow.vector_for(t)) << t;
  auto r = opts("a");
  r.endpoints = {narrow.base_url()};
  r.resume = true;
  EXPECT_THROW((void)embed_texts(kTexts, r), Error);  // run "a" is bound to dimension 64
  narrow.stop();
}

// An answer that reports another model than the probe's is never used or cached.
TEST_F(EmbedFixture, AnswerFromAnotherModelIsNeverCachedOrUsed) {
  server.set_faults({{"unemployment rose", "model", -1}});
  const Embeddings e = embed_texts(kTexts, opts("a"));
  EXPECT_FALSE(e.by_text.count("unemployment rose"));
  EXPECT_EQ(e.rejected, 1u);
  // The batch's error and the text's own request's.
  EXPECT_EQ(errors_mentioning(dir / "a", "an embedding from model 'impostor-model', not 'hash-bow-64'"), 2u);
  server.set_faults({});
  const std::size_t posts = server.post_count();
  const Embeddings again = embed_texts(kTexts, opts("b"));
  EXPECT_EQ(server.post_count() - posts, 2u);  // the probe and the rejected text
  EXPECT_EQ(again.by_text.at("unemployment rose"), server.vector_for("unemployment rose"));
}

// Texts go in batches: 150 texts are the probe and 3 requests of at most 64 (1 + 150 requests one
// text at a time); vectors land on their texts although the server answers in reverse order.
TEST_F(EmbedFixture, BatchesOfTextsOneRequestEach) {
  std::vector<std::string> many;
  for (int i = 0; i < 150; ++i) many.push_back("claim number " + std::to_string(i) + " about jobs");
  many.push_back("claim number 7 about jobs");  // a repeated text is embedded once
  const Embeddings e = embed_texts(many, opts("a"));
  EXPECT_EQ(server.post_count(), 4u);
  EXPECT_EQ(server.largest_batch(), 64u);
  EXPECT_EQ(server.text_count(), 151u);  // the probe and each distinct text once
  ASSERT_EQ(e.by_text.size(), 150u);
  for (const auto& t : many) EXPECT_EQ(e.by_text.at(t), server.vector_for(t)) << t;
  // The cache is per text: a list that shares 150 texts with the first in other batches asks
  // only for the new ones.
  many.push_back("a new claim about wages");
  auto o = opts("b");
  o.batch_size = 7;
  const std::size_t posts = server.post_count();
  const Embeddings b = embed_texts(many, o);
  EXPECT_EQ(server.post_count() - posts, 2u);
  EXPECT_EQ(b.summary.from_cache, 150u);
  EXPECT_EQ(b.by_text.at("a new claim about wages"), server.vector_for("a new claim about wages"));
  // batch_size 1 is one request per text.
  auto one = opts("c");
  one.batch_size = 1;
  one.use_cache = false;
  const std::size_t before = server.post_count();
  (void)embed_texts({"x one", "x two", "x three"}, one);
  EXPECT_EQ(server.post_count() - before, 4u);
}

// A batch answered with a vector missing is rejected (never used: which vector belongs to which
// text is unknown), retried, then its texts are asked one by one: only the text the server never
// answers is left without a vector, named in errors.jsonl.
TEST_F(EmbedFixture, BatchAnsweredWithTheWrongCountIsAnError) {
  server.set_faults({{"budget", "count", -1}});
  const Embeddings e = embed_texts(kTexts, opts("a"));
  EXPECT_EQ(e.by_text.size(), kTexts.size() - 1);
  EXPECT_FALSE(e.by_text.count("the budget deficit"));
  for (const auto& t : kTexts) {
    if (t != "the budget deficit") {
      EXPECT_EQ(e.by_text.at(t), server.vector_for(t)) << t;
    }
  }
  EXPECT_EQ(errors_mentioning(dir / "a", "answer rejected: 5 vectors for a batch of 6 texts"), 1u);
  EXPECT_EQ(errors_mentioning(dir / "a", "\"text_ids\":[\"" + text_item_id("the budget deficit") + "\"]"),
            1u);
  EXPECT_EQ(e.summary.unanswered, 1u);
  // Nothing was cached from the rejected batch: only the lone text's answers were used.
  server.set_faults({});
  const std::size_t posts = server.post_count();
  const Embeddings again = embed_texts(kTexts, opts("b"));
  EXPECT_EQ(server.post_count() - posts, 2u);
  EXPECT_EQ(again.by_text.at("the budget deficit"), server.vector_for("the budget deficit"));
}

}  // namespace
}  // namespace numcheck::llm
