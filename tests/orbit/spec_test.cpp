#include "orbit/spec.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "io/files.hpp"

namespace numcheck::orbit {
namespace {

std::string default_text() { return io::read_file(default_spec_path()); }

io::OrderedJson default_json() { return io::parse_ordered_json(default_text(), "default_spec.json"); }

// Parses a modified spec and returns the error message ("" when it loads).
std::string error_of(const io::OrderedJson& j) {
  try {
    (void)parse_spec(j.dump(2), "bad_spec.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string error_of_text(const std::string& text) {
  try {
    (void)parse_spec(text, "bad_spec.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "message: " << (haystack)

// The design table (design/orbit-benchmark.md): bases and quotas per template.
TEST(DefaultSpec, ReproducesTheDesignAllocation) {
  const OrbitSpec& s = default_spec();
  EXPECT_EQ(s.prompt_version, "p1");
  EXPECT_EQ(s.instruction, "Return exactly one final line in this form: FINAL: <number> <unit>");
  struct Row {
    const char* id;
    const char* unit;
    std::size_t bases, fraction, scientific, percent, words, unit_q;
    const char* sub_unit;
  };
  const Row rows[] = {
      {"CV", "L", 200, 200, 0, 0, 0, 200, "mL"},     {"DD", "km", 200, 200, 0, 0, 0, 200, "m"},
      {"RL", "m", 1000, 300, 0, 0, 1000, 400, "cm"}, {"FC", "L", 1000, 300, 0, 1000, 0, 0, ""},
      {"RS", "km/h", 200, 0, 0, 0, 0, 200, "m"},     {"LV", "L", 1000, 0, 1000, 0, 0, 0, ""},
  };
  ASSERT_EQ(s.templates.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    const Row& r = rows[i];
    const TemplateSpec& t = s.templates[i];
    SCOPED_TRACE(r.id);
    EXPECT_EQ(t.id, r.id);
    EXPECT_EQ(t.canonical_unit, r.unit);
    EXPECT_EQ(t.bases, r.bases);
    auto quota = [&](const char* f) { return t.view(f) ? t.view(f)->quota : 0; };
    EXPECT_EQ(quota("fraction"), r.fraction);
    EXPECT_EQ(quota("scientific"), r.scientific);
    EXPECT_EQ(quota("percent"), r.percent);
    EXPECT_EQ(quota("words"), r.words);
    EXPECT_EQ(quota("unit"), r.unit_q);
    if (r.unit_q) {
      EXPECT_EQ(t.view("unit")->unit, r.sub_unit);
    }
  }
  // H3: the first 30 bases of CV, DD, RL (fraction, unit) and FC (fraction, percent).
  for (const char* id : {"CV", "DD", "RL"}) {
    EXPECT_EQ(s.find(id)->consensus_bases, 30u);
    EXPECT_EQ(s.find(id)->consensus_views, (std::vector<std::string>{"fraction", "unit"}));
  }
  EXPECT_EQ(s.find("FC")->consensus_views, (std::vector<std::string>{"fraction", "percent"}));
  EXPECT_EQ(s.find("RS")->consensus_bases, 0u);
  EXPECT_EQ(s.find("LV")->consensus_bases, 0u);
  EXPECT_EQ(s.sha256.size(), 64u);
}

TEST(DefaultSpec, HashIgnoresFormattingButNotContent) {
  const auto j = default_json();
  EXPECT_EQ(parse_spec(j.dump(), "a.json").sha256, parse_spec(j.dump(4), "b.json").sha256);
  auto k = j;
  k["templates"][0]["bases"] = 201;
  EXPECT_NE(parse_spec(k.dump(), "c.json").sha256, default_spec().sha256);
}

TEST(SpecErrors, MissingFieldNamesTemplateFieldAndLine) {
  auto j = default_json();
  j["templates"][2].erase("program");
  const std::string msg = error_of(j);
  EXPECT_CONTAINS(msg, "bad_spec.json:");
  EXPECT_CONTAINS(msg, "template RL (templates[2])");
  EXPECT_CONTAINS(msg, "field 'program': missing");
}

TEST(SpecErrors, LineNumberPointsAtTheField) {
  auto j = default_json();
  j["templates"][1]["params"][0]["domain"]["step"] = "0.07";
  const std::string text = j.dump(2);
  const std::string msg = error_of_text(text);
  EXPECT_CONTAINS(msg, "template DD");
  EXPECT_CONTAINS(msg, "params[0].domain.step");
  EXPECT_CONTAINS(msg, "whole number of steps");
  // The reported line holds a "step" key inside template DD.
  const auto colon = msg.find(':', std::string("bad_spec.json").size());
  const std::size_t line = std::stoul(msg.substr(colon + 1));
  std::size_t cur = 1, pos = 0;
  while (cur < line) pos = text.find('\n', pos) + 1, ++cur;
  EXPECT_CONTAINS(text.substr(pos, text.find('\n', pos) - pos), "\"step\"");
  EXPECT_GT(pos, text.find("\"DD\""));
}

TEST(SpecErrors, InvalidJsonNamesLine) {
  EXPECT_CONTAINS(error_of_text("{\n  \"templates\": [\n    oops\n]}"),
                  "bad_spec.json: invalid JSON at line 3");
}

TEST(SpecErrors, SemanticMistakes) {
  {
    auto j = default_json();
    j["templates"][0]["views"]["fraktion"] = {{"quota", 1}, {"params", {"a"}}};
    EXPECT_CONTAINS(error_of(j), "views.fraktion': unknown family");
  }
  {
    auto j = default_json();
    j["templates"][0]["views"]["fraction"]["quota"] = 201;
    EXPECT_CONTAINS(error_of(j), "201 exceeds the template's 200 bases");
  }
  {
    auto j = default_json();
    j["templates"][0]["prompt"] = "A jug holds {a} of water. How many liters?";
    EXPECT_CONTAINS(error_of(j), "placeholder {b} is missing");
  }
  {
    auto j = default_json();
    j["templates"][0]["prompt"] = "A jug holds {a} and {b} and {c}.";
    EXPECT_CONTAINS(error_of(j), "placeholder {c} names no parameter");
  }
  {
    auto j = default_json();
    j["templates"][0]["prompt"] = "Two jugs hold {a} and {b}. How many liters?";
    EXPECT_CONTAINS(error_of(j), "reads as a number");
  }
  {
    auto j = default_json();
    j["templates"][0]["params"][0]["unit"] = "furlong";
    EXPECT_CONTAINS(error_of(j), "\"furlong\" is not a registered unit id");
  }
  {
    auto j = default_json();
    j["templates"][3]["params"][0]["domain"]["integers"] = true;  // FC's C: fine (no fraction view on C)
    EXPECT_EQ(error_of(j), "");
    j["templates"][3]["views"]["fraction"]["params"] = {"C"};
    EXPECT_CONTAINS(error_of(j), "has no fraction form");
  }
  {
    auto j = default_json();
    j["templates"][0]["params"][0]["domain"]["step"] = "1/3";
    j["templates"][0]["params"][0]["domain"]["max"] = "2/3";
    j["templates"][0]["params"][0]["domain"]["min"] = "1/3";
    EXPECT_CONTAINS(error_of(j), "must be finite decimals");
  }
  {
    auto j = default_json();
    j["templates"][2]["params"][0]["domain"] = {{"type", "set"}, {"values", {"2", "3.5"}}};  // RL's n
    EXPECT_CONTAINS(error_of(j), "\"n\" must take only integer values for the words view");
  }
  {
    auto j = default_json();
    j["templates"][5]["views"]["fraction"] = {{"quota", 10}, {"params", {"N1"}}};  // LV: scaled integers
    EXPECT_CONTAINS(error_of(j), "\"N1\" can be an integer");
  }
  {
    auto j = default_json();
    j["templates"][0]["params"][0]["domain"] = {{"type", "set"}, {"values", {"0.5", "1/3"}}};
    EXPECT_CONTAINS(error_of(j), "1/3 has no exact decimal form");
  }
  {
    auto j = default_json();
    j["templates"][0]["views"]["unit"]["unit"] = "km";
    EXPECT_CONTAINS(error_of(j), "cannot restate parameter");
  }
  {
    auto j = default_json();
    j["templates"][1]["id"] = "CV";
    EXPECT_CONTAINS(error_of(j), "duplicate template id");
  }
  {
    auto j = default_json();
    j["templates"][0]["bases"] = 5000000;
    EXPECT_CONTAINS(error_of(j), "distinct argument tuples");
  }
  {
    auto j = default_json();
    j["templates"][0]["paraphrases"] = {"only {a} {b}"};
    EXPECT_CONTAINS(error_of(j), "exactly two prompt skeletons");
  }
  {
    auto j = default_json();
    j["unit_words"]["L"] = {"liter", "gallons"};
    EXPECT_CONTAINS(error_of(j), "reads \"gallons\" as gal, not L");
  }
  {
    auto j = default_json();
    j["templates"][0]["consensus"]["views"] = {"percent"};
    EXPECT_CONTAINS(error_of(j), "\"percent\" is not one of this template's views");
  }
  {
    auto j = default_json();
    j["templates"][4]["program"] = "d / t +";
    EXPECT_CONTAINS(error_of(j), "template RS (templates[4]), field 'program'");
  }
}

TEST(SpecErrors, MissingFileIsAnIoError) {
  try {
    (void)load_spec("/nonexistent/spec.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_CONTAINS(e.what(), "/nonexistent/spec.json");
  }
}

}  // namespace
}  // namespace numcheck::orbit
