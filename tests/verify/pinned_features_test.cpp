// Speed work on the quantity segmenter and the feature extraction must not change a single output:
// on the real QuanTemp data (skipped when the data folder, NUMCHECK_QUANTEMP, is absent) the SHA-256 of every
// segment (claims::segment_json) of every claim and evidence document, and of every named feature
// of every record (built-in settings), are pinned. A change that is meant to change them must
// update the pins and say why.
#include <gtest/gtest.h>

#include <filesystem>

#include <fmt/format.h>
#include "claims/evidence.hpp"
#include "claims/load.hpp"
#include "claims/segment.hpp"

#include "../support/quantemp_data.hpp"
#include "io/sha256.hpp"
#include "verify/model.hpp"
#include "verify_support.hpp"

namespace numcheck::verify {
namespace {

namespace fs = std::filesystem;
using testing::kData;

std::vector<claims::EvidenceRecord> load(const char* file) {
  std::vector<claims::EvidenceRecord> v;
  for (const auto& c : claims::load_claims(kData / file).claims) v.push_back(claims::evidence_from_claim(c));
  return v;
}

struct Hashes {
  std::string segments, features;
};

Hashes hashes(const std::vector<claims::EvidenceRecord>& recs) {
  io::Sha256 seg, feat;
  auto put = [&](std::string_view text) {
    for (const auto& s : claims::find_segments(text)) {
      seg.update(io::to_line(claims::segment_json(s)));
      seg.update("\n");
    }
    seg.update("--\n");
  };
  for (const auto& r : recs) {
    put(r.claim);
    for (const auto& d : r.evidence) put(d.text);
  }
  const auto& settings = FeatureSettings::builtin();
  for (const auto& f : extract_all(recs, settings, 2)) {
    for (std::size_t gi = 0; gi < f.groups.size(); ++gi) {
      // Groups added after the pins, off by default, are left out (so the pins stay those of the
      // features before them; with such a group on, its features would be hashed and the pins move).
      if (gi >= static_cast<std::size_t>(Group::kEvidenceContext) && !settings.groups[gi].enabled) continue;
      const auto& g = f.groups[gi];
      for (const auto& [name, v] : g) {
        feat.update(name);
        feat.update(fmt::format("={}\n", v));
      }
      feat.update("--\n");
    }
  }
  return {seg.hex_digest(), feat.hex_digest()};
}

TEST(PinnedFeatures, RealDataSegmentsAndFeaturesUnchanged) {
  if (!fs::exists(kData / "val_claimonly_evidence_question_mapping.json") ||
      !fs::exists(kData / "model_gpt4o_test_results.csv"))
    GTEST_SKIP() << "QuanTemp data not found at " << kData.string();
  const auto val = hashes(load("val_claimonly_evidence_question_mapping.json"));
  const auto gold = hashes(load("model_gpt4o_test_results.csv"));
  EXPECT_EQ(val.segments, "199e522d0521ea302c7a8814e24f1488555eb8e86a31d1918d4813885f03d125");
  EXPECT_EQ(val.features, "7d818b80484f64137824a782f0e5f9a6edc0aa31c7a8574e44cd59f9843ee4af");
  EXPECT_EQ(gold.segments, "579c346b0a4a1cf02000f6286fc17ca5a5f2ea0545dbce83e1a9752502d370e2");
  EXPECT_EQ(gold.features, "ed26e112e45f05606f5bea8192a6accd3036fb8bd8a4d5063151ccc072785c2f");
}

// The default trained model (built-in settings, trained on the val claims) and its scores of the
// val and gold-evidence claims, pinned the same way: speed work on vectorizing and scoring must
// leave the model bytes and every score unchanged.
TEST(PinnedFeatures, RealDataModelAndScoresUnchanged) {
  if (!fs::exists(kData / "val_claimonly_evidence_question_mapping.json") ||
      !fs::exists(kData / "model_gpt4o_test_results.csv"))
    GTEST_SKIP() << "QuanTemp data not found at " << kData.string();
  const auto val = load("val_claimonly_evidence_question_mapping.json");
  const auto gold = load("model_gpt4o_test_results.csv");
  const auto& settings = FeatureSettings::builtin();
  const auto f = extract_all(val, settings, 2);
  std::vector<const NamedFeatures*> p;
  std::vector<claims::Verdict> y;
  std::vector<const claims::EvidenceRecord*> rp;
  for (std::size_t i = 0; i < val.size(); ++i) {
    p.push_back(&f[i]);
    y.push_back(*val[i].label);
    rp.push_back(&val[i]);
  }
  auto m = train_model(p, y, settings, claim_groups(rp));
  m.data_sha256 = training_hash(val);
  auto j = m.to_json();
  j.erase("numcheck_version");  // the release number is not the model's content
  io::Sha256 model;
  model.update(io::to_line(j));
  auto scores = [&](const std::vector<claims::EvidenceRecord>& recs) {
    io::Sha256 h;
    for (const auto& s : predict_all(recs, m, 2)) h.update(fmt::format("{} {} {}\n", s[0], s[1], s[2]));
    return h.hex_digest();
  };
  EXPECT_EQ(model.hex_digest(), "91f9ac0b57de9c8bdc509b66bf4ff337ac62ff310a66ac5c58229c38fa21ed45");
  EXPECT_EQ(scores(val), "8586605cd2b4575c077556f602cce76917f97ed43c0ec4a20b4d0b20bde12611");
  EXPECT_EQ(scores(gold), "0cc0da2ee0534b7d3b8132a4f0a9e3aa8307ffa5274d2cb73492204aa3b10c43");
}

}  // namespace
}  // namespace numcheck::verify
