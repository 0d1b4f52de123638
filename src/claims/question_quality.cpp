#include "claims/question_quality.hpp"

#include <array>
#include <string>

#include "claims/text_metrics.hpp"

namespace numcheck::claims {

bool is_yes_no_question(std::string_view question) {
  static constexpr std::array<std::string_view, 23> kOpeners = {
      "is",    "are",  "was",   "were",  "am",     "do",  "does",  "did",  "has", "have", "had", "can",
      "could", "will", "would", "shall", "should", "may", "might", "must", "isn", "aren", "wasn"};
  const auto toks = text_tokens(question);
  if (toks.empty()) return false;
  for (auto w : kOpeners)
    if (toks.front() == w) return true;
  return false;
}

QuestionQuality question_quality(const std::vector<Decomposition>& records) {
  QuestionQuality q;
  q.records = records.size();
  std::size_t yes_no = 0;
  for (const auto& r : records) {
    if (r.status != "ok" || r.questions.empty()) {
      ++q.not_ok;
      continue;
    }
    ++q.scored;
    q.questions += r.questions.size();
    std::vector<std::vector<std::string>> toks;
    toks.reserve(r.questions.size());
    for (const auto& s : r.questions) {
      toks.push_back(text_tokens(s));
      yes_no += is_yes_no_question(s) ? 1 : 0;
    }
    bool defined = false;
    const double sb = self_bleu(toks, &defined);
    if (!defined) continue;
    const double w = set_wpd(toks);
    ++q.diversity_claims;
    q.self_bleu += sb;
    q.wpd += w;
    q.diversity += (1.0 - sb) + w;
  }
  if (q.diversity_claims > 0) {
    const auto n = static_cast<double>(q.diversity_claims);
    q.self_bleu /= n;
    q.wpd /= n;
    q.diversity /= n;
  }
  if (q.questions > 0) q.yes_no_share = static_cast<double>(yes_no) / static_cast<double>(q.questions);
  return q;
}

io::OrderedJson question_quality_json(const QuestionQuality& q) {
  io::OrderedJson j = io::OrderedJson::object();
  j["records"] = q.records;
  j["scored"] = q.scored;
  j["not_ok"] = q.not_ok;
  j["questions"] = q.questions;
  j["questions_per_claim"] =
      q.scored > 0 ? static_cast<double>(q.questions) / static_cast<double>(q.scored) : 0.0;
  j["diversity_claims"] = q.diversity_claims;
  j["self_bleu"] = q.self_bleu;
  j["one_minus_self_bleu"] = 1.0 - q.self_bleu;
  j["wpd"] = q.wpd;
  j["diversity"] = q.diversity;
  j["yes_no_share"] = q.yes_no_share;
  if (q.relevance) {
    j["relevance_embedding_cosine"] = *q.relevance;
    j["relevance_model"] = q.relevance_model;
  } else {
    j["relevance_embedding_cosine"] = nullptr;
  }
  return j;
}

}  // namespace numcheck::claims
