// Rankings pinned across index formats: top-k hits (document numbers and scores to the last bit, as
// hexadecimal floats) of the synthetic collection's queries, written by the uncompressed format 1
// index and compared with what today's index answers, through MaxScore and exhaustive scoring, and
// through an index that went to a file and back. A change to the postings' encoding, the decoder,
// the pruning or the scoring that moves one bit fails here.
// NUMCHECK_UPDATE_EXPECTED=1 rewrites tests/retrieval/fixtures/rankings.txt instead of comparing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "io/files.hpp"
#include "io/sha256.hpp"
#include "retrieval/index.hpp"
#include "retrieval/synthetic.hpp"

namespace {

namespace fs = std::filesystem;
using namespace numcheck;
using namespace numcheck::retrieval;

std::string hits_text(const std::vector<Hit>& hits) {
  std::string s;
  for (const auto& h : hits) s += fmt::format(" {}:{:a}", h.doc, h.score);
  return s;
}

// The pinned text: the first 100 queries' top 10 in full, then one SHA-256 over every query's
// top 100 under two parameter settings.
std::string rankings(const Index& ix, bool exhaustive) {
  const SyntheticCollection coll;
  std::string out;
  std::string all;
  for (const Bm25Params p : {Bm25Params{1.2, 0.75}, Bm25Params{0.9, 0.4}}) {
    const Searcher s(ix, p);
    for (std::size_t i = 0; i < 400; ++i) {
      const Query q = make_query(coll.query(i), ix.tokenizer());
      const auto top = exhaustive ? s.search_exhaustive(q, 100) : s.search(q, 100);
      all += fmt::format("{}{}\n", i, hits_text(top));
      if (p.k1 == 1.2 && i < 100)
        out += fmt::format(
            "q{}{}\n", i,
            hits_text(std::vector<Hit>(top.begin(), top.begin() + std::min<std::size_t>(10, top.size()))));
    }
  }
  out += fmt::format("top-100 of 400 queries, two settings: sha256 {}\n", io::sha256_hex(all));
  return out;
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
  const Index ix = synthetic_index(1500);
  for (const Bm25Params p : {Bm25Params{1.2, 0.75}, Bm25Params{0.9, 0.4}}) {
    const Searcher s(ix, p);
    for (std::size_t i = 0; i < 100; ++i) {
      const Query q = make_query(coll.query(i), ix.tokenizer());
      const auto want = hits_text(plain_top(docs, q, p, 50));
      EXPECT_EQ(hits_text(s.search(q, 50)), want) << "query " << i;
      EXPECT_EQ(hits_text(s.search_exhaustive(q, 50)), want) << "query " << i;
    }
  }
}

TEST(Rankings, SameAsTheUncompressedFormat) {
  const fs::path file = fs::path(NUMCHECK_SOURCE_DIR) / "tests" / "retrieval" / "fixtures" / "rankings.txt";
  const Index built = synthetic_index(6000);
  const std::string got = rankings(built, false);
  const char* up = std::getenv("NUMCHECK_UPDATE_EXPECTED");
  if (up != nullptr && std::string(up) == "1") {
    io::write_file_atomic(file, got);
    GTEST_SKIP() << "wrote " << file.string();
  }
  const std::string want = io::read_file(file);
  EXPECT_EQ(got, want) << "rankings moved";
  EXPECT_EQ(rankings(built, true), want) << "exhaustive rankings moved";
  const Index loaded = Index::parse(built.serialize(), "mem");
  EXPECT_EQ(rankings(loaded, false), want) << "rankings of the saved and loaded index moved";
}

}  // namespace
