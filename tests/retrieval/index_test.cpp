// BM25 equals an independent straightforward implementation; MaxScore's top-100 equals exhaustive
// scoring's on 1,000 random queries; the index file round-trips and a damaged file is an error.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <zstd.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/prng.hpp"
#include "io/files.hpp"
#include "retrieval/index.hpp"
#include "retrieval/synthetic.hpp"

namespace numcheck::retrieval {
namespace {

Index build(const std::vector<std::string>& texts, TokenizerOptions tok = {}) {
  IndexBuilder b(tok);
  for (std::size_t i = 0; i < texts.size(); ++i) b.add({"d" + std::to_string(i), texts[i], ""});
  return b.build(2);
}

// BM25 written from the formula, over whitespace-free term lists, without any index.
double naive_bm25(const std::vector<Analyzed>& docs, const std::vector<std::string>& query, std::size_t d,
                  double k1, double b) {
  const double N = static_cast<double>(docs.size());
  double total = 0;
  for (const auto& a : docs) total += a.length;
  const double avgdl = total / N;
  double s = 0;
  for (const auto& q : query) {  // repeated query terms count again
    double df = 0;
    for (const auto& a : docs)
      if (std::count(a.terms.begin(), a.terms.end(), q) > 0) df += 1;
    if (df == 0) continue;
    const double f = static_cast<double>(std::count(docs[d].terms.begin(), docs[d].terms.end(), q));
    if (f == 0) continue;
    const double idf = std::log(1 + (N - df + 0.5) / (df + 0.5));
    s += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * docs[d].length / avgdl));
  }
  return s;
}

const std::vector<std::string> kSmall = {
    "The unemployment rate fell to 3.5% in 2019, the lowest in 50 years.",
    "Spending rose by $86,000 last year; the budget was $1.2 million.",
    "One thousand people attended; 1,000 tickets were sold.",
    "Unemployment unemployment unemployment.",
    "",
    "A claim about taxes and the budget and spending.",
    "Rates of unemployment in the U.S. were 1000 times lower?",
};

TEST(Bm25, EqualsStraightforwardImplementation) {
  const Index ix = build(kSmall);
  std::vector<Analyzed> docs;
  for (const auto& t : kSmall) docs.push_back(analyze(t));
  for (auto [k1, b] :
       std::vector<std::pair<double, double>>{{1.2, 0.75}, {0.9, 0.4}, {2.0, 1.0}, {0.0, 0.0}}) {
    Searcher s(ix, {k1, b});
    for (std::string qtext : {"unemployment rate 2019", "budget spending $86k", "one thousand tickets 1000",
                              "unemployment unemployment taxes", "nothing matches zzz"}) {
      const Query q = make_query(qtext, ix.tokenizer());
      const auto terms = analyze(qtext).terms;
      auto hits = s.search_exhaustive(q, 100);
      std::set<std::uint32_t> seen;
      for (const auto& h : hits) {
        seen.insert(h.doc);
        const double want = naive_bm25(docs, terms, h.doc, k1, b);
        EXPECT_NEAR(h.score, want, 1e-9 * want) << qtext << " doc " << h.doc;
        EXPECT_EQ(h.score, s.score(q, h.doc));
      }
      for (std::uint32_t d = 0; d < ix.num_docs(); ++d)
        if (!seen.count(d)) {
          EXPECT_EQ(naive_bm25(docs, terms, d, k1, b), 0.0) << qtext << " doc " << d;
        }
    }
  }
}

TEST(Bm25, NumberTermsMatchAcrossForms) {
  const Index ix = build(kSmall);
  Searcher s(ix, {});
  const auto hits = s.search(make_query("$86k", ix.tokenizer()), 10);
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(ix.doc_id(hits[0].doc), "d1");
  const auto h2 = s.search(make_query("one thousand", ix.tokenizer()), 10);
  std::set<std::string> ids;
  for (const auto& h : h2) ids.insert(std::string(ix.doc_id(h.doc)));
  EXPECT_TRUE(ids.count("d2") && ids.count("d6"));  // "1,000" and "1000" meet "one thousand"
}

TEST(Bm25, TiesBrokenByDocumentNumber) {
  const Index ix = build({"alpha beta", "alpha beta", "gamma", "alpha beta"});
  Searcher s(ix, {});
  const auto hits = s.search(make_query("alpha", ix.tokenizer()), 2);
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].doc, 0u);
  EXPECT_EQ(hits[1].doc, 1u);
  EXPECT_EQ(hits[0].score, hits[1].score);
}

