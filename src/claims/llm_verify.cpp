#include "claims/llm_verify.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>

#include "claims/normalize.hpp"
#include "claims/text_metrics.hpp"
#include "core/ascii.hpp"
#include "core/error.hpp"
#include "core/prng.hpp"
#include "core/utf8.hpp"

namespace numcheck::claims {

namespace {

// The verdict word at the start of `s` (after spaces and '*'), with what follows it.
std::optional<Verdict> verdict_at(std::string_view s, std::string_view& rest, std::string& word) {
  while (!s.empty() && (ascii::is_space(s.front()) || s.front() == '*')) s.remove_prefix(1);
  static constexpr std::pair<std::string_view, Verdict> kWords[] = {
      {"supports", Verdict::kTrue}, {"refutes", Verdict::kFalse}, {"conflicting", Verdict::kConflicting}};
  const std::string l = ascii::lower(s.substr(0, 12));
  for (const auto& [w, v] : kWords) {
    if (l.compare(0, w.size(), w) == 0) {
      word = std::string(w);
      for (auto& c : word) c = static_cast<char>(c - 'a' + 'A');
      rest = s.substr(w.size());
      return v;
    }
  }
  return std::nullopt;
}

// Cuts text to at most n bytes at a UTF-8 character boundary.
std::string cut_utf8(std::string_view s, std::size_t n) {
  if (s.size() <= n) return std::string(s);
  return std::string(utf8::prefix(s, n)) + " ...";
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) {
    const std::string_view t = ascii::trim(p);
    if (t.empty()) continue;
    if (!out.empty()) out += ' ';
    out += t;
  }
  return out;
}

}  // namespace

std::string_view verdict_word(Verdict v) noexcept {
  switch (v) {
    case Verdict::kTrue:
      return "SUPPORTS";
    case Verdict::kFalse:
      return "REFUTES";
    case Verdict::kConflicting:
      return "CONFLICTING";
  }
  return "REFUTES";
}

bool is_verdict_marker(std::string_view marker) noexcept {
  for (const std::string_view m : kVerdictMarkers)
    if (m == marker) return true;
  return false;
}

VerdictParse parse_verdict(std::string_view response) {
  VerdictParse p;
  const std::string low = ascii::lower(response);
  // Every marker occurrence (either marker), in text order: {position, marker length}.
  std::vector<std::pair<std::size_t, std::size_t>> at;
  for (const std::string_view m : kVerdictMarkers) {
    const std::string lm = ascii::lower(m);
    for (std::size_t pos = low.find(lm); pos != std::string::npos; pos = low.find(lm, pos + 1))
      at.emplace_back(pos, lm.size());
  }
  std::sort(at.begin(), at.end());
  if (at.empty()) {
    p.reason = "no 'Label:' or 'Verdict:' in the answer";
    return p;
  }
  const auto [last, last_len] = at.back();
  const std::string marker(response.substr(last, last_len));
  std::string_view rest;
  std::string word;
  const auto v = verdict_at(response.substr(last + last_len), rest, word);
  if (!v) {
    p.reason = fmt::format("the last '{}' is not followed by SUPPORTS, REFUTES or CONFLICTING", marker);
    return p;
  }
  // Only emphasis, a full stop and spaces may follow.
  for (char c : rest) {
    if (!(ascii::is_space(c) || c == '*' || c == '.')) {
      p.reason = fmt::format("text after the final label {}", word);
      return p;
    }
  }
  for (std::size_t i = 0; i + 1 < at.size(); ++i) {
    std::string_view r2;
    std::string w2;
    const auto v2 = verdict_at(response.substr(at[i].first + at[i].second), r2, w2);
    if (v2 && *v2 != *v) {
      p.reason = fmt::format("conflicting labels: {} and then {}", w2, word);
      return p;
    }
  }
  std::string_view just = response.substr(0, last);
  // Drop the emphasis that opened "**Label:" and a leading "Justification:".
  just = ascii::trim(just);
  while (!just.empty() && just.back() == '*') just.remove_suffix(1);
  just = ascii::trim(just);
  if (ascii::lower(just.substr(0, 14)) == "justification:") just = ascii::trim(just.substr(14));
  p.ok = true;
  p.verdict = *v;
  p.label_word = word;
  p.justification = std::string(just);
  return p;
}

std::string verify_prompt(const PromptSpec& spec, const VerifyInput& claim,
                          const std::vector<const VerifyInput*>& shots, const PromptLimits& limits) {
  if (!spec.verdict_marker.empty() && !is_verdict_marker(spec.verdict_marker))
    fail(ErrorCode::kInvalidInput,
         "{}: verdict_marker '{}' is not one the verdict parser reads (Label: or Verdict:)", spec.path,
         spec.verdict_marker);
  std::string examples;
  for (const VerifyInput* s : shots) {
    if (!s->label) fail("few-shot example '{}' has no label", s->id);
    if (!examples.empty()) examples += spec.example_separator;
    examples += render_template(spec.example,
                                {{"claim", s->claim},
                                 {"questions", join(s->questions)},
                                 {"evidence", cut_utf8(join(s->evidence), limits.shot_evidence_bytes)},
                                 {"label", std::string(verdict_word(*s->label))}},
                                spec.path);
  }
  PromptVars vars{{"claim", claim.claim},
                  {"questions", join(claim.questions)},
                  {"evidence", cut_utf8(join(claim.evidence), limits.evidence_bytes)}};
  if (spec.user.find("{{examples}}") != std::string::npos) {
    if (shots.empty())
      fail(ErrorCode::kUsage, "{}: a few-shot prompt needs --shots of at least 1", spec.path);
    vars.emplace_back("examples", examples);
  } else if (!shots.empty()) {
    fail(ErrorCode::kUsage, "{}: a zero-shot prompt takes no examples (--shots 0)", spec.path);
  }
  return render_template(spec.user, vars, spec.path);
}

