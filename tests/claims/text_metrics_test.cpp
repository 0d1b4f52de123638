// BLEU, self-BLEU, word position deviation and TF-IDF cosine against values computed by hand
// (the computations are in the comments).
#include <gtest/gtest.h>

#include <cmath>

#include "claims/question_quality.hpp"
#include "claims/text_metrics.hpp"

namespace numcheck::claims {
namespace {

std::vector<std::string> T(const char* s) { return text_tokens(s); }

TEST(TextTokens, LowerCasesWordsAndSplitsPunctuation) {
  EXPECT_EQ(text_tokens("Did GDP grow 2.5% in 2019?"),
            (std::vector<std::string>{"did", "gdp", "grow", "2", ".", "5", "%", "in", "2019", "?"}));
  EXPECT_TRUE(text_tokens("  \n").empty());
}

TEST(Bleu, FourGramPrecisionsWithoutBrevityPenalty) {
  // candidate "the cat sat on the mat today" (7), reference "the cat sat on the mat" (6):
  // p1 = 6/7, p2 = 5/6, p3 = 4/5, p4 = 3/4; c > r so BP = 1; BLEU = (6/7*5/6*4/5*3/4)^(1/4) = (3/7)^(1/4).
  EXPECT_NEAR(bleu(T("the cat sat on the mat today"), {T("the cat sat on the mat")}),
              std::pow(3.0 / 7.0, 0.25), 1e-12);
}

TEST(Bleu, BrevityPenalty) {
  // candidate "the cat sat on the" (5) is a prefix of the 6-token reference: every p_n = 1,
  // BP = exp(1 - 6/5).
  EXPECT_NEAR(bleu(T("the cat sat on the"), {T("the cat sat on the mat")}), std::exp(-0.2), 1e-12);
}

TEST(Bleu, ClippedCountsAndZeroPrecision) {
  // "the the the the" vs "the cat", unigrams only: clipped 1 of 4; c = 4 > r = 2, BP = 1.
  EXPECT_NEAR(bleu(T("the the the the"), {T("the cat")}, 1), 0.25, 1e-12);
  // No 4-gram in common: BLEU 0 (no smoothing).
  EXPECT_EQ(bleu(T("the cat is on the mat"), {T("the cat sat on the mat")}), 0.0);
  // Fewer than 4 tokens: p4 has no n-grams, BLEU 0.
  EXPECT_EQ(bleu(T("a b c"), {T("a b c")}), 0.0);
}

TEST(Bleu, ClosestReferenceLengthPicksTheShorterOnATie) {
  // c = 5; references of lengths 4 and 6 are equally close: r = 4 < c, BP = 1, all p_n = 1 for
  // the 6-token reference that contains the candidate.
  EXPECT_NEAR(bleu(T("a b c d e"), {T("x y z w"), T("a b c d e f")}), 1.0, 1e-12);
}

TEST(SelfBleu, MeanOfEachQuestionAgainstTheOthers) {
  // a = 7 tokens, b = its 6-token prefix: BLEU(a, [b]) = (3/7)^(1/4); BLEU(b, [a]) = exp(1 - 7/6).
  bool defined = false;
  const double got = self_bleu({T("the cat sat on the mat today"), T("the cat sat on the mat")}, &defined);
  EXPECT_TRUE(defined);
  EXPECT_NEAR(got, (std::pow(3.0 / 7.0, 0.25) + std::exp(1.0 - 7.0 / 6.0)) / 2.0, 1e-12);
  EXPECT_EQ(self_bleu({T("only one question ?")}, &defined), 0.0);
  EXPECT_FALSE(defined);
}

TEST(WordPositionDeviation, ReversedWords) {
  // positions a 0, b 0.5, c 1 against c 0, b 0.5, a 1: |0-1|, 0, |1-0| -> mean 2/3.
  EXPECT_NEAR(word_position_deviation(T("a b c"), T("c b a")), 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(word_position_deviation(T("a b c"), T("a b c")), 0.0, 1e-12);
}

TEST(WordPositionDeviation, RepeatedWordsAndEdgeCases) {
  // s = "a a b": a at 0 and 0.5, b at 1; t = "b a": b at 0, a at 1.
  // a: from s (more occurrences): nearest distances 1 and 0.5 -> 0.75; b: |1 - 0| = 1. Mean 0.875.
  EXPECT_NEAR(word_position_deviation(T("a a b"), T("b a")), 0.875, 1e-12);
  EXPECT_EQ(word_position_deviation(T("a b"), T("c d")), 1.0);  // nothing shared
  EXPECT_EQ(word_position_deviation(T("a"), T("a b")), 0.0);    // too short
}

TEST(SetWpd, MeanOverOrderedPairs) {
  bool defined = false;
  EXPECT_NEAR(set_wpd({T("a b c"), T("c b a"), T("a b c")}, &defined), (4 * (2.0 / 3.0) + 2 * 0.0) / 6.0,
              1e-12);
  EXPECT_TRUE(defined);
}

TEST(TfIdf, CosineRanksOverlap) {
  TfIdf t({"the budget was cut in half", "crime fell by 20 percent", "the budget grew"});
  const auto q = t.vector("was the budget cut");
  EXPECT_GT(TfIdf::cosine(q, t.vector("the budget was cut in half")),
            TfIdf::cosine(q, t.vector("the budget grew")));
  EXPECT_EQ(TfIdf::cosine(q, t.vector("crime fell by 20 percent")), 0.0);
  EXPECT_NEAR(TfIdf::cosine(q, q), 1.0, 1e-12);
}

TEST(QuestionQuality, DiversityIsOneMinusSelfBleuPlusWpd) {
  Decomposition d1{"c:1", "claim", "m", {"a b c ?", "c b a ?"}, std::nullopt, "ok", "", std::nullopt};
  Decomposition d2{"c:2", "claim", "m", {"Is it?"}, std::nullopt, "ok", "", std::nullopt};
  Decomposition d3{"c:3", "claim", "m", {}, std::nullopt, "parse_failure", "x", std::string("raw")};
  const auto q = question_quality({d1, d2, d3});
  EXPECT_EQ(q.records, 3u);
  EXPECT_EQ(q.scored, 2u);
  EXPECT_EQ(q.not_ok, 1u);
  EXPECT_EQ(q.diversity_claims, 1u);
  // 4-token questions share no 4-gram: self-BLEU 0. WPD: tokens a b c ? vs c b a ?: positions
  // 0, 1/3, 2/3, 1 -> a |0-2/3|, b 0, c |2/3-0|, ? 0 -> 1/3.
  EXPECT_NEAR(q.self_bleu, 0.0, 1e-12);
  EXPECT_NEAR(q.wpd, 1.0 / 3.0, 1e-12);
  EXPECT_NEAR(q.diversity, 1.0 + 1.0 / 3.0, 1e-12);
  EXPECT_NEAR(q.yes_no_share, 1.0 / 3.0, 1e-12);  // only "Is it?" opens with an auxiliary
}

}  // namespace
}  // namespace numcheck::claims
