#pragma once
// Text measures over decomposed questions (QuanTemp paper, Section 5.5 and Table 5) and the small
// TF-IDF similarity the LLM verifier uses to pick few-shot examples. Definitions (docs/claims-reference.md,
// "Question quality"):
//   tokens      lower-cased ASCII; a token is a maximal run of letters, digits and non-ASCII bytes,
//               or any other single non-space character (punctuation is a token of its own)
//   BLEU        Papineni et al. 2002 ("BLEU: a Method for Automatic Evaluation of Machine
//               Translation"): modified n-gram precisions p1..p4 (clipped by the largest count
//               in any one reference), geometric mean with weights 1/4, brevity penalty
//               exp(1 - r/c) when c <= r (r = the reference length closest to c, the shorter on a
//               tie). No smoothing: a zero p_n (including a candidate with fewer than n tokens)
//               gives BLEU 0, as NLTK's sentence_bleu does.
//   self-BLEU   Zhu et al. 2018 ("Texygen"): mean over the questions of one claim of BLEU(question,
//               the other questions as references).
//   WPD         word position deviation, Liu & Soh 2022 ("Towards Better Characterization of
//               Paraphrases"), as in the authors' reference implementation, on tokens instead of
//               lemmas.
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace numcheck::claims {

[[nodiscard]] std::vector<std::string> text_tokens(std::string_view text);

// Sentence BLEU of `candidate` against `references` (token lists), max n-gram order `order`.
[[nodiscard]] double bleu(const std::vector<std::string>& candidate,
                          const std::vector<std::vector<std::string>>& references, int order = 4);

// Mean over questions of BLEU(question, the others). Needs at least two questions (else 0 and
// `defined` false).
[[nodiscard]] double self_bleu(const std::vector<std::vector<std::string>>& questions,
                               bool* defined = nullptr);

// WPD of two token lists: positions normalized to i/(len-1); for each token type in both, the
// distance of its positions (one occurrence each: |p_s - p_t|; more: from the side with more
// occurrences, the mean of each occurrence's nearest distance to the other side's); WPD is the
// mean over shared types, 1 when no type is shared, 0 when either list has fewer than 2 tokens.
[[nodiscard]] double word_position_deviation(const std::vector<std::string>& s,
                                             const std::vector<std::string>& t);

// Mean WPD over ordered pairs of distinct questions (0 and `defined` false for fewer than two).
[[nodiscard]] double set_wpd(const std::vector<std::vector<std::string>>& questions, bool* defined = nullptr);

// TF-IDF vectors over word tokens (punctuation dropped) and their cosine. idf = ln((1 + N) /
// (1 + df)) + 1 (scikit-learn's smooth idf), tf = raw count, vectors L2-normalized.
class TfIdf {
 public:
  explicit TfIdf(const std::vector<std::string>& documents);
  // L2-normalized sparse vector of any text under this corpus' idf (unseen words are ignored).
  [[nodiscard]] std::unordered_map<std::string, double> vector(std::string_view text) const;
  [[nodiscard]] static double cosine(const std::unordered_map<std::string, double>& a,
                                     const std::unordered_map<std::string, double>& b);

 private:
  std::unordered_map<std::string, double> idf_;
};

}  // namespace numcheck::claims
