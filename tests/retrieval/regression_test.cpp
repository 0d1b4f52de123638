// Retrieval-quality regression tests in the style of PISA/Anserini: a small committed query set
// with expected metrics (tests/retrieval/fixtures/regression_expected.json), and on the real
// QuanTemp data ($NUMCHECK_QUANTEMP, default ../shared/data/quantemp; skipped when absent) gold-document
// recall@1/3/10/100 of the 249 labelled test claims, their justifications as passages pooled with the val
// snippets as distractors, with claim queries and with question queries
// (tests/retrieval/fixtures/quantemp_expected.json). The metrics are diffed exactly (4 decimals):
// a change in tokenizer, scoring or pruning that moves them must update the file, on purpose.
// NUMCHECK_UPDATE_EXPECTED=1 rewrites the files instead of comparing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "io/files.hpp"
#include "io/json.hpp"
#include "retrieval/index.hpp"
#include "retrieval/pipeline.hpp"

namespace numcheck::retrieval {
namespace {

namespace fs = std::filesystem;

fs::path fixtures() { return fs::path(NUMCHECK_SOURCE_DIR) / "tests" / "retrieval" / "fixtures"; }
// $NUMCHECK_QUANTEMP when set (as the scripts and the benchmarks read it), else next to the repository.
fs::path data_dir() {
  if (const char* e = std::getenv("NUMCHECK_QUANTEMP"); e != nullptr && *e != '\0') return e;
  return fs::path(NUMCHECK_SOURCE_DIR) / ".." / "shared" / "data" / "quantemp";
}

struct Judged {
  std::string query;
  std::set<std::string> relevant;  // doc ids, or a prefix ending in '#' (any window of a gold doc)
};

bool is_relevant(const Judged& j, std::string_view doc_id) {
  for (const auto& r : j.relevant) {
    if (!r.empty() && r.back() == '#' ? doc_id.substr(0, r.size()) == r : doc_id == r) return true;
  }
  return false;
}

// recall@k (share of queries with a relevant document in the top k) and MRR@100.
io::OrderedJson metrics(const Index& ix, const std::vector<Judged>& qs, const std::vector<std::size_t>& ks) {
  Searcher s(ix, {});
  std::vector<std::size_t> found(ks.size(), 0);
  double rr = 0;
  for (const auto& q : qs) {
    const auto hits = s.search(make_query(q.query, ix.tokenizer()), 100);
    std::size_t first = 0;
    for (std::size_t r = 0; r < hits.size(); ++r)
      if (is_relevant(q, ix.doc_id(hits[r].doc))) {
        first = r + 1;
        break;
      }
    if (first) rr += 1.0 / static_cast<double>(first);
    for (std::size_t i = 0; i < ks.size(); ++i)
      if (first && first <= ks[i]) ++found[i];
  }
  io::OrderedJson m;
  m["queries"] = qs.size();
  for (std::size_t i = 0; i < ks.size(); ++i)
    m[fmt::format("recall@{}", ks[i])] = fmt::format("{:.4f}", static_cast<double>(found[i]) / qs.size());
  m["mrr@100"] = fmt::format("{:.4f}", rr / static_cast<double>(qs.size()));
  return m;
}

void check_or_update(const io::OrderedJson& got, const fs::path& expected_file) {
  const char* up = std::getenv("NUMCHECK_UPDATE_EXPECTED");
  if (up != nullptr && std::string(up) == "1") {
    io::write_file_atomic(expected_file, io::to_pretty(got) + "\n");
    GTEST_SKIP() << "wrote " << expected_file.string();
  }
  ASSERT_TRUE(fs::exists(expected_file)) << expected_file.string();
  const io::OrderedJson want = io::parse_ordered_json(io::read_file(expected_file), expected_file.string());
  EXPECT_EQ(io::to_pretty(got), io::to_pretty(want)) << "metrics moved; if on purpose, rerun with "
                                                        "NUMCHECK_UPDATE_EXPECTED=1 and commit "
                                                     << expected_file.string();
}

TEST(Regression, CommittedQuerySet) {
  io::OrderedJson got;
  for (bool numbers : {true, false}) {
    Collection c;
    (void)c.add_corpus(fixtures() / "regression_corpus.jsonl");
    IndexBuilder b({.stem = false, .number_terms = numbers});
    for (auto& d : c.documents()) b.add(std::move(d));
    const Index ix = b.build(2);
    std::vector<Judged> qs;
    io::for_each_line(fixtures() / "regression_queries.jsonl", [&](const io::Line& l) {
      const io::Json j = io::parse_json(l.text, "regression_queries.jsonl");
      Judged q;
      q.query = j.at("claim").get<std::string>();
      for (const auto& r : j.at("relevant")) q.relevant.insert(r.get<std::string>());
      qs.push_back(std::move(q));
    });
    got[numbers ? "with_number_terms" : "words_only"] = metrics(ix, qs, {1, 3, 10});
  }
  check_or_update(got, fixtures() / "regression_expected.json");
}

TEST(Regression, QuanTempGoldRecall) {
  const fs::path val = data_dir() / "val_claimonly_evidence_question_mapping.json";
  const fs::path gold = data_dir() / "model_gpt4o_test_results.csv";
  const fs::path decomp = data_dir() / "test_claimdecomp.csv";
  if (!fs::exists(val) || !fs::exists(gold) || !fs::exists(decomp))
    GTEST_SKIP() << "QuanTemp data not found at " << data_dir().string()
                 << " (set NUMCHECK_QUANTEMP to the data folder)";
  Collection c;
  (void)c.add_corpus(val);
  (void)c.add_gold(gold, 100, 50);
  IndexBuilder b;
  for (auto& d : c.documents()) b.add(std::move(d));
  const Index ix = b.build(2);
  const ClaimSet cs = load_claim_queries(gold, decomp, QueryMode::kBoth);
  ASSERT_EQ(cs.claims.size(), 249u);
  // The metric `claims retrieve --gold-recall` reports (retrieval::gold_recall), in the format of
  // the committed set's.
  const auto results = retrieve(Searcher(ix, {}), ix.tokenizer(), cs.claims, 100, 2);
  io::OrderedJson got;
  got["documents"] = ix.num_docs();
  got["claims"] = cs.claims.size();
  got["claims_without_questions"] = cs.without_questions;
  for (const GoldRecall& g : gold_recall(ix, cs.claims, results, {1, 3, 10, 100})) {
    io::OrderedJson m;
    m["queries"] = g.queries;
    for (auto [k, r] : g.recall) m[fmt::format("recall@{}", k)] = fmt::format("{:.4f}", r);
    m["mrr@100"] = fmt::format("{:.4f}", g.mrr);
    got[g.kind + "_queries"] = m;
  }
  check_or_update(got, fixtures() / "quantemp_expected.json");
}

}  // namespace
}  // namespace numcheck::retrieval
