#include "view/catalog.hpp"

#include <algorithm>
#include <array>
#include <string_view>
#include <system_error>

#include "core/error.hpp"
#include "io/files.hpp"
#include "view/lines.hpp"
#include "view/records.hpp"

namespace numcheck::view {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxDepth = 3;
// The files a run, claim-orbit or verifier folder has: never taken for an evidence file.
constexpr std::array<std::string_view, 6> kKnownFiles = {
    "responses.jsonl", "scores.jsonl", "errors.jsonl", "claims.jsonl", "predictions.jsonl", "verdicts.jsonl"};

std::string relative_id(const fs::path& root, const fs::path& p) {
  const std::string r = p.lexically_relative(root).generic_string();
  return r.empty() ? "." : r;
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// run.json's few fields the listing shows (a bad run.json is shown as such, never fatal).
RunSource run_source(const fs::path& root, const fs::path& dir) {
  RunSource r;
  r.id = relative_id(root, dir);
  r.name = dir == root ? fs::absolute(dir).lexically_normal().filename().string() : r.id;
  if (r.name.empty()) r.name = r.id;
  r.responses = dir / "responses.jsonl";
  if (is_file(dir / "scores.jsonl")) r.scores = dir / "scores.jsonl";
  if (is_file(dir / "errors.jsonl")) r.errors = dir / "errors.jsonl";
  r.info = io::OrderedJson::object();
  const fs::path run_json = dir / "run.json";
  std::error_code ec;
  if (!is_file(run_json) || fs::file_size(run_json, ec) > (std::uintmax_t{16} << 20)) return r;
  auto j = io::try_parse_ordered_json(io::read_file(run_json), run_json.string());
  if (!j.ok() || !j.value->is_object()) {
    r.info["run_json_error"] = j.ok() ? "not a JSON object" : j.error.message;
    return r;
  }
  for (const char* key : {"system_name", "model", "simulated", "complete", "kind", "counts"}) {
    if (j.value->contains(key)) r.info[key] = (*j.value)[key];
  }
  for (const char* key : {"system_name", "model"}) {
    const auto it = j.value->find(key);
    if (it != j.value->end() && it->is_string() && !it->get_ref<const std::string&>().empty()) {
      r.name = it->get<std::string>();
      break;
    }
  }
  return r;
}

// Whether a .jsonl file's first record has "claim" and "evidence" (an evidence file).
bool looks_like_evidence(const fs::path& p) {
  try {
    LineReader reader(p, 0, std::size_t{1} << 20);
    LineParser parser;
    FileLine line;
    for (std::size_t n = 1; n <= 3 && reader.next(line); ++n) {
      const auto kind = parser.parse(line, n, p.filename().string(), reader.readable_after(line));
      if (kind == LineParser::Kind::kBlank) continue;
      if (kind != LineParser::Kind::kRecord) return false;
      const io::LineRecord r = parser.record();
      const io::FlatValue* ev = r.find("evidence");
      return r.find("claim") != nullptr && ev != nullptr && ev->is_array();
    }
  } catch (const Error&) {
  }
  return false;
}

void look_at(const fs::path& root, const fs::path& dir, Catalog& c) {
  if (is_file(dir / "responses.jsonl")) c.runs.push_back(run_source(root, dir));
  if (is_file(dir / "metrics.json") || is_file(dir / "report.html"))
    c.reports.push_back({relative_id(root, dir), dir, is_file(dir / "report.html")});
  if (is_file(dir / "claims.jsonl") && is_file(dir / "manifest.json"))
    c.claims.push_back(
        {ClaimFile::Kind::kOrbits, relative_id(root, dir / "claims.jsonl"), dir / "claims.jsonl"});
  if (is_file(dir / "predictions.jsonl"))
    c.claims.push_back({ClaimFile::Kind::kPredictions, relative_id(root, dir / "predictions.jsonl"),
                        dir / "predictions.jsonl"});
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const fs::path& p = e.path();
    const std::string name = p.filename().string();
    if (p.extension() != ".jsonl" || !is_file(p)) continue;
    if (std::find(kKnownFiles.begin(), kKnownFiles.end(), name) != kKnownFiles.end()) continue;
    files.push_back(p);
  }
  std::sort(files.begin(), files.end());
  for (const auto& p : files) {
    if (looks_like_evidence(p)) c.claims.push_back({ClaimFile::Kind::kEvidence, relative_id(root, p), p});
  }
}

void walk(const fs::path& root, const fs::path& dir, int depth, Catalog& c) {
  look_at(root, dir, c);
  if (depth >= kMaxDepth) return;
  std::vector<fs::path> subdirs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::error_code ec2;
    if (e.is_directory(ec2) && !e.is_symlink(ec2)) subdirs.push_back(e.path());
  }
  std::sort(subdirs.begin(), subdirs.end());
  for (const auto& d : subdirs) walk(root, d, depth + 1, c);
}

const char* kind_name(ClaimFile::Kind k) {
  switch (k) {
    case ClaimFile::Kind::kOrbits:
      return "orbits";
    case ClaimFile::Kind::kPredictions:
      return "predictions";
    default:
      return "evidence";
  }
}

}  // namespace

const RunSource* Catalog::run(std::string_view id) const {
  for (const auto& r : runs)
    if (r.id == id) return &r;
  return nullptr;
}

const ReportSource* Catalog::report(std::string_view id) const {
  for (const auto& r : reports)
    if (r.id == id) return &r;
  return nullptr;
}

const ClaimFile* Catalog::claim_file(std::string_view id) const {
  for (const auto& f : claims)
    if (f.id == id) return &f;
  return nullptr;
}

Catalog discover(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) fail(ErrorCode::kIo, "{}: not a folder", root.string());
  Catalog c;
  c.root = root;
  walk(root, root, 0, c);
  if (c.runs.empty() && c.reports.empty() && c.claims.empty())
    fail(
        "{}: no run folder (responses.jsonl), report (metrics.json, report.html) or claims file "
        "(claims.jsonl, predictions.jsonl, an evidence file) within {} levels",
        root.string(), kMaxDepth);
  return c;
}

io::OrderedJson catalog_json(const Catalog& c) {
  io::OrderedJson j = io::OrderedJson::object();
  j["root"] = fs::absolute(c.root).lexically_normal().filename().string();
  io::OrderedJson runs = io::OrderedJson::array();
  for (const auto& r : c.runs) {
    std::error_code ec;
    const auto bytes = fs::file_size(r.responses, ec);
    runs.push_back({{"id", r.id},
                    {"name", r.name},
                    {"responses_bytes", ec ? 0 : bytes},
                    {"scored", r.scores.has_value()},
                    {"errors_file", r.errors.has_value()},
                    {"info", r.info}});
  }
  j["runs"] = std::move(runs);
  io::OrderedJson reports = io::OrderedJson::array();
  for (const auto& r : c.reports) reports.push_back({{"id", r.id}, {"html", r.html}});
  j["reports"] = std::move(reports);
  io::OrderedJson claims = io::OrderedJson::array();
  for (const auto& f : c.claims) claims.push_back({{"id", f.id}, {"kind", kind_name(f.kind)}});
  j["claims"] = std::move(claims);
  return j;
}

}  // namespace numcheck::view
