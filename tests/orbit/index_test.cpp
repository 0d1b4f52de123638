// The compact benchmark index (orbit/index.hpp) that `orbit score` grades with: loaded from the
// files it gives the same grading inputs as load_benchmark (ids, base, view, family, template,
// exact expected answer, unit) for every prompt of the default benchmark, in the same order; it
// refuses what load_benchmark refuses with the same message; selections restrict it as they
// restrict a Benchmark.
#include "orbit/index.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "io/sha256.hpp"
#include "orbit/generate.hpp"
#include "orbit/index_cache.hpp"
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

// A manifest's hashes and provenance are taken from the parse that checked it when they are asked
// of the same text, and from the text asked about otherwise: never another manifest's.
TEST_F(IndexTest, ManifestFactsAreThoseOfTheTextAskedAbout) {
  const Benchmark b = load_benchmark(bench_dir());  // its manifest parsed, and its facts kept
  const io::Json m = io::parse_json(b.manifest_json, "manifest");
  const std::string views_hash = m["files"]["views.jsonl"]["sha256"].get<std::string>();
  EXPECT_EQ(manifest_file_hashes(b).at("views.jsonl"), views_hash);
  EXPECT_EQ(generator_provenance(b)["seed"].dump(), m["seed"].dump());
  Benchmark other = b;
  io::Json edited = m;
  edited["files"]["views.jsonl"]["sha256"] = std::string(64, 'e');
  edited["seed"] = 977;
  other.manifest_json = io::to_pretty(edited);
  EXPECT_EQ(manifest_file_hashes(other).at("views.jsonl"), std::string(64, 'e'));
  EXPECT_EQ(generator_provenance(other)["seed"], 977);
  EXPECT_THROW(verify_benchmark(other), Error);
  EXPECT_EQ(manifest_file_hashes(b).at("views.jsonl"), views_hash);  // the first again
  EXPECT_EQ(generator_provenance(b)["seed"].dump(), m["seed"].dump());
  EXPECT_NO_THROW(verify_benchmark(b));
  other.manifest_json = "{\"files\": ";
  EXPECT_THROW((void)manifest_file_hashes(other), Error);
  other.manifest_json.clear();  // a benchmark built in memory
  EXPECT_EQ(generator_provenance(other), io::OrderedJson::object());
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
  // Every base read back against the index: all_bases with no list of them (orbit score keeps no
  // copy of every base id while it grades), restricted to the same prompts as against the benchmark.
  SelectionSpec some_views;
  some_views.views = {"canonical", "words"};
  const Selection every_base = select(b, some_views);
  const Selection back = selection_from_json(to_json(every_base, b), x, "run.json");
  EXPECT_TRUE(back.all_bases);
  EXPECT_TRUE(back.base_ids.empty());
  EXPECT_FALSE(back.whole());
  expect_same(restrict(x, back), restrict(b, every_base));
  EXPECT_EQ(restrict(x, back).selection, restrict(b, every_base).selection);
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
    std::string a;
    try {
      (void)load_benchmark(d, 1);
    } catch (const Error& e) {
      a = e.what();
    }
    EXPECT_FALSE(a.empty()) << name;
    for (const std::size_t threads : {std::size_t{1}, std::size_t{2}, std::size_t{3}}) {
      std::string b, c;
      try {
        (void)load_benchmark_index(d, threads);
      } catch (const Error& e) {
        b = e.what();
      }
      EXPECT_EQ(a, b) << name << " threads " << threads;
      if (threads == 1) continue;
      try {
        (void)load_benchmark(d, threads);  // the benchmark itself on several threads: the same error
      } catch (const Error& e) {
        c = e.what();
      }
      EXPECT_EQ(a, c) << name << " load_benchmark, threads " << threads;
    }
  }
}

