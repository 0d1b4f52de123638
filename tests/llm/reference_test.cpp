// The simulated reference system: fault parsing, deterministic fault draws, and what each fault
// does to the grade of an otherwise exact answer (checked with the real grader).
#include <gtest/gtest.h>

#include <map>

#include "core/error.hpp"
#include "grade/grade.hpp"
#include "llm/reference.hpp"

namespace numcheck::llm {
namespace {

using num::Rational;

TEST(FaultRates, ParsesTheMainJobSpec) {
  const FaultRates r = parse_fault_rates("times_ten=0.05,markdown=0.03,unit_slip=0.02,truncation=0.01");
  EXPECT_DOUBLE_EQ(r.times_ten, 0.05);
  EXPECT_DOUBLE_EQ(r.markdown, 0.03);
  EXPECT_DOUBLE_EQ(r.unit_slip, 0.02);
  EXPECT_DOUBLE_EQ(r.truncation, 0.01);
  EXPECT_TRUE(r.any());
  EXPECT_FALSE(parse_fault_rates("").any());
  EXPECT_DOUBLE_EQ(parse_fault_rates(" markdown = 0.5 ").markdown, 0.5);
}

TEST(FaultRates, RejectsBadSpecsAsUsageErrors) {
  for (const char* bad :
       {"times_ten", "times_ten=", "times_ten=x", "times_ten=1.5", "times_ten=-0.1", "bold=0.1",
        "markdown=0.1,markdown=0.2", "times_ten=0.6,markdown=0.6", "truncation=0.1x"}) {
    try {
      (void)parse_fault_rates(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kUsage) << bad;
    }
  }
}

TEST(FaultDraw, IsDeterministicPerSeedAndItemAndFollowsTheRates) {
  const FaultRates r = parse_fault_rates("times_ten=0.05,markdown=0.03,unit_slip=0.02,truncation=0.01");
  std::map<Fault, int> counts;
  int changed_by_seed = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string id = "B-" + std::to_string(i);
    const Fault f = draw_fault(r, 20260725, id);
    EXPECT_EQ(f, draw_fault(r, 20260725, id));
    if (f != draw_fault(r, 20260726, id)) ++changed_by_seed;
    ++counts[f];
  }
  // Expected counts 1000, 600, 400, 200 (binomial sd <= 32): generous 5-sd bounds.
  EXPECT_NEAR(counts[Fault::kTimesTen], 1000, 160);
  EXPECT_NEAR(counts[Fault::kMarkdown], 600, 125);
  EXPECT_NEAR(counts[Fault::kUnitSlip], 400, 100);
  EXPECT_NEAR(counts[Fault::kTruncation], 200, 71);
  EXPECT_GT(changed_by_seed, 0);
  EXPECT_EQ(draw_fault(FaultRates{}, 1, "x"), Fault::kNone);
}

TEST(ReferenceReply, NumberForms) {
  EXPECT_EQ(plain_number(Rational(14940)), "14940");
  EXPECT_EQ(plain_number(Rational(11, 4)), "2.75");
  EXPECT_EQ(plain_number(Rational(1, 3)), "1/3");
  EXPECT_EQ(times_ten_number(Rational(14940)), "1.494 \u00d7 10^4");
  EXPECT_EQ(times_ten_number(Rational(5000)), "5 \u00d7 10^3");
  EXPECT_EQ(times_ten_number(Rational(-3, 1000)), "-3 \u00d7 10^-3");
  EXPECT_FALSE(times_ten_number(Rational(1, 3)));
  EXPECT_FALSE(times_ten_number(Rational(0)));
}

grade::Grade graded(const ReferenceReply& r, const Rational& expected, const std::string& unit) {
  return grade::grade_response(r.content, grade::Question{expected, unit}, r.finish_reason);
}

TEST(ReferenceReply, EachFaultGradesAsThePaperDescribes) {
  const SolvedAnswer a{Rational(14940), "L"};
  const auto none = reference_reply(a, Fault::kNone, 1024);
  EXPECT_EQ(graded(none, a.value, "L").strict.outcome, grade::Outcome::kCorrect);
  EXPECT_EQ(none.finish_reason, "stop");

  const auto tt = reference_reply(a, Fault::kTimesTen, 1024);
  EXPECT_NE(tt.content.find("FINAL: 1.494 \u00d7 10^4 L"), std::string::npos);
  EXPECT_EQ(graded(tt, a.value, "L").strict.outcome, grade::Outcome::kParseError);
  EXPECT_EQ(graded(tt, a.value, "L").audit.outcome, grade::Outcome::kCorrect);

  const auto md = reference_reply(a, Fault::kMarkdown, 1024);
  EXPECT_NE(md.content.find("**FINAL: 14940 L**"), std::string::npos);
  EXPECT_EQ(graded(md, a.value, "L").strict.outcome, grade::Outcome::kFormatError);
  EXPECT_EQ(graded(md, a.value, "L").audit.outcome, grade::Outcome::kCorrect);

  const SolvedAnswer b{Rational(11, 4), "L"};
  const auto slip = reference_reply(b, Fault::kUnitSlip, 1024);
  EXPECT_NE(slip.content.find("FINAL: 2750 L"), std::string::npos) << slip.content;
  const auto gs = graded(slip, b.value, "L");
  EXPECT_EQ(gs.strict.outcome, grade::Outcome::kValueError);
  EXPECT_EQ(gs.audit.magnitude_k, -3);

  const auto tr = reference_reply(a, Fault::kTruncation, 77);
  EXPECT_EQ(tr.finish_reason, "length");
  EXPECT_EQ(tr.completion_tokens, 77);
  EXPECT_EQ(tr.content.find("FINAL"), std::string::npos);
  EXPECT_EQ(graded(tr, a.value, "L").strict.outcome, grade::Outcome::kTruncationError);

  // A fault that cannot apply leaves the answer exact and says so.
  const auto third = reference_reply(SolvedAnswer{Rational(1, 3), "L"}, Fault::kTimesTen, 1024);
  EXPECT_EQ(third.applied, Fault::kNone);
  EXPECT_EQ(graded(third, Rational(1, 3), "L").strict.outcome, grade::Outcome::kCorrect);

  // The generation cap applies to the simulated system too.
  const auto capped = reference_reply(a, Fault::kNone, 2);
  EXPECT_EQ(capped.finish_reason, "length");
  EXPECT_LE(capped.content.size(), 8u);
}

}  // namespace
}  // namespace numcheck::llm
