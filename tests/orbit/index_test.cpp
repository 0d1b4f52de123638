// The compact benchmark index (orbit/index.hpp) that `orbit score` grades with: loaded from the
// files it gives the same grading inputs as load_benchmark (ids, base, view, family, template,
// exact expected answer, unit) for every prompt of the default benchmark, in the same order; it
// refuses what load_benchmark refuses with the same message; selections restrict it as they
// restrict a Benchmark.
#include "orbit/index.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "io/files.hpp"
#include "orbit/generate.hpp"
#include "orbit/record_fields.hpp"
#include "orbit/selection.hpp"

namespace numcheck::orbit {
namespace {

namespace fs = std::filesystem;

class IndexTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / fmt::format("numcheck_index_{}", ::getpid()));
    fs::remove_all(*dir_);
    write_benchmark(*dir_ / "bench", generate(default_spec()));
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static fs::path bench_dir() { return *dir_ / "bench"; }

  // Copies the benchmark and lets `edit` change views.jsonl's text.
  static fs::path edited(const std::string& name, const std::function<void(std::string&)>& edit) {
    const fs::path d = *dir_ / name;
    fs::remove_all(d);
    fs::create_directories(d);
    for (const char* f : {"bases.jsonl", "views.jsonl", "manifest.json"})
      fs::copy_file(bench_dir() / f, d / f);
    std::string views = io::read_file(d / "views.jsonl");
    edit(views);
    io::write_file_atomic(d / "views.jsonl", views);
    return d;
  }

  static fs::path* dir_;
};
fs::path* IndexTest::dir_ = nullptr;

void expect_same(const BenchmarkIndex& x, const Benchmark& b) {
  ASSERT_EQ(x.size(), b.views.size());
  ASSERT_EQ(x.base_count(), b.bases.size());
  for (std::size_t i = 0; i < b.views.size(); ++i) {
    const View& v = b.views[i];
    ASSERT_EQ(x.prompt_id(i), v.prompt_id) << i;
    ASSERT_EQ(x.base_id(i), v.base_id) << i;
    ASSERT_EQ(x.view(i), v.view) << i;
    ASSERT_EQ(x.template_id(i), v.template_id) << i;
    ASSERT_EQ(x.family(i).has_value(), v.family.has_value()) << i;
    if (v.family) {
      ASSERT_EQ(*x.family(i), *v.family) << i;
    }
    ASSERT_EQ(x.expected(i), v.expected.str()) << i;
    ASSERT_EQ(num::Rational::parse_exact(x.expected(i), "expected"), v.expected) << i;
    ASSERT_EQ(x.answer_unit(i), v.answer_unit) << i;
    ASSERT_EQ(x.find(v.prompt_id), i) << i;
  }
  for (std::size_t k = 0; k < b.bases.size(); ++k) {
    ASSERT_EQ(x.base_at(k), b.bases[k].base_id);
    ASSERT_TRUE(x.has_base(b.bases[k].base_id));
  }
  EXPECT_FALSE(x.find("CV-0001:nope"));
  EXPECT_FALSE(x.find(""));
  EXPECT_FALSE(x.has_base("CV-99999"));
  EXPECT_EQ(x.dir, b.dir);
  EXPECT_EQ(x.manifest_json, b.manifest_json);
  EXPECT_EQ(x.file_sha256, b.file_sha256);
  EXPECT_EQ(generator_provenance(x), generator_provenance(b));
  EXPECT_EQ(manifest_file_hashes(x), manifest_file_hashes(b));
}

TEST_F(IndexTest, LoadedIndexGivesTheGradingInputsOfLoadBenchmark) {
  const Benchmark b = load_benchmark(bench_dir());
  ASSERT_EQ(b.views.size(), 8600u);
  const BenchmarkIndex x = load_benchmark_index(bench_dir());
  expect_same(x, b);
  expect_same(BenchmarkIndex::of(b), b);
  EXPECT_NO_THROW(verify_benchmark(x));
}

TEST_F(IndexTest, RestrictedIndexIsTheIndexOfTheRestrictedBenchmark) {
  const Benchmark b = load_benchmark(bench_dir());
  const BenchmarkIndex x = load_benchmark_index(bench_dir());
  SelectionSpec spec;
  spec.bases = 40;
  spec.views = {"canonical", "unit", "words"};
  const Selection s = select(b, spec);
  const Benchmark rb = restrict(b, s);
  const BenchmarkIndex rx = restrict(x, s);
  expect_same(rx, rb);
  EXPECT_EQ(rx.selection, rb.selection);
  // The recorded form read back against the index is the selection read against the benchmark.
  const io::OrderedJson rec = to_json(s, b);
  const Selection from_b = selection_from_json(rec, b, "run.json");
  const Selection from_x = selection_from_json(rec, x, "run.json");
  EXPECT_EQ(from_x.base_ids, from_b.base_ids);
  EXPECT_EQ(from_x.views, from_b.views);
  EXPECT_EQ(from_x.all_bases, from_b.all_bases);
  EXPECT_EQ(from_x.default_views, from_b.default_views);
  // The whole benchmark: nothing restricted, no selection recorded.
  const Selection all = select(b, SelectionSpec{});
  EXPECT_TRUE(restrict(x, all).selection.is_null());
  EXPECT_EQ(restrict(x, all).size(), 8600u);
}

