#pragma once
// The benchmark as grading needs it, compactly: per prompt its id, base, view, family, template,
// exact expected answer and answer unit, and the base ids; no prompt text, no parameters, no
// object graph. `orbit score` loads this instead of the whole Benchmark (benchmark.hpp), so its
// memory is about 50 bytes per prompt (1,006,200 prompts: ~50 MB) instead of ~200.
//
// load_benchmark_index reads bases.jsonl and views.jsonl record by record under exactly the checks
// of load_benchmark (same fields, same types, same errors naming file, line and field; duplicate
// ids, unknown bases, prompt ids that are not "<base_id>:<view>"), and hashes the files the same
// way; BenchmarkIndex::of builds the same index from a loaded Benchmark (tests compare the two).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/large_array.hpp"
#include "core/string_set.hpp"
#include "io/json.hpp"
#include "orbit/benchmark.hpp"

namespace numcheck::orbit {

// The check of an index read from the index cache (index_cache.cpp): the cache file, and bases.jsonl
// and views.jsonl unless their stamps stand for them, hashed on threads of their own while the
// caller already uses the index.
class IndexCacheCheck;

class BenchmarkIndex {
 public:
  std::filesystem::path dir;
  std::string manifest_json;                       // manifest.json as written
  std::map<std::string, std::string> file_sha256;  // "bases.jsonl" -> hex (as read now; see below)
  io::OrderedJson selection;                       // as Benchmark::selection

  // Set when the index was read from the index cache: then file_sha256 holds the hashes of the files
  // the cache was made from, and this check (running beside the caller) hashes the cache file and,
  // unless the files' stamps were settled when the cache was made (index_cache.hpp), the files as
  // they are now. Copies (restrict) share it. Nothing may be written from the index before
  // confirmed().
  std::shared_ptr<IndexCacheCheck> cache_check;
  [[nodiscard]] bool from_cache() const noexcept { return cache_check != nullptr; }
  // Waits for that check: true when the cache file is whole and the files still hash to file_sha256
  // or kept their settled stamps (and when the index was not read from the cache).
  [[nodiscard]] bool confirmed() const;

  // Prompts (views.jsonl order).
  [[nodiscard]] std::size_t size() const noexcept { return views_.size(); }
  [[nodiscard]] std::string_view prompt_id(std::size_t i) const;
  [[nodiscard]] std::string_view base_id(std::size_t i) const;  // the prompt id before ":<view>"
  [[nodiscard]] std::string_view view(std::size_t i) const;
  [[nodiscard]] std::optional<std::string_view> family(std::size_t i) const;
  [[nodiscard]] std::string_view template_id(std::size_t i) const;
  // The expected answer in canonical form (num::Rational::str(): "p/q" or an integer).
  [[nodiscard]] std::string_view expected(std::size_t i) const;
  [[nodiscard]] std::string_view answer_unit(std::size_t i) const;
  // Index of a prompt id, nullopt when the benchmark has none.
  [[nodiscard]] std::optional<std::size_t> find(std::string_view prompt_id) const;
  // The same, trying prompt `hint` first (responses in benchmark order: the one after the last
  // found), so that records in order need no hash lookup.
  [[nodiscard]] std::optional<std::size_t> find(std::string_view prompt_id, std::size_t hint) const;
  // The hash the index's tables use for prompt and base ids (short_string_hash; callers on other
  // threads compute it for add_view / add_base).
  [[nodiscard]] static std::uint64_t hash_id(std::string_view id) noexcept;

  // Bases (bases.jsonl order).
  [[nodiscard]] std::size_t base_count() const noexcept { return base_offsets_.size(); }
  [[nodiscard]] std::string_view base_at(std::size_t b) const;
  [[nodiscard]] bool has_base(std::string_view base_id) const;
  // The position of a base id, trying base `hint` first (a benchmark's views follow its bases).
  [[nodiscard]] std::optional<std::size_t> find_base(std::string_view base_id, std::size_t hint) const;

  // Distinct view names and answer units, in order of first appearance in views.jsonl.
  [[nodiscard]] const std::vector<std::string>& view_names() const noexcept { return views_names_.names; }
  [[nodiscard]] const std::vector<std::string>& units() const noexcept { return units_.names; }
  // The unit of prompt i as an index into units().
  [[nodiscard]] std::size_t unit_id(std::size_t i) const { return views_.at(i).unit; }

  // Adds a base / a prompt (in file order) unless its id is there already (then adds nothing and
  // returns false); checks nothing else (the loaders check: find and has_base see what was added so
  // far). The prompt id must end in ":<view>"; expected must be canonical (Rational::str()). `hash`:
  // hash_id(id), computed here when not given.
  bool add_base(std::string_view base_id, std::optional<std::uint64_t> hash = std::nullopt);
  bool add_view(std::string_view prompt_id, std::string_view view, std::optional<std::string_view> family,
                std::string_view template_id, std::string_view expected, std::string_view answer_unit,
                std::optional<std::uint64_t> hash = std::nullopt);
  // Reserves room for about n prompts and b bases (untouched memory is not resident); with
  // `exact_views`, n is the number of prompts to come and their hash table is sized for it at once.
  void reserve(std::size_t n, std::size_t b, bool exact_views = false);
  // Asks the memory system for the hash-table slot of a prompt / base id to be added soon (its
  // hash_id): a loader adding records in file order calls it a few records ahead.
  void prefetch_view(std::uint64_t hash) const noexcept;
  void prefetch_base(std::uint64_t hash) const noexcept;
  // Ends the building: the hash tables keep the positions alone (see below). Lookups and adds work
  // the same before and after; the loaders call it once they have added everything.
  void finish();

