#include "orbit/generate.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include "../support/exact.hpp"
#include "core/error.hpp"
#include "io/sha256.hpp"
#include "num/read.hpp"
#include "orbit/benchmark.hpp"
#include "orbit/render.hpp"

namespace numcheck::orbit {
namespace {

using num::Rational;

using numcheck::testing::R;

std::vector<io::Json> lines(const std::string& jsonl) {
  std::vector<io::Json> out;
  std::istringstream in(jsonl);
  std::string line;
  while (std::getline(in, line)) out.push_back(io::parse_json(line, "test"));
  return out;
}

const GeneratedBenchmark& default_benchmark() {
  static const GeneratedBenchmark g = generate(default_spec());
  return g;
}

TEST(Generate, DefaultCountsMatchTheDesignTable) {
  const auto& g = default_benchmark();
  EXPECT_EQ(g.bases, 3600u);
  EXPECT_EQ(g.prompts, 8600u);
  const auto bases = lines(g.bases_jsonl);
  const auto views = lines(g.views_jsonl);
  ASSERT_EQ(bases.size(), 3600u);
  ASSERT_EQ(views.size(), 8600u);
  std::map<std::string, std::size_t> per_base_template, per_family;
  std::map<std::pair<std::string, std::string>, std::size_t> per_template_view;
  for (const auto& b : bases) ++per_base_template[b["template"].get<std::string>()];
  for (const auto& v : views) {
    ++per_template_view[{v["template"].get<std::string>(), v["view"].get<std::string>()}];
    if (!v["family"].is_null()) ++per_family[v["family"].get<std::string>()];
  }
  const std::map<std::string, std::size_t> want_bases = {{"CV", 200},  {"DD", 200}, {"RL", 1000},
                                                         {"FC", 1000}, {"RS", 200}, {"LV", 1000}};
  EXPECT_EQ(per_base_template, want_bases);
  const std::map<std::string, std::size_t> want_family = {
      {"fraction", 1000}, {"scientific", 1000}, {"percent", 1000}, {"words", 1000}, {"unit", 1000}};
  EXPECT_EQ(per_family, want_family);
  const std::map<std::pair<std::string, std::string>, std::size_t> want_views = {
      {{"CV", "canonical"}, 200},  {{"CV", "fraction"}, 200},   {{"CV", "unit"}, 200},
      {{"DD", "canonical"}, 200},  {{"DD", "fraction"}, 200},   {{"DD", "unit"}, 200},
      {{"RL", "canonical"}, 1000}, {{"RL", "fraction"}, 300},   {{"RL", "words"}, 1000},
      {{"RL", "unit"}, 400},       {{"FC", "canonical"}, 1000}, {{"FC", "fraction"}, 300},
      {{"FC", "percent"}, 1000},   {{"RS", "canonical"}, 200},  {{"RS", "unit"}, 200},
      {{"LV", "canonical"}, 1000}, {{"LV", "scientific"}, 1000}};
  EXPECT_EQ(per_template_view, want_views);

  const io::Json m = io::parse_json(g.manifest_json, "manifest");
  EXPECT_EQ(m["counts"]["bases"], 3600);
  EXPECT_EQ(m["counts"]["prompts"], 8600);
  for (const char* f : kFamilies) EXPECT_EQ(m["counts"]["families"][f], 1000) << f;
  EXPECT_EQ(m["counts"]["templates"]["RL"]["views"]["words"], 1000);
  EXPECT_EQ(m["seed"], 20260725);
  EXPECT_EQ(m["prompt_version"], "p1");
  EXPECT_EQ(m["generator_version"], kGeneratorVersion);
  EXPECT_EQ(m["spec_sha256"], default_spec().sha256);
  EXPECT_EQ(m["files"]["bases.jsonl"]["sha256"], io::sha256_hex(g.bases_jsonl));
  EXPECT_EQ(m["files"]["views.jsonl"]["sha256"], io::sha256_hex(g.views_jsonl));
}

TEST(Generate, RecordsHaveTheDocumentedFields) {
  const auto& g = default_benchmark();
  const auto bases = lines(g.bases_jsonl);
  const auto views = lines(g.views_jsonl);
  EXPECT_EQ(bases[0]["base_id"], "CV-0001");
  EXPECT_EQ(bases[199]["base_id"], "CV-0200");
  EXPECT_EQ(bases[200]["base_id"], "DD-0001");
  EXPECT_EQ(bases[0]["dimension"], "volume");
  EXPECT_EQ(bases[0]["canonical_unit"], "L");
  EXPECT_EQ(bases[0]["views"], io::Json::parse(R"(["canonical","fraction","unit"])"));
  EXPECT_EQ(views[0]["prompt_id"], "CV-0001:canonical");
  EXPECT_TRUE(views[0]["family"].is_null());
  EXPECT_EQ(views[1]["family"], "fraction");
  for (const auto& v : views) {
    const std::string p = v["prompt"].get<std::string>();
    ASSERT_TRUE(p.ends_with("\nReturn exactly one final line in this form: FINAL: <number> <unit>")) << p;
    ASSERT_TRUE(Rational::from_string(v["expected"].get<std::string>()).has_value());
  }
  for (const auto& b : bases) {
    const auto answer = Rational::from_string(b["answer"].get<std::string>());
    ASSERT_TRUE(answer && answer->has_finite_decimal());
    ASSERT_EQ(answer->str(), b["answer"].get<std::string>());  // lowest terms
  }
}

TEST(Generate, RegenerationIsByteIdentical) {
  const auto again = generate(default_spec());
  EXPECT_EQ(io::sha256_hex(again.bases_jsonl), io::sha256_hex(default_benchmark().bases_jsonl));
  EXPECT_EQ(io::sha256_hex(again.views_jsonl), io::sha256_hex(default_benchmark().views_jsonl));
  EXPECT_EQ(io::sha256_hex(again.manifest_json), io::sha256_hex(default_benchmark().manifest_json));
}

// Runs of bases rendered on several threads are written in order: the same bytes as one thread.
TEST(Generate, ThreadsGiveTheSameBytes) {
  for (const std::size_t threads : {std::size_t{2}, std::size_t{3}, std::size_t{0}}) {
    GenerateOptions o;
    o.threads = threads;
    const auto g = generate(default_spec(), o);
    EXPECT_EQ(g.bases_jsonl, default_benchmark().bases_jsonl) << threads;
    EXPECT_EQ(g.views_jsonl, default_benchmark().views_jsonl) << threads;
    EXPECT_EQ(g.manifest_json, default_benchmark().manifest_json) << threads;
  }
  GenerateOptions one, three;
  one.paraphrases = three.paraphrases = true;
  three.threads = 3;
  const auto a = generate(default_spec(), one);
  const auto b = generate(default_spec(), three);
  EXPECT_EQ(a.views_jsonl, b.views_jsonl);
  EXPECT_EQ(a.bases_jsonl, b.bases_jsonl);
  EXPECT_EQ(a.manifest_json, b.manifest_json);
}

TEST(Generate, AnotherSeedGivesAnotherBenchmarkWithTheSameCounts) {
  GenerateOptions o;
  o.seed = 7;
  const auto other = generate(default_spec(), o);
  EXPECT_NE(other.bases_jsonl, default_benchmark().bases_jsonl);
  EXPECT_NE(other.views_jsonl, default_benchmark().views_jsonl);
  const io::Json a = io::parse_json(other.manifest_json, "a");
  const io::Json b = io::parse_json(default_benchmark().manifest_json, "b");
  EXPECT_EQ(a["counts"], b["counts"]);
  EXPECT_EQ(a["seed"], 7);
}

TEST(Generate, StreamsArePrivatePerTemplate) {
  // Changing one template's base count leaves every other template's records unchanged.
  auto j = io::parse_ordered_json(default_spec().canonical_json, "s");
  for (auto& t : j["templates"]) {
    if (t["id"] != "CV") continue;
    t["bases"] = 150;
    t["views"]["fraction"]["quota"] = 150;
    t["views"]["unit"]["quota"] = 150;
  }
  const auto changed = generate(parse_spec(j.dump(), "changed.json"));
  auto records_of = [](const std::string& jsonl, const std::string& tid) {
    std::string out;
    std::istringstream in(jsonl);
    std::string line;
    while (std::getline(in, line))
      if (line.find("\"template\":\"" + tid + "\"") != std::string::npos) out += line + "\n";
    return out;
  };
  for (const char* id : {"DD", "RL", "FC", "RS", "LV"}) {
    const std::string a = records_of(changed.views_jsonl, id);
    EXPECT_FALSE(a.empty());
    EXPECT_EQ(a, records_of(default_benchmark().views_jsonl, id)) << id;
  }
  // CV's first bases are the same draws too: the stream is consumed in the same order.
  const auto first_line = [](const std::string& s) { return s.substr(0, s.find('\n')); };
  EXPECT_EQ(first_line(changed.bases_jsonl), first_line(default_benchmark().bases_jsonl));
}

TEST(Generate, NoDuplicateArgumentTuplesAndDomainsRespected) {
  std::map<std::string, std::set<std::string>> tuples;
  for (const auto& b : lines(default_benchmark().bases_jsonl)) {
    const std::string tid = b["template"];
    EXPECT_TRUE(tuples[tid].insert(b["params"].dump()).second) << b.dump();
    const TemplateSpec* t = default_spec().find(tid);
    for (const auto& p : t->params) {
      const Rational v = *Rational::from_string(b["params"][p.name].get<std::string>());
      if (p.domain.kind == Domain::Kind::kGrid) {
        EXPECT_GE(v, p.domain.min);
        EXPECT_LE(v, p.domain.max);
        EXPECT_TRUE(((v - p.domain.min) / p.domain.step).is_integer());
        if (!p.domain.integers) {
          EXPECT_FALSE(v.is_integer()) << b.dump();
        }
      }
    }
    if (tid == "DD") {
      EXPECT_GT(*Rational::from_string(b["params"]["a"].get<std::string>()),
                *Rational::from_string(b["params"]["b"].get<std::string>()));
    }
  }
}

TEST(Generate, ConsensusSubsetHasItsViews) {
  const auto bases = lines(default_benchmark().bases_jsonl);
  std::map<std::string, std::size_t> seen;
  for (const auto& b : bases) {
    const std::string tid = b["template"];
    const std::size_t idx = seen[tid]++;
    const auto views = b["views"].get<std::vector<std::string>>();
    auto has = [&](const char* v) { return std::find(views.begin(), views.end(), v) != views.end(); };
    const bool subset = idx < 30 && (tid == "CV" || tid == "DD" || tid == "RL" || tid == "FC");
    EXPECT_EQ(b["consensus_subset"].get<bool>(), subset) << b.dump();
    if (!subset) continue;
    EXPECT_TRUE(has("canonical") && has("fraction")) << b.dump();
    EXPECT_TRUE(tid == "FC" ? has("percent") : has("unit")) << b.dump();
  }
  // RL's fraction quota (300) is 30 forced plus 270 drawn from the other 970 bases.
  std::size_t rl_fraction_after_30 = 0;
  for (std::size_t i = 0; i < bases.size(); ++i)
    if (bases[i]["template"] == "RL" && bases[i]["base_id"] > "RL-0030")
      for (const auto& v : bases[i]["views"]) rl_fraction_after_30 += v == "fraction";
  EXPECT_EQ(rl_fraction_after_30, 270u);
}

TEST(Generate, ParaphrasesOnlyForTheConsensusSubsetAndKeepEveryLiteral) {
  GenerateOptions o;
  o.paraphrases = true;
  const auto g = generate(default_spec(), o);
  EXPECT_EQ(g.bases, 3600u);
  EXPECT_EQ(g.prompts, 8600u + 2 * 120);
  std::map<std::string, std::string> canonical;
  std::size_t paraphrases = 0;
  auto literals = [](const std::string& prompt) {
    std::multiset<std::string> out;
    for (const auto& m : num::find_numbers(prompt)) out.insert(prompt.substr(m.begin, m.end - m.begin));
    return out;
  };
  for (const auto& v : lines(g.views_jsonl)) {
    const std::string view = v["view"];
    if (view == "canonical") canonical[v["base_id"]] = v["prompt"];
    if (view != "paraphrase1" && view != "paraphrase2") continue;
    ++paraphrases;
    EXPECT_TRUE(v["family"].is_null());
    const std::string& c = canonical.at(v["base_id"]);
    EXPECT_NE(c, v["prompt"].get<std::string>());
    EXPECT_EQ(literals(c), literals(v["prompt"])) << v["prompt"];
  }
  EXPECT_EQ(paraphrases, 240u);
  EXPECT_EQ(lines(g.bases_jsonl).size(), 3600u);
}

TEST(Render, ExactnessRules) {
  const OrbitSpec& s = default_spec();
  const auto& units = num::UnitRegistry::builtin();
  const TemplateSpec& cv = *s.find("CV");
  EXPECT_EQ(render_quantity(s, cv, 0, R(11, 4), "canonical", units), "2.75 liters");
  EXPECT_EQ(render_quantity(s, cv, 0, R(11, 4), "fraction", units), "11/4 liters");
  EXPECT_EQ(render_quantity(s, cv, 0, R(5, 4), "unit", units), "1,250 milliliters");
  EXPECT_EQ(render_quantity(s, cv, 0, R(11, 4), "paraphrase1", units), "2.75 liters");
  const TemplateSpec& lv = *s.find("LV");
  EXPECT_EQ(render_quantity(s, lv, 0, R(14940), "canonical", units), "14,940 liters");
  EXPECT_EQ(render_quantity(s, lv, 0, R(14940), "scientific", units), "1.494 \u00d7 10^4 liters");
  EXPECT_EQ(render_quantity(s, lv, 0, R(20000), "scientific", units), "2 \u00d7 10^4 liters");
  const TemplateSpec& fc = *s.find("FC");
  EXPECT_EQ(render_quantity(s, fc, 1, R(3, 4), "percent", units), "75%");
  EXPECT_EQ(render_quantity(s, fc, 1, R(3, 4), "canonical", units), "0.75");
  EXPECT_EQ(render_quantity(s, fc, 1, R(3, 4), "fraction", units), "3/4");
  EXPECT_EQ(render_quantity(s, fc, 0, R(40), "percent", units), "40 liters");  // C is not rewritten
  const TemplateSpec& rl = *s.find("RL");
  EXPECT_EQ(render_quantity(s, rl, 0, R(27), "words", units), "twenty-seven");
  EXPECT_EQ(render_quantity(s, rl, 1, R(47, 20), "unit", units), "235 centimeters");
  const TemplateSpec& rs = *s.find("RS");
  EXPECT_EQ(render_quantity(s, rs, 0, R(25, 2), "unit", units), "12,500 meters");
  EXPECT_EQ(render_quantity(s, rs, 1, R(1), "canonical", units), "1 hour");
  // A value without an exact canonical decimal is refused, not rounded.
  EXPECT_THROW((void)render_quantity(s, cv, 0, R(1, 3), "canonical", units), Error);
}

TEST(Generate, ImpossibleConstraintsFailWithAClearError) {
  auto j = io::parse_ordered_json(default_spec().canonical_json, "s");
  j["templates"] = io::OrderedJson::array({j["templates"][0]});
  j["templates"][0]["bases"] = 20;
  j["templates"][0]["views"]["fraction"]["quota"] = 20;
  j["templates"][0]["views"]["unit"]["quota"] = 20;
  j["templates"][0]["consensus"]["bases"] = 3;
  j["templates"][0]["constraints"] = {"a < 0"};
  const auto spec = parse_spec(j.dump(), "impossible.json");
  try {
    (void)generate(spec);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("template CV: found only 0 of 20 distinct argument tuples"),
              std::string::npos)
        << e.what();
  }
}

// With several templates that cannot be drawn, the error names the first in spec order whatever
// the thread count (a later template's plan may fail first in time), after the earlier templates'
// lines went to the sink.
TEST(Generate, TheFirstFailingTemplateInOrderIsReportedWhateverTheThreads) {
  auto j = io::parse_ordered_json(default_spec().canonical_json, "s");
  auto templates = io::OrderedJson::array();
  for (auto& t : j["templates"]) {
    if (t["id"] == "DD") t["constraints"] = {"a < 0", "a > 0"};
    if (t["id"] == "FC") t["constraints"] = {"p < 0", "p > 0"};
    templates.push_back(t);
  }
  j["templates"] = templates;
  const auto spec = parse_spec(j.dump(), "two-impossible.json");
  for (const std::size_t threads : {std::size_t{1}, std::size_t{3}}) {
    GenerateOptions o;
    o.threads = threads;
    std::string bases;
    GenerateSink sink;
    sink.bases = [&bases](std::string_view chunk) { bases += chunk; };
    try {
      (void)generate_stream(spec, o, sink);
      ADD_FAILURE() << "no error with " << threads << " threads";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("template DD: found only 0 of"), std::string::npos)
          << threads << ": " << e.what();
    }
    // CV (before DD) was written whole; nothing of DD or later.
    EXPECT_NE(bases.find("\"base_id\":\"CV-0200\""), std::string::npos) << threads;
    EXPECT_EQ(bases.find("\"template\":\"DD\""), std::string::npos) << threads;
  }
}

}  // namespace
}  // namespace numcheck::orbit
