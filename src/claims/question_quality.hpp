#pragma once
// Question quality (QuanTemp paper, Section 5.5, Table 5), the automatic part: diversity of a
// claim's questions as (1 - self-BLEU) + word position deviation (definitions in
// text_metrics.hpp and docs/claims-reference.md), averaged over claims with at least two questions, and the
// share of yes/no questions. Relevance needs embeddings and is computed by the caller
// (claimsllm/quality.hpp) from question and claim vectors.
#include <cstddef>
#include <optional>
#include <vector>

#include "claims/decompose.hpp"
#include "io/json.hpp"

namespace numcheck::claims {

struct QuestionQuality {
  std::size_t records = 0;           // decomposition records read
  std::size_t scored = 0;            // records with status ok and at least one question
  std::size_t not_ok = 0;            // parse failures and errors (not scored)
  std::size_t questions = 0;         // questions in scored records
  std::size_t diversity_claims = 0;  // scored records with at least two questions
  double self_bleu = 0;              // mean over diversity_claims
  double wpd = 0;                    // mean over diversity_claims
  double diversity = 0;              // mean over diversity_claims of (1 - self-BLEU) + WPD
  double yes_no_share = 0;           // questions whose first word is an auxiliary verb
  std::optional<double> relevance;   // mean over scored records of the mean question-claim cosine
  std::string relevance_model;       // embedding model used
};

[[nodiscard]] QuestionQuality question_quality(const std::vector<Decomposition>& records);
// True when the question's first word is a yes/no opener (is, are, was, did, does, has, can, ...).
[[nodiscard]] bool is_yes_no_question(std::string_view question);
[[nodiscard]] io::OrderedJson question_quality_json(const QuestionQuality& q);

}  // namespace numcheck::claims