TEST(Bm25, DuplicateDocumentIdsAreAnError) {
  IndexBuilder b;
  b.add({"x", "one", ""});
  b.add({"x", "two", ""});
  EXPECT_THROW((void)b.build(1), Error);
  // With two or more threads the id order is sorted beside the tokenizing: the same error, naming
  // the first two documents with the id, however many documents come after them.
  for (unsigned threads : {1u, 2u, 3u}) {
    IndexBuilder m;
    for (std::size_t i = 0; i < 5000; ++i)
      m.add({i == 1 || i == 4003 ? std::string("dup") : "d" + std::to_string(i), "some words 12", ""});
    try {
      (void)m.build(threads);
      ADD_FAILURE() << threads << " threads: no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("duplicate document id 'dup' (documents 2 and 4004)"),
                std::string::npos)
          << threads << " threads: " << e.what();
    }
  }
}

TEST(MaxScore, EqualsExhaustiveTop100OnRandomQueries) {
  SyntheticSpec spec;
  spec.vocabulary = 3000;  // small vocabulary: long posting lists and many ties
  SyntheticCollection coll(spec);
  IndexBuilder b;
  for (std::size_t i = 0; i < 4000; ++i) b.add({SyntheticCollection::document_id(i), coll.document(i), ""});
  const Index ix = b.build(2);
  Rng rng(20260725, "maxscore-params");
  std::size_t compared = 0;
  for (std::size_t qi = 0; qi < 1000; ++qi) {
    const Bm25Params p = qi % 3 == 0 ? Bm25Params{} : Bm25Params{0.5 + rng.unit() * 1.5, rng.unit()};
    Searcher s(ix, p);
    const Query q = make_query(coll.query(qi), ix.tokenizer());
    const std::size_t k = qi % 10 == 0 ? 1 + rng.below(20) : 100;
    const auto pruned = s.search(q, k);
    const auto full = s.search_exhaustive(q, k);
    ASSERT_EQ(pruned.size(), full.size()) << "query " << qi;
    for (std::size_t r = 0; r < full.size(); ++r) {
      ASSERT_EQ(pruned[r].doc, full[r].doc) << "query " << qi << " rank " << r;
      ASSERT_EQ(pruned[r].score, full[r].score) << "query " << qi << " rank " << r;
    }
    compared += full.size();
  }
  EXPECT_GT(compared, 50000u);
}

// The builder's postings equal a straightforward inversion of analyze() per document, and the
// index bytes are the same whatever the number of threads (chunks go to whichever thread is free,
// so the threads' local term ids differ from run to run; the index must not).
TEST(IndexBuilder, PostingsEqualStraightforwardInversionForAnyThreadCount) {
  SyntheticSpec spec;
  spec.vocabulary = 20000;
  SyntheticCollection coll(spec);
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < 5000; ++i) texts.push_back(coll.document(i));
  // Some non-ASCII, number-word and empty documents among them.
  texts[17] =
      "Ünïcödé TEXT with one thousand and 1,000 and caf\xC3\xA9"
      "5 and x@5 and \xFF\xFE bytes";
  texts[1500] = "";
  texts[4999] =
      "four score and seven years ago: 87 years, \xE2\x82\xAC"
      "5bn";
  std::map<std::string, std::vector<std::pair<std::uint32_t, std::uint32_t>>> want;
  std::vector<std::uint32_t> lengths;
  for (std::size_t d = 0; d < texts.size(); ++d) {
    const Analyzed a = analyze(texts[d]);
    lengths.push_back(a.length);
    std::map<std::string, std::uint32_t> tf;
    for (const auto& t : a.terms) ++tf[t];
    for (const auto& [t, f] : tf) want[t].emplace_back(static_cast<std::uint32_t>(d), f);
  }
  std::string first;
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    IndexBuilder b;
    for (std::size_t i = 0; i < texts.size(); ++i) b.add({"d" + std::to_string(i), texts[i], ""});
    const Index ix = b.build(threads);
    const std::string bytes = ix.serialize();
    if (first.empty()) {
      first = bytes;
      ASSERT_EQ(ix.num_terms(), want.size());
      std::size_t t = 0;
      for (const auto& [term, list] : want) {
        ASSERT_EQ(ix.term_text(static_cast<std::uint32_t>(t)), term);
        const auto pl = ix.postings(static_cast<std::uint32_t>(t));
        ASSERT_EQ(pl.docs.size(), list.size()) << term;
        for (std::size_t i = 0; i < pl.docs.size(); ++i) {
          ASSERT_EQ(pl.docs[i], list[i].first) << term;
          ASSERT_EQ(pl.tfs[i], list[i].second) << term;
        }
        ++t;
      }
      for (std::uint32_t d = 0; d < ix.num_docs(); ++d) ASSERT_EQ(ix.doc_length(d), lengths[d]);
    } else {
      ASSERT_EQ(bytes, first) << threads << " threads";
    }
  }
}

