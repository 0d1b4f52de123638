#pragma once
// Reports on a subset of the benchmark (orbit/selection.hpp): the selection comes from the scores
// manifests (`orbit score` records the run's selection there), every system of one report must
// have been scored on the same selection, and the report states its scope.
#include <filesystem>
#include <string>
#include <vector>

#include "io/json.hpp"
#include "orbit/benchmark.hpp"

namespace numcheck::report {

// The benchmark restricted to the selection recorded in the scores' sidecar manifests (unchanged
// when none records one). Throws Error naming both files when two scores files were made on
// different selections (a subset and the whole benchmark count as different).
[[nodiscard]] orbit::Benchmark scope_to_scores(orbit::Benchmark bench,
                                               const std::vector<std::filesystem::path>& scores);

// One sentence for the report: "Scope: a selection of 20 of 3600 bases (...): every denominator
// counts only the selected bases and prompts; prompts that were not asked count nowhere."
[[nodiscard]] std::string selection_note(const io::OrderedJson& selection);

}  // namespace numcheck::report
