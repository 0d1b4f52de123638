#pragma once
// What compute_metrics (report/metrics.hpp) and the paper analyses (report/analyses.hpp) share:
// the report's options and the benchmark indexed by base. Both include this header; metrics.cpp
// calls into the analyses, never the other way round.
#include <cstddef>
#include <cstdint>  // SIZE_MAX
#include <string>
#include <vector>

namespace numcheck::report {

inline constexpr std::size_t kNone = SIZE_MAX;  // no view or base at this position
inline constexpr std::size_t kFamilyCount = 5;  // the orbit families (orbit::kFamilies)

struct ReportOptions {
  std::size_t bootstrap_draws = 10000;
  std::uint64_t seed = 20260725;
  unsigned threads = 0;  // 0 = all cores
  double level = 0.95;   // interval level (bootstrap percentile and Wilson)
};

// Index of the benchmark by base: its orbit views (indices into Benchmark::views).
struct OrbitLayout {
  struct BaseViews {
    std::size_t base = 0;           // index into Benchmark::bases
    std::size_t canonical = kNone;  // view index
    std::size_t family[kFamilyCount] = {kNone, kNone, kNone, kNone, kNone};
    std::vector<std::size_t> orbit;  // canonical first, then families in kFamilies order
  };
  std::vector<BaseViews> bases;                        // every base, in file order
  std::vector<std::vector<std::size_t>> family_bases;  // per family: positions in `bases`
  std::vector<std::string> templates;                  // in order of first appearance
  std::vector<std::string> views;                      // "canonical" and the families that occur
};

}  // namespace numcheck::report