// Damage in both files and in several places of views.jsonl: load_benchmark reports the first
// error of a reading in file order, bases first, as the index's loader does (a separate reader,
// the reference here): a damaged bases.jsonl wins over any damage to the views; among the views,
// the first damaged line wins, whether its damage is its own (a field, the JSON, a torn end) or
// needs the bases or the earlier views (an unknown base, a duplicate). A loader that reads the two
// files at once, or checks the views' bases after reading them, must keep this order.
TEST_F(IndexTest, DamageInBothFilesIsReportedInFileOrder) {
  const std::string unknown =
      R"({"prompt_id":"ZZ-1:canonical","base_id":"ZZ-1","template":"ZZ","view":"canonical","family":null,"prompt":"p","expected":"1","answer_unit":""})"
      "\n";
  // The end of line n (1-based) of v, its '\n' included.
  const auto line_end = [](const std::string& v, std::size_t n) {
    std::size_t p = 0;
    for (std::size_t i = 0; i < n; ++i) p = v.find('\n', p) + 1;
    return p;
  };
  const auto bad_expected_at = [&](std::string& v, std::size_t line) {
    const auto p = v.find("\"expected\":\"", line_end(v, line - 1));
    v.replace(p, 12, "\"expected\":\"x");
  };
  struct Case {
    std::string name;
    std::function<void(std::string&)> bases, views;
  };
  const auto keep = [](std::string&) {};
  const std::vector<Case> cases = {
      {"bad_base_and_bad_view", [](std::string& b) { b.insert(0, "{nope\n"); },
       [&](std::string& v) { bad_expected_at(v, 1); }},
      {"duplicate_base_and_unknown_view_base", [&](std::string& b) { b += b.substr(0, line_end(b, 1)); },
       [&](std::string& v) { v.insert(0, unknown); }},
      {"missing_bases", [](std::string& b) { b.clear(); }, keep},
      {"unknown_base_then_bad_expected", keep,
       [&](std::string& v) {
         bad_expected_at(v, 4000);
         v.insert(line_end(v, 10), unknown);
       }},
      {"bad_expected_then_unknown_base", keep,
       [&](std::string& v) {
         bad_expected_at(v, 10);
         v.insert(line_end(v, 4000), unknown);
       }},
      {"duplicate_then_bad_json", keep,
       [&](std::string& v) {
         v.insert(line_end(v, 20), v.substr(0, line_end(v, 1)));
         v.insert(line_end(v, 5000), "{nope\n");
       }},
      {"bad_json_then_duplicate", keep,
       [&](std::string& v) {
         v.insert(line_end(v, 20), "{nope\n");
         v += v.substr(0, line_end(v, 1));
       }},
      {"unknown_base_on_the_last_line", keep, [&](std::string& v) { v += unknown; }},
      {"torn_after_unknown_base", keep,
       [&](std::string& v) {
         v.insert(line_end(v, 3), unknown);
         v.resize(v.size() - 5);
       }},
  };
  for (const auto& c : cases) {
    const fs::path d = edited(c.name, c.views);
    std::string bases = io::read_file(d / "bases.jsonl");
    c.bases(bases);
    io::write_file_atomic(d / "bases.jsonl", bases);
    std::string reference, got;
    try {
      (void)load_benchmark_index(d, 1);
    } catch (const Error& e) {
      reference = e.what();
    }
    try {
      (void)load_benchmark(d, 1);
    } catch (const Error& e) {
      got = e.what();
    }
    EXPECT_FALSE(reference.empty()) << c.name;
    EXPECT_EQ(got, reference) << c.name;
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

// load_benchmark reads on several threads too: the same benchmark for any number of them (every
// field of every base and view, exact values included; the lookups; the file hashes). The default benchmark's
// views.jsonl is several of the reader's blocks.
TEST_F(IndexTest, AnyNumberOfThreadsLoadsTheSameBenchmark) {
  const Benchmark a = load_benchmark(bench_dir(), 1);
  ASSERT_GT(fs::file_size(bench_dir() / "views.jsonl"), std::size_t{2} << 20);
  for (const std::size_t threads : {std::size_t{0}, std::size_t{2}, std::size_t{3}, std::size_t{8}}) {
    const Benchmark b = load_benchmark(bench_dir(), threads);
    ASSERT_EQ(b.bases.size(), a.bases.size()) << threads;
    for (std::size_t k = 0; k < a.bases.size(); ++k) {
      ASSERT_TRUE(b.bases[k] == a.bases[k]) << a.bases[k].base_id << " threads " << threads;
      ASSERT_EQ(b.base_position(a.bases[k].base_id), k);
    }
    ASSERT_EQ(b.views.size(), a.views.size()) << threads;
    for (std::size_t i = 0; i < a.views.size(); ++i) {
      ASSERT_TRUE(b.views[i] == a.views[i]) << a.views[i].prompt_id << " threads " << threads;
      ASSERT_EQ(b.view_position(a.views[i].prompt_id), i);
    }
    EXPECT_EQ(b.file_sha256, a.file_sha256);
    EXPECT_EQ(b.file_sha256.at("views.jsonl"), io::sha256_file(bench_dir() / "views.jsonl"));
    EXPECT_EQ(b.file_sha256.at("bases.jsonl"), io::sha256_file(bench_dir() / "bases.jsonl"));
    EXPECT_EQ(b.manifest_json, a.manifest_json);
  }
}

// The benchmark index cache: a second load reads the index back from the cache file, the same
// index, and its check confirms it; a missing, torn, corrupt or foreign cache file is never used
// (the index is built from the files and the cache written anew); files changed behind the
// cache's back (size, inode and modification time put back) are told by their change time; a cache
// whose stamps match but whose hashes do not is refused by its check unless the stamps were
// settled when it was made, and then its hashes are taken without reading the files.
class IndexCacheTest : public IndexTest {
 protected:
  static fs::path cache_folder(const std::string& name) {
    const fs::path f = *dir_ / ("cache_" + name);
    fs::remove_all(f);
    return f;
  }
  static fs::path only_file(const fs::path& folder) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(folder / "orbit-index")) files.push_back(e.path());
    EXPECT_EQ(files.size(), 1u);
    return files.empty() ? fs::path() : files.front();
  }
  // A cache file's bytes without what differs between two writes of the same index: the time of the
  // stamping (the head's last field) and so the body's hash.
  static std::string without_stamping_time(std::string bytes) {
    std::size_t at = 8;
    for (int i = 0; i < 5 && at + 8 <= bytes.size(); ++i) {  // version, folder, three hashes
      std::uint64_t n = 0;
      std::memcpy(&n, bytes.data() + at, 8);
      at += 8 + n;
    }
    at += 2 * 5 * 8;  // the two files' stamps
    if (at + 8 > bytes.size() || bytes.size() < 72) return bytes;
    std::memset(bytes.data() + at, 0, 8);
    bytes.replace(bytes.size() - 64, 64, 64, '0');
    return bytes;
  }
  // Writes `bytes` over the file's bytes at `at` in place (same inode), then puts its size and
  // times back as they were.
  static void overwrite_in_place(const fs::path& path, std::size_t at, std::string_view bytes) {
    struct stat before {};
    ASSERT_EQ(::stat(path.c_str(), &before), 0);
    const int fd = ::open(path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(at)),
              static_cast<ssize_t>(bytes.size()));
    ::close(fd);
    const struct timespec times[2] = {before.st_atim, before.st_mtim};
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  }
};

