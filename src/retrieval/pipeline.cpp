#include "retrieval/pipeline.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>

#include <fmt/format.h>

#include "claims/evidence.hpp"
#include "claims/load.hpp"
#include "claims/normalize.hpp"
#include "core/ascii.hpp"
#include "core/error.hpp"
#include "core/ordered_parallel.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"

namespace numcheck::retrieval {
namespace {

char first_byte(const std::string& s) {
  for (char c : s)
    if (!ascii::is_space(c)) return c;
  return 0;
}

}  // namespace

std::vector<std::pair<std::size_t, std::size_t>> word_windows(std::string_view text, std::size_t words,
                                                              std::size_t stride) {
  if (words == 0 || stride == 0) fail(ErrorCode::kUsage, "--passage-words and --stride must be positive");
  std::vector<std::pair<std::size_t, std::size_t>> w;  // word byte ranges
  for (std::size_t i = 0; i < text.size();) {
    while (i < text.size() && ascii::is_space(text[i])) ++i;
    if (i >= text.size()) break;
    const std::size_t b = i;
    while (i < text.size() && !ascii::is_space(text[i])) ++i;
    w.emplace_back(b, i);
  }
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t s = 0; s < w.size(); s += stride) {
    const std::size_t e = std::min(w.size(), s + words);
    out.emplace_back(w[s].first, w[e - 1].second);
    if (e == w.size()) break;
  }
  return out;
}

CorpusStats Collection::add_corpus(const std::filesystem::path& path) {
  CorpusStats st;
  const std::string bytes = io::read_file(path);
  inputs_.push_back(path.string());
  if (first_byte(bytes) == '[') {  // QuanTemp / CheckThat mapping: claims with evidences[].top_k_doc[]
    const claims::LoadResult r = claims::parse_claims(bytes, path.filename().string());
    for (const auto& c : r.claims) {
      for (const auto& ev : c.evidences) {
        for (const auto& snippet : ev.top_k_doc) {
          ++st.records;
          const std::string h = io::sha256_hex(snippet).substr(0, 16);
          if (snippet_seen_.count(h)) {
            ++st.duplicates;
            continue;
          }
          if (snippet.empty()) ++st.empty;
          snippet_seen_[h] = docs_.size();
          io::OrderedJson meta;
          meta["kind"] = "snippet";
          meta["source"] = path.filename().string();
          docs_.push_back({"snippet:" + h, snippet, io::to_line(meta)});
          ++st.documents;
        }
      }
    }
    return st;
  }
  std::size_t line_no = 0;
  std::string_view rest = bytes;
  while (!rest.empty()) {
    const auto nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (std::all_of(line.begin(), line.end(), ascii::is_space)) continue;
    const std::string where = fmt::format("{} line {}", path.string(), line_no);
    io::OrderedJson j = io::parse_ordered_json(line, where);
    if (!j.is_object()) fail("{}: not a JSON object", where);
    auto id = j.find("id");
    auto text = j.find("text");
    if (id == j.end() || !(id->is_string() || id->is_number_integer()))
      fail("{}: needs an \"id\" (string or integer)", where);
    if (text == j.end() || !text->is_string()) fail("{}: needs a \"text\" string", where);
    ++st.records;
    Document d;
    d.id = id->is_string() ? id->get<std::string>() : id->dump();
    d.text = text->get<std::string>();
    if (d.text.empty()) ++st.empty;
    j.erase("id");
    j.erase("text");
    if (!j.empty()) d.meta = io::to_line(j);
    docs_.push_back(std::move(d));
    ++st.documents;
  }
  return st;
}