TEST(IndexFile, RoundTripsAndRanksTheSame) {
  const Index ix = build(kSmall, {.stem = true, .number_terms = true});
  const std::string bytes = ix.serialize();
  const Index back = Index::parse(bytes, "mem");
  EXPECT_EQ(back.num_docs(), ix.num_docs());
  EXPECT_EQ(back.num_terms(), ix.num_terms());
  EXPECT_TRUE(back.tokenizer().stem);
  EXPECT_EQ(back.serialize(), bytes);
  Searcher a(ix, {}), b(back, {});
  const Query q = make_query("unemployment budget 1000", ix.tokenizer());
  const auto ha = a.search(q, 10), hb = b.search(q, 10);
  ASSERT_EQ(ha.size(), hb.size());
  for (std::size_t i = 0; i < ha.size(); ++i) EXPECT_EQ(ha[i].doc, hb[i].doc);
  EXPECT_EQ(back.doc_number("d3"), 3u);
  EXPECT_FALSE(back.doc_number("nope"));
}

TEST(IndexFile, TruncatedOrCorruptIsAClearError) {
  const std::string bytes = build(kSmall).serialize();
  for (std::size_t cut : {std::size_t{0}, std::size_t{5}, bytes.size() / 2, bytes.size() - 1}) {
    try {
      (void)Index::parse(bytes.substr(0, cut), "idx.bin");
      ADD_FAILURE() << "cut at " << cut << " loaded";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("idx.bin"), std::string::npos);
    }
  }
  Rng rng(7, "corrupt");
  for (int i = 0; i < 200; ++i) {
    std::string bad = bytes;
    bad[rng.below(bad.size())] ^= static_cast<char>(1 + rng.below(255));
    EXPECT_THROW((void)Index::parse(bad, "idx.bin"), Error);
  }
  // Without the checksum the structural checks still refuse what they can see.
  std::string bad = bytes;
  bad.resize(bad.size() - 70);
  bad += std::string(64, '0');
  EXPECT_THROW((void)Index::parse(bad, "idx.bin", false), Error);
}

// An index file written by hand (format 3), for damage the builder never writes.
struct HandFile {
  std::string f = "NUMCHECK-RIDX\n";
  void u32(std::uint32_t v) { f.append(reinterpret_cast<const char*>(&v), 4); }
  void u64(std::uint64_t v) { f.append(reinterpret_cast<const char*>(&v), 8); }
  void strings(const std::vector<std::string>& v) {
    u64(v.size());
    std::uint64_t off = 0;
    for (const auto& x : v) {
      u64(off);
      off += x.size();
    }
    u64(off);
    for (const auto& x : v) f += x;
  }
  void u32s(const std::vector<std::uint32_t>& v) {
    u64(v.size());
    for (auto x : v) u32(x);
  }
  void u64s(const std::vector<std::uint64_t>& v) {
    u64(v.size());
    for (auto x : v) u64(x);
  }
};

