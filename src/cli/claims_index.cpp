// numcheck claims index: builds the evidence index (src/retrieval) from snippet collections and
// gold justifications; writes INDEXDIR/index.bin and INDEXDIR/manifest.json.
#include <chrono>
#include <filesystem>

#include <fmt/core.h>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "io/sha256.hpp"
#include "retrieval/index.hpp"
#include "retrieval/pipeline.hpp"

namespace numcheck::cli {
namespace {

struct Args {
  std::vector<std::string> corpus, gold;
  std::string out;
  std::size_t passage_words = 100, stride = 50;
  bool stem = false, no_numbers = false;
  unsigned threads = 0;
};

void run(const Args& a) {
  if (a.corpus.empty() && a.gold.empty())
    throw Error(ErrorCode::kUsage, "give --corpus FILE and/or --gold FILE");
  const auto t0 = std::chrono::steady_clock::now();
  retrieval::Collection coll;
  io::OrderedJson inputs = io::OrderedJson::array();
  for (const auto& f : a.corpus) {
    const auto st = coll.add_corpus(f);
    inputs.push_back({{"path", f},
                      {"role", "corpus"},
                      {"sha256", io::sha256_file(f)},
                      {"records", st.records},
                      {"documents", st.documents},
                      {"duplicate_snippets_skipped", st.duplicates},
                      {"empty", st.empty}});
  }
  for (const auto& f : a.gold) {
    const auto st = coll.add_gold(f, a.passage_words, a.stride);
    inputs.push_back({{"path", f},
                      {"role", "gold"},
                      {"sha256", io::sha256_file(f)},
                      {"records", st.records},
                      {"documents", st.documents},
                      {"claims_without_justification", st.empty}});
  }
  const retrieval::TokenizerOptions tok{.stem = a.stem, .number_terms = !a.no_numbers};
  retrieval::IndexBuilder b(tok);
  for (auto& d : coll.documents()) b.add(std::move(d));
  const retrieval::Index ix = b.build(a.threads);
  std::filesystem::create_directories(a.out);
  const auto path = std::filesystem::path(a.out) / "index.bin";
  ix.save(path);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  io::OrderedJson m;
  m["kind"] = "claims index";
  m["numcheck_version"] = kVersion;
  m["documents"] = ix.num_docs();
  m["terms"] = ix.num_terms();
  m["postings"] = ix.num_postings();
  m["average_document_length"] = ix.avgdl();
  m["tokenizer"] = retrieval::tokenizer_name(tok);
  m["scoring"] = {{"variant", retrieval::kScoringVariant}, {"k1_default", 1.2}, {"b_default", 0.75}};
  m["passage_words"] = a.passage_words;
  m["passage_stride"] = a.stride;
  m["inputs"] = inputs;
  m["index_file"] = "index.bin";
  m["index_sha256"] = io::sha256_file(path);
  io::write_file_atomic(std::filesystem::path(a.out) / "manifest.json", io::to_pretty(m) + "\n");
  fmt::print("{}: {} documents, {} terms, {} postings ({:.1f} s)\n", a.out, ix.num_docs(), ix.num_terms(),
             ix.num_postings(), secs);
}

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--corpus", a->corpus,
                 "Snippet collection: JSONL {\"id\",\"text\",...} or a QuanTemp/CheckThat mapping JSON "
                 "(its top-k snippets become documents, de-duplicated by text); repeatable");
  app.add_option("--gold", a->gold,
                 "Claim file whose justifications (doc / features) become gold passages; repeatable");
  app.add_option("--out", a->out, "Index directory (index.bin, manifest.json)")->required();
  app.add_option("--passage-words", a->passage_words, "Words per gold passage window")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--stride", a->stride, "Words between the starts of two gold passage windows")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--stem", a->stem, "Snowball English stemming of words");
  app.add_flag("--no-number-terms", a->no_numbers, "Do not add canonical number terms (#value)");
  app.add_option("--threads", a->threads, "Tokenizing threads (0: all cores)")->capture_default_str();
  app.footer("Duplicate JSONL ids are an error. See docs/retrieval.md.");
  app.callback([a] { run(*a); });
}

const CommandRegistration reg(
    {"claims",
     "index",
     "Build the evidence index for claims retrieval",
     setup,
     "numcheck claims index --corpus val_claimonly_evidence_question_mapping.json --out index",
     {"index written"}});

}  // namespace
}  // namespace numcheck::cli
