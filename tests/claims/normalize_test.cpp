// The one claim comparison (claims/normalize.hpp): NFKC with case folding, quotes, dashes and
// white space; near-duplicates by equal keys or word overlap, on small inputs and on the real
// QuanTemp splits (skipped when the data folder is absent).
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "../support/quantemp_data.hpp"
#include "claims/llm_verify.hpp"
#include "claims/load.hpp"
#include "claims/normalize.hpp"

namespace numcheck::claims {
namespace {

namespace fs = std::filesystem;

TEST(NormalizeClaim, QuotesDashesSpacesCaseAndCompatibilityForms) {
  const std::string plain = normalize_claim("\"Crime fell 20% - in 2019,\" he said. It's true");
  // Curly quotes, an en dash, a no-break space, a tab run, upper case.
  EXPECT_EQ(normalize_claim(
                "\xE2\x80\x9C"
                "CRIME fell 20%\xC2\xA0\xE2\x80\x93 in 2019,\xE2\x80\x9D he said.\t\t It\xE2\x80\x99s true"),
            plain);
  EXPECT_EQ(plain, "crime fell 20% - in 2019,\" he said. it\"s true");
  // Full-width letters and digits, a ligature, an em dash and a minus sign.
  EXPECT_EQ(normalize_claim("\xEF\xBC\xA1\xEF\xBC\x92 of\xEF\xAC\x81"
                            "ce"),
            "a2 office");
  EXPECT_EQ(normalize_claim("a\xE2\x80\x94"
                            "b\xE2\x88\x92"
                            "c"),
            "a-b-c");
  // Single and double quotes, guillemets and low-9 quotes are one mark; surrounding ones go.
  EXPECT_EQ(normalize_claim("\xE2\x80\x98Parliament is getting KSh38 billion\xE2\x80\x99"),
            normalize_claim("'Parliament is getting KSh38 billion'"));
  EXPECT_EQ(normalize_claim("\xC2\xAB"
                            "x\xC2\xBB"),
            "x");
  EXPECT_EQ(normalize_claim("  \" \" "), "");
  // Words differ: not equal.
  EXPECT_NE(normalize_claim("Crime fell 20%"), normalize_claim("Crime fell 21%"));
  // Ill-formed UTF-8 does not throw.
  EXPECT_EQ(normalize_claim("a\xFF"
                            "b"),
            "a\xEF\xBF\xBD"
            "b");
}

TEST(NormalizeClaim, WordsAreLettersAndDigits) {
  EXPECT_EQ(claim_words("Earth\xE2\x80\x99s \xE2\x80\x9Cice caps\xE2\x80\x9D melt by 2014, by 2014!"),
            (std::vector<std::string>{"2014", "by", "caps", "earth", "ice", "melt", "s"}));
  EXPECT_EQ(claim_words("M\xC3\xA9xico grew 5%"), (std::vector<std::string>{"5", "grew", "m\xC3\xA9xico"}));
  EXPECT_TRUE(claim_words(" -- !! ").empty());
}

TEST(NearDuplicates, EqualKeysAndWordOverlapAtTheThreshold) {
  // 3 of 5 words shared: Jaccard exactly 3/5, a near-duplicate; 3 of 6 is not.
  EXPECT_TRUE(is_near_duplicate("a b c d", "a b c e"));     // {a,b,c} / {a,b,c,d,e}
  EXPECT_FALSE(is_near_duplicate("a b c d", "a b c e f"));  // 3 / 6
  EXPECT_TRUE(is_near_duplicate("\xE2\x80\x9CTaxes rose 3%\xE2\x80\x9D", "\"taxes  rose 3%\""));
  EXPECT_FALSE(is_near_duplicate("", "x"));
  EXPECT_TRUE(is_near_duplicate("!!", "\"!!\""));  // no words, equal keys

  const std::vector<std::string> left = {
      "Adam Schiff Paid Witnesses Over $40 Million To Testify Against Trump", "Crime fell 20% in 2019.",
      "\xE2\x80\x9CTo curb water wastage, the department began training 1,000 plumbers\xE2\x80\x9D",
      "Unrelated text about the weather."};
  const std::vector<std::string> right = {
      "\"To curb water wastage, the Department began training 1,000 plumbers\"",
      "Adam Schiff paid witnesses over $40 million to testify against President Trump during impeachment",
      "Crime rose 20% in 2020 in Texas, police said."};
  const auto d = near_duplicates(left, right);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].left, 0u);
  EXPECT_EQ(d[0].right, 1u);
  EXPECT_FALSE(d[0].same_text);
  EXPECT_EQ(d[0].common, 11u);  // every left word; 14 words in all
  EXPECT_EQ(d[0].words, 14u);
  EXPECT_EQ(d[1].left, 2u);
  EXPECT_EQ(d[1].right, 0u);
  EXPECT_TRUE(d[1].same_text);
  // The fast pairing agrees with the pairwise rule on every pair.
  for (std::size_t l = 0; l < left.size(); ++l)
    for (std::size_t r = 0; r < right.size(); ++r) {
      bool found = false;
      for (const auto& x : d) found = found || (x.left == l && x.right == r);
      EXPECT_EQ(found, is_near_duplicate(left[l], right[r])) << l << " " << r;
    }
  // Within one list: each pair once, left < right.
  const std::vector<std::string> one = {"x y z", "X  Y Z", "p q", "x y z w"};
  const auto w = near_duplicates_within(one);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].left, 0u);
  EXPECT_EQ(w[0].right, 1u);
  EXPECT_TRUE(w[0].same_text);
  EXPECT_EQ(w[1].right, 3u);  // 0 and 3: 3 of 4 words
  EXPECT_EQ(w[2].left, 1u);
  EXPECT_EQ(w[2].right, 3u);
}

