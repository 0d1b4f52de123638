#pragma once
// Validation of a generated benchmark directory: manifest hashes and counts, record consistency
// against the spec embedded in the manifest, every expected answer round-tripping through the
// strict answer parser, and the reference solver reaching every label from the prompt text alone.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "orbit/benchmark.hpp"

namespace numcheck::orbit {

struct ValidationIssue {
  std::string where;  // a prompt id ("CV-0001:fraction"), a base id, or a file name
  std::string check;  // "manifest", "counts", "base", "view", "roundtrip", "solver"
  std::string message;
};

struct ValidationReport {
  std::size_t bases = 0;
  std::size_t prompts = 0;
  std::size_t solved = 0;       // prompts the solver reached exactly
  std::size_t round_trips = 0;  // expected answers the strict parser read back exactly
  std::vector<ValidationIssue> issues;
  [[nodiscard]] bool ok() const noexcept { return issues.empty(); }
};

// progress(done, total) is called now and then while prompts are checked.
[[nodiscard]] ValidationReport validate_benchmark(
    const Benchmark& b, const std::function<void(std::size_t, std::size_t)>& progress = {});

}  // namespace numcheck::orbit
