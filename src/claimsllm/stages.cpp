#include "claimsllm/stages.hpp"

#include <algorithm>
#include <memory>
#include <unordered_map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"
#include "retrieval/index.hpp"
#include "verify/predictions.hpp"

namespace numcheck::claimsllm {

namespace fs = std::filesystem;

namespace {

struct RunRecords {
  struct Answer {
    std::string text;
    std::string finish_reason;
  };
  std::unordered_map<std::string, Answer> answers;
  std::unordered_map<std::string, std::string> errors;  // the last error per item
};

RunRecords read_run(const fs::path& out_dir, const std::string& id_field) {
  RunRecords r;
  const fs::path responses = out_dir / "responses.jsonl", errors = out_dir / "errors.jsonl";
  if (fs::exists(responses)) {
    (void)llm::read_records(responses, [&](const io::Json& rec, std::size_t) {
      if (!rec.contains(id_field) || !rec[id_field].is_string()) return;
      RunRecords::Answer a;
      if (rec.contains("response") && rec["response"].is_string())
        a.text = rec["response"].get<std::string>();
      if (rec.contains("finish_reason") && rec["finish_reason"].is_string())
        a.finish_reason = rec["finish_reason"].get<std::string>();
      r.answers[rec[id_field].get<std::string>()] = std::move(a);
    });
  }
  if (fs::exists(errors)) {
    (void)llm::read_records(errors, [&](const io::Json& rec, std::size_t) {
      if (!rec.contains(id_field) || !rec[id_field].is_string()) return;
      r.errors[rec[id_field].get<std::string>()] = rec.contains("error") && rec["error"].is_string()
                                                       ? rec["error"].get<std::string>()
                                                       : "request failed";
    });
  }
  return r;
}

void write_lines(const fs::path& path, const std::vector<io::OrderedJson>& records) {
  std::string out;
  for (const auto& r : records) {
    out += io::to_line(r);
    out += '\n';
  }
  io::write_file_atomic(path, out);
}

io::OrderedJson counts_json(const StageCounts& c) {
  io::OrderedJson j = io::OrderedJson::object();
  j["records"] = c.records;
  j["ok"] = c.ok;
  j["parse_failures"] = c.parse_failures;
  j["errors"] = c.errors;
  return j;
}

io::OrderedJson prompt_json(const claims::PromptSpec& p) {
  io::OrderedJson j = io::OrderedJson::object();
  j["file"] = fs::path(p.path).filename().string();
  j["sha256"] = p.sha256;
  j["method"] = p.method;
  j["source"] = p.source;
  return j;
}

std::string cut_note(const std::string& finish_reason) {
  return finish_reason == "length" ? " (the answer was cut at max_tokens)" : "";
}

}  // namespace

void apply_prompt_sampling(llm::RunSettings& settings, const claims::PromptSpec& spec,
                           const std::vector<std::string>& user_set) {
  auto set_by_user = [&](const char* name) {
    return std::find(user_set.begin(), user_set.end(), name) != user_set.end();
  };
  for (auto it = spec.sampling.begin(); it != spec.sampling.end(); ++it) {
    const std::string& k = it.key();
    if (set_by_user(k.c_str())) continue;
    const io::Json& v = it.value();
    if (k == "temperature") {
      settings.sampling.temperature = v.get<double>();
    } else if (k == "top_p") {
      settings.sampling.top_p = v.get<double>();
    } else if (k == "top_k") {
      settings.sampling.top_k = v.get<std::int64_t>();
    } else if (k == "max_tokens") {
      settings.sampling.max_tokens = v.get<std::int64_t>();
    } else if (k == "frequency_penalty") {
      settings.sampling.frequency_penalty = v.get<double>();
    } else if (k == "presence_penalty") {
      settings.sampling.presence_penalty = v.get<double>();
    } else {
      fail(ErrorCode::kInvalidInput, "{}: unknown sampling field '{}'", spec.path, k);
    }
  }
}

std::vector<llm::WorkItem> decompose_items(const std::vector<claims::Claim>& claims,
                                           const DecomposeSpec& spec) {
  std::vector<llm::WorkItem> items;
  items.reserve(claims.size());
  for (const auto& c : claims) {
    llm::WorkItem it;
    it.item_id = claims::claim_id(c);
    it.prompt = claims::decomposition_prompt(spec.prompt, spec.method, c.text);
    if (spec.prompt.system) it.system_prompt = spec.prompt.system;
    items.push_back(std::move(it));
  }
  return items;
}

StageCounts write_decompositions(const std::vector<claims::Claim>& claims, const DecomposeSpec& spec,
                                 const fs::path& out_dir) {
  const RunRecords run = read_run(out_dir, "id");
  StageCounts c;
  std::vector<io::OrderedJson> out;
  out.reserve(claims.size());
  for (const auto& cl : claims) {
    claims::Decomposition d;
    d.id = claims::claim_id(cl);
    d.claim = cl.text;
    d.method = std::string(claims::decomp_method_name(spec.method));
    if (auto a = run.answers.find(d.id); a != run.answers.end()) {
      claims::DecompParse p = claims::parse_decomposition(spec.method, a->second.text);
      if (p.ok) {
        d.questions = std::move(p.questions);
        if (spec.method == claims::DecompMethod::kProgramFc) d.program = std::move(p.program);
        ++c.ok;
      } else {
        d.status = "parse_failure";
        d.reason = p.reason + cut_note(a->second.finish_reason);
        d.raw = a->second.text;
        ++c.parse_failures;
      }
    } else {
      d.status = "error";
      auto e = run.errors.find(d.id);
      d.reason = e != run.errors.end() ? e->second : "unanswered (the run stopped before this claim)";
      ++c.errors;
    }
    ++c.records;
    out.push_back(claims::decomposition_json(d));
  }
  write_lines(out_dir / "decompositions.jsonl", out);
  io::OrderedJson m = io::OrderedJson::object();
  m["kind"] = "claims decompose";
  m["method"] = claims::decomp_method_name(spec.method);
  m["claims"] = spec.claims_path;
  m["prompt"] = prompt_json(spec.prompt);
  m["run"] = "run.json";
  m["counts"] = counts_json(c);
  io::write_file_atomic(out_dir / "decompose.json", io::to_pretty(m));
  return c;
}

StageCounts write_released(const std::vector<claims::Claim>& claims, const std::string& source_path,
                           const fs::path& out_dir) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) fail(ErrorCode::kIo, "cannot create {}: {}", out_dir.string(), ec.message());
  StageCounts c;
  std::vector<io::OrderedJson> out;
  for (const auto& d : claims::released_decompositions(claims)) {
    ++c.records;
    if (d.status == "ok") {
      ++c.ok;
    } else {
      ++c.parse_failures;
    }
    out.push_back(claims::decomposition_json(d));
  }
  write_lines(out_dir / "decompositions.jsonl", out);
  io::OrderedJson m = io::OrderedJson::object();
  m["kind"] = "claims decompose";
  m["method"] = "claimdecomp-released";
  m["claims"] = source_path;
  m["claims_sha256"] = io::sha256_file(source_path);
  m["counts"] = counts_json(c);
  io::write_file_atomic(out_dir / "decompose.json", io::to_pretty(m));
  return c;
}

