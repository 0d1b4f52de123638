// LLM verifier, pure parts: the strict verdict parser, the Table 11/12 prompts, and few-shot
// selection that never shows the model the claim it verifies.
#include <gtest/gtest.h>

#include <set>

#include <fmt/format.h>

#include "claims/llm_verify.hpp"
#include "claims/normalize.hpp"
#include "core/error.hpp"

namespace numcheck::claims {
namespace {

TEST(ParseVerdict, FinalLabelWithJustification) {
  auto p = parse_verdict("The evidence says 5.4%, not 4%.\nLabel: REFUTES");
  ASSERT_TRUE(p.ok) << p.reason;
  EXPECT_EQ(p.verdict, Verdict::kFalse);
  EXPECT_EQ(p.justification, "The evidence says 5.4%, not 4%.");
  p = parse_verdict("Label:SUPPORTS");
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.verdict, Verdict::kTrue);
  EXPECT_EQ(p.justification, "");
  p = parse_verdict("Justification: partly right. **Label:** conflicting.");
  ASSERT_TRUE(p.ok) << p.reason;
  EXPECT_EQ(p.verdict, Verdict::kConflicting);
  EXPECT_EQ(p.justification, "partly right.");
  // The same label repeated is fine.
  EXPECT_TRUE(parse_verdict("Label: REFUTES\nso...\nLabel: REFUTES").ok);
}

TEST(ParseVerdict, EverythingElseIsUnparseable) {
  for (const char* bad :
       {"The claim looks mostly right to me.", "I'm sorry, but I can't help with that request.",
        "Label: SUPPORTS because the numbers match", "Label: TRUE", "Label: REFUTES (partly)",
        "Label: SUPPORTS\nLabel: REFUTES", "Verdict: SUPPORTS\nLabel: REFUTES", "Verdict: TRUE",
        "Verdict SUPPORTS", ""}) {
    const auto p = parse_verdict(bad);
    EXPECT_FALSE(p.ok) << bad;
    EXPECT_FALSE(p.reason.empty()) << bad;
  }
}

TEST(ParseVerdict, VerdictMarkerAsTheZeroShotPromptAsks) {
  // Table 12's prompt ends "Justification, Verdict:", and the QuanTemp code reads "Verdict:".
  auto p = parse_verdict("Justification: the evidence gives 12%, not 20%.\nVerdict: REFUTES");
  ASSERT_TRUE(p.ok) << p.reason;
  EXPECT_EQ(p.verdict, Verdict::kFalse);
  EXPECT_EQ(p.justification, "the evidence gives 12%, not 20%.");
  p = parse_verdict("**Verdict:** supports.");
  ASSERT_TRUE(p.ok) << p.reason;
  EXPECT_EQ(p.verdict, Verdict::kTrue);
  // Either marker, the last one decides; the same verdict under both is fine.
  p = parse_verdict("Label: CONFLICTING\nVerdict: CONFLICTING");
  ASSERT_TRUE(p.ok) << p.reason;
  EXPECT_EQ(p.verdict, Verdict::kConflicting);
  EXPECT_FALSE(parse_verdict("Label: SUPPORTS\nVerdict: REFUTES").ok);  // ambiguous across markers
}

TEST(ParseVerdict, EachVerifyPromptsOwnMarkerParses) {
  for (const char* name : {"verify_zero_shot", "verify_few_shot"}) {
    const PromptSpec spec = builtin_prompt(name);
    ASSERT_TRUE(is_verdict_marker(spec.verdict_marker)) << name << ": " << spec.verdict_marker;
    // The prompt asks for its marker (the user template, or the examples' layout).
    EXPECT_NE((spec.user + spec.example).find(spec.verdict_marker), std::string::npos) << name;
    for (const Verdict v : {Verdict::kTrue, Verdict::kFalse, Verdict::kConflicting}) {
      const std::string answer =
          fmt::format("The numbers were compared.\n{} {}", spec.verdict_marker, verdict_word(v));
      const auto p = parse_verdict(answer);
      ASSERT_TRUE(p.ok) << name << ": " << p.reason;
      EXPECT_EQ(p.verdict, v) << answer;
    }
  }
  EXPECT_EQ(builtin_prompt("verify_zero_shot").verdict_marker, "Verdict:");
  EXPECT_EQ(builtin_prompt("verify_few_shot").verdict_marker, "Label:");
  PromptSpec odd = builtin_prompt("verify_zero_shot");
  odd.verdict_marker = "Answer:";  // a marker the parser would never read
  VerifyInput c;
  c.id = "c:1";
  c.claim = "x";
  EXPECT_THROW((void)verify_prompt(odd, c, {}, {}), Error);
}

VerifyInput input(std::string id, std::string claim, std::optional<Verdict> v) {
  VerifyInput x;
  x.id = std::move(id);
  x.claim = std::move(claim);
  x.label = v;
  x.questions = {"Is it so?"};
  x.evidence = {"some evidence", "more evidence"};
  return x;
}

TEST(VerifyPrompt, ZeroAndFewShotTemplates) {
  const PromptSpec zero = builtin_prompt("verify_zero_shot");
  const PromptSpec few = builtin_prompt("verify_few_shot");
  EXPECT_TRUE(zero.system.has_value());
  const auto c = input("c:1", "Crime fell 20%.", std::nullopt);
  const std::string z = verify_prompt(zero, c, {}, {});
  EXPECT_NE(z.find("Test claim: [Claim]:Crime fell 20%."), std::string::npos) << z;
  EXPECT_NE(z.find("[Evidences]:some evidence more evidence"), std::string::npos) << z;
  const auto s1 = input("t:1", "Taxes rose 3%.", Verdict::kConflicting);
  const std::string f = verify_prompt(few, c, {&s1}, {});
  EXPECT_NE(f.find("[Claim]:Taxes rose 3%."), std::string::npos);
  EXPECT_NE(f.find("Label:CONFLICTING"), std::string::npos);
  EXPECT_LT(f.find("Taxes rose"), f.find("Crime fell"));         // examples first, the claim last
  EXPECT_THROW((void)verify_prompt(few, c, {}, {}), Error);      // few-shot without shots
  EXPECT_THROW((void)verify_prompt(zero, c, {&s1}, {}), Error);  // zero-shot with shots
  PromptLimits tight;
  tight.evidence_bytes = 4;
  EXPECT_NE(verify_prompt(zero, c, {}, tight).find("[Evidences]:some ..."), std::string::npos);
}

TEST(ShotSelector, NeverTheClaimItselfNorItsDuplicate) {
  std::vector<VerifyInput> pool;
  for (int i = 0; i < 30; ++i)
    pool.push_back(input("p:" + std::to_string(i), "claim number " + std::to_string(i), Verdict::kTrue));
  pool.push_back(input("dup", "  CLAIM number 7 ", Verdict::kFalse));  // same text as p:7, other id
  for (auto how : {ShotSelection::kRandom, ShotSelection::kSimilar, ShotSelection::kBm25}) {
    ShotSelector sel(pool, how, 42);
    sel.set_scorer([n = pool.size()](std::string_view) { return std::vector<double>(n, 1.0); });
    for (int i = 0; i < 30; ++i) {
      const auto& c = pool[static_cast<std::size_t>(i)];
      const auto shots = sel.select(c, 30, std::nullopt);
      EXPECT_EQ(shots.size(),
                i == 7 ? 29u : 30u);  // 31 in the pool: itself (and for p:7 its duplicate) left out
      for (const auto* s : shots) {
        EXPECT_NE(s->id, c.id);
        EXPECT_NE(normalize_claim(s->claim), normalize_claim(c.claim));
      }
    }
  }
}

TEST(ShotSelector, RandomIsDeterministicPerClaimAndSimilarRanks) {
  std::vector<VerifyInput> pool;
  for (int i = 0; i < 50; ++i)
    pool.push_back(input("p:" + std::to_string(i), "filler text " + std::to_string(i), Verdict::kFalse));
  pool.push_back(input("budget", "the police budget was cut in half", Verdict::kTrue));
  ShotSelector a(pool, ShotSelection::kRandom, 7), b(pool, ShotSelection::kRandom, 7),
      c(pool, ShotSelection::kRandom, 8);
  const auto x = input("q", "was the police budget cut in half", std::nullopt);
  std::vector<std::string> ia, ib, ic;
  for (const auto* s : a.select(x, 5, std::nullopt)) ia.push_back(s->id);
  for (const auto* s : b.select(x, 5, std::nullopt)) ib.push_back(s->id);
  for (const auto* s : c.select(x, 5, std::nullopt)) ic.push_back(s->id);
  EXPECT_EQ(ia, ib);
  EXPECT_NE(ia, ic);
  EXPECT_EQ(std::set<std::string>(ia.begin(), ia.end()).size(), 5u);
  ShotSelector sim(pool, ShotSelection::kSimilar, 7);
  EXPECT_EQ(sim.select(x, 1, std::nullopt).front()->id, "budget");
  // BM25 takes its scores from the plugged-in scorer (highest first, ties by pool order) and
  // refuses to run without one or with a wrong number of scores.
  ShotSelector bm(pool, ShotSelection::kBm25, 7);
  EXPECT_THROW((void)bm.select(x, 1, std::nullopt), Error);
  bm.set_scorer([n = pool.size()](std::string_view) {
    std::vector<double> v(n, 1.0);
    v[3] = 2.0;
    return v;
  });
  const auto top = bm.select(x, 3, std::nullopt);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0]->id, "p:3");
  EXPECT_EQ(top[1]->id, "p:0");
  EXPECT_EQ(top[2]->id, "p:1");
  bm.set_scorer([](std::string_view) { return std::vector<double>(2, 0.0); });
  EXPECT_THROW((void)bm.select(x, 1, std::nullopt), Error);
  EXPECT_EQ(shot_selection_name(ShotSelection::kBm25), "bm25");
  EXPECT_EQ(shot_selection_from_name("bm25"), ShotSelection::kBm25);
}

