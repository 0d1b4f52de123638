#pragma once
// What every verifier writes (`numcheck claims verify --method ... --out DIR`):
//   DIR/predictions.jsonl  {"id", "claim", "label"}: what `numcheck claims evaluate --pred` reads;
//                          a verdict that could not be obtained is written as label "unparseable"
//                          (evaluate counts it wrong in its own column, never drops it)
//   DIR/scores.jsonl       {"id", "label", "scores": {"True": p, "False": p, "Conflicting": p},
//                          "gold"?}: per-class scores when the method has them
//   DIR/manifest.json      method, inputs and their SHA-256, numcheck version, counts, settings
#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "claims/labels.hpp"
#include "io/json.hpp"

namespace numcheck::verify {

inline constexpr std::string_view kUnparseable = "unparseable";

struct Prediction {
  std::string id, claim;
  std::optional<claims::Verdict> label;  // nullopt: no verdict (written as "unparseable")
  std::optional<std::array<double, claims::kVerdictCount>> scores;  // indexed by Verdict
  std::optional<claims::Verdict> gold;
};

// Writes the three files atomically; `manifest` gets counts and numcheck_version added.
void write_predictions(const std::filesystem::path& dir, const std::vector<Prediction>& preds,
                       io::OrderedJson manifest);

}  // namespace numcheck::verify
