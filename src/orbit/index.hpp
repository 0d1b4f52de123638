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
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/string_set.hpp"
#include "io/json.hpp"
#include "orbit/benchmark.hpp"

namespace numcheck::orbit {

class BenchmarkIndex {
 public:
  std::filesystem::path dir;
  std::string manifest_json;                       // manifest.json as written
  std::map<std::string, std::string> file_sha256;  // "bases.jsonl" -> hex (as read now)
  io::OrderedJson selection;                       // as Benchmark::selection

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

  // Bases (bases.jsonl order).
  [[nodiscard]] std::size_t base_count() const noexcept { return base_offsets_.size(); }
  [[nodiscard]] std::string_view base_at(std::size_t b) const;
  [[nodiscard]] bool has_base(std::string_view base_id) const;

  // Distinct view names and answer units, in order of first appearance in views.jsonl.
  [[nodiscard]] const std::vector<std::string>& view_names() const noexcept { return views_names_.names; }
  [[nodiscard]] const std::vector<std::string>& units() const noexcept { return units_.names; }
  // The unit of prompt i as an index into units().
  [[nodiscard]] std::size_t unit_id(std::size_t i) const { return views_.at(i).unit; }

  // Adds a base / a prompt (in file order); checks nothing (the loaders check: find and has_base
  // see what was added so far). The prompt id must end in ":<view>"; expected must be canonical
  // (Rational::str()).
  void add_base(std::string_view base_id);
  void add_view(std::string_view prompt_id, std::string_view view, std::optional<std::string_view> family,
                std::string_view template_id, std::string_view expected, std::string_view answer_unit);
  // Reserves room for about n prompts and b bases (untouched memory is not resident).
  void reserve(std::size_t n, std::size_t b);

  // The index of a loaded Benchmark (or of a restricted one: its bases and views only).
  [[nodiscard]] static BenchmarkIndex of(const Benchmark& bench);

 private:
  struct Entry {
    std::uint32_t offset = 0;     // prompt id, then the expected answer, in text_
    std::uint16_t id_length = 0;  // prompt id bytes
    std::uint16_t expected_length = 0;
    std::uint16_t view = 0;         // into views_names_
    std::uint16_t family = 0;       // into families_; kNone for null
    std::uint16_t template_id = 0;  // into templates_
    std::uint16_t unit = 0;         // into units_
  };
  static constexpr std::uint16_t kNone = 0xFFFF;
  // A table of distinct strings (view names, families, templates, units) with a hash index.
  struct Interned {
    std::vector<std::string> names;
    std::unordered_map<std::string, std::uint16_t, StringHash, std::equal_to<>> ids;
    std::uint16_t last = kNone;  // the previous result: consecutive prompts often share it
  };
  static std::uint16_t intern(Interned& table, std::string_view s, const char* what);
  [[nodiscard]] std::string_view text(std::size_t offset, std::size_t length) const {
    return std::string_view(text_).substr(offset, length);
  }
  // Inserts `index` (of a key `key`) into an open-addressing table, growing it at half full.
  template <typename KeyOf>
  static void insert_slot(std::vector<std::uint32_t>& slots, std::size_t index, std::string_view key,
                          const KeyOf& key_of);
  template <typename KeyOf>
  [[nodiscard]] static std::optional<std::size_t> find_slot(const std::vector<std::uint32_t>& slots,
                                                            std::string_view key, const KeyOf& key_of);

  std::string text_;  // prompt ids and expected answers
  std::vector<Entry> views_;
  Interned views_names_, families_, templates_, units_;
  std::string base_text_;
  std::vector<std::uint32_t> base_offsets_;  // base b is base_text_[base_offsets_[b], base_offsets_[b + 1])
  // Open-addressing hash tables of indices + 1 (0: empty), sizes powers of two.
  std::vector<std::uint32_t> view_slots_, base_slots_;
};

// Loads the index of a benchmark directory (see above); throws Error like load_benchmark.
// `threads` check records side by side (0: one per core); the index does not depend on it.
[[nodiscard]] BenchmarkIndex load_benchmark_index(const std::filesystem::path& dir, std::size_t threads = 0);

// What benchmark.hpp offers for a Benchmark, for an index.
[[nodiscard]] std::map<std::string, std::string> manifest_file_hashes(const BenchmarkIndex& bench);
[[nodiscard]] io::OrderedJson generator_provenance(const BenchmarkIndex& bench);
void verify_benchmark(const BenchmarkIndex& bench);

}  // namespace numcheck::orbit
