#include "claimsllm/stages.hpp"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
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

// What a stage's run directory says about its claims: the answers, the last error of each item
// that has one, and the shots each record was sent with (the LLM verifier's "shots" field).
struct RunRecords {
  struct Answer {
    std::string text;
    std::string finish_reason;
  };
  std::unordered_map<std::string, Answer> answers;
  std::unordered_map<std::string, std::string> errors;  // the last error per item
  std::unordered_map<std::string, std::vector<std::string>> shots;
};

// Calls fn(record, id) for each record of out_dir/file that has the id field (none when the file
// is absent). Fields are read through io::Record: a field of the wrong type is an Error naming
// file:line and the field.
void for_each_run_record(const fs::path& out_dir, const char* file, const std::string& id_field,
                         const std::function<void(const io::Record&, const std::string&)>& fn) {
  const fs::path path = out_dir / file;
  if (!fs::exists(path)) return;
  (void)llm::read_records(path, [&](const io::Json& j, std::size_t line) {
    const io::Record rec = io::Record::of(j, fmt::format("{}:{}", path.string(), line));
    if (const auto id = rec.opt_string(id_field)) fn(rec, *id);
  });
}

RunRecords read_run(const fs::path& out_dir, const std::string& id_field) {
  RunRecords r;
  const auto add_shots = [&r](const io::Record& rec, const std::string& id) {
    if (auto s = rec.opt_strings("shots")) r.shots[id] = std::move(*s);
  };
  for_each_run_record(out_dir, "responses.jsonl", id_field,
                      [&](const io::Record& rec, const std::string& id) {
                        r.answers[id] = {rec.opt_string("response").value_or(""),
                                         rec.opt_string("finish_reason").value_or("")};
                        add_shots(rec, id);
                      });
  for_each_run_record(out_dir, "errors.jsonl", id_field, [&](const io::Record& rec, const std::string& id) {
    r.errors[id] = rec.opt_string("error").value_or("request failed");
    add_shots(rec, id);
  });
  return r;
}

// The bookkeeping every stage does per claim, once: with an answer, parse(text) fills the record
// and returns nullopt, or returns why the answer does not parse (status "parse_failure", the
// reason with a note when the answer was cut at max_tokens, the raw text); without one, status
// "error" with the item's last request error. Counts the claim in c.
template <class Rec, class Parse>
void settle(const RunRecords& run, const std::string& id, Rec& rec, StageCounts& c, Parse&& parse) {
  ++c.records;
  const auto a = run.answers.find(id);
  if (a == run.answers.end()) {
    rec.status = "error";
    const auto e = run.errors.find(id);
    rec.reason = e != run.errors.end() ? e->second : "unanswered (the run stopped before this claim)";
    ++c.errors;
    return;
  }
  std::optional<std::string> why = parse(a->second.text);
  if (!why) {
    ++c.ok;
    return;
  }
  rec.status = "parse_failure";
  rec.reason = *why + (a->second.finish_reason == "length" ? " (the answer was cut at max_tokens)" : "");
  rec.raw = a->second.text;
  ++c.parse_failures;
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

}  // namespace

void apply_prompt_sampling(llm::RunSettings& settings, const claims::PromptSpec& spec,
                           const std::vector<std::string>& user_set) {
  auto set_by_user = [&](const char* name) {
    return std::find(user_set.begin(), user_set.end(), name) != user_set.end();
  };
  // The papers' runs set no top_k (OpenAI's API has none): it is sent only when the user or the
  // prompt file sets it, so a server samples at the prompt's temperature over its whole
  // distribution instead of the runner's greedy default top_k 1.
  if (!set_by_user("top_k")) settings.sampling.top_k.reset();
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
    settle(run, d.id, d, c, [&](const std::string& text) -> std::optional<std::string> {
      claims::DecompParse p = claims::parse_decomposition(spec.method, text);
      if (!p.ok) return std::move(p.reason);
      d.questions = std::move(p.questions);
      if (spec.method == claims::DecompMethod::kProgramFc) d.program = std::move(p.program);
      return std::nullopt;
    });
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
  // The shots per claim come from the records (what was actually sent).
  const RunRecords run = read_run(out_dir, "id");
  StageCounts c;
  std::vector<verify::Prediction> preds;
  preds.reserve(claims.size());
  std::string verdicts;
  for (const auto& cl : claims) {
    claims::VerifyRecord r;
    r.id = cl.id;
    r.claim = cl.claim;
    r.gold = cl.label;
    if (auto s = run.shots.find(cl.id); s != run.shots.end()) r.shots = s->second;
    settle(run, cl.id, r, c, [&](const std::string& text) -> std::optional<std::string> {
      const claims::VerdictParse p = claims::parse_verdict(text);
      if (!p.ok) return p.reason;
      r.verdict = p.verdict;
      r.justification = p.justification;
      return std::nullopt;
    });
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
  if (!spec.train_path.empty()) {
    m["train"] = {{"path", spec.train_path}, {"sha256", io::sha256_file(spec.train_path)}};
    m["train_near_duplicates_left_out"] = spec.pool_left_out;
  }
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
