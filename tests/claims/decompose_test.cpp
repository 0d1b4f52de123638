// Decomposition: the strict parsers (good, malformed and refused answers), the prompts built from
// data/claims/prompts, records, and the released ClaimDecomp questions.
#include <gtest/gtest.h>

#include <filesystem>

#include "../support/quantemp_data.hpp"
#include "claims/decompose.hpp"
#include "claims/load.hpp"
#include "claims/prompt.hpp"
#include "core/error.hpp"

namespace numcheck::claims {
namespace {

TEST(ParseClaimDecomp, QuestionsWithListMarkers) {
  const auto p = parse_claimdecomp(
      "1. Did Texas add 2 million jobs?\n2) Was it the most of any state?\n\nQ3: Is the period the same?\n- "
      "Did "
      "it happen?\nNext Question: Is that all?");
  ASSERT_TRUE(p.ok) << p.reason;
  EXPECT_EQ(p.questions,
            (std::vector<std::string>{"Did Texas add 2 million jobs?", "Was it the most of any state?",
                                      "Is the period the same?", "Did it happen?", "Is that all?"}));
}

TEST(ParseClaimDecomp, AnythingButQuestionsFails) {
  auto p = parse_claimdecomp("Here are the questions:\n1. Did it happen?");
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.reason.find("line 1 is not a question"), std::string::npos) << p.reason;
  EXPECT_TRUE(p.questions.empty());
  p = parse_claimdecomp("I'm sorry, but I can't help with that request.");
  EXPECT_FALSE(p.ok);
  p = parse_claimdecomp("   \n\n");
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.reason, "no questions");
  // The prompt's own "Questions:" echoed back is skipped.
  p = parse_claimdecomp("Questions:\nIs it so?");
  EXPECT_TRUE(p.ok);
  p = parse_claimdecomp(std::string(100000, '7') + " is it?");  // long digit run: no deep regex recursion
  EXPECT_TRUE(p.ok);
}

TEST(ParseProgramFc, StepsAndPredict) {
  const auto p = parse_programfc(
      "```python\ndef program():\n    answer_1 = Question(\"How many jobs did Texas add?\")\n    fact_1 = "
      "Verify(f\"{answer_1} is over 2 million.\")\n    fact_2 = Verify('Texas added the most jobs.')\n    "
      "label = "
      "Predict(fact_1 and fact_2)\n```");
  ASSERT_TRUE(p.ok) << p.reason;
  EXPECT_EQ(p.questions,
            (std::vector<std::string>{"How many jobs did Texas add?", "{answer_1} is over 2 million.",
                                      "Texas added the most jobs."}));
  ASSERT_EQ(p.program.size(), 4u);
  EXPECT_EQ(p.program.back(), "label = Predict(fact_1 and fact_2)");
}

TEST(ParseProgramFc, MalformedProgramsFail) {
  EXPECT_FALSE(parse_programfc("fact_1 = Verify(\"x\")").ok);  // no Predict
  EXPECT_FALSE(parse_programfc("fact_1 = Verify(\"x\")\nprint(fact_1)\nlabel = Predict(fact_1)").ok);
  EXPECT_FALSE(parse_programfc("answer_1 = Verify(\"x\")\nlabel = Predict(answer_1)").ok);  // wrong pairing
  EXPECT_FALSE(parse_programfc("label = Predict(True)").ok);                                // no step
  EXPECT_FALSE(parse_programfc("fact_1 = Verify(\"x\")\nlabel = Predict(fact_1)\nfact_2 = Verify(\"y\")").ok);
  EXPECT_FALSE(parse_programfc("```\nfact_1 = Verify(\"x\")\nlabel = Predict(fact_1)").ok);  // open fence
  EXPECT_FALSE(
      parse_programfc("fact_1 = Verify(\"" + std::string(100000, 'x') + "\")\nlabel = Predict(fact_1)").ok);
  const auto p = parse_programfc("I'm sorry, but I can't help with that request.");
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.reason.find("not a program step"), std::string::npos);
}

