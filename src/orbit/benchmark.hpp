#pragma once
// The orbit benchmark as files: bases.jsonl, views.jsonl and manifest.json in one directory
// (written by `numcheck orbit generate`, see docs/orbit.md). This header is the shared data model
// that generation, validation, scoring, running and reporting all use.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/large_array.hpp"
#include "core/string_set.hpp"
#include "io/json.hpp"
#include "num/rational.hpp"

namespace numcheck::orbit {

// View names: "canonical", the five families, and the paraphrases of the consensus study.
inline constexpr const char* kFamilies[] = {"fraction", "scientific", "percent", "words", "unit"};

struct Base {
  std::string base_id;                                        // "CV-0001"
  std::string template_id;                                    // "CV"
  std::string dimension;                                      // "volume"
  std::string canonical_unit;                                 // "L" ("" for dimensionless)
  std::vector<std::pair<std::string, num::Rational>> params;  // in the spec's parameter order
  num::Rational answer;
  std::vector<std::string> views;  // view names in rendering order, "canonical" first
  bool operator==(const Base&) const = default;
};

struct View {
  std::string prompt_id;  // "<base_id>:<view>"
  std::string base_id;
  std::string template_id;
  std::string view;                   // "canonical", a family name, "paraphrase1", "paraphrase2"
  std::optional<std::string> family;  // nullopt for canonical and paraphrases
  std::string prompt;
  num::Rational expected;
  std::string answer_unit;  // canonical unit the question asks for ("" for dimensionless)
  bool operator==(const View&) const = default;
};

struct Benchmark {
  std::filesystem::path dir;
  std::vector<Base> bases;                         // file order
  core::HugeVector<View> views;                    // file order (huge pages: see core/large_array.hpp)
  std::string manifest_json;                       // manifest.json as written
  std::map<std::string, std::string> file_sha256;  // "bases.jsonl" -> hex (as read now)
  // null for the whole benchmark; for a subset made by orbit::restrict (orbit/selection.hpp) the
  // recorded selection, which scores manifests and metrics.json carry.
  io::OrderedJson selection;

  [[nodiscard]] const View* find_view(std::string_view prompt_id) const;
  [[nodiscard]] const Base* find_base(std::string_view base_id) const;
  // The position of a prompt id in views, of a base id in bases.
  [[nodiscard]] std::optional<std::size_t> view_position(std::string_view prompt_id) const;
  [[nodiscard]] std::optional<std::size_t> base_position(std::string_view base_id) const;

  // The lookups above read two hash tables of positions (core/string_set.hpp's position_insert):
  // index_base(i) / index_view(i) add bases[i] / views[i], every earlier one being indexed already,
  // and return false, adding nothing, when its id is taken. reindex() indexes both vectors anew
  // (a benchmark built or changed by hand) and throws Error on a repeated id. reserve_index sizes
  // an empty index for that many ids, so that adding them never grows a table (does nothing to a
  // non-empty one).
  bool index_base(std::size_t i);
  bool index_view(std::size_t i);
  void reindex();
  void reserve_index(std::size_t n_bases, std::size_t n_views);

 private:
  // A hash's upper half and 1 + a position (0: empty); the ids stay in bases and views, so copying
  // a Benchmark copies a valid index.
  std::vector<std::uint64_t> base_slots_, view_slots_;
};

// Loads a benchmark directory; throws Error naming the file and line of any malformed record (the
// first in file order). `threads` check and build records side by side (0: one per core); the
// benchmark and the errors do not depend on it.
[[nodiscard]] Benchmark load_benchmark(const std::filesystem::path& dir, std::size_t threads = 0);

// The file hashes manifest.json recorded at generation ("files": {"bases.jsonl": {"sha256": ...}}),
// when present.
[[nodiscard]] std::map<std::string, std::string> manifest_file_hashes(const Benchmark& bench);

// What generated the benchmark, from its manifest.json: {"generator_version", "prompt_version",
// "seed", "spec_sha256"} (the keys the manifest has). Every output made from a benchmark carries it.
[[nodiscard]] io::OrderedJson generator_provenance(const Benchmark& bench);

// Refuses (Error naming the file) a benchmark whose files differ from what their manifest
// recorded: `orbit run`, `orbit score` and `orbit validate` never work on a changed benchmark.
void verify_benchmark(const Benchmark& bench);

namespace detail {  // the three above on a benchmark's parts (shared with orbit/index.hpp)
// <dir>/manifest.json as written, checked to be a JSON object (Error otherwise, kIo when the folder
// or the file is missing).
[[nodiscard]] std::string read_manifest(const std::filesystem::path& dir);
[[nodiscard]] std::map<std::string, std::string> manifest_file_hashes(const std::filesystem::path& dir,
                                                                      const std::string& manifest_json);
[[nodiscard]] io::OrderedJson generator_provenance(const std::filesystem::path& dir,
                                                   const std::string& manifest_json);
void verify_benchmark(const std::filesystem::path& dir, const std::string& manifest_json,
                      const std::map<std::string, std::string>& file_sha256);
}  // namespace detail

}  // namespace numcheck::orbit