  // The index of a loaded Benchmark (or of a restricted one: its bases and views only).
  [[nodiscard]] static BenchmarkIndex of(const Benchmark& bench);

 private:
  friend class IndexCacheFile;  // index_cache.cpp: the cache file's format
  struct Entry {
    std::uint32_t offset;     // prompt id, then the expected answer, in text_
    std::uint16_t id_length;  // prompt id bytes
    std::uint16_t expected_length;
    std::uint16_t view;         // into views_names_
    std::uint16_t family;       // into families_; kNone for null
    std::uint16_t template_id;  // into templates_
    std::uint16_t unit;         // into units_
  };
  static constexpr std::uint16_t kNone = 0xFFFF;
  // A table of distinct strings (view names, families, templates, units) with a hash index.
  struct Interned {
    std::vector<std::string> names;
    std::unordered_map<std::string, std::uint16_t, StringHash, std::equal_to<>> ids;
    std::uint16_t last = kNone;  // the previous result: consecutive prompts often share it
  };
  static std::uint16_t intern(Interned& table, std::string_view s, const char* what);
  [[nodiscard]] std::optional<std::size_t> base_position(std::string_view base_id) const;
  [[nodiscard]] std::string_view text(std::size_t offset, std::size_t length) const {
    return std::string_view(text_.data(), text_.size()).substr(offset, length);
  }
  // The large arrays, sized without zero-filling (core/large_array.hpp).
  core::LargeVector<char> text_;  // prompt ids and expected answers
  core::LargeVector<Entry> views_;
  Interned views_names_, families_, templates_, units_;
  std::string base_text_;
  core::LargeVector<std::uint32_t>
      base_offsets_;  // base b is base_text_[base_offsets_[b], base_offsets_[b + 1])
  // Open-addressing hash tables of indices + 1 (0: empty), sizes powers of two (position_insert,
  // core/string_set.hpp). While the index is built they are kept with each key's upper 32 hash bits
  // beside its position (view_tags_, base_tags_: a probe reads a key's text only when the bits
  // match); finish() keeps the positions alone in view_slots_ / base_slots_, in the same places
  // (the placement depends only on the hashes and the order of adding), which the cache file stores.
  // The lookups read the tagged tables when they are not empty.
  core::LargeVector<std::uint32_t> view_slots_, base_slots_;
  core::LargeVector<std::uint64_t> view_tags_, base_tags_;
  // The positions of a tagged table, in its places.
  static void positions_of(const core::LargeVector<std::uint64_t>& tags,
                           core::LargeVector<std::uint32_t>& slots);
};

// The benchmark index cache: the index of a benchmark folder kept in a binary file (one per folder,
// under <folder>/orbit-index/), so that a command scoring against the same benchmark again reads
// it instead of parsing bases.jsonl and views.jsonl. Its key is the folder's path; it records the
// SHA-256 of manifest.json, bases.jsonl and views.jsonl it was made from, and the file's own.
struct IndexCache {
  IndexCache() = default;
  explicit IndexCache(std::filesystem::path f, bool r = true) : folder(std::move(f)), read(r) {}
  std::filesystem::path folder;  // empty: no cache
  bool read = true;              // false: build from the files (and write the cache anew)
  // Told when the cache file is skipped for a reason the user should know (not a regular file).
  std::function<void(const std::string&)> warn;
};
// io::user_cache_dir() (the index cache is on by default for orbit score).
[[nodiscard]] IndexCache default_index_cache();

// The cache file of an index just built from the files, written on a thread of its own while the
// caller goes on (orbit score grades meanwhile): load_benchmark_index leaves the write to it when
// given one. start(b) begins the write of b (which must stay as it is, in place, until this object
// is destroyed: declare it after the index); the destructor waits for the write. A write that
// fails is left alone, as load_benchmark_index's own.
class IndexCacheWrite {
 public:
  IndexCacheWrite() = default;
  ~IndexCacheWrite() = default;  // the thread joins
  IndexCacheWrite(const IndexCacheWrite&) = delete;
  IndexCacheWrite& operator=(const IndexCacheWrite&) = delete;
  // True when load_benchmark_index left a write to start.
  [[nodiscard]] bool due() const noexcept { return static_cast<bool>(write_); }
  void start(const BenchmarkIndex& b);

 private:
  friend BenchmarkIndex load_benchmark_index(const std::filesystem::path& dir, std::size_t threads,
                                             const IndexCache& cache, IndexCacheWrite* later);
  std::function<void(const BenchmarkIndex&)> write_;
  std::jthread thread_;
};

// Loads the index of a benchmark directory (see above); throws Error like load_benchmark.
// `threads` check records side by side (0: one per core); the index does not depend on it.
// With a cache folder: an index read from a cache file whose manifest.json hash and file stamps
// (size, device, inode, modification and change times) match is returned at once with its check
// running (see BenchmarkIndex::cache_check); any other is built from the files and written to the
// cache (a cache that cannot be written is left alone: it only saves time), by `later` when given.
[[nodiscard]] BenchmarkIndex load_benchmark_index(const std::filesystem::path& dir, std::size_t threads = 0,
                                                  const IndexCache& cache = {},
                                                  IndexCacheWrite* later = nullptr);

// What benchmark.hpp offers for a Benchmark, for an index.
[[nodiscard]] std::map<std::string, std::string> manifest_file_hashes(const BenchmarkIndex& bench);
[[nodiscard]] io::OrderedJson generator_provenance(const BenchmarkIndex& bench);
void verify_benchmark(const BenchmarkIndex& bench);

}  // namespace numcheck::orbit
