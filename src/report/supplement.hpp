#pragma once
// The supplement of an orbit study (the orbit paper's section 9): one deterministic ustar archive
// (io/tar.hpp) with every input a report was built from (benchmark files, score files and their
// manifests, the responses and run.json/repeat.json of each run, the consensus and claims section
// files), the report's settings, the original metrics.json and report.md, and a per-member
// SHA-256 manifest. `numcheck orbit supplement` writes it; `numcheck orbit report
// --from-supplement` rebuilds the report from it. See docs/report.md ("Supplement").
//
// Members are the inputs the report recorded (metrics.json: benchmark.dir, systems.*.scores_file,
// systems.*.manifest, extra_sections[].file(s), all relative to the report folder; the scores
// manifests' responses.path), named by their path relative to the report folder's parent (the
// study folder: for the main job's out/report, "bench/views.jsonl", "runs/reference/..."). A report
// rebuilt at the same place among the extracted members records the same relative paths and is
// the same bytes. Every input must therefore lie below the report folder's parent.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "io/json.hpp"
#include "io/tar.hpp"

namespace numcheck::report {

inline constexpr std::string_view kSupplementInfo = "supplement.json";
inline constexpr std::string_view kSupplementSums = "SHA256SUMS";
inline constexpr std::string_view kOriginalReportDir = "original-report";

// The archive for the report in `report_dir` (its metrics.json and report.md), reading the inputs
// at the paths metrics.json records, relative to `report_dir`. `examples` is the
// --examples the report was made with (metrics.json does not record it). Throws Error naming a
// missing input or an absolute / escaping path.
[[nodiscard]] std::string build_supplement(const std::filesystem::path& report_dir, std::size_t examples);

struct Supplement {
  io::OrderedJson info;  // supplement.json
  std::vector<io::TarMember> members;
};

// Reads and checks an archive: SHA256SUMS lists every other member exactly once with its hash,
// supplement.json is one written by build_supplement, and every path its report_args name (the
// report folder, the benchmark, scores, responses and section inputs) is a relative path inside the
// extraction folder (no absolute path, no ".." component). Throws Error naming the member or field
// otherwise.
[[nodiscard]] Supplement read_supplement(std::string_view archive, std::string_view where);

// Writes every member under `dir` (created), never outside it.
void extract_supplement(const Supplement& s, const std::filesystem::path& dir);

}  // namespace numcheck::report