// Three documents "a", "a", "b"; term "a" in documents 0 and 1 (one block: gaps 0, 0 and
// frequencies 1, 1 at width 0), term "b" in document 2 (gap 2 at width 2). The texts are one
// zstd block (no dictionary) of the raw layout: per document its text and metadata lengths, then
// the bytes. Each argument replaces one table.
std::string raw_texts(const std::vector<std::string>& texts) {
  std::string raw;
  for (const auto& t : texts) {
    const std::uint32_t lens[2] = {static_cast<std::uint32_t>(t.size()), 0};
    raw.append(reinterpret_cast<const char*>(lens), 8);
  }
  for (const auto& t : texts) raw += t;
  return raw;
}
std::string zstd(const std::string& raw) {  // a frame with its checksum, as the builder writes
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
  std::string out(ZSTD_compressBound(raw.size()), '\0');
  out.resize(ZSTD_compress2(c, out.data(), out.size(), raw.data(), raw.size()));
  ZSTD_freeCCtx(c);
  return out;
}
struct Parts {
  std::uint32_t version = 3;
  std::vector<std::uint32_t> id_order{0, 1, 2};
  std::vector<std::uint32_t> text_first{0, 3};
  std::vector<std::uint32_t> text_raw{27};
  std::string texts = zstd(raw_texts({"a", "a", "b"}));
  std::optional<std::vector<std::uint64_t>> text_off;  // default {0, texts.size()}
  std::vector<std::uint32_t> term_off{0, 2, 3};
  std::vector<std::uint32_t> block_last{1, 2};
  std::vector<std::uint64_t> block_off{0, 2, 5};
  std::string blocks{"\x00\x00\x02\x00\x02", 5};
};
std::string hand_file(const Parts& p) {
  HandFile h;
  h.u32(p.version);
  h.u32(0);  // flags
  const double avgdl = 1.0;
  h.f.append(reinterpret_cast<const char*>(&avgdl), 8);
  h.strings({"d0", "d1", "d2"});
  h.u32s(p.id_order);
  h.u32s({1, 1, 1});
  h.u32s(p.text_first);
  h.u32s(p.text_raw);
  h.u64s(p.text_off.value_or(std::vector<std::uint64_t>{0, p.texts.size()}));
  h.u64(0);  // no dictionary
  h.u64(p.texts.size());
  h.f += p.texts;
  h.strings({"a", "b"});
  h.u32s(p.term_off);
  h.u32s(p.block_last);
  h.u64s(p.block_off);
  h.u64(p.blocks.size());
  h.f += p.blocks;
  h.f += std::string(64, '0');  // checksum (not verified below)
  return h.f;
}

void expect_refused(const Parts& p, std::string_view why) {
  try {
    (void)Index::parse(hand_file(p), "idx.bin", false);
    ADD_FAILURE() << "a damaged index loaded (expected: " << why << ")";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("idx.bin"), std::string::npos) << e.what();
  }
}

