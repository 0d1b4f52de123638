// Whole-orbit selections (orbit/selection.hpp): the stratified sample's allocation, nesting and
// determinism, filters, errors, and the restricted benchmark.
#include "orbit/selection.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "core/error.hpp"
#include "orbit/generate.hpp"

namespace numcheck::orbit {
namespace {

namespace fs = std::filesystem;

const Benchmark& bench() {
  static const Benchmark b = [] {
    const fs::path dir = fs::temp_directory_path() / fmt::format("numcheck_selection_{}", ::getpid());
    fs::remove_all(dir);
    write_benchmark(dir, generate(default_spec()));
    Benchmark loaded = load_benchmark(dir);
    fs::remove_all(dir);
    return loaded;
  }();
  return b;
}

std::map<std::string, std::size_t> per_template(const Selection& s) {
  std::map<std::string, std::size_t> n;
  for (const auto& id : s.base_ids) ++n[bench().find_base(id)->template_id];
  return n;
}

TEST(Selection, HuntingtonHillGivesEveryGroupOneSeatThenProportional) {
  // Sizes of the default benchmark's templates: CV DD RL FC RS LV.
  const std::vector<std::size_t> sizes = {200, 200, 1000, 1000, 200, 1000};
  EXPECT_EQ(allocate_seats(sizes, 6), (std::vector<std::size_t>{1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(allocate_seats(sizes, 3), (std::vector<std::size_t>{1, 1, 1, 0, 0, 0}));
  // 36 seats over 3,600 bases: exactly proportional (2, 2, 10, 10, 2, 10).
  EXPECT_EQ(allocate_seats(sizes, 36), (std::vector<std::size_t>{2, 2, 10, 10, 2, 10}));
  EXPECT_EQ(allocate_seats({2, 5}, 100), (std::vector<std::size_t>{2, 5}));  // capped at sizes
  EXPECT_EQ(allocate_seats({}, 4), std::vector<std::size_t>{});
  // House monotone: a seat more never takes one away.
  for (std::size_t n = 1; n < 200; ++n) {
    const auto a = allocate_seats(sizes, n);
    const auto b = allocate_seats(sizes, n + 1);
    std::size_t sum = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_LE(a[i], b[i]) << n;
      sum += a[i];
    }
    EXPECT_EQ(sum, n);
  }
}

TEST(Selection, BasesSampleIsStratifiedDeterministicAndNested) {
  SelectionSpec spec;
  spec.bases = 20;
  const Selection s20 = select(bench(), spec);
  EXPECT_EQ(s20.base_ids.size(), 20u);
  EXPECT_FALSE(s20.all_bases);
  EXPECT_TRUE(s20.default_views);
  const auto n = per_template(s20);
  EXPECT_EQ(n.size(), 6u);  // every template is represented
  for (const auto& [t, k] : n) EXPECT_GE(k, 1u) << t;
  EXPECT_EQ(n.at("RL"), n.at("FC"));
  EXPECT_GT(n.at("RL"), n.at("CV"));
  // Deterministic: the same spec gives the same bases; in benchmark order.
  EXPECT_EQ(select(bench(), spec).base_ids, s20.base_ids);
  std::vector<std::size_t> idx;
  for (const auto& id : s20.base_ids) idx.push_back(*bench().base_position(id));
  EXPECT_TRUE(std::is_sorted(idx.begin(), idx.end()));
  // Nested: the sample for 21 contains the sample for 20.
  spec.bases = 21;
  const Selection s21 = select(bench(), spec);
  const std::set<std::string> bigger(s21.base_ids.begin(), s21.base_ids.end());
  for (const auto& id : s20.base_ids) EXPECT_TRUE(bigger.count(id)) << id;
  // Not the first bases of each template (a shuffle, not a prefix).
  spec.bases = 6;
  const Selection s6 = select(bench(), spec);
  std::size_t firsts = 0;
  for (const auto& id : s6.base_ids) firsts += id.ends_with("-0001") ? 1 : 0;
  EXPECT_LT(firsts, 6u);
  // Another seed, another sample.
  spec.bases = 20;
  spec.seed = 7;
  EXPECT_NE(select(bench(), spec).base_ids, s20.base_ids);
}

TEST(Selection, RestrictKeepsWholeOrbitsOfTheSelectedViews) {
  SelectionSpec spec;
  spec.bases = 12;
  spec.views = {"canonical", "unit"};
  const Selection s = select(bench(), spec);
  EXPECT_FALSE(s.default_views);
  EXPECT_FALSE(s.whole());
  const Benchmark r = restrict(bench(), s);
  ASSERT_EQ(r.bases.size(), 12u);
  std::size_t expected_prompts = 0;
  for (const auto& b : r.bases) {
    const Base& full = *bench().find_base(b.base_id);
    for (const auto& v : full.views) expected_prompts += (v == "canonical" || v == "unit") ? 1 : 0;
    for (const auto& v : b.views) EXPECT_TRUE(v == "canonical" || v == "unit") << b.base_id << " " << v;
  }
  EXPECT_EQ(r.views.size(), expected_prompts);
  for (std::size_t i = 0; i < r.views.size(); ++i) {
    EXPECT_EQ(r.view_position(r.views[i].prompt_id), i);
    EXPECT_TRUE(selected(s, r.views[i]));
  }
  EXPECT_EQ(r.file_sha256, bench().file_sha256);
  // What `orbit run` asks: the same prompts, in the same order, as pointers into the benchmark;
  // the whole benchmark's views when nothing is left out.
  const std::vector<const View*> asked = selected_views(bench(), s);
  ASSERT_EQ(asked.size(), r.views.size());
  for (std::size_t i = 0; i < asked.size(); ++i) EXPECT_EQ(asked[i]->prompt_id, r.views[i].prompt_id);
  EXPECT_EQ(selected_views(bench(), select(bench(), SelectionSpec{})).size(),
            restrict(bench(), select(bench(), SelectionSpec{})).views.size());
  // asked_views gives both in one pass: the same views and the same record.
  for (const Selection& sel : {s, select(bench(), SelectionSpec{})}) {
    const AskedViews both = asked_views(bench(), sel);
    EXPECT_EQ(both.views, selected_views(bench(), sel));
    EXPECT_EQ(both.record, to_json(sel, bench()));
  }
  ASSERT_TRUE(r.selection.is_object());
  EXPECT_EQ(r.selection["bases"], 12);
  EXPECT_EQ(r.selection["of_bases"], 3600);
  EXPECT_EQ(r.selection["prompts"], expected_prompts);
  // The recorded form reads back to the same selection.
  const Selection back = selection_from_json(to_json(s, bench()), bench(), "test");
  EXPECT_EQ(back.base_ids, s.base_ids);
  EXPECT_EQ(back.views, s.views);
  EXPECT_EQ(restrict(bench(), back).views.size(), expected_prompts);
}

TEST(Selection, FiltersComposeAndTheWholeBenchmarkIsWhole) {
  const Selection all = select(bench(), {});
  EXPECT_TRUE(all.whole());
  EXPECT_EQ(all.base_ids.size(), 3600u);
  EXPECT_TRUE(restrict(bench(), all).selection.is_null());
  EXPECT_EQ(restrict(bench(), all).views.size(), 8600u);

  SelectionSpec spec;
  spec.templates = {"CV", "RS"};
  const Selection t = select(bench(), spec);
  EXPECT_EQ(t.base_ids.size(), 400u);
  for (const auto& [tpl, k] : per_template(t)) EXPECT_TRUE(tpl == "CV" || tpl == "RS") << tpl;

  const fs::path ids = fs::temp_directory_path() / fmt::format("numcheck_ids_{}.txt", ::getpid());
  {
    std::ofstream f(ids);
    f << "# two bases\nCV-0003\n\n  DD-0010  # trailing comment\nCV-0003\nRL-0001\n";
  }
  spec = {};
  spec.base_ids_file = ids;
  spec.templates = {"CV", "DD"};
  const Selection f = select(bench(), spec);
  EXPECT_EQ(f.base_ids, (std::vector<std::string>{"CV-0003", "DD-0010"}));
  EXPECT_EQ(f.spec["base_ids_file"]["ids"], 3);
  fs::remove(ids);
}

TEST(Selection, UsageErrors) {
  auto code = [](const SelectionSpec& spec) {
    try {
      (void)select(bench(), spec);
    } catch (const Error& e) {
      return e.code();
    }
    return ErrorCode::kInvalidInput;  // no error: not what any case expects
  };
  SelectionSpec s;
  s.bases = 0;
  EXPECT_EQ(code(s), ErrorCode::kUsage);
  s = {};
  s.templates = {"XX"};
  EXPECT_EQ(code(s), ErrorCode::kUsage);
  s = {};
  s.views = {"fraction"};  // no canonical
  EXPECT_EQ(code(s), ErrorCode::kUsage);
  s = {};
  s.views = {"canonical", "roman"};
  EXPECT_EQ(code(s), ErrorCode::kUsage);
  const fs::path ids = fs::temp_directory_path() / fmt::format("numcheck_badids_{}.txt", ::getpid());
  {
    std::ofstream f(ids);
    f << "CV-9999\n";
  }
  s = {};
  s.base_ids_file = ids;
  EXPECT_EQ(code(s), ErrorCode::kUsage);
  fs::remove(ids);
}

}  // namespace
}  // namespace numcheck::orbit