TEST_F(IndexCacheTest, SecondLoadReadsTheSameIndexFromTheCache) {
  const Benchmark b = load_benchmark(bench_dir());
  const IndexCache cache{cache_folder("same"), true};
  const BenchmarkIndex first = load_benchmark_index(bench_dir(), 2, cache);
  EXPECT_FALSE(first.from_cache());
  expect_same(first, b);
  const fs::path file = only_file(cache.folder);
  for (const std::size_t threads : {std::size_t{1}, std::size_t{2}}) {
    const BenchmarkIndex x = load_benchmark_index(bench_dir(), threads, cache);
    ASSERT_TRUE(x.from_cache());
    expect_same(x, b);  // every prompt, base and lookup; the file hashes; the manifest
    EXPECT_TRUE(x.confirmed());
    EXPECT_NO_THROW(verify_benchmark(x));
    // A restricted index shares the check.
    SelectionSpec spec;
    spec.bases = 40;
    const BenchmarkIndex rx = restrict(x, select(b, spec));
    EXPECT_TRUE(rx.from_cache());
    EXPECT_TRUE(rx.confirmed());
  }
  // The lookup that tries a hint first finds what find finds, right or wrong hint.
  const BenchmarkIndex x = load_benchmark_index(bench_dir(), 2, cache);
  for (std::size_t i = 0; i < x.size(); i += 13) {
    EXPECT_EQ(x.find(x.prompt_id(i), i), i);
    EXPECT_EQ(x.find(x.prompt_id(i), i + 1), i);
    EXPECT_EQ(x.find(x.prompt_id(i), x.size() + 5), i);
  }
  EXPECT_FALSE(x.find("CV-0001:nope", 0));
  // read = false builds from the files (and writes the cache again); no cache folder: no cache.
  EXPECT_FALSE(load_benchmark_index(bench_dir(), 2, IndexCache{cache.folder, false}).from_cache());
  EXPECT_EQ(only_file(cache.folder), file);
  EXPECT_FALSE(load_benchmark_index(bench_dir(), 2, IndexCache{}).from_cache());
}