TEST(DecompositionPrompt, BuiltinPromptsRenderTheClaimLast) {
  for (const char* name : {"claimdecomp", "programfc"}) {
    const PromptSpec spec = builtin_prompt(name);
    EXPECT_FALSE(spec.source.empty());
    EXPECT_EQ(spec.sha256.size(), 64u);
    const auto m = *decomp_method_from_name(name);
    const std::string p = decomposition_prompt(spec, m, "Crime fell 20% in 2019.");
    EXPECT_EQ(p.find("{{"), std::string::npos) << p;
    const std::string tail = m == DecompMethod::kClaimDecomp
                                 ? "Claim: Crime fell 20% in 2019.\nQuestions:"
                                 : "# The claim is that Crime fell 20% in 2019.\ndef program():";
    ASSERT_GE(p.size(), tail.size());
    EXPECT_EQ(p.substr(p.size() - tail.size()), tail);
    // The fixed examples themselves parse with the method's parser.
    for (const auto& ex : spec.examples) {
      std::string answer;
      for (const auto& s : ex[m == DecompMethod::kClaimDecomp ? "questions" : "program"])
        answer += s.get<std::string>() + "\n";
      EXPECT_TRUE(parse_decomposition(m, answer).ok) << answer;
    }
  }
  EXPECT_EQ(builtin_prompt("claimdecomp").sampling.value("frequency_penalty", 0.0), 0.6);
  EXPECT_EQ(builtin_prompt("claimdecomp").sampling.value("presence_penalty", 0.0), 0.8);
  EXPECT_EQ(builtin_prompt("claimdecomp").sampling.value("temperature", 0.0), 0.3);
}

TEST(RenderTemplate, UnknownPlaceholderIsAnError) {
  EXPECT_EQ(render_template("a {{x}} b {{y}}", {{"x", "{{y}}"}, {"y", "2"}}, "t"), "a {{y}} b 2");
  EXPECT_THROW((void)render_template("a {{z}}", {{"x", "1"}}, "t"), Error);
  EXPECT_THROW((void)render_template("a {{x", {{"x", "1"}}, "t"), Error);
}

TEST(Decomposition, JsonRoundTrip) {
  Decomposition d{"f:3", "c", "programfc", {"q1", "q2"}, std::vector<std::string>{"s1"},
                  "ok",  "",  std::nullopt};
  const auto j = decomposition_json(d);
  EXPECT_EQ(
      io::to_line(j),
      R"({"id":"f:3","claim":"c","method":"programfc","questions":["q1","q2"],"program":["s1"],"status":"ok"})");
  const auto back = decomposition_from_json(io::Json::parse(io::to_line(j)), "t");
  EXPECT_EQ(back.questions, d.questions);
  EXPECT_EQ(*back.program, *d.program);
  Decomposition f{
      "f:4", "c", "claimdecomp", {}, std::nullopt, "parse_failure", "no questions", std::string("raw")};
  EXPECT_EQ(
      io::to_line(decomposition_json(f)),
      R"({"id":"f:4","claim":"c","method":"claimdecomp","questions":[],"status":"parse_failure","reason":"no questions","raw":"raw"})");
}

TEST(Released, ClaimDecompCsvLoadsIntoTheOutputFormat) {
  const std::string csv = "claims@questions\n\"A claim.\"@\"Is it?\nNext Question: Was it?\"\nB claim@\n";
  const auto loaded = parse_claims(csv, "test_claimdecomp.csv");
  ASSERT_EQ(loaded.claims.size(), 2u);
  const auto d = released_decompositions(loaded.claims);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].id, "test_claimdecomp:1");
  EXPECT_EQ(d[0].method, "claimdecomp-released");
  EXPECT_EQ(d[0].questions, (std::vector<std::string>{"Is it?", "Was it?"}));
  EXPECT_EQ(d[0].status, "ok");
  EXPECT_EQ(d[1].status, "parse_failure");
}

TEST(Released, RealTestClaimDecompFile) {
  const std::filesystem::path f = numcheck::testing::quantemp_dir() / "test_claimdecomp.csv";
  if (!std::filesystem::exists(f)) GTEST_SKIP() << "QuanTemp data not found at " << f;
  const auto loaded = load_claims(f);
  const auto d = released_decompositions(loaded.claims);
  EXPECT_EQ(d.size(), 2495u);
  std::size_t ok = 0;
  for (const auto& x : d) ok += x.status == "ok" ? 1 : 0;
  EXPECT_EQ(ok, 2495u);
}

}  // namespace
}  // namespace numcheck::claims
