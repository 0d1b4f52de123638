// Speed work on the quantity segmenter and the feature extraction must not change a single output:
// on the real QuanTemp data (skipped when ../shared/data/quantemp is absent) the SHA-256 of every
// segment (claims::segment_json) of every claim and evidence document, and of every named feature
// of every record (built-in settings), are pinned. A change that is meant to change them must
// update the pins and say why.
#include <gtest/gtest.h>

#include <filesystem>

#include <fmt/format.h>
#include "claims/evidence.hpp"
#include "claims/load.hpp"
#include "claims/segment.hpp"

#include "io/sha256.hpp"
#include "verify/model.hpp"

namespace numcheck::verify {
namespace {

namespace fs = std::filesystem;
const fs::path kData = fs::path(NUMCHECK_SOURCE_DIR) / ".." / "shared" / "data" / "quantemp";

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
  for (const auto& f : extract_all(recs, FeatureSettings::builtin(), 2)) {
    for (const auto& g : f.groups) {
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
  EXPECT_EQ(val.segments, "582ec4fd6eda77adcea0892a2de2410193295563b6320ac2c8429c94fda3145d");
  EXPECT_EQ(val.features, "e55d69ccf15165313de3ab7ffdd166db78d2ac1fb2472891e1c723fa2eac0f29");
  EXPECT_EQ(gold.segments, "fc0d1568481531d3e641895283d16cda075ce007a25bffc4579194e19a0764c4");
  EXPECT_EQ(gold.features, "ba846f71d448ab70f23da241fc9ecc67662f286a59635768c6d4e7bbc2b747bf");
}

}  // namespace
}  // namespace numcheck::verify