// With an IndexCacheWrite, the load leaves the cache file to it: nothing is written before
// start(), the file is whole when the writer is destroyed, and the next load reads it. An index
// read from the cache leaves nothing to write.
TEST_F(IndexCacheTest, ALaterWriteWritesTheCacheOnItsOwnThread) {
  const Benchmark b = load_benchmark(bench_dir());
  const IndexCache cache{cache_folder("later"), true};
  {
    std::optional<BenchmarkIndex> x;
    IndexCacheWrite later;
    x = load_benchmark_index(bench_dir(), 2, cache, &later);
    EXPECT_FALSE(x->from_cache());
    EXPECT_TRUE(later.due());
    EXPECT_FALSE(fs::exists(cache.folder / "orbit-index") && !fs::is_empty(cache.folder / "orbit-index"))
        << "written before start()";
    later.start(*x);
    expect_same(*x, b);  // the index is used while its cache file is written
  }
  (void)only_file(cache.folder);
  IndexCacheWrite again;
  const BenchmarkIndex y = load_benchmark_index(bench_dir(), 2, cache, &again);
  ASSERT_TRUE(y.from_cache());
  EXPECT_FALSE(again.due());
  again.start(y);  // nothing to write: does nothing
  expect_same(y, b);
  EXPECT_TRUE(y.confirmed());
}

// A FIFO put at the cache file's path is never opened for a blocking read (that waited for a
// writer forever): the load goes on at once from the files, with a warning naming the path.
TEST_F(IndexCacheTest, AFifoAtTheCachePathIsAMissWithAWarningNotAHang) {
  IndexCache cache{cache_folder("fifo"), true};
  std::vector<std::string> warnings;
  cache.warn = [&](const std::string& w) { warnings.push_back(w); };
  const auto stamps = detail::stamps_of(bench_dir());
  ASSERT_TRUE(stamps);
  const fs::path file = detail::index_cache_file(cache.folder, *stamps);
  fs::create_directories(file.parent_path());
  ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0);
  auto load = std::async(std::launch::async, [&] { return load_benchmark_index(bench_dir(), 2, cache); });
  if (load.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    // Unblock the reader (a writer opens and closes the FIFO) so that the test ends, then fail.
    const int w = ::open(file.c_str(), O_WRONLY | O_NONBLOCK);
    if (w >= 0) ::close(w);
    (void)load.wait_for(std::chrono::seconds(5));
    FAIL() << "load_benchmark_index waited on the FIFO at " << file;
  }
  const BenchmarkIndex x = load.get();
  EXPECT_FALSE(x.from_cache());
  expect_same(x, load_benchmark(bench_dir()));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("not a regular file"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find(file.string()), std::string::npos) << warnings[0];
}

TEST_F(IndexCacheTest, TornCorruptOrForeignCacheFilesAreNeverUsed) {
  const Benchmark b = load_benchmark(bench_dir());
  const IndexCache cache{cache_folder("corrupt"), true};
  (void)load_benchmark_index(bench_dir(), 2, cache);
  const fs::path file = only_file(cache.folder);
  const std::string good = io::read_file(file);
  ASSERT_GT(good.size(), 8u + 72u);
  const std::size_t body_end = good.size() - 72;
  // The hash table of the bases closes the body: its count (a power of two) and its slots.
  std::size_t slots = 0;
  for (std::size_t n = 1024; n * 4 + 8 < body_end; n *= 2) {
    std::uint64_t count = 0;
    std::memcpy(&count, good.data() + body_end - n * 4 - 8, 8);
    if (count == n) slots = n;
  }
  ASSERT_NE(slots, 0u);
  // A body whose hash is right but whose table has no empty slot (a probe would never end).
  std::string full_table = good;
  std::memset(full_table.data() + body_end - slots * 4, 1, slots * 4);
  const std::string body = full_table.substr(8, body_end - 8);
  full_table.replace(body_end + 8, 64, io::sha256_hex(body));

  std::string flipped = good;
  flipped[good.size() / 2] = static_cast<char>(flipped[good.size() / 2] ^ 0x20);
  std::string magic = good;
  magic[7] = '9';
  std::string other_dir = good;  // the head names another folder: hash recomputed, still refused
  const std::string canonical = fs::canonical(bench_dir()).string();
  const std::size_t at = other_dir.find(canonical);
  ASSERT_NE(at, std::string::npos);
  other_dir[at + canonical.size() - 1] = static_cast<char>(other_dir[at + canonical.size() - 1] ^ 1);
  other_dir.replace(body_end + 8, 64, io::sha256_hex(other_dir.substr(8, body_end - 8)));

  const std::vector<std::pair<std::string, std::string>> cases = {
      {"empty", ""},
      {"magic only", good.substr(0, 8)},
      {"torn", good.substr(0, good.size() / 3)},
      {"torn trailer", good.substr(0, good.size() - 10)},
      {"one byte flipped", flipped},
      {"another format", magic},
      {"full hash table", full_table},
      {"another folder", other_dir},
      {"garbage", std::string(5000, '\x7f')},
  };
  for (const auto& [name, bytes] : cases) {
    io::write_file_atomic(file, bytes);
    {
      const BenchmarkIndex x = load_benchmark_index(bench_dir(), 2, cache);
      if (x.from_cache()) {
        // Only a body whose structure holds gets this far (a flipped byte in a name or a table);
        // its hash, checked beside the caller, does not: as orbit score does, read the files.
        EXPECT_EQ(name, "one byte flipped");
        EXPECT_FALSE(x.confirmed()) << name;
        expect_same(load_benchmark_index(bench_dir(), 2, IndexCache{cache.folder, false}), b);
      } else {
        expect_same(x, b);
      }
    }
    EXPECT_EQ(without_stamping_time(io::read_file(file)), without_stamping_time(good))
        << name << ": the cache is written anew";
    const BenchmarkIndex again = load_benchmark_index(bench_dir(), 2, cache);
    EXPECT_TRUE(again.from_cache() && again.confirmed()) << name;
  }
}