TEST(NearDuplicates, GroupsAndTheClaimsToLeaveOut) {
  // 0 ~ 2 (same text), 2 ~ 3 (reworded): one group, numbered by first appearance.
  const std::vector<std::string> t = {"Taxes rose 3% in 2019", "filler one", "\"taxes rose 3% in 2019\"",
                                      "taxes rose 3% in 2019 in Ohio", "filler two two"};
  EXPECT_EQ(near_duplicate_groups(t), (std::vector<std::size_t>{0, 1, 0, 0, 2}));
  const auto f = grouped_folds(t, 2, 5);
  EXPECT_EQ(f[0], f[2]);
  EXPECT_EQ(f[0], f[3]);
  EXPECT_EQ(near_duplicates_of(t, {"TAXES ROSE 3% IN 2019!", "nothing alike here"}),
            (std::vector<std::size_t>{0, 2, 3}));
  EXPECT_TRUE(near_duplicates_of(t, {}).empty());
}

TEST(NormalizeClaim, QuoteStyleTwinIsNeverAShot) {
  std::vector<VerifyInput> pool;
  auto add = [&](std::string id, std::string text) {
    VerifyInput x;
    x.id = std::move(id);
    x.claim = std::move(text);
    x.label = Verdict::kTrue;
    pool.push_back(std::move(x));
  };
  add("val:1", "\xE2\x80\x9CTo curb water wastage, the department began training 1,000 plumbers\xE2\x80\x9D");
  for (int i = 0; i < 10; ++i) add("val:f" + std::to_string(i), "filler claim " + std::to_string(i));
  VerifyInput test;
  test.id = "test:1";
  test.claim = "\"To curb water wastage, the Department began training 1,000 plumbers\"";
  for (auto how : {ShotSelection::kRandom, ShotSelection::kSimilar}) {
    const ShotSelector sel(pool, how, 3);
    for (const auto* s : sel.select(test, 10, std::nullopt)) EXPECT_NE(s->id, "val:1");
  }
  // Grouped folds put the twins in one fold.
  const auto f = grouped_folds({pool[0].claim, test.claim, "other"}, 2, 1);
  EXPECT_EQ(f[0], f[1]);
}

