// Rankings of the compressed index against format 1's: the top 50 (document numbers and scores to
// the last bit, as hexadecimal floats) of synthetic queries, from MaxScore and exhaustive search
// over the block-compressed postings (built, and saved and loaded), equal those of format 1's
// scoring over plain uncompressed posting lists. A change to the postings' encoding, the decoder,
// the pruning or the scoring that moves one bit fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "retrieval/index.hpp"
#include "retrieval/synthetic.hpp"

namespace {

using namespace numcheck;
using namespace numcheck::retrieval;

std::string hits_text(const std::vector<Hit>& hits) {
  std::string s;
  for (const auto& h : hits) s += fmt::format(" {}:{:a}", h.doc, h.score);
  return s;
}

Index synthetic_index(std::size_t n) {
  const SyntheticCollection coll;
  IndexBuilder b;
  for (std::size_t i = 0; i < n; ++i) b.add({SyntheticCollection::document_id(i), coll.document(i), ""});
  return b.build(2);
}

// Format 1's exhaustive scoring, written out over plain (uncompressed) posting lists from a
// straightforward inversion of analyze(): the same arithmetic in the same order (weight = count *
// idf * (k1 + 1), each posting adds weight * f / (f + norm), terms in query order).
std::vector<Hit> plain_top(const std::vector<Analyzed>& docs, const Query& q, Bm25Params p, std::size_t k) {
  std::map<std::string, std::vector<std::pair<std::uint32_t, std::uint32_t>>> inv;
  std::uint64_t total = 0;
  for (std::size_t d = 0; d < docs.size(); ++d) {
    total += docs[d].length;
    std::map<std::string, std::uint32_t> tf;
    for (const auto& t : docs[d].terms) ++tf[t];
    for (const auto& [t, f] : tf) inv[t].emplace_back(static_cast<std::uint32_t>(d), f);
  }
  const double avgdl = total == 0 ? 1.0 : static_cast<double>(total) / static_cast<double>(docs.size());
  const double n = static_cast<double>(docs.size());
  std::vector<double> acc(docs.size(), 0.0);
  std::vector<std::uint32_t> touched;
  for (std::size_t i = 0; i < q.terms.size(); ++i) {
    const auto it = inv.find(q.terms[i]);
    if (it == inv.end()) continue;
    const double df = static_cast<double>(it->second.size());
    const double w =
        static_cast<double>(q.counts[i]) * std::log(1.0 + (n - df + 0.5) / (df + 0.5)) * (p.k1 + 1.0);
    for (const auto& [d, tf] : it->second) {
      const double f = tf;
      const double norm = p.k1 * (1.0 - p.b + p.b * static_cast<double>(docs[d].length) / avgdl);
      if (acc[d] == 0.0) touched.push_back(d);
      acc[d] += w * f / (f + norm);
    }
  }
  std::vector<Hit> hits;
  for (auto d : touched) hits.push_back({d, acc[d]});
  std::sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) {
    return a.score > b.score || (a.score == b.score && a.doc < b.doc);
  });
  if (hits.size() > k) hits.resize(k);
  return hits;
}

TEST(Rankings, SameBitsAsPlainPostingLists) {
  const SyntheticCollection coll;
  std::vector<Analyzed> docs;
  for (std::size_t i = 0; i < 1500; ++i) docs.push_back(analyze(coll.document(i)));
  const Index built = synthetic_index(1500);
  const Index loaded = Index::parse(built.serialize(), "mem");
  for (const Bm25Params p : {Bm25Params{1.2, 0.75}, Bm25Params{0.9, 0.4}}) {
    const Searcher s(built, p), l(loaded, p);
    for (std::size_t i = 0; i < 100; ++i) {
      const Query q = make_query(coll.query(i), built.tokenizer());
      const auto want = hits_text(plain_top(docs, q, p, 50));
      EXPECT_EQ(hits_text(s.search(q, 50)), want) << "query " << i;
      EXPECT_EQ(hits_text(s.search_exhaustive(q, 50)), want) << "query " << i;
      EXPECT_EQ(hits_text(l.search(q, 50)), want) << "query " << i << " (saved and loaded)";
    }
  }
}

}  // namespace
