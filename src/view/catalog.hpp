#pragma once
// What a folder given to `numcheck view` holds: found once at start by walking it (three levels
// deep, symbolic links not followed). The API names everything by the ids listed here (a folder's
// path relative to the root, "." for the root itself); it never takes a path from a request.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "io/json.hpp"

namespace numcheck::view {

// A run folder: responses.jsonl (+ run.json), scores.jsonl when `orbit score` has run.
struct RunSource {
  std::string id;
  std::string name;  // run.json's system_name, else its model, else the folder's name
  std::filesystem::path responses;
  std::optional<std::filesystem::path> scores;
  std::optional<std::filesystem::path> errors;
  io::OrderedJson info;  // a few run.json fields (model, simulated, complete, counts)
};

// A report folder (metrics.json, report.html).
struct ReportSource {
  std::string id;
  std::filesystem::path dir;
  bool html = false;
};

// A claim file: claim orbits (claims.jsonl of `claims orbit generate`), an evidence file (records
// with "claim" and "evidence"), or a verifier's verdicts (predictions.jsonl of `claims verify`).
struct ClaimFile {
  enum class Kind { kOrbits, kEvidence, kPredictions };
  Kind kind = Kind::kEvidence;
  std::string id;  // relative path of the file
  std::filesystem::path path;
};

struct Catalog {
  std::filesystem::path root;
  std::vector<RunSource> runs;
  std::vector<ReportSource> reports;
  std::vector<ClaimFile> claims;

  [[nodiscard]] const RunSource* run(std::string_view id) const;
  [[nodiscard]] const ReportSource* report(std::string_view id) const;
  [[nodiscard]] const ClaimFile* claim_file(std::string_view id) const;
};

// Walks `root` (a run folder, a folder of run folders, a report or claims output folder). Throws
// Error naming the folder when it is not one.
[[nodiscard]] Catalog discover(const std::filesystem::path& root);

// The catalog as the API lists it.
[[nodiscard]] io::OrderedJson catalog_json(const Catalog& c);

}  // namespace numcheck::view