// The body parser the file reader and the fuzz target share: a real body parses into the same
// index; every shorter prefix and every body with bytes after it is refused.
TEST_F(IndexCacheTest, BodyParsesAndCutOrPaddedBodiesAreRefused) {
  const Benchmark b = load_benchmark(bench_dir());
  const IndexCache cache{cache_folder("body"), true};
  (void)load_benchmark_index(bench_dir(), 2, cache);
  const std::string file = io::read_file(only_file(cache.folder));
  const std::string body = file.substr(8, file.size() - 8 - 72);
  const auto stamps = detail::stamps_of(bench_dir());
  ASSERT_TRUE(stamps);
  const std::string manifest_sha = io::sha256_hex(io::read_file(bench_dir() / "manifest.json"));
  auto x = detail::parse_index_cache_body(body, *stamps, manifest_sha);
  ASSERT_TRUE(x);
  x->dir = b.dir;
  x->manifest_json = b.manifest_json;
  expect_same(*x, b);
  EXPECT_FALSE(detail::parse_index_cache_body(body, *stamps, std::string(64, '0')));
  for (std::size_t cut = 0; cut < body.size(); cut += 1 + cut / 3) {
    EXPECT_FALSE(detail::parse_index_cache_body(body.substr(0, cut), *stamps, manifest_sha)) << cut;
  }
  EXPECT_FALSE(detail::parse_index_cache_body(body + "x", *stamps, manifest_sha));
}

TEST_F(IndexCacheTest, FilesChangedBehindTheCachesBackAreCaught) {
  const IndexCache cache{cache_folder("changed"), true};
  // Replaced (a new inode and time): the cache is not read; the new content is indexed.
  const fs::path d = edited("replaced", [](std::string&) {});
  (void)load_benchmark_index(d, 2, cache);
  ASSERT_TRUE(load_benchmark_index(d, 2, cache).from_cache());
  std::string views = io::read_file(d / "views.jsonl");
  const std::size_t id_at = views.find("CV-0001:canonical");
  ASSERT_NE(id_at, std::string::npos);
  views.replace(views.find("CV-0001:canonical") + 8, 9, "canonicaX");  // "CV-0001:canonicaX"
  io::write_file_atomic(d / "views.jsonl", views);
  EXPECT_THROW((void)load_benchmark_index(d, 2, cache), Error);  // not <base_id>:<view>: read, refused
  io::write_file_atomic(d / "views.jsonl", io::read_file(bench_dir() / "views.jsonl"));
  ASSERT_FALSE(load_benchmark_index(d, 2, cache).from_cache());  // new inode: built, cached again
  // Changed in place with size, inode and modification time put back: the change time tells, so
  // the cache is not read and the index has the new bytes' hash.
  {
    const BenchmarkIndex x = load_benchmark_index(d, 2, cache);
    ASSERT_TRUE(x.from_cache());
    EXPECT_TRUE(x.confirmed());
  }
  const std::string text = io::read_file(d / "views.jsonl");
  const std::size_t prompt_at = text.find("A jug holds");
  ASSERT_NE(prompt_at, std::string::npos);
  overwrite_in_place(d / "views.jsonl", prompt_at, "B");
  {
    const BenchmarkIndex x = load_benchmark_index(d, 2, cache);
    EXPECT_FALSE(x.from_cache());
    EXPECT_EQ(x.file_sha256.at("views.jsonl"), io::sha256_file(d / "views.jsonl"));
    EXPECT_NE(x.file_sha256.at("views.jsonl"), io::sha256_file(bench_dir() / "views.jsonl"));
  }
  // Stamps that match over bytes that changed (a change in the same tick of the clock as the
  // stamping, made here by recording a wrong hash): read from the cache, but the files' stamps were
  // not settled, so they are hashed and the check fails: nothing may be written from it.
  auto stamps = detail::stamps_of(d);
  ASSERT_TRUE(stamps);
  BenchmarkIndex wrong = load_benchmark_index(d, 2, IndexCache{});
  wrong.file_sha256["views.jsonl"] = std::string(64, '0');
  const fs::path file = detail::index_cache_file(cache.folder, *stamps);
  ASSERT_FALSE(detail::settled(*stamps, stamps->stamped_ns));  // just written
  detail::write_index_cache(file, wrong, *stamps);
  const BenchmarkIndex stale = load_benchmark_index(d, 2, cache);
  ASSERT_TRUE(stale.from_cache());
  EXPECT_FALSE(stale.confirmed());
  EXPECT_FALSE(restrict(stale, select(load_benchmark(bench_dir()), SelectionSpec{})).confirmed());
  // The same cache stamped as if 2 s after the files' last change: their stamps stand for the
  // recorded hashes, which are taken as they are (and the manifest's check then refuses them).
  stamps->stamped_ns = std::max(stamps->bases.ctime_ns, stamps->views.ctime_ns) + detail::kSettledNs + 1;
  detail::write_index_cache(file, wrong, *stamps);
  {
    const BenchmarkIndex trusted = load_benchmark_index(d, 2, cache);
    ASSERT_TRUE(trusted.from_cache());
    EXPECT_TRUE(trusted.confirmed());
    EXPECT_EQ(trusted.file_sha256.at("views.jsonl"), std::string(64, '0'));
    EXPECT_THROW(verify_benchmark(trusted), Error);
  }
  // manifest.json changed: the cache is not read.
  const BenchmarkIndex fresh = load_benchmark_index(d, 2, IndexCache{cache.folder, false});
  EXPECT_TRUE(fresh.confirmed());
  std::string manifest = io::read_file(d / "manifest.json");
  manifest.insert(manifest.rfind('}'), " ");
  io::write_file_atomic(d / "manifest.json", manifest);
  EXPECT_FALSE(load_benchmark_index(d, 2, cache).from_cache());
}

