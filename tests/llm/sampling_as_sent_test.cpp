// run.json's record of the sampling sent (llm::sampling_as_sent): the run-wide settings when no
// item overrides them, the distinct values when items differ, and per call kind when asked.
#include <gtest/gtest.h>

#include <vector>

#include "llm/runner.hpp"

namespace numcheck::llm {
namespace {

WorkItem item(const std::string& id, const std::string& kind) {
  WorkItem it;
  it.item_id = id;
  it.prompt = "p";
  it.fields["tier"] = kind;
  return it;
}

TEST(SamplingAsSent, UniformItemsGiveTheRunSettings) {
  RunSettings s;
  s.sampling.temperature = 0.25;
  s.sampling.max_tokens = 300;
  std::vector<WorkItem> items = {item("a", "x"), item("b", "x")};
  const io::OrderedJson j = sampling_as_sent(items, s);
  EXPECT_EQ(io::to_line(j), R"({"temperature":0.25,"top_p":1.0,"top_k":1,"seed":20260725,"max_tokens":300})");
  EXPECT_EQ(sampling_as_sent({}, s), j);  // no items: the run's settings
}

TEST(SamplingAsSent, OverridesAreRecordedAsSentPerKind) {
  RunSettings s;  // run-wide: temperature 0, max_tokens 1024 (what no call below uses)
  s.sampling_kind_field = "tier";
  std::vector<WorkItem> items;
  for (int i = 0; i < 3; ++i) {
    WorkItem st = item("s" + std::to_string(i), "stochastic");
    st.sampling.temperature = 0.7;
    st.sampling.top_p = 0.95;
    st.sampling.top_k = 20;
    st.sampling.seed = 100 + static_cast<std::uint64_t>(i);
    st.sampling.max_tokens = 2048;
    items.push_back(st);
    WorkItem det = item("d" + std::to_string(i), "deterministic");
    det.sampling.max_tokens = 2048;
    det.sampling.seed = 100 + static_cast<std::uint64_t>(i);
    items.push_back(det);
  }
  const io::OrderedJson j = sampling_as_sent(items, s);
  EXPECT_EQ(io::to_line(j),
            R"({"by_tier":{"stochastic":{"temperature":0.7,"top_p":0.95,"top_k":20,"seed":[100,101,102],)"
            R"("max_tokens":2048,"calls":3},"deterministic":{"temperature":0.0,"top_p":1.0,"top_k":1,)"
            R"("seed":[100,101,102],"max_tokens":2048,"calls":3}}})");
}

TEST(SamplingAsSent, ManyDistinctValuesAreARange) {
  RunSettings s;
  std::vector<WorkItem> items;
  for (int i = 0; i < 20; ++i) {
    WorkItem it = item("i" + std::to_string(i), "x");
    it.sampling.seed = 1000 - static_cast<std::uint64_t>(i);
    items.push_back(it);
  }
  const io::OrderedJson j = sampling_as_sent(items, s);
  EXPECT_EQ(io::to_line(j["seed"]), R"({"min":981,"max":1000,"distinct":20})");
  EXPECT_EQ(j["temperature"], 0.0);
}

// One item that overrides among many that do not: the override is recorded (the run's settings
// alone would hide it).
TEST(SamplingAsSent, OneOverrideAmongManyIsRecorded) {
  RunSettings s;
  std::vector<WorkItem> items;
  for (int i = 0; i < 100; ++i) items.push_back(item("i" + std::to_string(i), "x"));
  items.back().sampling.temperature = 0.7;
  const io::OrderedJson j = sampling_as_sent(items, s);
  EXPECT_EQ(io::to_line(j["temperature"]), "[0.0,0.7]");
  EXPECT_EQ(io::to_line(j["max_tokens"]), "1024");
}

}  // namespace
}  // namespace numcheck::llm