TEST(IndexFile, TheHandWrittenFileLoads) {
  const Index ix = Index::parse(hand_file({}), "idx.bin", false);
  ASSERT_EQ(ix.num_terms(), 2u);
  EXPECT_EQ(ix.postings(0).docs, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(ix.postings(0).tfs, (std::vector<std::uint32_t>{1, 1}));
  EXPECT_EQ(ix.postings(1).docs, (std::vector<std::uint32_t>{2}));
  EXPECT_TRUE(ix.contains(1, 2));
  EXPECT_FALSE(ix.contains(1, 1));
}

// Regression (libFuzzer, fuzz_retrieval_index): a term offset past the posting table that a later
// offset "returns" from (0, 5, 3) passed the first/last-offset checks and the reader walked the
// first posting list out of bounds. Every offset is checked before any list.
TEST(IndexFile, AnOffsetPastThePostingsIsAnErrorNotARead) {
  Parts p;
  p.term_off = {0, 5, 3};
  expect_refused(p, "posting list");
}

TEST(IndexFile, DamagedBlocksAreErrorsNotReads) {
  Parts p;
  p.blocks[0] = 33;  // a width above 32 bits
  expect_refused(p, "posting block size");
  p = {};
  p.block_off = {0, 3, 5};  // a block whose header says 2 bytes, placed as 3
  expect_refused(p, "posting block size");
  p = {};
  p.block_off = {0, 2, 4};  // offsets that end before the blocks do
  expect_refused(p, "block tables disagree");
  p = {};
  p.block_off = {0, 7, 5};  // offsets out of order (a read past the blocks if trusted)
  expect_refused(p, "posting block size");
  p = {};
  p.blocks[4] = 3;  // term "b" in document 3 of 3
  expect_refused(p, "out of range");
  p = {};
  p.block_last = {1, 1};  // the skip table disagrees with the block
  expect_refused(p, "last document");
  p = {};
  // Frequencies at width 32: 0xFFFFFFFF + 1 wraps to a frequency of 0.
  p.blocks = std::string("\x00\x20\xff\xff\xff\xff\x00\x00\x00\x00\x02\x00\x02", 13);
  p.block_off = {0, 10, 13};
  expect_refused(p, "out of range or order");
  p = {};
  // Gaps at width 32: 1 + 0xFFFFFFFF wraps to document 0, not after document 0.
  p.blocks = std::string("\x20\x00\x00\x00\x00\x00\xff\xff\xff\xff\x02\x00\x02", 13);
  p.block_off = {0, 10, 13};
  expect_refused(p, "out of range or order");
  p = {};
  p.blocks.pop_back();  // the last block cut short
  expect_refused(p, "block tables disagree");
}

// Every single-byte change in the posting blocks of a real index, with the checksum not verified
// (what the fuzz target does): an Error, or an index whose pruned and exhaustive search agree.
TEST(IndexFile, EveryDamagedBlockByteIsAnErrorOrConsistent) {
  std::vector<std::string> texts;
  Rng rng(11, "blocks");
  for (int i = 0; i < 400; ++i) {
    std::string t = "common";
    for (int k = 0; k < 6; ++k) t += " w" + std::to_string(rng.below(40));
    texts.push_back(t);
  }
  const Index ix = build(texts);
  ASSERT_GT(ix.num_blocks(), ix.num_terms());  // some terms span several blocks
  const std::string bytes = ix.serialize();
  const std::size_t end = bytes.size() - 64, begin = end - ix.posting_bytes();
  std::size_t refused = 0;
  for (std::size_t at = begin; at < end; ++at) {
    for (const unsigned char x : {0x01, 0x80, 0xFF}) {
      std::string bad = bytes;
      bad[at] = static_cast<char>(static_cast<unsigned char>(bad[at]) ^ x);
      try {
        const Index back = Index::parse(bad, "idx.bin", false);
        const Searcher s(back, {});
        const Query q = make_query("common w1 w2 w3", back.tokenizer());
        const auto a = s.search(q, 20), b = s.search_exhaustive(q, 20);
        ASSERT_EQ(a.size(), b.size());
        for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i].doc, b[i].doc);
      } catch (const Error&) {
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 0u);
}

TEST(IndexFile, OlderFormatsAreRefusedWithHowToRebuild) {
  for (const std::uint32_t v : {1u, 2u}) {
    Parts p;
    p.version = v;
    try {
      (void)Index::parse(hand_file(p), "old/index.bin", false);
      ADD_FAILURE() << "a format " << v << " index loaded";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(fmt::format("old/index.bin has format version {} (uncompressed {})", v,
                                   v == 1 ? "postings" : "texts")),
                std::string::npos)
          << m;
      EXPECT_NE(m.find("rebuild it with 'numcheck claims index'"), std::string::npos) << m;
    }
  }
}

TEST(IndexFile, TheHandWrittenTextsReadBack) {
  const Index ix = Index::parse(hand_file({}), "idx.bin", false);
  EXPECT_EQ(ix.doc_text(0), "a");
  EXPECT_EQ(ix.doc_text(2), "b");
  EXPECT_EQ(ix.doc_meta(1), "");
  EXPECT_EQ(ix.text_raw_bytes(), 27u);
  EXPECT_THROW((void)ix.doc_text(3), Error);
}

