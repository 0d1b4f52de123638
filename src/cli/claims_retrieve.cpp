// numcheck claims retrieve: top-k BM25 evidence for every claim (and/or each of its questions),
// optional re-ranking (lexical, or embeddings from an OpenAI-compatible endpoint) and evidence
// selection into the evidence file a verifier reads. See docs/retrieval.md.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include <fmt/core.h>

#include "claims/evidence.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "io/sha256.hpp"
#include "llm/cache.hpp"
#include "llm/embeddings.hpp"
#include "retrieval/index.hpp"
#include "retrieval/pipeline.hpp"

namespace numcheck::cli {
namespace {

namespace fs = std::filesystem;

struct Args {
  std::string index, claims, questions, queries = "both", out, evidence, rerank = "none";
  std::size_t k = 100, limit = 0;
  double k1 = 1.2, b = 0.75, threshold = 0.5;
  unsigned threads = 0;
  // embeddings
  std::vector<std::string> endpoints;
  std::string model, api_key_env, embed_run, cache_dir;
  bool resume = false, no_cache = false, gold_recall = false;
  std::size_t concurrency = 4;
  std::size_t embed_batch = 64;
  int retries = 4;
  double retry_base_s = 1.0, timeout_s = 120;
};

std::string scoring_name(const retrieval::Bm25Params& p) {
  return fmt::format("{}(k1={},b={})", retrieval::kScoringVariant, p.k1, p.b);
}

retrieval::QueryMode query_mode(const Args& a) {
  return a.queries == "claim"       ? retrieval::QueryMode::kClaim
         : a.queries == "questions" ? retrieval::QueryMode::kQuestions
                                    : retrieval::QueryMode::kBoth;
}

// The combinations of flags that cannot work, as usage errors before anything is read.
void check_args(const Args& a, retrieval::QueryMode mode) {
  if (a.rerank != "none" && a.evidence.empty())
    throw Error(ErrorCode::kUsage, "--rerank needs --evidence FILE.jsonl (where the selected evidence goes)");
  if (a.rerank == "none" && !a.evidence.empty() && mode != retrieval::QueryMode::kClaim)
    throw Error(
        ErrorCode::kUsage,
        "--evidence without re-ranking selects BM25's top 3 for the claim query: use --queries claim");
  if (a.rerank == "embeddings" && (a.endpoints.empty() || a.model.empty()))
    throw Error(ErrorCode::kUsage, "--rerank embeddings needs --endpoint URL and --model NAME");
  if (a.rerank != "embeddings" && !a.endpoints.empty())
    throw Error(ErrorCode::kUsage, "--endpoint is used only with --rerank embeddings");
}

using Results = std::vector<std::vector<retrieval::QueryResult>>;

// The retrieval output (--out): one line per claim with its queries and their ranked hits; returns
// the bytes written and counts the queries.
std::string write_hits(const Args& a, const retrieval::Index& ix, const retrieval::ClaimSet& cs,
                       const Results& results, const std::string& scoring, std::size_t& nqueries) {
  std::string lines;
  for (std::size_t c = 0; c < cs.claims.size(); ++c) {
    io::OrderedJson j;
    j["id"] = cs.claims[c].id;
    j["claim"] = cs.claims[c].claim;
    j["scoring"] = scoring;
    j["queries"] = io::OrderedJson::array();
    for (const auto& q : results[c]) {
      io::OrderedJson qj;
      qj["kind"] = q.kind;
      qj["query"] = q.text;
      qj["hits"] = io::OrderedJson::array();
      for (std::size_t r = 0; r < q.hits.size(); ++r)
        qj["hits"].push_back(
            {{"doc_id", ix.doc_id(q.hits[r].doc)}, {"rank", r + 1}, {"score", q.hits[r].score}});
      j["queries"].push_back(std::move(qj));
      ++nqueries;
    }
    lines += io::to_line(j) + "\n";
  }
  io::write_file_atomic(a.out, lines);
  return lines;
}

// --gold-recall: recall@k and MRR of the gold evidence per kind of query, printed and added to
// the manifest.
void add_gold_recall(const Args& a, const retrieval::Index& ix, const retrieval::ClaimSet& cs,
                     const Results& results, io::OrderedJson& m) {
  std::vector<std::size_t> ks;
  for (std::size_t k : {1, 3, 10, 100})
    if (k <= a.k) ks.push_back(k);
  if (ks.empty() || ks.back() != a.k) ks.push_back(a.k);
  io::OrderedJson gj = io::OrderedJson::object();
  for (const auto& g : retrieval::gold_recall(ix, cs.claims, results, ks)) {
    io::OrderedJson one;
    one["queries"] = g.queries;
    std::string line = fmt::format("gold recall, {} queries (n={}):", g.kind, g.queries);
    for (auto [k, r] : g.recall) {
      one[fmt::format("recall@{}", k)] = r;
      line += fmt::format(" R@{} {:.4f}", k, r);
    }
    one[fmt::format("mrr@{}", a.k)] = g.mrr;
    fmt::print("{} MRR@{} {:.4f}\n", line, a.k, g.mrr);
    gj[g.kind] = std::move(one);
  }
  m["gold_recall"] = std::move(gj);
}

// --rerank embeddings: the vectors of every query and hit text through the embeddings client
// (its own run folder, cache and resume); their account goes into the manifest.
llm::Embeddings embed_hits(const Args& a, const retrieval::Index& ix, const retrieval::ClaimSet& cs,
                           const Results& results, io::OrderedJson& m) {
  std::set<std::string> texts;
  for (std::size_t c = 0; c < cs.claims.size(); ++c)
    for (const auto& q : results[c]) {
      texts.insert(q.text);
      for (const auto& h : q.hits) texts.insert(std::string(ix.doc_text(h.doc)));
    }
  llm::EmbedOptions eo;
  eo.kind = "claims retrieve embeddings";
  eo.endpoints = a.endpoints;
  eo.model = a.model;
  if (!a.api_key_env.empty()) {
    const char* key = std::getenv(a.api_key_env.c_str());
    if (key == nullptr || *key == 0)
      throw Error(ErrorCode::kUsage,
                  fmt::format("--api-key-env {}: that variable is not set", a.api_key_env));
    eo.api_key = key;
  }
  eo.run_dir = a.embed_run.empty() ? fs::path(a.evidence + ".embeddings") : fs::path(a.embed_run);
  eo.resume = a.resume;
  eo.use_cache = !a.no_cache;
  if (!a.cache_dir.empty()) eo.cache_path = llm::default_cache_path(a.cache_dir);
  eo.concurrency = a.concurrency;
  eo.batch_size = a.embed_batch;
  eo.retries = a.retries;
  eo.retry_base_s = a.retry_base_s;
  eo.timeout_s = a.timeout_s;
  llm::Embeddings emb = llm::embed_texts({texts.begin(), texts.end()}, eo);
  if (!emb.summary.cache_warning.empty())
    fmt::print(stderr, "numcheck: warning: {}; the run went on without the response cache\n",
               emb.summary.cache_warning);
  m["embeddings"] = {{"model_requested", a.model},
                     {"model_reported", emb.model},
                     {"run_dir", eo.run_dir.string()},
                     {"texts", texts.size()},
                     {"answered", emb.by_text.size()},
                     {"unanswered", emb.summary.unanswered},
                     {"rejected", emb.rejected},
                     {"cache_refused", emb.summary.cache_refused},
                     {"wrong_dimension", emb.wrong_dimension},
                     {"dimension", emb.dimension}};
  return emb;
}

// One query's hits in the re-ranker's order: by embedding cosine (nullopt when a vector is
// missing: retries ran out), lexically, or as BM25 ranked them.
std::optional<std::vector<retrieval::Scored>> rank_hits(const Args& a, const retrieval::Index& ix,
                                                        const retrieval::QueryResult& q,
                                                        const llm::Embeddings* emb) {
  std::vector<retrieval::Scored> list;
  if (emb != nullptr) {
    auto qv = emb->by_text.find(q.text);
    if (qv == emb->by_text.end()) return std::nullopt;
    for (std::size_t r = 0; r < q.hits.size(); ++r) {
      auto dv = emb->by_text.find(std::string(ix.doc_text(q.hits[r].doc)));
      if (dv == emb->by_text.end()) return std::nullopt;
      list.push_back({q.hits[r].doc, r + 1, q.hits[r].score, llm::cosine(qv->second, dv->second)});
    }
    std::stable_sort(list.begin(), list.end(), [](const retrieval::Scored& x, const retrieval::Scored& y) {
      return x.score > y.score;
    });
  } else if (a.rerank == "lexical") {
    list = retrieval::rerank_lexical(ix, ix.tokenizer(), q.text, q.hits);
  } else {  // BM25 order
    for (std::size_t r = 0; r < q.hits.size(); ++r)
      list.push_back({q.hits[r].doc, r + 1, q.hits[r].score, q.hits[r].score});
  }
  return list;
}

// What the evidence selection wrote.
struct Selected {
  std::size_t incomplete = 0, snippets = 0;
  std::map<std::string, std::size_t> settings;  // claims selected by their questions or by the claim
};

// Re-ranks each claim's hits and writes the selected evidence (--evidence) through `writer`.
Selected select_all(const Args& a, const retrieval::Index& ix, const retrieval::ClaimSet& cs,
                    const Results& results, const llm::Embeddings* emb, const std::string& selection,
                    claims::EvidenceWriter& writer) {
  retrieval::SelectionPolicy pol;
  pol.threshold = emb != nullptr ? std::optional<double>(a.threshold) : std::nullopt;
  Selected out;
  for (std::size_t c = 0; c < cs.claims.size(); ++c) {
    const auto& cq = cs.claims[c];
    const bool claim_only =
        std::all_of(results[c].begin(), results[c].end(), [](const auto& q) { return q.kind == "claim"; });
    // With both kinds of query, the questions select (the paper's unified setting); the claim
    // query selects only when the claim has no questions.
    std::vector<std::pair<std::string, std::vector<retrieval::Scored>>> per_query;
    bool missing = false;
    for (const auto& q : results[c]) {
      if (!claim_only && q.kind == "claim") continue;
      auto list = rank_hits(a, ix, q, emb);
      if (!list) {
        missing = true;
        break;
      }
      per_query.emplace_back(q.text, std::move(*list));
    }
    if (missing) {  // a vector is missing (retries ran out): no evidence rather than partial evidence
      ++out.incomplete;
      continue;
    }
    const auto sel = retrieval::select_evidence(per_query, claim_only, pol);
    claims::EvidenceRecord rec;
    rec.id = cq.id;
    rec.claim = cq.claim;
    rec.label = cq.label;
    rec.category = cq.category;
    rec.questions = cq.questions;
    for (std::size_t i = 0; i < sel.size(); ++i) {
      const auto& s = sel[i];
      rec.evidence.push_back(
          {std::string(ix.doc_id(s.doc)), std::string(ix.doc_text(s.doc)), s.query, s.score, i + 1});
    }
    rec.selection = selection;
    writer.write(rec);
    ++out.settings[claim_only ? "claim-top3" : "question-top1"];
    out.snippets += sel.size();
  }
  return out;
}

void run(const Args& a) {
  const retrieval::QueryMode mode = query_mode(a);
  check_args(a, mode);
  const retrieval::Index ix = retrieval::Index::load(fs::path(a.index) / "index.bin");
  const retrieval::Bm25Params params{a.k1, a.b};
  const retrieval::Searcher searcher(ix, params);
  const retrieval::ClaimSet cs = retrieval::load_claim_queries(a.claims, a.questions, mode, a.limit);
  for (const auto& w : cs.warnings) fmt::print(stderr, "numcheck: warning: {}\n", w);
  if (mode != retrieval::QueryMode::kClaim && cs.without_questions > 0) {
    fmt::print(stderr, "numcheck: warning: {} of {} claims have no questions{}\n", cs.without_questions,
               cs.claims.size(), mode == retrieval::QueryMode::kQuestions ? " (they get no query)" : "");
  }
  const auto results = retrieval::retrieve(searcher, ix.tokenizer(), cs.claims, a.k, a.threads);
  const std::string scoring = scoring_name(params);
  std::size_t nqueries = 0;
  const std::string lines = write_hits(a, ix, cs, results, scoring, nqueries);
  io::OrderedJson m;
  m["kind"] = "claims retrieve";
  m["numcheck_version"] = kVersion;
  m["index"] = a.index;
  m["index_sha256"] = io::sha256_file(fs::path(a.index) / "index.bin");
  m["claims_file"] = a.claims;
  m["claims_sha256"] = io::sha256_file(a.claims);
  if (!a.questions.empty()) m["questions_file"] = a.questions;
  m["queries"] = a.queries;
  m["k"] = a.k;
  m["scoring"] = scoring;
  m["tokenizer"] = retrieval::tokenizer_name(ix.tokenizer());
  m["claims"] = cs.claims.size();
  m["query_count"] = nqueries;
  m["claims_without_questions"] = cs.without_questions;
  m["output"] = a.out;
  m["output_sha256"] = io::sha256_hex(lines);
  fmt::print("{}: {} claims, {} queries, top {} by {}\n", a.out, cs.claims.size(), nqueries, a.k, scoring);
  if (a.gold_recall) add_gold_recall(a, ix, cs, results, m);
  if (a.rerank == "none" && a.evidence.empty()) {
    io::write_file_atomic(a.out + ".manifest.json", io::to_pretty(m) + "\n");
    return;
  }

  // Re-ranking and selection.
  const bool embeddings = a.rerank == "embeddings";
  llm::Embeddings emb;
  std::string selection = a.rerank == "none" ? "claim-top3" : "lexical";
  if (embeddings) {
    emb = embed_hits(a, ix, cs, results, m);
    selection = "embeddings:" + a.model;
  }
  claims::EvidenceWriter writer(a.evidence);
  writer.add_input(a.claims);
  if (!a.questions.empty()) writer.add_input(a.questions);
  writer.add_input(fs::path(a.index) / "index.bin");
  const Selected sel = select_all(a, ix, cs, results, embeddings ? &emb : nullptr, selection, writer);
  const std::size_t incomplete = sel.incomplete;
  io::OrderedJson extra;
  extra["retrieval_output"] = a.out;
  extra["scoring"] = scoring;
  extra["rerank"] = a.rerank;
  extra["threshold"] = embeddings ? io::OrderedJson(a.threshold) : io::OrderedJson();
  extra["settings"] =
      sel.settings;  // claims selected by their questions (top-1 each) or by the claim (top 3)
  extra["claims_incomplete"] = incomplete;
  if (embeddings) extra["embeddings"] = m["embeddings"];
  (void)writer.finish(extra);
  m["evidence"] = {{"file", a.evidence},
                   {"selection", selection},
                   {"claims_written", cs.claims.size() - incomplete},
                   {"claims_incomplete", incomplete},
                   {"snippets_selected", sel.snippets}};
  io::write_file_atomic(a.out + ".manifest.json", io::to_pretty(m) + "\n");
  fmt::print("{}: evidence for {} claims ({} snippets), selection {}\n", a.evidence,
             cs.claims.size() - incomplete, sel.snippets, selection);
  if (incomplete > 0) {
    throw Error(
        ErrorCode::kIncomplete,
        fmt::format("{} claims have no evidence because embeddings are missing (see {}/errors.jsonl); "
                    "run again with --resume",
                    incomplete, a.embed_run.empty() ? a.evidence + ".embeddings" : a.embed_run));
  }
}

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--index", a->index, "Index directory made by 'claims index'")->required();
  app.add_option("--claims", a->claims,
                 "Claims: any file the claim loaders read (QuanTemp JSON, JSONL {\"id\",\"claim\"}, CSV)")
      ->required();
  app.add_option(
      "--questions", a->questions,
      "Questions per claim (ClaimDecomp CSV or any claim file with questions), joined by id or claim "
      "text; default: the claim file's own questions");
  app.add_option("--queries", a->queries, "Which queries: claim, questions or both")
      ->check(CLI::IsMember({"claim", "questions", "both"}))
      ->capture_default_str();
  app.add_option("--k", a->k, "Hits per query")
      ->check(CLI::Range(std::size_t{1}, std::size_t{10000}))
      ->capture_default_str();
  app.add_option("--k1", a->k1, "BM25 k1")->check(CLI::Range(0.0, 100.0))->capture_default_str();
  app.add_option("--b", a->b, "BM25 b")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("--out", a->out, "Retrieval output (JSONL, one line per claim; manifest beside it)")
      ->required();
  app.add_option("--limit", a->limit, "Only the first N claims (0: all)")->capture_default_str();
  app.add_option("--threads", a->threads, "Query threads (0: all cores); the output order never changes")
      ->capture_default_str();
  app.add_flag("--gold-recall", a->gold_recall,
               "Also report gold-document recall@1/3/10/100 and MRR per query kind: a claim's relevant "
               "documents are its own gold passages (ids <claim id>#w<n> from 'claims index --gold')");
  app.add_option("--rerank", a->rerank, "Re-ranking before selection: none, lexical or embeddings")
      ->check(CLI::IsMember({"none", "lexical", "embeddings"}))
      ->capture_default_str();
  app.add_option("--evidence", a->evidence,
                 "Selected evidence (JSONL, the verifier's input); needs --rerank");
  app.add_option("--threshold", a->threshold, "Cosine a question's top snippet must exceed (embeddings)")
      ->capture_default_str();
  app.add_option("--endpoint", a->endpoints, "Embeddings: OpenAI-compatible base URL including /v1");
  app.add_option("--model", a->model, "Embeddings: model name sent with every request");
  app.add_option("--api-key-env", a->api_key_env, "Embeddings: environment variable holding the API key");
  app.add_option("--embed-run", a->embed_run, "Embeddings: runner directory (default EVIDENCE.embeddings)");
  app.add_flag("--resume", a->resume, "Embeddings: continue the runner directory");
  app.add_flag("--no-cache", a->no_cache, "Embeddings: neither read nor write the response cache");
  app.add_option("--cache-dir", a->cache_dir, "Embeddings: response cache folder");
  app.add_option("--concurrency", a->concurrency, "Embeddings: requests in flight")->capture_default_str();
  app.add_option("--embed-batch", a->embed_batch, "Embeddings: texts per request (the input array)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{2048}))
      ->capture_default_str();
  app.add_option("--retries", a->retries, "Embeddings: extra attempts after a retryable failure")
      ->capture_default_str();
  app.add_option("--retry-base-delay", a->retry_base_s, "Embeddings: first backoff delay (s)")
      ->capture_default_str();
  app.add_option("--timeout", a->timeout_s, "Embeddings: seconds per attempt")->capture_default_str();
  app.footer(
      "Scores are BM25 (bm25-lucene: Lucene/Elasticsearch idf, exact document lengths), ties by document "
      "order. "
      "--rerank lexical needs no model and is labelled 'lexical' in every output. See docs/retrieval.md.");
  app.callback([a] { run(*a); });
}

const CommandRegistration reg(
    {"claims",
     "retrieve",
     "Retrieve, re-rank and select evidence for claims",
     setup,
     "numcheck claims retrieve --index index --claims test_claimdecomp.csv --queries both --out "
     "retrieved.jsonl",
     {"evidence written for every claim",
      "some claims have no evidence because embeddings are missing (run again with --resume)"}});

}  // namespace
}  // namespace numcheck::cli