std::vector<llm::WorkItem> verify_items(const std::vector<claims::VerifyInput>& claims,
                                        const std::vector<claims::VerifyInput>& pool,
                                        const VerifySpec& spec) {
  std::optional<claims::ShotSelector> selector;
  std::vector<std::size_t> claim_folds;
  if (spec.shots > 0) {
    selector.emplace(pool, spec.selection, spec.shot_seed);
    if (spec.selection == claims::ShotSelection::kBm25) {
      // BM25 (bm25-lucene, the retrieval index's scorer) over the pool's claim texts; document
      // numbers are pool positions.
      retrieval::IndexBuilder b;
      for (std::size_t i = 0; i < pool.size(); ++i) b.add({std::to_string(i), pool[i].claim, ""});
      auto ix = std::make_shared<const retrieval::Index>(b.build(1));
      auto searcher = std::make_shared<const retrieval::Searcher>(*ix, retrieval::Bm25Params{});
      selector->set_scorer([ix, searcher](std::string_view text) {
        std::vector<double> sc(ix->num_docs(), 0.0);
        const auto q = retrieval::make_query(text, ix->tokenizer());
        for (const auto& h : searcher->search_exhaustive(q, ix->num_docs())) sc[h.doc] = h.score;
        return sc;
      });
    }
    if (spec.folds > 1) {
      // The pool is the evaluated set: one fold assignment over it, looked up by id for claims.
      std::vector<std::string> texts;
      texts.reserve(pool.size());
      for (const auto& p : pool) texts.push_back(p.claim);
      std::vector<std::size_t> pool_folds = claims::grouped_folds(texts, spec.folds, spec.shot_seed);
      std::unordered_map<std::string, std::size_t> fold_of;
      for (std::size_t i = 0; i < pool.size(); ++i) fold_of[pool[i].id] = pool_folds[i];
      for (const auto& c : claims) {
        auto it = fold_of.find(c.id);
        claim_folds.push_back(it != fold_of.end() ? it->second
                                                  : spec.folds);  // not in pool: no constraint hit
      }
      selector->set_folds(std::move(pool_folds));
    }
  }
  std::vector<llm::WorkItem> items;
  items.reserve(claims.size());
  for (std::size_t i = 0; i < claims.size(); ++i) {
    const auto& c = claims[i];
    std::vector<const claims::VerifyInput*> shots;
    if (selector) {
      std::optional<std::size_t> fold;
      if (!claim_folds.empty()) fold = claim_folds[i];
      shots = selector->select(c, spec.shots, fold);
      if (shots.size() < spec.shots)
        fail(ErrorCode::kInvalidInput,
             "claim '{}': only {} labelled examples are eligible as shots (--shots {})", c.id, shots.size(),
             spec.shots);
    }
    llm::WorkItem it;
    it.item_id = c.id;
    it.prompt = claims::verify_prompt(spec.prompt, c, shots, spec.limits);
    if (spec.prompt.system) it.system_prompt = spec.prompt.system;
    io::OrderedJson ids = io::OrderedJson::array();
    for (const auto* s : shots) ids.push_back(s->id);
    it.fields["shots"] = ids;
    items.push_back(std::move(it));
  }
  return items;
}