// Every benchmark load_benchmark refuses, the index refuses with the same message.
TEST_F(IndexTest, RefusesWhatLoadBenchmarkRefusesWithTheSameMessage) {
  const auto first_line_end = [](std::string& v) { return v.find('\n'); };
  const std::vector<std::pair<std::string, std::function<void(std::string&)>>> cases = {
      {"bad_expected",
       [](std::string& v) {
         const auto p = v.find("\"expected\":\"");
         v.replace(p, 12, "\"expected\":\"x");
       }},
      {"duplicate", [&](std::string& v) { v += v.substr(0, first_line_end(v) + 1); }},
      {"mismatched_id",
       [](std::string& v) {
         const auto p = v.find(":canonical\"");
         v.replace(p, 11, ":canonicak\"");
       }},
      {"unknown_base",
       [](std::string& v) {
         v.insert(
             0,
             R"({"prompt_id":"ZZ-1:canonical","base_id":"ZZ-1","template":"ZZ","view":"canonical","family":null,"prompt":"p","expected":"1","answer_unit":""})"
             "\n");
       }},
      {"missing_family", [](std::string& v) { v.replace(v.find("\"family\":null,"), 14, ""); }},
      {"torn", [](std::string& v) { v.resize(v.size() - 5); }},
      {"not_json", [](std::string& v) { v.insert(0, "{nope\n"); }},
      // Two problems blocks apart: the first in file order is the one reported, whether a worker
      // (the fields) or the calling thread (duplicates) finds it.
      {"duplicate_then_bad_expected",
       [&](std::string& v) {
         std::string line = v.substr(0, first_line_end(v) + 1);
         v += line;
         const auto p = line.find("\"expected\":\"");
         line.replace(p, 12, "\"expected\":\"x");
         v += line;
       }},
      {"bad_expected_then_duplicate",
       [&](std::string& v) {
         const std::string first = v.substr(0, first_line_end(v) + 1);
         const auto p = v.find("\"expected\":\"", v.size() / 2);
         v.replace(p, 12, "\"expected\":\"x");
         v += first;
       }},
  };
  for (const auto& [name, edit] : cases) {
    const fs::path d = edited(name, edit);
    std::string a, b;
    try {
      (void)load_benchmark(d);
    } catch (const Error& e) {
      a = e.what();
    }
    EXPECT_FALSE(a.empty()) << name;
    for (const std::size_t threads : {std::size_t{1}, std::size_t{2}, std::size_t{3}}) {
      std::string b;
      try {
        (void)load_benchmark_index(d, threads);
      } catch (const Error& e) {
        b = e.what();
      }
      EXPECT_EQ(a, b) << name << " threads " << threads;
    }
  }
}

// The index is read on several threads; it is the same for any number of them (and its file hashes
// are those of the files).
TEST_F(IndexTest, AnyNumberOfThreadsLoadsTheSameIndex) {
  const Benchmark b = load_benchmark(bench_dir());
  for (const std::size_t threads : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{8}}) {
    const BenchmarkIndex x = load_benchmark_index(bench_dir(), threads);
    expect_same(x, b);
    EXPECT_EQ(x.file_sha256, b.file_sha256) << threads;
    for (std::size_t i = 0; i < x.size(); i += 97) EXPECT_EQ(x.find(x.prompt_id(i)), i);
  }
}

// The expected answers' canonical text without GMP for canonical integers: the same text (and the
// same refusals) as req_rational(...).str() on every form.
TEST(RecordFields, CanonicalRationalIsTheRationalsText) {
  for (const std::string t :
       {"0",    "-0",  "7",   "-7",  "007", "-007", "14940", "123456789012345678901234567890",
        "-1/2", "2/4", "3/1", "0/5", "1/0", "",     "-",     "1.5",
        "x",    "+5",  " 5",  "5 ",  "1e3", "--1",  "0x10"}) {
    const std::string line = fmt::format(R"({{"e":"{}"}})", t);
    std::vector<io::FlatValue> v;
    io::FastLineParser p;
    ASSERT_TRUE(p.walk(line, v)) << t;
    const io::LineRecord r(v, 0, "f:1");
    std::string want, got;
    try {
      want = detail::req_rational(r, "e").str();
    } catch (const Error& e) {
      want = std::string("error: ") + e.what();
    }
    try {
      got = detail::canonical_rational(r, "e");
    } catch (const Error& e) {
      got = std::string("error: ") + e.what();
    }
    EXPECT_EQ(want, got) << t;
  }
}

}  // namespace
}  // namespace numcheck::orbit
