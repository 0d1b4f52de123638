#pragma once
// Benchmark generation: draws each template's bases from its own private stream
// Rng(seed, template id), rejects duplicate argument tuples and tuples that break the template's
// constraints, assigns view eligibility by fixed quotas (the consensus subset first, the rest by a
// shuffle of the template's stream), and renders every view. Output is a pure function of
// (spec, seed, paraphrases): byte-identical on every machine.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "num/units.hpp"
#include "orbit/spec.hpp"

namespace numcheck::orbit {

inline constexpr const char* kGeneratorVersion = "1.0.0";
inline constexpr std::uint64_t kDefaultSeed = 20260725;
inline constexpr const char* kBenchmarkFormat = "numcheck-orbit-benchmark";

struct GenerateOptions {
  std::uint64_t seed = kDefaultSeed;
  bool paraphrases = false;  // also write paraphrase1/paraphrase2 for each template's consensus subset
  // Threads rendering bases (1: the calling thread only; 0: one per core). The output is the same
  // whatever the count: runs of 128 bases are rendered in parallel and written in order. One by
  // default: on the 2-core development machine a second thread made the default benchmark slower
  // (45 against 42 ms) and 1,006,200 prompts 7% faster for 43% more CPU (docs/performance.md).
  std::size_t threads = 1;
};

// The three files of a benchmark, in memory.
struct GeneratedBenchmark {
  std::string bases_jsonl;
  std::string views_jsonl;
  std::string manifest_json;
  std::size_t bases = 0;
  std::size_t prompts = 0;
};

// Where streamed generation sends the two JSONL files, in order, in pieces of whole lines (the
// lines of up to 128 bases each: about 25 KB of bases.jsonl and 90 KB of views.jsonl for the
// default spec).
struct GenerateSink {
  std::function<void(std::string_view)> bases;
  std::function<void(std::string_view)> views;
};

// Streams the benchmark to `sink` (memory stays bounded whatever the spec's size) and returns the
// manifest, whose hashes cover exactly the bytes sent. bases_jsonl/views_jsonl stay empty.
[[nodiscard]] GeneratedBenchmark generate_stream(
    const OrbitSpec& spec, const GenerateOptions& opts, const GenerateSink& sink,
    const num::UnitRegistry& units = num::UnitRegistry::builtin());

// The whole benchmark in memory.
[[nodiscard]] GeneratedBenchmark generate(const OrbitSpec& spec, const GenerateOptions& opts = {},
                                          const num::UnitRegistry& units = num::UnitRegistry::builtin());

// Writes bases.jsonl, views.jsonl, then manifest.json (each atomically) into dir, creating it.
void write_benchmark(const std::filesystem::path& dir, const GeneratedBenchmark& g);

// Generates straight into dir: the JSONL files are streamed to temporary files that are renamed
// into place, and manifest.json is written last. Returns the counts and the manifest.
GeneratedBenchmark generate_to_dir(const std::filesystem::path& dir, const OrbitSpec& spec,
                                   const GenerateOptions& opts = {},
                                   const num::UnitRegistry& units = num::UnitRegistry::builtin());

}  // namespace numcheck::orbit