TEST(ShotSelector, FoldsKeepShotsInOtherFolds) {
  std::vector<VerifyInput> pool;
  std::vector<std::string> texts;
  for (int i = 0; i < 40; ++i) {
    pool.push_back(input("p:" + std::to_string(i), "claim " + std::to_string(i % 35), Verdict::kTrue));
    texts.push_back(pool.back().claim);
  }
  const auto folds = grouped_folds(texts, 5, 3);
  for (std::size_t i = 0; i < texts.size(); ++i)
    for (std::size_t j = 0; j < texts.size(); ++j)
      if (texts[i] == texts[j]) {
        EXPECT_EQ(folds[i], folds[j]);  // duplicates share a fold
      }
  ShotSelector sel(pool, ShotSelection::kRandom, 1);
  sel.set_folds(folds);
  for (std::size_t i = 0; i < pool.size(); ++i) {
    for (const auto* s : sel.select(pool[i], 10, folds[i])) {
      const auto j = static_cast<std::size_t>(s - sel.pool().data());
      EXPECT_NE(folds[j], folds[i]);
    }
  }
}

TEST(VerifyRecord, UnparseableHasItsOwnLabel) {
  VerifyRecord r;
  r.id = "x";
  r.claim = "c";
  r.status = "parse_failure";
  r.reason = "no 'Label:' in the answer";
  r.raw = "hmm";
  r.gold = Verdict::kTrue;
  EXPECT_EQ(
      io::to_line(verify_record_json(r)),
      R"({"id":"x","claim":"c","label":"unparseable","status":"parse_failure","gold":"True","shots":[],"reason":"no 'Label:' in the answer","raw":"hmm"})");
}

}  // namespace
}  // namespace numcheck::claims
