// Training is deterministic (same bytes twice, any thread count), the model file round-trips,
// and a trivially separable set is learned.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "stats/classification.hpp"
#include "verify/model.hpp"

namespace numcheck::verify {
namespace {

std::vector<claims::EvidenceRecord> toy() {
  std::vector<claims::EvidenceRecord> v;
  const char* words[] = {"never", "about", "compared"};  // cue words: the dense groups see them too
  for (int i = 0; i < 60; ++i) {
    claims::EvidenceRecord r;
    const int c = i % 3;
    r.id = std::to_string(i);
    // Four words of the text's own (texts repeat every 21 records), so that different texts are
    // never near-duplicates (claim_groups).
    const std::string own = std::string("t") + static_cast<char>('a' + i % 21);
    r.claim = std::string("claim ") + words[c] + " number " + std::to_string(i % 7) + " percent " + own +
              "a " + own + "b " + own + "c " + own + "d";
    r.label = static_cast<claims::Verdict>(c);
    r.evidence.push_back(
        {"d" + r.id, std::string("evidence ") + words[(c + i) % 3], "", std::nullopt, std::nullopt});
    r.selection = "gold";
    v.push_back(r);
  }
  return v;
}

TrainedModel fit(const std::vector<claims::EvidenceRecord>& recs, unsigned threads,
                 const std::string& kind = "linear") {
  FeatureSettings settings = FeatureSettings::builtin();
  settings.learner.kind = kind;
  settings.learner.boost.rounds = 20;
  const auto f = extract_all(recs, settings, threads);
  std::vector<const NamedFeatures*> p;
  std::vector<claims::Verdict> y;
  for (std::size_t i = 0; i < recs.size(); ++i) {
    p.push_back(&f[i]);
    y.push_back(*recs[i].label);
  }
  std::vector<const claims::EvidenceRecord*> rp;
  for (const auto& r : recs) rp.push_back(&r);
  auto m = train_model(p, y, settings, claim_groups(rp));
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

// The tree learners: same model bytes twice (XGBoost on one thread with a fixed seed), a model
// file that loads back to the same bytes and the same scores, batch scores equal to one-by-one
// scores and to predict_all, and the separable toy set learned.
class TreeLearner : public ::testing::TestWithParam<const char*> {};

TEST_P(TreeLearner, DeterministicAndRoundTrips) {
  const auto recs = toy();
  const auto a = fit(recs, 1, GetParam()), b = fit(recs, 2, GetParam());
  const std::string bytes = io::to_line(a.to_json());
  EXPECT_EQ(bytes, io::to_line(b.to_json()));
  const auto j = io::Json::parse(bytes);
  EXPECT_EQ(j.at("settings").at("learner").at("kind"), GetParam());
  EXPECT_FALSE(j.at("booster").get<std::string>().empty());
  EXPECT_FALSE(j.at("dense_features").empty());
  EXPECT_EQ(j.at("learner").get<std::string>().rfind("xgboost ", 0), 0u);
  const auto back = TrainedModel::from_json(j, "m");
  EXPECT_EQ(io::to_line(back.to_json()), bytes);
  const auto f = extract_all(recs, a.settings, 1);
  std::vector<const NamedFeatures*> fp;
  for (const auto& x : f) fp.push_back(&x);
  const auto batch = back.scores_batch(fp);
  const auto all = predict_all(recs, back, 2);
  std::size_t correct = 0;
  for (std::size_t i = 0; i < recs.size(); ++i) {
    const auto s1 = a.scores(f[i]);
    EXPECT_EQ(s1, back.scores(f[i]));
    EXPECT_EQ(s1, batch[i]);
    EXPECT_EQ(s1, all[i]);
    EXPECT_NEAR(s1[0] + s1[1] + s1[2], 1.0, 1e-6);
    correct += TrainedModel::argmax(s1) == *recs[i].label ? 1 : 0;
  }
  EXPECT_GE(correct, recs.size() * 9 / 10);
  auto broken = j;
  broken["booster"] = "{not a model";
  EXPECT_THROW((void)TrainedModel::from_json(broken, "m"), Error);
  broken = j;
  broken.erase("booster");
  EXPECT_THROW((void)TrainedModel::from_json(broken, "m"), Error);
}

INSTANTIATE_TEST_SUITE_P(Kinds, TreeLearner, ::testing::Values("xgboost", "stacked"));

TEST(Model, SettingsRejectBadLearner) {
  auto j = io::Json::parse(io::to_line(FeatureSettings::builtin().to_json()));
  j["learner"]["kind"] = "forest";
  EXPECT_THROW((void)FeatureSettings::parse(j, "f"), Error);
  j["learner"]["kind"] = "stacked";
  j["learner"]["xgboost"]["eta"] = 0;
  EXPECT_THROW((void)FeatureSettings::parse(j, "f"), Error);
  j["learner"]["xgboost"]["eta"] = 0.1;
  j["learner"]["inner_folds"] = 1;
  EXPECT_THROW((void)FeatureSettings::parse(j, "f"), Error);
  j["learner"]["inner_folds"] = 3;
  const auto s = FeatureSettings::parse(j, "f");
  EXPECT_EQ(s.learner.kind, "stacked");
  EXPECT_EQ(s.learner.inner_folds, 3);
  EXPECT_EQ(io::to_line(FeatureSettings::parse(io::Json::parse(io::to_line(s.to_json())), "f").to_json()),
            io::to_line(s.to_json()));
}

// Inner-CV selection of C and class weight: deterministic, picks from the grid, records the choice
// and the grid in the model's settings; bad grids are rejected.
TEST(Model, InnerCvSelectionIsDeterministicAndRecorded) {
  const auto recs = toy();
  FeatureSettings settings = FeatureSettings::builtin();
  settings.learner.select_C = {0.01, 1.0, 100.0};
  settings.learner.select_class_weight = {"none", "balanced"};
  settings.learner.inner_folds = 3;
  const auto f = extract_all(recs, settings, 1);
  std::vector<const NamedFeatures*> p;
  std::vector<claims::Verdict> y;
  std::vector<const claims::EvidenceRecord*> rp;
  for (std::size_t i = 0; i < recs.size(); ++i) {
    p.push_back(&f[i]);
    y.push_back(*recs[i].label);
    rp.push_back(&recs[i]);
  }
  const auto a = train_model(p, y, settings, claim_groups(rp));
  const auto b = train_model(p, y, settings, claim_groups(rp));
  EXPECT_EQ(io::to_line(a.to_json()), io::to_line(b.to_json()));
  const double c = a.settings.learner.C;
  EXPECT_TRUE(c == 0.01 || c == 1.0 || c == 100.0);
  EXPECT_EQ(a.settings.learner.select_C.size(), 3u);
  const auto back = TrainedModel::from_json(io::Json::parse(io::to_line(a.to_json())), "m");
  EXPECT_EQ(back.settings.learner.C, c);
  auto j = io::Json::parse(io::to_line(settings.to_json()));
  j["learner"]["select_C"] = io::Json::array({1.0, -2.0});
  EXPECT_THROW((void)FeatureSettings::parse(j, "f"), Error);
  j["learner"]["select_C"] = io::Json::array({1.0});
  j["learner"]["select_class_weight"] = io::Json::array({"heavy"});
  EXPECT_THROW((void)FeatureSettings::parse(j, "f"), Error);
}

TEST(Model, RejectsOneClassAndBadFiles) {
  auto recs = toy();
  for (auto& r : recs) r.label = claims::Verdict::kTrue;
  EXPECT_THROW((void)fit(recs, 1), Error);
  EXPECT_THROW((void)fit(recs, 1, "xgboost"), Error);
  EXPECT_THROW((void)fit(recs, 1, "stacked"), Error);
  EXPECT_THROW((void)TrainedModel::from_json(io::Json::parse(R"({"format":"x"})"), "m"), Error);
  auto j = io::Json::parse(io::to_line(fit(toy(), 1).to_json()));
  j["weights"].erase(0);
  EXPECT_THROW((void)TrainedModel::from_json(j, "m"), Error);
}

}  // namespace
}  // namespace numcheck::verify

namespace numcheck::verify {
namespace {

// predict_all runs on several threads (interleaved records); its output is the same, bit for bit
// and in record order, for any thread count. 400 records, so that up to 6 threads really run
// (parallel_for gives each thread at least 64 records).
TEST(Model, PredictAllIsTheSameForAnyThreadCount) {
  auto recs = toy();
  while (recs.size() < 400) {
    auto r = recs[recs.size() % 60];
    r.id = std::to_string(recs.size());
    r.claim += " again " + std::to_string(recs.size());
    recs.push_back(std::move(r));
  }
  for (const char* kind : {"linear", "stacked"}) {
    const auto m = fit(toy(), 1, kind);
    const auto one = predict_all(recs, m, 1);
    ASSERT_EQ(one.size(), recs.size());
    const auto f = extract_all(recs, m.settings, 1);
    for (std::size_t i = 0; i < recs.size(); i += 37) EXPECT_EQ(one[i], m.scores(f[i])) << kind << " " << i;
    for (unsigned t : {2u, 3u, 6u, 0u}) EXPECT_EQ(predict_all(recs, m, t), one) << kind << ", threads " << t;
  }
}

}  // namespace
}  // namespace numcheck::verify

namespace numcheck::verify {
namespace {

// Character n-grams of the claim's words (group claim_chars, off unless the settings name it), and
// decision offsets chosen by inner CV (learner.tune_offsets): recorded in the model, added to the
// bias, deterministic; settings files with bad values are refused.
TEST(Model, ClaimCharsAndTunedOffsets) {
  auto settings = FeatureSettings::builtin();
  claims::EvidenceRecord r;
  r.claim = "Crime rose 80% in Ohio";
  settings.group(Group::kClaimChars) = GroupSettings{true, 1.0, 4};
  const auto f = extract(r, settings);
  const auto& cc = f.groups[static_cast<std::size_t>(Group::kClaimChars)];
  auto has = [&](const char* n) {
    return std::any_of(cc.begin(), cc.end(), [&](const auto& kv) { return kv.first == n; });
  };
  EXPECT_TRUE(has("cc: oh"));
  EXPECT_TRUE(has("cc:hio "));
  EXPECT_TRUE(has("cc:rime"));
  EXPECT_FALSE(has("cc:rime "));  // 5 bytes > max_n
  EXPECT_TRUE(std::none_of(cc.begin(), cc.end(),
                           [](const auto& kv) { return kv.first.find('<') != std::string::npos; }));
  // A settings file without the group leaves it off (older model files keep their features).
  auto j = io::Json::parse(io::to_line(FeatureSettings::builtin().to_json()));
  j["groups"].erase("claim_chars");
  EXPECT_FALSE(FeatureSettings::parse(j, "x").group(Group::kClaimChars).enabled);
  j["groups"]["claim_chars"] = {{"enabled", true}, {"max_n", 2}};
  EXPECT_THROW((void)FeatureSettings::parse(j, "x"), Error);
  j["groups"]["claim_chars"]["max_n"] = 6;
  EXPECT_EQ(FeatureSettings::parse(j, "x").group(Group::kClaimChars).max_n, 6);
  j["learner"]["offsets"] = {1, 2};
  EXPECT_THROW((void)FeatureSettings::parse(j, "x"), Error);

  // Offsets: tuned on inner folds, recorded, added to the bias; twice the same bytes.
  std::vector<claims::EvidenceRecord> recs = toy();
  FeatureSettings s = FeatureSettings::builtin();
  s.learner.tune_offsets = true;
  s.learner.offset_range = 0.5;
  s.learner.inner_folds = 3;
  const auto feats = extract_all(recs, s, 1);
  std::vector<const NamedFeatures*> p;
  std::vector<claims::Verdict> y;
  for (std::size_t i = 0; i < recs.size(); ++i) {
    p.push_back(&feats[i]);
    y.push_back(*recs[i].label);
  }
  const auto a = train_model(p, y, s), b = train_model(p, y, s);
  EXPECT_EQ(io::to_line(a.to_json()), io::to_line(b.to_json()));
  s.learner.tune_offsets = false;
  const auto plain = train_model(p, y, s);
  const auto& off = a.settings.learner.offsets;
  EXPECT_EQ(off[static_cast<std::size_t>(claims::Verdict::kFalse)], 0.0);
  for (double o : off) EXPECT_LE(std::abs(o), 0.5 + 1e-12);
  ASSERT_EQ(a.classes, plain.classes);
  for (std::size_t c = 0; c < a.classes.size(); ++c)
    EXPECT_NEAR(a.bias[c], plain.bias[c] + off[static_cast<std::size_t>(a.classes[c])], 1e-12);
  EXPECT_EQ(plain.settings.learner.offsets, (std::array<double, 3>{0.0, 0.0, 0.0}));
}

// A set built so that the plain argmax never predicts Conflicting, and an offset that favours it
// does much better: claims say "alpha" (mostly True) or "beta" (mostly False); Conflicting claims
// (1 in 6) say "gamma" with one of them, but so do more True or False ones, so in every cell
// Conflicting is a minority and the unweighted one-vs-rest logistic models rank it below True or
// False. Per 24 records: alpha 7 True + 1 False, beta 7 False + 1 True, alpha gamma 2 Conflicting
// + 3 True, beta gamma 2 Conflicting + 3 False. The plain argmax (True for alpha, False for beta)
// scores macro-F1 (0.833 + 0.833 + 0) / 3 = 0.556; predicting Conflicting for the "gamma" claims
// scores (0.737 + 0.737 + 0.571) / 3 = 0.682. Each claim carries five unique letter words so that no
// two texts are near-duplicates (min_df drops those words).
std::vector<claims::EvidenceRecord> underpredicted(std::size_t copies, const std::string& tag) {
  struct Cell {
    const char* words;
    claims::Verdict label;
    int n;
  };
  using V = claims::Verdict;
  const Cell cells[] = {{"alpha", V::kTrue, 7},
                        {"alpha", V::kFalse, 1},
                        {"beta", V::kFalse, 7},
                        {"beta", V::kTrue, 1},
                        {"alpha gamma", V::kConflicting, 2},
                        {"alpha gamma", V::kTrue, 3},
                        {"beta gamma", V::kConflicting, 2},
                        {"beta gamma", V::kFalse, 3}};
  std::vector<claims::EvidenceRecord> v;
  for (std::size_t k = 0; k < copies; ++k)
    for (const auto& c : cells)
      for (int j = 0; j < c.n; ++j) {
        claims::EvidenceRecord r;
        r.id = tag + std::to_string(v.size());
        std::string uniq = tag;  // a letter word unique to the record
        for (std::size_t x = v.size() + 1; x > 0; x /= 26) uniq += static_cast<char>('a' + x % 26);
        r.claim = std::string("the report on ") + c.words + " says " + uniq + " " + uniq + "x " + uniq +
                  "y " + uniq + "z " + uniq + "w";
        r.label = c.label;
        r.selection = "gold";
        v.push_back(std::move(r));
      }
  return v;
}

double macro_f1_of(const TrainedModel& m, const std::vector<claims::EvidenceRecord>& recs,
                   std::size_t* conflicting = nullptr) {
  std::vector<int> gold, pred;
  for (const auto& s : predict_all(recs, m, 1)) pred.push_back(static_cast<int>(TrainedModel::argmax(s)));
  for (const auto& r : recs) gold.push_back(static_cast<int>(*r.label));
  if (conflicting != nullptr)
    *conflicting = static_cast<std::size_t>(
        std::count(pred.begin(), pred.end(), static_cast<int>(claims::Verdict::kConflicting)));
  return stats::macro_f1(stats::ConfusionMatrix::from_labels(gold, pred, claims::kVerdictCount));
}

TEST(Model, TunedOffsetsRescueAnUnderpredictedClass) {
  const auto recs = underpredicted(10, "q");  // 240 records, 40 Conflicting
  FeatureSettings s = FeatureSettings::builtin();
  s.learner.balanced = false;  // no class weights: Conflicting stays under-predicted
  s.learner.select_C.clear();
  s.learner.select_class_weight.clear();
  s.learner.tune_offsets = true;
  s.learner.offset_range = 1.0;
  const auto feats = extract_all(recs, s, 1);
  std::vector<const NamedFeatures*> p;
  std::vector<claims::Verdict> y;
  std::vector<const claims::EvidenceRecord*> rp;
  for (std::size_t i = 0; i < recs.size(); ++i) {
    p.push_back(&feats[i]);
    y.push_back(*recs[i].label);
    rp.push_back(&recs[i]);
  }
  const auto groups = claim_groups(rp);
  ASSERT_EQ(*std::max_element(groups.begin(), groups.end()) + 1, recs.size());  // every text distinct

  const auto t = tune_decision_offsets(p, y, s, groups);
  const auto conf = static_cast<std::size_t>(claims::Verdict::kConflicting);
  // The inner folds' plain argmax never predicts Conflicting (its F1 is 0, so macro-F1 <= 2/3); the
  // tuned offsets favour Conflicting over True and score strictly (and much) higher.
  EXPECT_LT(t.macro_f1_zero, 2.0 / 3.0 + 1e-9);
  EXPECT_GT(t.macro_f1, t.macro_f1_zero + 0.05) << t.macro_f1 << " vs " << t.macro_f1_zero;
  EXPECT_GT(t.offsets[conf] - t.offsets[static_cast<std::size_t>(claims::Verdict::kTrue)], 0.0);
  EXPECT_EQ(t.offsets[static_cast<std::size_t>(claims::Verdict::kFalse)], 0.0);

  // train_model records exactly these offsets; without tuning the model never says Conflicting,
  // with them it does and scores higher on the training records and on fresh ones.
  const auto tuned = train_model(p, y, s, groups);
  EXPECT_EQ(tuned.settings.learner.offsets, t.offsets);
  s.learner.tune_offsets = false;
  const auto plain = train_model(p, y, s, groups);
  const auto fresh = underpredicted(5, "z");
  for (const auto* set : {&recs, &fresh}) {
    std::size_t plain_conf = 0, tuned_conf = 0;
    const double f_plain = macro_f1_of(plain, *set, &plain_conf);
    const double f_tuned = macro_f1_of(tuned, *set, &tuned_conf);
    EXPECT_EQ(plain_conf, 0U);
    EXPECT_GT(tuned_conf, 0U);
    EXPECT_GT(f_tuned, f_plain + 0.05) << f_tuned << " vs " << f_plain;
  }
}

}  // namespace
}  // namespace numcheck::verify