// The text tables are checked when the file is read; a block's bytes when it is decompressed:
// either way an Error naming the damage, never a read out of bounds or a wrong text.
TEST(IndexFile, DamagedTextsAreErrorsNotReads) {
  Parts p;
  p.id_order = {0, 2, 1};  // not in id order
  expect_refused(p, "id order");
  p = {};
  p.id_order = {0, 0, 2};  // not a permutation
  expect_refused(p, "id order");
  p = {};
  p.text_first = {0, 2};  // the blocks end before the last document
  expect_refused(p, "text block tables disagree");
  p = {};
  p.text_first = {0, 0, 3};  // an empty block
  p.text_raw = {0, 27};
  p.text_off = std::vector<std::uint64_t>{0, 0, p.texts.size()};
  expect_refused(p, "text block tables disagree");
  p = {};
  p.text_off = std::vector<std::uint64_t>{0, p.texts.size() + 1};  // past the bytes
  expect_refused(p, "text block tables disagree");
  p = {};
  p.text_raw = {20};  // fewer bytes than three documents' lengths
  expect_refused(p, "text block tables disagree");
  auto text_error = [](const Parts& q, std::string_view why) {
    const Index ix = Index::parse(hand_file(q), "idx.bin", false);
    try {
      (void)ix.doc_text(1);
      ADD_FAILURE() << "a damaged text block decompressed (expected: " << why << ")";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("text block 0"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  p = {};
  p.text_raw = {28};  // one byte more than the block holds
  text_error(p, "shorter than recorded");
  p = {};
  p.text_raw = {26};  // one byte less
  text_error(p, "Destination buffer is too small");
  p = {};
  p.texts = zstd(raw_texts({"a", "aa", "b"}).substr(0, 27));  // lengths adding up to 28 of 27 bytes
  text_error(p, "lengths");
  p = {};
  p.texts[p.texts.size() / 2] ^= 0x55;  // damaged compressed bytes: the frame's checksum
  text_error(p, "Restored data doesn't match checksum");
}

// Many documents with metadata: blocks of about 16 KiB, a trained dictionary, every text and
// metadata string back as it went in, from the built index and from its file, in any order of
// access (the per-thread block cache), also from two indexes alternately.
TEST(IndexFile, TextsAndMetadataRoundTripThroughCompressedBlocks) {
  IndexBuilder b;
  std::vector<std::string> texts, metas;
  Rng rng(5, "texts");
  for (int i = 0; i < 6000; ++i) {
    std::string t;
    const std::uint64_t words = rng.below(60);
    for (std::uint64_t w = 0; w < words; ++w) t += "w" + std::to_string(rng.below(3000)) + " ";
    if (i % 97 == 0) t += std::string(20000, 'x');  // larger than a block
    texts.push_back(t);
    metas.push_back(i % 3 == 0 ? "" : fmt::format(R"({{"kind":"snippet","n":{}}})", i));
    b.add({"id" + std::to_string(i), t, metas.back()});
  }
  const Index built = b.build(2);
  EXPECT_GT(built.num_text_blocks(), 50u);
  EXPECT_GT(built.text_dict_bytes(), 0u);
  EXPECT_LT(built.text_bytes(), built.text_raw_bytes() / 2);
  const Index back = Index::parse(built.serialize(), "mem");
  EXPECT_EQ(back.text_bytes(), built.text_bytes());
  Rng order(6, "order");
  for (int k = 0; k < 20000; ++k) {
    const auto d = static_cast<std::uint32_t>(order.below(texts.size()));
    const Index& ix = k % 2 == 0 ? built : back;
    ASSERT_EQ(ix.doc_text(d), texts[d]) << d;
    ASSERT_EQ(ix.doc_meta(d), metas[d]) << d;
  }
}

TEST(IndexFile, SaveAndLoadThroughAFile) {
  const auto dir = std::filesystem::temp_directory_path() / "numcheck_retrieval_index_test";
  std::filesystem::create_directories(dir);
  const Index ix = build(kSmall);
  ix.save(dir / "index.bin");
  EXPECT_EQ(Index::load(dir / "index.bin").num_docs(), ix.num_docs());
  // save() streams the file in pieces (hashing as it writes): the same bytes as serialize(), also
  // for tables large enough to bypass the write buffer (a 100 kB text).
  EXPECT_EQ(io::read_file(dir / "index.bin"), ix.serialize());
  std::vector<std::string> big = kSmall;
  big.push_back(std::string(100000, 'x') + " tail words 1,000");
  const Index bix = build(big);
  bix.save(dir / "big.bin");
  EXPECT_EQ(io::read_file(dir / "big.bin"), bix.serialize());
  EXPECT_EQ(Index::load(dir / "big.bin").num_docs(), bix.num_docs());
  EXPECT_THROW((void)Index::load(dir / "missing.bin"), Error);
  std::filesystem::remove_all(dir);
}

TEST(HostileCorpus, EmptyHugeAndInvalidDocuments) {
  std::string huge;
  huge.reserve(10u << 20);
  while (huge.size() < (10u << 20)) huge += "lorem ipsum dolor sit amet ";
  const std::string invalid =
      "caf\xc3 \xff\xfe na\xefve 12\x80"
      "3";
  const Index ix = build({"", huge, invalid, "lorem"});
  EXPECT_EQ(ix.doc_length(0), 0u);
  Searcher s(ix, {});
  const auto hits = s.search(make_query("lorem", ix.tokenizer()), 10);
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].doc, 1u);  // the 10 MB document repeats it 400,000 times
  EXPECT_EQ(hits[1].doc, 3u);
  EXPECT_EQ(ix.doc_length(2), 5u);  // invalid bytes are boundaries: "caf", "na", "ve", "12", "3"
  EXPECT_EQ(s.search(make_query("", ix.tokenizer()), 10).size(), 0u);
}

}  // namespace
}  // namespace numcheck::retrieval