CorpusStats Collection::add_gold(const std::filesystem::path& path, std::size_t words, std::size_t stride) {
  CorpusStats st;
  inputs_.push_back(path.string());
  const claims::LoadResult r = claims::load_claims(path);
  for (const auto& c : r.claims) {
    ++st.records;
    const std::string cid = claims::claim_id(c);
    if (c.doc.empty()) {
      ++st.empty;
      continue;
    }
    std::size_t n = 0;
    for (auto [b, e] : word_windows(c.doc, words, stride)) {
      io::OrderedJson meta;
      meta["kind"] = "gold";
      meta["claim_id"] = cid;
      docs_.push_back({fmt::format("{}#w{}", cid, n++), c.doc.substr(b, e - b), io::to_line(meta)});
      ++st.documents;
    }
  }
  return st;
}

ClaimSet load_claim_queries(const std::filesystem::path& claims_file,
                            const std::filesystem::path& questions_file, QueryMode mode, std::size_t limit) {
  ClaimSet out;
  const claims::LoadResult r = claims::load_claims(claims_file);
  for (const auto& is : r.issues) out.warnings.push_back(is.str());
  std::map<std::string, std::vector<std::string>> q_by_id, q_by_text, q_by_key;
  if (!questions_file.empty()) {
    const claims::LoadResult q = claims::load_claims(questions_file);
    for (const auto& is : q.issues) out.warnings.push_back(is.str());
    for (const auto& c : q.claims) {
      if (c.questions.empty()) continue;
      if (!c.id.empty()) q_by_id.emplace(c.id, c.questions);
      q_by_text.emplace(c.text, c.questions);
      q_by_key.emplace(claims::normalize_claim(c.text), c.questions);
    }
  }
  for (const auto& c : r.claims) {
    if (limit != 0 && out.claims.size() >= limit) break;
    ClaimQueries cq;
    cq.id = claims::claim_id(c);
    cq.claim = c.text;
    cq.label = c.label;
    cq.category = c.category;
    cq.questions = c.questions;
    if (cq.questions.empty()) {
      if (auto it = q_by_id.find(c.id); !c.id.empty() && it != q_by_id.end()) {
        cq.questions = it->second;
      } else if (auto t = q_by_text.find(c.text); t != q_by_text.end()) {
        cq.questions = t->second;
      } else if (auto k = q_by_key.find(claims::normalize_claim(c.text)); k != q_by_key.end()) {
        cq.questions = k->second;  // the same claim in other quotes, dashes, case or spacing
      }
    }
    if (cq.questions.empty()) ++out.without_questions;
    if (mode != QueryMode::kQuestions) cq.queries.push_back({"claim", cq.claim});
    if (mode != QueryMode::kClaim)
      for (const auto& q : cq.questions) cq.queries.push_back({"question", q});
    out.claims.push_back(std::move(cq));
  }
  return out;
}

std::vector<std::vector<QueryResult>> retrieve(const Searcher& s, const TokenizerOptions& tok,
                                               const std::vector<ClaimQueries>& claims, std::size_t k,
                                               unsigned threads) {
  std::vector<std::vector<QueryResult>> out(claims.size());
  std::vector<std::pair<std::size_t, std::size_t>> jobs;
  for (std::size_t c = 0; c < claims.size(); ++c) {
    out[c].resize(claims[c].queries.size());
    for (std::size_t q = 0; q < claims[c].queries.size(); ++q) {
      out[c][q].kind = claims[c].queries[q].kind;
      out[c][q].text = claims[c].queries[q].text;
      jobs.emplace_back(c, q);
    }
  }
  threads = static_cast<unsigned>(core::thread_count(threads));
  core::parallel_for(jobs.size(), threads, [&](std::size_t j) {
    auto [c, q] = jobs[j];
    out[c][q].hits = s.search(make_query(out[c][q].text, tok), k);
  });
  return out;
}

