// On the real QuanTemp claims (skipped when the data folder, NUMCHECK_QUANTEMP, is absent): every claim-orbit
// variant (claimorbit::generate_orbit, all forms) of every val claim and every labelled test claim
// has exactly the canonical features of its original, with the original's evidence. So a trained
// verifier with canonical numbers is invariant on claim orbits by construction, whatever it
// learns; with surface numbers the features of many variants differ (the test can fail).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "../support/quantemp_data.hpp"
#include "claimorbit/orbit.hpp"
#include "claims/evidence.hpp"
#include "claims/load.hpp"
#include "verify/features.hpp"
#include "verify_support.hpp"

namespace numcheck::verify {
namespace {

namespace fs = std::filesystem;
using testing::kData;

using testing::flat;

struct Count {
  std::size_t variants = 0, differ_canonical = 0, differ_surface = 0;
};

Count check(const char* file) {
  Count c;
  auto canonical = FeatureSettings::builtin();
  canonical.numbers = NumberMode::kCanonical;
  auto surface = canonical;
  surface.numbers = NumberMode::kSurface;
  for (const auto& claim : claims::load_claims(kData / file).claims) {
    const auto r = claims::evidence_from_claim(claim);
    const auto o = claimorbit::generate_orbit(r.id, r.claim);
    if (o.variants.empty()) continue;
    const auto fc = flat(extract(r, canonical)), fs = flat(extract(r, surface));
    for (const auto& v : o.variants) {
      auto rv = r;
      rv.claim = v.text;
      ++c.variants;
      if (flat(extract(rv, canonical)) != fc) {
        ++c.differ_canonical;
        ADD_FAILURE() << v.form << ": " << r.claim << "\n  -> " << v.text;
      }
      c.differ_surface += flat(extract(rv, surface)) != fs ? 1 : 0;
    }
  }
  return c;
}

TEST(OrbitInvariance, CanonicalFeaturesOfEveryRealVariantEqualTheOriginals) {
  if (!fs::exists(kData / "val_claimonly_evidence_question_mapping.json") ||
      !fs::exists(kData / "model_gpt4o_test_results.csv"))
    GTEST_SKIP() << "QuanTemp data not found at " << kData.string();
  for (const char* f : {"val_claimonly_evidence_question_mapping.json", "model_gpt4o_test_results.csv"}) {
    const auto c = check(f);
    EXPECT_GT(c.variants, 200u) << f;
    EXPECT_EQ(c.differ_canonical, 0u) << f;
    EXPECT_GT(c.differ_surface, c.variants / 2) << f;
  }
}

}  // namespace
}  // namespace numcheck::verify