StageCounts write_predictions(const std::vector<claims::VerifyInput>& claims, const VerifySpec& spec,
                              const fs::path& out_dir) {
  const RunRecords run = read_run(out_dir, "id");
  // Shots per claim from the records (what was actually sent).
  std::unordered_map<std::string, std::vector<std::string>> shots_of;
  for (const char* f : {"responses.jsonl", "errors.jsonl"}) {
    if (!fs::exists(out_dir / f)) continue;
    (void)llm::read_records(out_dir / f, [&](const io::Json& rec, std::size_t) {
      if (!rec.contains("id") || !rec["id"].is_string() || !rec.contains("shots") || !rec["shots"].is_array())
        return;
      auto& v = shots_of[rec["id"].get<std::string>()];
      v.clear();
      for (const auto& s : rec["shots"])
        if (s.is_string()) v.push_back(s.get<std::string>());
    });
  }
  StageCounts c;
  std::vector<verify::Prediction> preds;
  preds.reserve(claims.size());
  std::string verdicts;
  for (const auto& cl : claims) {
    claims::VerifyRecord r;
    r.id = cl.id;
    r.claim = cl.claim;
    r.gold = cl.label;
    if (auto s = shots_of.find(cl.id); s != shots_of.end()) r.shots = s->second;
    if (auto a = run.answers.find(cl.id); a != run.answers.end()) {
      const claims::VerdictParse p = claims::parse_verdict(a->second.text);
      if (p.ok) {
        r.verdict = p.verdict;
        r.justification = p.justification;
        ++c.ok;
      } else {
        r.status = "parse_failure";
        r.reason = p.reason + cut_note(a->second.finish_reason);
        r.raw = a->second.text;
        ++c.parse_failures;
      }
    } else {
      r.status = "error";
      auto e = run.errors.find(cl.id);
      r.reason = e != run.errors.end() ? e->second : "unanswered (the run stopped before this claim)";
      ++c.errors;
    }
    ++c.records;
    verdicts += io::to_line(claims::verify_record_json(r));
    verdicts += '\n';
    verify::Prediction pr;
    pr.id = r.id;
    pr.claim = r.claim;
    pr.label = r.verdict;  // nullopt: written as "unparseable", scored as wrong
    pr.gold = r.gold;
    preds.push_back(std::move(pr));
  }
  io::write_file_atomic(out_dir / "verdicts.jsonl", verdicts);
  io::OrderedJson m = io::OrderedJson::object();
  m["method"] = "llm";
  m["evidence"] = {
      {"path", spec.evidence_path},
      {"sha256", spec.evidence_path.empty() ? std::string() : io::sha256_file(spec.evidence_path)}};
  if (!spec.train_path.empty())
    m["train"] = {{"path", spec.train_path}, {"sha256", io::sha256_file(spec.train_path)}};
  m["prompt"] = prompt_json(spec.prompt);
  m["shots"] = spec.shots;
  m["shot_selection"] = std::string(claims::shot_selection_name(spec.selection));
  m["shot_seed"] = spec.shot_seed;
  if (spec.folds > 1) m["folds"] = spec.folds;
  m["evidence_bytes"] = spec.limits.evidence_bytes;
  m["shot_evidence_bytes"] = spec.limits.shot_evidence_bytes;
  m["run"] = "run.json";
  m["verdicts"] = "verdicts.jsonl";
  m["answers"] = counts_json(c);
  verify::write_predictions(out_dir, preds, m);
  return c;
}

void add_relevance(claims::QuestionQuality& q, const std::vector<claims::Decomposition>& records,
                   const llm::EmbedOptions& opt) {
  std::vector<std::string> texts;
  std::vector<const claims::Decomposition*> scored;
  for (const auto& r : records) {
    if (r.status != "ok" || r.questions.empty()) continue;
    scored.push_back(&r);
    texts.push_back(r.claim);
    for (const auto& s : r.questions) texts.push_back(s);
  }
  const llm::Embeddings e = llm::embed_texts(texts, opt);
  std::size_t missing = 0;
  for (const auto& t : texts) missing += e.by_text.count(t) == 0 ? 1 : 0;
  if (missing > 0)
    fail(ErrorCode::kIncomplete,
         "{} of {} texts got no embedding after all retries (see {}/errors.jsonl); run again with --resume",
         missing, texts.size(), opt.run_dir.string());
  double sum = 0;
  for (const auto* r : scored) {
    const auto& claim = e.by_text.at(r->claim);
    double s = 0;
    for (const auto& question : r->questions) s += llm::cosine(e.by_text.at(question), claim);
    sum += s / static_cast<double>(r->questions.size());
  }
  q.relevance = scored.empty() ? 0.0 : sum / static_cast<double>(scored.size());
  q.relevance_model = e.model.empty() ? opt.model : e.model;
}

}  // namespace numcheck::claimsllm