// The real splits: the 249 labelled test claims against val (3,084).
TEST(NearDuplicates, RealTestClaimsAgainstVal) {
  const fs::path dir = numcheck::testing::quantemp_dir();
  const fs::path test_path = dir / "model_gpt4o_test_results.csv";
  const fs::path val_path = dir / "val_claimonly_evidence_question_mapping.json";
  if (!fs::exists(test_path) || !fs::exists(val_path))
    GTEST_SKIP() << "QuanTemp data not found at " << dir.string()
                 << " (set NUMCHECK_QUANTEMP to the QuanTemp data folder)";
  const auto test = load_claims(test_path).claims;
  const auto val = load_claims(val_path).claims;
  ASSERT_EQ(test.size(), 249u);
  std::vector<std::string> tt, vt;
  for (const auto& c : test) tt.push_back(c.text);
  for (const auto& c : val) vt.push_back(c.text);
  // Exact text: no test claim has a val twin.
  const std::set<std::string> exact(vt.begin(), vt.end());
  std::size_t exact_twins = 0;
  for (const auto& t : tt) exact_twins += exact.count(t);
  EXPECT_EQ(exact_twins, 0u);
  const auto d = near_duplicates(tt, vt);
  ASSERT_EQ(d.size(), 3u);
  std::size_t same = 0;
  std::set<std::string> reworded;
  for (const auto& x : d) {
    EXPECT_EQ(test[x.left].label, val[x.right].label) << tt[x.left];
    if (x.same_text) {
      ++same;
      EXPECT_NE(tt[x.left], vt[x.right]);  // other quotes
      EXPECT_EQ(tt[x.left].rfind("\"To curb water wastage", 0), 0u) << tt[x.left];
    } else {
      reworded.insert(tt[x.left].substr(0, 12));
    }
  }
  EXPECT_EQ(same, 1u);
  EXPECT_EQ(reworded, (std::set<std::string>{"Adam Schiff ", "Al Gore pred"}));
}

// The documented few-shot example on val (--shots 4 --shot-selection similar --folds 5): no claim
// gets a claim of its own normalized text as an example.
TEST(NearDuplicates, RealValFewShotNeverShowsATwin) {
  const fs::path val_path =
      numcheck::testing::quantemp_dir() / "val_claimonly_evidence_question_mapping.json";
  if (!fs::exists(val_path)) GTEST_SKIP() << "QuanTemp data not found at " << val_path.string();
  const auto val = load_claims(val_path).claims;
  std::vector<VerifyInput> pool;
  std::vector<std::string> texts;
  for (const auto& c : val) {
    VerifyInput x;
    x.id = "val:" + std::to_string(c.record);
    x.claim = c.text;
    x.label = c.label;
    texts.push_back(c.text);
    pool.push_back(std::move(x));
  }
  ShotSelector sel(pool, ShotSelection::kSimilar, 20260725);
  const auto folds = grouped_folds(texts, 5, 20260725);
  sel.set_folds(folds);
  std::vector<std::string> keys;
  for (const auto& t : texts) keys.push_back(normalize_claim(t));
  std::size_t with_twin = 0, twin_shown = 0;
  for (std::size_t i = 0; i < pool.size(); ++i) {
    const std::string& key = keys[i];
    bool twin = false;
    for (std::size_t j = 0; j < pool.size() && !twin; ++j)
      twin = j != i && texts[j] != texts[i] && keys[j] == key;
    if (!twin) continue;
    ++with_twin;
    for (const auto* s : sel.select(pool[i], 4, folds[i]))
      twin_shown += normalize_claim(s->claim) == key ? 1 : 0;
  }
  EXPECT_GT(with_twin, 0u);
  EXPECT_EQ(twin_shown, 0u);
}

}  // namespace
}  // namespace numcheck::claims
