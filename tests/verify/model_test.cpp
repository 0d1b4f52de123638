// Training is deterministic (same bytes twice, any thread count), the model file round-trips,
// and a trivially separable set is learned.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "verify/model.hpp"

namespace numcheck::verify {
namespace {

std::vector<claims::EvidenceRecord> toy() {
  std::vector<claims::EvidenceRecord> v;
  const char* words[] = {"alpha", "beta", "gamma"};
  for (int i = 0; i < 60; ++i) {
    claims::EvidenceRecord r;
    const int c = i % 3;
    r.id = std::to_string(i);
    r.claim = std::string("claim ") + words[c] + " number " + std::to_string(i % 7) + " percent";
    r.label = static_cast<claims::Verdict>(c);
    r.evidence.push_back(
        {"d" + r.id, std::string("evidence ") + words[(c + i) % 3], "", std::nullopt, std::nullopt});
    r.selection = "gold";
    v.push_back(r);
  }
  return v;
}

TrainedModel fit(const std::vector<claims::EvidenceRecord>& recs, unsigned threads) {
  const auto f = extract_all(recs, FeatureSettings::builtin(), threads);
  std::vector<const NamedFeatures*> p;
  std::vector<claims::Verdict> y;
  for (std::size_t i = 0; i < recs.size(); ++i) {
    p.push_back(&f[i]);
    y.push_back(*recs[i].label);
  }
  auto m = train_model(p, y, FeatureSettings::builtin());
  m.data_sha256 = training_hash(recs);
  return m;
}

TEST(Model, DeterministicAndRoundTrips) {
  const auto recs = toy();
  const auto a = fit(recs, 1), b = fit(recs, 2);
  EXPECT_EQ(io::to_line(a.to_json()), io::to_line(b.to_json()));
  const auto back = TrainedModel::from_json(io::Json::parse(io::to_line(a.to_json())), "m");
  EXPECT_EQ(io::to_line(back.to_json()), io::to_line(a.to_json()));
  const auto f = extract_all(recs, a.settings, 1);
  std::size_t correct = 0;
  for (std::size_t i = 0; i < recs.size(); ++i) {
    const auto s1 = a.scores(f[i]), s2 = back.scores(f[i]);
    EXPECT_EQ(s1, s2);
    EXPECT_NEAR(s1[0] + s1[1] + s1[2], 1.0, 1e-12);
    correct += TrainedModel::argmax(s1) == *recs[i].label ? 1 : 0;
  }
  EXPECT_EQ(correct, recs.size());
  EXPECT_EQ(a.train_records, 60u);
  EXPECT_EQ(a.data_sha256.size(), 64u);
}

TEST(Model, RejectsOneClassAndBadFiles) {
  auto recs = toy();
  for (auto& r : recs) r.label = claims::Verdict::kTrue;
  EXPECT_THROW((void)fit(recs, 1), Error);
  EXPECT_THROW((void)TrainedModel::from_json(io::Json::parse(R"({"format":"x"})"), "m"), Error);
  auto j = io::Json::parse(io::to_line(fit(toy(), 1).to_json()));
  j["weights"].erase(0);
  EXPECT_THROW((void)TrainedModel::from_json(j, "m"), Error);
}

}  // namespace
}  // namespace numcheck::verify