// Tables of core::kLargeArrayBytes and more (those of a benchmark of 300,000 prompts) are mapped
// from the cache file instead of read: the index read back answers every prompt as the one written,
// the file is mapped while the index lives and unmapped with it.
TEST_F(IndexCacheTest, LargeTablesAreMappedFromTheFileAndUnmappedWithTheIndex) {
  constexpr std::size_t kPrompts = 300'000;
  BenchmarkIndex big;
  big.manifest_json = io::read_file(bench_dir() / "manifest.json");
  big.file_sha256 = {{"bases.jsonl", std::string(64, 'b')}, {"views.jsonl", std::string(64, 'v')}};
  big.reserve(kPrompts, kPrompts / 5, true);
  for (std::size_t i = 0; i < kPrompts; ++i) {
    const std::string base = fmt::format("B-{:06}", i / 5);
    if (i % 5 == 0) {
      ASSERT_TRUE(big.add_base(base));
    }
    ASSERT_TRUE(big.add_view(fmt::format("{}:v{}", base, i % 5), fmt::format("v{}", i % 5), std::nullopt,
                             i % 2 == 0 ? "T" : "U", fmt::format("{}/7", i), i % 3 == 0 ? "km" : "m"));
  }
  const auto stamps = detail::stamps_of(bench_dir());
  ASSERT_TRUE(stamps);
  const fs::path file = cache_folder("large") / "orbit-index" / "large.idx";
  fs::create_directories(file.parent_path());
  detail::write_index_cache(file, big, *stamps);
  const auto mapped = [&file] {
    std::ifstream in("/proc/self/maps");
    const std::string maps((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return maps.find(file.filename().string()) != std::string::npos;
  };
  {
    const auto x = detail::read_index_cache(file, bench_dir(), *stamps, big.manifest_json);
    ASSERT_TRUE(x);
    EXPECT_TRUE(mapped());
    ASSERT_EQ(x->size(), kPrompts);
    ASSERT_EQ(x->base_count(), kPrompts / 5);
    for (std::size_t i = 0; i < kPrompts; ++i) {
      ASSERT_EQ(x->prompt_id(i), big.prompt_id(i)) << i;
      ASSERT_EQ(x->expected(i), big.expected(i)) << i;
      ASSERT_EQ(x->answer_unit(i), big.answer_unit(i)) << i;
      ASSERT_EQ(x->template_id(i), big.template_id(i)) << i;
      ASSERT_EQ(x->find(big.prompt_id(i)), i) << i;
    }
    for (std::size_t b = 0; b < x->base_count(); b += 97) ASSERT_TRUE(x->has_base(big.base_at(b)));
    EXPECT_FALSE(x->find("B-999999:v0"));
  }
  EXPECT_FALSE(mapped());
}

// While an index is built its hash tables carry hash bits beside the positions; finished, it keeps
// the positions alone. Lookups answer the same before and after finish() and after adding more; the
// cache file holds, for a finished index or not, the same bytes, and its prompt table is the one
// position_insert places with 32-bit slots (the file's format), found in the file byte for byte.
TEST_F(IndexCacheTest, TablesBuiltWithHashBitsAreTheFilesPositionTables) {
  const auto make = [](std::size_t prompts) {
    BenchmarkIndex b;
    b.manifest_json = io::read_file(bench_dir() / "manifest.json");
    b.file_sha256 = {{"bases.jsonl", std::string(64, 'b')}, {"views.jsonl", std::string(64, 'v')}};
    for (std::size_t i = 0; i < prompts; ++i) {
      const std::string base = fmt::format("B-{:05}", i / 3);
      if (i % 3 == 0) {
        EXPECT_TRUE(b.add_base(base));
      }
      EXPECT_TRUE(b.add_view(fmt::format("{}:v{}", base, i % 3), fmt::format("v{}", i % 3), std::nullopt, "T",
                             "1/7", "m"));
    }
    EXPECT_FALSE(b.add_view("B-00000:v0", "v0", std::nullopt, "T", "1", "m"));  // a duplicate
    EXPECT_FALSE(b.add_base("B-00001"));
    return b;
  };
  constexpr std::size_t kPrompts = 3000;
  BenchmarkIndex building = make(kPrompts);
  BenchmarkIndex finished = make(kPrompts);
  finished.finish();
  const auto answers_all = [&](const BenchmarkIndex& x) {
    for (std::size_t i = 0; i < x.size(); ++i) {
      ASSERT_EQ(x.find(x.prompt_id(i)), i) << i;
      ASSERT_EQ(x.find(x.prompt_id(i), i + 1), i) << i;
    }
    for (std::size_t b = 0; b < x.base_count(); ++b) {
      ASSERT_TRUE(x.has_base(x.base_at(b))) << b;
      ASSERT_EQ(x.find_base(x.base_at(b), 0), b) << b;
      ASSERT_EQ(x.find_base(x.base_at(b), b), b) << b;
    }
    EXPECT_FALSE(x.find("B-99999:v0"));
    EXPECT_FALSE(x.has_base("B-99999"));
    EXPECT_FALSE(x.find_base("B-99999", 0));
  };
  answers_all(building);
  answers_all(finished);

  const auto stamps = detail::stamps_of(bench_dir());
  ASSERT_TRUE(stamps);
  const fs::path dir = cache_folder("tags") / "orbit-index";
  fs::create_directories(dir);
  detail::write_index_cache(dir / "building.idx", building, *stamps);
  detail::write_index_cache(dir / "finished.idx", finished, *stamps);
  const std::string bytes = io::read_file(dir / "finished.idx");
  EXPECT_EQ(io::read_file(dir / "building.idx"), bytes);
  std::vector<std::uint32_t> slots;
  for (std::size_t i = 0; i < finished.size(); ++i) {
    ASSERT_TRUE(position_insert(
        slots, i, finished.prompt_id(i), BenchmarkIndex::hash_id(finished.prompt_id(i)),
        [&](std::size_t j) { return finished.prompt_id(j); }, &BenchmarkIndex::hash_id));
  }
  const std::string table(reinterpret_cast<const char*>(slots.data()), slots.size() * sizeof(std::uint32_t));
  EXPECT_NE(bytes.find(table), std::string::npos);

  // Adding after finish() rebuilds the tagged tables from the keys: everything is still found.
  ASSERT_TRUE(finished.add_base("C-1"));
  ASSERT_TRUE(finished.add_view("C-1:v0", "v0", std::nullopt, "T", "2", "m"));
  EXPECT_FALSE(finished.add_view("B-00007:v1", "v1", std::nullopt, "T", "1", "m"));
  answers_all(finished);
  finished.finish();
  answers_all(finished);
}

// When a file's stamp stands for its bytes: its last change (change time) lies more than
// kSettledNs before the stamping, for both files; a change time of 0 (a file system that keeps
// none) never does.
TEST(IndexCacheStamps, SettledOnlyWhenBothFilesLastChangedLongEnoughBefore) {
  constexpr std::int64_t t = 1'800'000'000'000'000'000;
  detail::IndexStamps s;
  s.bases.ctime_ns = t - detail::kSettledNs - 1;
  s.views.ctime_ns = t - detail::kSettledNs - 1;
  EXPECT_TRUE(detail::settled(s, t));
  s.views.ctime_ns = t - detail::kSettledNs;
  EXPECT_FALSE(detail::settled(s, t));
  s.views.ctime_ns = t + 5;
  EXPECT_FALSE(detail::settled(s, t));
  s.views.ctime_ns = 1;
  EXPECT_TRUE(detail::settled(s, t));
  s.bases.ctime_ns = 0;
  EXPECT_FALSE(detail::settled(s, t));
  s.bases.ctime_ns = t - 3 * detail::kSettledNs;
  s.bases.mtime_ns = t + 100 * detail::kSettledNs;  // a modification time set ahead is not the change time
  EXPECT_TRUE(detail::settled(s, t));
  // A stamping time from a damaged cache file: no overflow, never settled before the change.
  EXPECT_FALSE(detail::settled(s, std::numeric_limits<std::int64_t>::min()));
  EXPECT_FALSE(detail::settled(s, -5));
  EXPECT_TRUE(detail::settled(s, std::numeric_limits<std::int64_t>::max()));
}

// End to end on the clock: a benchmark whose files last changed more than kSettledNs before it was
// first loaded is cached with settled stamps, and the next load takes the recorded hashes without
// hashing the files (shown by a recorded hash made wrong in the cache file, with the file's own
// hash made right again); a file touched since is told by its change time.
TEST_F(IndexCacheTest, SettledFilesAreNotHashedAgainAndATouchIsSeen) {
  const IndexCache cache{cache_folder("settled"), true};
  const fs::path d = edited("settled", [](std::string&) {});
  std::this_thread::sleep_for(std::chrono::nanoseconds(detail::kSettledNs + 100'000'000));
  const BenchmarkIndex first = load_benchmark_index(d, 2, cache);
  ASSERT_FALSE(first.from_cache());
  const std::string views_hash = first.file_sha256.at("views.jsonl");
  const fs::path file = only_file(cache.folder);
  std::string bytes = io::read_file(file);
  const std::size_t at = bytes.find(views_hash);
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 64, std::string(64, 'f'));
  const std::size_t body_end = bytes.size() - 72;
  bytes.replace(body_end + 8, 64, io::sha256_hex(bytes.substr(8, body_end - 8)));
  io::write_file_atomic(file, bytes);
  {
    const BenchmarkIndex x = load_benchmark_index(d, 2, cache);
    ASSERT_TRUE(x.from_cache());
    EXPECT_TRUE(x.confirmed());
    EXPECT_EQ(x.file_sha256.at("views.jsonl"), std::string(64, 'f'));
  }
  // A touch (times set, bytes the same) changes the change time: the cache is not read.
  const fs::path views = d / "views.jsonl";
  ASSERT_EQ(::utimensat(AT_FDCWD, views.c_str(), nullptr, 0), 0);
  const BenchmarkIndex touched = load_benchmark_index(d, 2, cache);
  EXPECT_FALSE(touched.from_cache());
  EXPECT_EQ(touched.file_sha256.at("views.jsonl"), views_hash);
}

// The expected answers' canonical text without GMP for canonical forms: the same text (and the
// same refusals) as req_rational(...).str() on every form; check_rational refuses what it refuses.
TEST(RecordFields, CanonicalRationalIsTheRationalsText) {
  std::string scratch;
  std::vector<std::string> forms{"0",    "-0",   "7",    "-7",   "007",  "-007",    "14940",
                                 "-1/2", "2/4",  "3/1",  "0/5",  "1/0",  "",        "-",
                                 "1.5",  "x",    "+5",   " 5",   "5 ",   "1e3",     "--1",
                                 "0x10", "64/5", "-0/3", "+1/2", "1/00", "-261/10", "01/2"};
  forms.emplace_back("123456789012345678901234567890");
  forms.emplace_back("12345678901234567891/2");
  for (const std::string& t : forms) {
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
      got = detail::canonical_rational(r, "e", scratch);
    } catch (const Error& e) {
      got = std::string("error: ") + e.what();
    }
    EXPECT_EQ(want, got) << t;
    std::string checked = "ok";
    try {
      detail::check_rational(r, r.string_view("e"), "e");
    } catch (const Error& e) {
      checked = std::string("error: ") + e.what();
    }
    EXPECT_EQ(want.starts_with("error: ") ? want : "ok", checked) << t;
  }
}

}  // namespace
}  // namespace numcheck::orbit