std::vector<GoldRecall> gold_recall(const Index& ix, const std::vector<ClaimQueries>& claims,
                                    const std::vector<std::vector<QueryResult>>& results,
                                    const std::vector<std::size_t>& ks) {
  std::vector<GoldRecall> out;
  for (const char* kind : {"claim", "question"}) {
    GoldRecall g;
    g.kind = kind;
    std::vector<std::size_t> found(ks.size(), 0);
    double rr = 0;
    for (std::size_t c = 0; c < claims.size() && c < results.size(); ++c) {
      const std::string prefix = claims[c].id + "#w";
      for (const auto& q : results[c]) {
        if (q.kind != kind) continue;
        ++g.queries;
        std::size_t first = 0;
        for (std::size_t r = 0; r < q.hits.size() && first == 0; ++r)
          if (ix.doc_id(q.hits[r].doc).starts_with(prefix)) first = r + 1;
        if (first == 0) continue;
        rr += 1.0 / static_cast<double>(first);
        for (std::size_t i = 0; i < ks.size(); ++i)
          if (first <= ks[i]) ++found[i];
      }
    }
    const double n = g.queries == 0 ? 1.0 : static_cast<double>(g.queries);
    for (std::size_t i = 0; i < ks.size(); ++i)
      g.recall.emplace_back(ks[i], static_cast<double>(found[i]) / n);
    g.mrr = rr / n;
    if (g.queries > 0) out.push_back(std::move(g));
  }
  return out;
}

std::vector<Scored> rerank_lexical(const Index& ix, const TokenizerOptions& tok, std::string_view query,
                                   const std::vector<Hit>& hits) {
  std::vector<std::string> qnums;
  if (tok.number_terms) qnums = number_terms(query);
  std::sort(qnums.begin(), qnums.end());
  qnums.erase(std::unique(qnums.begin(), qnums.end()), qnums.end());
  // Whether a snippet has a number term is read from the term's posting list (the index stores
  // every document's number terms when it was built with them), not by re-reading the snippet's
  // text: the same answer, without running the number reader over 100 snippets per query. An
  // index built without number terms falls back to reading the texts.
  std::vector<std::optional<std::uint32_t>> lists;
  if (ix.tokenizer().number_terms)
    for (const auto& q : qnums) lists.push_back(ix.term(q));
  const double best = hits.empty() ? 1.0 : hits.front().score;
  std::vector<Scored> out;
  out.reserve(hits.size());
  for (std::size_t i = 0; i < hits.size(); ++i) {
    double agree = 0;
    if (!qnums.empty()) {
      std::size_t shared = 0;
      if (ix.tokenizer().number_terms) {
        for (const auto& l : lists)
          if (l && ix.contains(*l, hits[i].doc)) ++shared;
      } else {
        std::vector<std::string> dn = number_terms(ix.doc_text(hits[i].doc));
        std::sort(dn.begin(), dn.end());
        for (const auto& q : qnums)
          if (std::binary_search(dn.begin(), dn.end(), q)) ++shared;
      }
      agree = static_cast<double>(shared) / static_cast<double>(qnums.size());
    }
    out.push_back({hits[i].doc, i + 1, hits[i].score, hits[i].score / best + 0.5 * agree});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Scored& a, const Scored& b) { return a.score > b.score; });
  return out;
}

std::vector<Selected> select_evidence(
    const std::vector<std::pair<std::string, std::vector<Scored>>>& per_query, bool claim_only,
    const SelectionPolicy& policy) {
  std::vector<Selected> out;
  auto taken = [&](std::uint32_t d) {
    return std::any_of(out.begin(), out.end(), [&](const Selected& s) { return s.doc == d; });
  };
  for (const auto& [query, list] : per_query) {
    const std::size_t want = claim_only ? policy.claim_top : 1;
    std::size_t got = 0;
    for (std::size_t r = 0; r < list.size() && got < want; ++r) {
      const Scored& s = list[r];
      if (policy.threshold && !claim_only && !(s.score > *policy.threshold))
        break;  // sorted: none later passes
      if (taken(s.doc)) continue;
      out.push_back({s.doc, query, s.score, r + 1});
      ++got;
    }
  }
  return out;
}

}  // namespace numcheck::retrieval