std::optional<ShotSelection> shot_selection_from_name(std::string_view name) noexcept {
  if (name == "random") return ShotSelection::kRandom;
  if (name == "similar") return ShotSelection::kSimilar;
  if (name == "bm25") return ShotSelection::kBm25;
  return std::nullopt;
}

std::string_view shot_selection_name(ShotSelection s) noexcept {
  switch (s) {
    case ShotSelection::kRandom:
      return "random";
    case ShotSelection::kSimilar:
      return "similar";
    case ShotSelection::kBm25:
      return "bm25";
  }
  return "random";
}

std::vector<std::size_t> grouped_folds(const std::vector<std::string>& texts, std::size_t folds,
                                       std::uint64_t seed) {
  if (folds < 2) fail(ErrorCode::kUsage, "--folds must be at least 2");
  const std::vector<std::size_t> group = near_duplicate_groups(texts);
  const std::size_t groups = group.empty() ? 0 : *std::max_element(group.begin(), group.end()) + 1;
  std::vector<std::size_t> order(groups);
  std::iota(order.begin(), order.end(), std::size_t{0});
  Rng rng(seed, "llm-verify-folds");
  rng.shuffle(order);
  std::vector<std::size_t> fold_of_group(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) fold_of_group[order[k]] = k % folds;
  std::vector<std::size_t> out(texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) out[i] = fold_of_group[group[i]];
  return out;
}

struct ShotSelector::Index {
  TfIdf tfidf;
  std::vector<std::unordered_map<std::string, double>> vectors;
  explicit Index(const std::vector<std::string>& docs) : tfidf(docs) {
    vectors.reserve(docs.size());
    for (const auto& d : docs) vectors.push_back(tfidf.vector(d));
  }
};

ShotSelector::ShotSelector(std::vector<VerifyInput> pool, ShotSelection how, std::uint64_t seed)
    : pool_(std::move(pool)), how_(how), seed_(seed) {
  keys_.reserve(pool_.size());
  std::vector<std::string> docs;
  for (const auto& p : pool_) {
    if (!p.label) fail("few-shot pool: claim '{}' has no label", p.id);
    keys_.push_back(normalize_claim(p.claim));
    docs.push_back(p.claim);
  }
  if (how_ == ShotSelection::kSimilar) index_ = std::make_shared<const Index>(docs);
}

std::vector<const VerifyInput*> ShotSelector::select(const VerifyInput& claim, std::size_t k,
                                                     std::optional<std::size_t> claim_fold) const {
  if (k == 0) return {};
  const std::string key = normalize_claim(claim.claim);
  std::vector<std::size_t> eligible;
  eligible.reserve(pool_.size());
  for (std::size_t i = 0; i < pool_.size(); ++i) {
    if (pool_[i].id == claim.id || keys_[i] == key) continue;
    if (claim_fold && !folds_.empty() && folds_[i] == *claim_fold) continue;
    eligible.push_back(i);
  }
  std::vector<const VerifyInput*> out;
  if (how_ == ShotSelection::kRandom) {
    Rng rng(seed_, "llm-shots:" + claim.id);
    const std::size_t n = std::min(k, eligible.size());
    for (std::size_t i = 0; i < n; ++i) {  // partial Fisher-Yates
      const std::size_t j = i + static_cast<std::size_t>(rng.below(eligible.size() - i));
      std::swap(eligible[i], eligible[j]);
      out.push_back(&pool_[eligible[i]]);
    }
    return out;
  }
  std::vector<std::pair<double, std::size_t>> scored;
  scored.reserve(eligible.size());
  if (how_ == ShotSelection::kBm25) {
    if (!scorer_) fail("few-shot selection bm25: no BM25 scorer was set");
    const auto sc = scorer_(claim.claim);
    if (sc.size() != pool_.size())
      fail("few-shot selection bm25: {} scores for a pool of {}", sc.size(), pool_.size());
    for (std::size_t i : eligible) scored.emplace_back(sc[i], i);
  } else {
    const auto v = index_->tfidf.vector(claim.claim);
    for (std::size_t i : eligible) scored.emplace_back(TfIdf::cosine(v, index_->vectors[i]), i);
  }
  const std::size_t n = std::min(k, scored.size());
  std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(n), scored.end(),
                    [](const auto& a, const auto& b) {
                      return a.first > b.first || (a.first == b.first && a.second < b.second);
                    });
  for (std::size_t i = 0; i < n; ++i) out.push_back(&pool_[scored[i].second]);
  return out;
}

io::OrderedJson verify_record_json(const VerifyRecord& r) {
  io::OrderedJson j = io::OrderedJson::object();
  j["id"] = r.id;
  j["claim"] = r.claim;
  j["label"] = r.verdict ? std::string(verdict_name(*r.verdict)) : std::string(kUnparseableLabel);
  j["status"] = r.status;
  if (r.verdict) j["justification"] = r.justification;
  if (r.gold) j["gold"] = std::string(verdict_name(*r.gold));
  j["shots"] = r.shots;
  if (!r.reason.empty()) j["reason"] = r.reason;
  if (r.raw) j["raw"] = *r.raw;
  return j;
}

}  // namespace numcheck::claims
