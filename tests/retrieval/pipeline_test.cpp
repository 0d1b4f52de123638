// Evidence selection (the paper's rules) and the lexical re-ranker (against its definition).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "retrieval/index.hpp"
#include "retrieval/pipeline.hpp"
#include "retrieval/synthetic.hpp"

namespace numcheck::retrieval {
namespace {

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
