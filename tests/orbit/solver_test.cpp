#include "orbit/solver.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "../support/exact.hpp"
#include "orbit/generate.hpp"
#include "orbit/render.hpp"

namespace numcheck::orbit {
namespace {

using num::Rational;

using numcheck::testing::R;

const std::string& instruction() { return default_spec().instruction; }
std::string with_instruction(const std::string& body) { return body + "\n" + instruction(); }

SolveResult solve(const char* tid, const char* view, const std::string& body) {
  return solve_prompt(*default_spec().find(tid), view, with_instruction(body), instruction());
}

TEST(Solver, ReadsEveryRepresentation) {
  EXPECT_EQ(
      *solve("CV", "canonical", "A jug holds 2.75 liters of water and a bottle holds 0.5 liters of water.")
           .value,
      R(13, 4));
  EXPECT_EQ(
      *solve("CV", "fraction", "A jug holds 11/4 liters of water and a bottle holds 1/2 liters of water.")
           .value,
      R(13, 4));
  EXPECT_EQ(*solve("CV", "unit",
                   "A jug holds 2,750 milliliters of water and a bottle holds 500 milliliters of water.")
                 .value,
            R(13, 4));
  EXPECT_EQ(*solve("LV", "scientific",
                   "A reservoir holds 1.494 \u00d7 10^4 liters and another holds 2 \u00d7 10^3 liters.")
                 .value,
            R(16940));
  EXPECT_EQ(
      *solve("FC", "percent", "A tank can hold 40 liters of water. It is filled to 75% of its capacity.")
           .value,
      R(30));
  EXPECT_EQ(*solve("RL", "words", "A builder cuts twenty-seven pieces of rope, each 2.35 meters long.").value,
            R(27) * R(47, 20));
  EXPECT_EQ(*solve("RS", "unit", "A car travels 12,500 meters in 5 hours at a constant speed.").value,
            R(5, 2));
  EXPECT_EQ(*solve("RS", "canonical", "A car travels 12.5 kilometers in 5 hours at a constant speed.").value,
            R(5, 2));
  // Paraphrase order: RL's paraphrase1 names the length first.
  EXPECT_EQ(*solve("RL", "paraphrase1",
                   "Each piece of rope is 2.35 meters long, and a builder cuts 27 such pieces.")
                 .value,
            R(27) * R(47, 20));
}

TEST(Solver, ReportsPromptsThatDoNotDetermineTheLabel) {
  auto r = solve("CV", "canonical", "A jug holds 2.75 liters of water and a bottle holds some water.");
  EXPECT_FALSE(r);
  EXPECT_NE(r.error.find("found 1 quantities"), std::string::npos) << r.error;
  r = solve("CV", "canonical", "A jug holds 2.75 liters of water and a bottle holds 3 of water.");
  EXPECT_FALSE(r);
  EXPECT_NE(r.error.find("no known unit after the quantity '3'"), std::string::npos) << r.error;
  r = solve("CV", "canonical", "A jug holds 2.75 liters of water and a bottle holds 3 meters of water.");
  EXPECT_FALSE(r);
  EXPECT_NE(r.error.find("is a length, but b is a volume"), std::string::npos) << r.error;
  r = solve_prompt(*default_spec().find("CV"), "canonical", "A jug holds 2.75 liters and 1.5 liters.",
                   instruction());
  EXPECT_FALSE(r);
  EXPECT_NE(r.error.find("instruction line"), std::string::npos) << r.error;
  r = solve("RS", "canonical", "A car travels 12.5 kilometers in 0 hours.");
  EXPECT_FALSE(r);
  EXPECT_NE(r.error.find("divides by zero"), std::string::npos) << r.error;
}

TEST(Solver, HostileTextNeverCrashes) {
  const TemplateSpec& t = *default_spec().find("LV");
  for (const std::string& body :
       {std::string(100000, '9'), std::string("\xff\xfe\0\x80", 4), std::string("1e999999999 L"),
        std::string(5000, '1') + "/0 liters", std::string("")}) {
    const auto r = solve_prompt(t, "canonical", with_instruction(body), instruction());
    EXPECT_FALSE(r);
  }
}

// Differential check: on every prompt of the default benchmark (with paraphrases), the solver
// reaches the generator's label from the text alone.
TEST(Solver, ReachesEveryLabelOfTheDefaultBenchmark) {
  GenerateOptions o;
  o.paraphrases = true;
  const auto g = generate(default_spec(), o);
  const auto dir =
      std::filesystem::temp_directory_path() / ("numcheck_solver_test_" + std::to_string(::getpid()));
  write_benchmark(dir, g);
  const Benchmark b = load_benchmark(dir);
  ASSERT_EQ(b.views.size(), 8840u);
  std::size_t solved = 0;
  for (const auto& v : b.views) {
    const auto r = solve_view(b, v);
    ASSERT_TRUE(r) << v.prompt_id << ": " << r.error << "\n" << v.prompt;
    ASSERT_EQ(*r.value, v.expected) << v.prompt_id << "\n" << v.prompt;
    ++solved;
  }
  EXPECT_EQ(solved, 8840u);
  // Changing one number in a prompt changes what the text determines.
  View mutated = b.views[0];
  const auto pos = mutated.prompt.find_first_of("123456789");
  mutated.prompt[pos] = mutated.prompt[pos] == '9' ? '8' : static_cast<char>(mutated.prompt[pos] + 1);
  const auto r = solve_view(b, mutated);
  ASSERT_TRUE(r);
  EXPECT_NE(*r.value, mutated.expected);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace numcheck::orbit
