#include "report/supplement.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/version.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"
#include "report/metrics_model.hpp"

namespace numcheck::report {

namespace {

using OJ = io::OrderedJson;
namespace fs = std::filesystem;
constexpr std::size_t kMaxMember = std::size_t{1} << 32;

// Where the members live: the report folder's parent (the study folder, e.g. `out/` of the main
// job), so "../bench" recorded by the report in out/report is the member "bench".
struct Root {
  fs::path dir;        // absolute, normalized
  std::string report;  // the report folder relative to dir ("report")
};

// A path on disk as a member name: relative to the root, normalized, never outside it.
std::string member_name(const Root& root, const fs::path& on_disk, const std::string& what) {
  const fs::path rel = fs::absolute(on_disk).lexically_normal().lexically_relative(root.dir);
  std::string s = rel.generic_string();
  if (rel.empty() || s == ".." || s.rfind("../", 0) == 0) {
    fail(
        "{} ({}) is outside {}, the folder that holds the report: a supplement keeps every input "
        "below the report folder's parent (as the main job's out/ does)",
        what, on_disk.string(), root.dir.string());
  }
  io::check_member_path(s, what);
  return s;
}

// Every path of report_args names a place inside the extraction folder: a relative member path
// without "..", "." or empty components (io::check_member_path), never absolute.
void check_report_args(const OJ& args, const std::string& where) {
  auto check = [&](const OJ& v, const std::string& key) {
    if (!v.is_string()) fail("{}: field '{}' must be a path (a string)", where, key);
    const std::string path = v.get<std::string>();
    try {
      io::check_member_path(path, "");
    } catch (const Error&) {
      fail(
          "{}: field '{}' is '{}', a path outside the archive's folder (absolute, or with an empty, '.' "
          "or '..' component): refused",
          where, key, path);
    }
  };
  for (const char* key : {"report_dir", "bench"}) {
    if (args.contains(key)) check(args[key], key);
  }
  for (const char* key : {"consensus", "claims"}) {
    if (args.contains(key) && !args[key].is_null()) check(args[key], key);
  }
  for (const char* key : {"scores", "responses", "claim_orbits"}) {
    if (!args.contains(key)) continue;
    if (!args[key].is_array()) fail("{}: field '{}' must be an array of paths", where, key);
    for (std::size_t i = 0; i < args[key].size(); ++i) check(args[key][i], fmt::format("{}[{}]", key, i));
  }
}

}  // namespace

namespace {

// The files a supplement holds: member name -> path on disk.
class MemberFiles {
 public:
  MemberFiles(const fs::path& report_dir, const fs::path& metrics_path)
      : report_dir_(report_dir), metrics_path_(metrics_path) {
    const fs::path abs_report = fs::absolute(report_dir).lexically_normal();
    root_ = Root{
        abs_report.has_filename() ? abs_report.parent_path() : abs_report.parent_path().parent_path(), {}};
    root_.report = abs_report.lexically_relative(root_.dir).generic_string();
  }

  [[nodiscard]] const std::string& report_member() const { return root_.report; }
  [[nodiscard]] const std::map<std::string, fs::path>& files() const { return files_; }

  std::string add_on_disk(const fs::path& on_disk, const std::string& what) {
    std::string name = member_name(root_, on_disk, what);
    if (!fs::is_regular_file(on_disk))
      fail("{}: {} not found (as recorded in {})", what, on_disk.string(), metrics_path_.string());
    files_[name] = on_disk;
    return name;
  }
  // `recorded` is relative to the report folder (as metrics.json records every path).
  std::string add(const std::string& recorded, const std::string& what) {
    const fs::path p(recorded);
    return add_on_disk(p.is_absolute() ? p : report_dir_ / p, what);
  }

 private:
  fs::path report_dir_, metrics_path_;
  Root root_;
  std::map<std::string, fs::path> files_;
};

// A system's scores, its scores manifest, and the responses (with the run folder's run.json and
// repeat.json) the report showed examples from; returns the responses' member name, if found. The
// scores manifest records the responses path as `orbit score` was given it: tried as is, then
// beside the scores manifest's folder.
std::optional<std::string> add_system(MemberFiles& files, const fs::path& report_dir, const SystemMetrics& s,
                                      OJ& scores) {
  const std::string& name = s.name;
  scores.push_back(files.add(s.scores_file, "the scores of " + name));
  if (!s.manifest) return std::nullopt;
  const std::string& sidecar_recorded = *s.manifest;
  files.add(sidecar_recorded, "the scores manifest of " + name);
  const fs::path sidecar =
      fs::path(sidecar_recorded).is_absolute() ? fs::path(sidecar_recorded) : report_dir / sidecar_recorded;
  const OJ sc = io::read_ordered_json_file(sidecar);
  std::optional<std::string> resp;
  if (sc.contains("responses") && sc["responses"].is_object() && sc["responses"].contains("path") &&
      sc["responses"]["path"].is_string()) {
    resp = sc["responses"]["path"].get<std::string>();
  } else if (sc.contains("responses") && sc["responses"].is_string()) {
    resp = sc["responses"].get<std::string>();
  }
  if (!resp) return std::nullopt;
  fs::path rp(*resp);
  if (!fs::is_regular_file(rp)) rp = sidecar.parent_path() / fs::path(*resp).filename();
  if (!fs::is_regular_file(rp)) return std::nullopt;
  std::string member = files.add_on_disk(rp, "the responses of " + name);
  for (const char* f : {"run.json", "repeat.json"}) {
    const fs::path p = rp.parent_path() / f;
    if (fs::is_regular_file(p)) files.add_on_disk(p, fmt::format("the {} of {}", f, name));
  }
  return member;
}

// The report's extra sections (study, claim orbits, consensus, claims): their files, and the
// arguments that rebuild them.
void add_extra_sections(MemberFiles& files, const MetricsModel& m, const fs::path& metrics_path, OJ& args) {
  args["consensus"] = nullptr;
  args["claims"] = nullptr;
  args["claim_orbits"] = OJ::array();
  if (!m.extra_sections.is_array()) return;
  for (std::size_t i = 0; i < m.extra_sections.size(); ++i) {
    const auto e = io::OrderedRecord::of(m.extra_sections[i],
                                         fmt::format("{}: extra_sections[{}]", metrics_path.string(), i));
    const std::string section = e.string("section");
    if (section == "study") {  // `orbit study`'s section: no input file, rebuilt from its record
      args["study"] = m.extra_sections[i];
      continue;
    }
    if (e.contains("files")) {  // claim orbits: one metrics.json per folder
      for (const auto& f : e.objects("files")) {
        const std::string name = files.add(f.string("file"), "the " + section + " section file");
        args["claim_orbits"].push_back(fs::path(name).parent_path().generic_string());
      }
      continue;
    }
    const std::string name = files.add(e.string("file"), "the " + section + " section file");
    if (section == "consensus") args["consensus"] = fs::path(name).parent_path().generic_string();
    if (section == "claims") args["claims"] = name;
  }
}

// The archive: the info member and the checksums first, then every member in path order.
std::string pack(const MemberFiles& files, const fs::path& report_dir, const OJ& args) {
  std::vector<io::TarMember> members;
  members.reserve(files.files().size() + 4);  // the files, the two report files, the info and the sums
  for (const auto& [name, path] : files.files()) members.push_back({name, io::read_file(path, kMaxMember)});
  for (const char* f : {"metrics.json", "report.md"})
    members.push_back(
        {fmt::format("{}/{}", kOriginalReportDir, f), io::read_file(report_dir / f, kMaxMember)});
  std::sort(members.begin(), members.end(), [](const auto& a, const auto& b) { return a.path < b.path; });

  OJ info = OJ::object();
  info["kind"] = "numcheck.orbit_supplement";
  info["version"] = 1;
  info["numcheck_version"] = kVersion;
  info["report_args"] = args;
  OJ list = OJ::array();
  for (const auto& mem : members) {
    OJ e = OJ::object();
    e["path"] = mem.path;
    e["bytes"] = mem.bytes.size();
    e["sha256"] = io::sha256_hex(mem.bytes);
    list.push_back(e);
  }
  info["members"] = list;
  members.insert(members.begin(), io::TarMember{std::string(kSupplementInfo), io::to_pretty(info)});
  std::string sums;
  std::vector<std::pair<std::string, std::string>> lines;
  lines.reserve(members.size());
  for (const auto& mem : members) lines.emplace_back(mem.path, io::sha256_hex(mem.bytes));
  std::sort(lines.begin(), lines.end());
  for (const auto& [path, hex] : lines) sums += fmt::format("{}  {}\n", hex, path);
  members.insert(members.begin(), io::TarMember{std::string(kSupplementSums), sums});
  return io::write_ustar(members);
}

}  // namespace

std::string build_supplement(const fs::path& report_dir, std::size_t examples) {
  const fs::path metrics_path = report_dir / "metrics.json";
  const MetricsModel m = metrics_from_json(io::read_ordered_json_file(metrics_path), metrics_path.string());
  MemberFiles files(report_dir, metrics_path);
  const std::string& bench = m.benchmark.dir;
  std::string bench_member;
  for (const char* f : {"bases.jsonl", "views.jsonl", "manifest.json"}) {
    bench_member =
        fs::path(files.add((fs::path(bench) / f).string(), "the benchmark")).parent_path().generic_string();
  }
  OJ args = OJ::object();
  args["report_dir"] = files.report_member();
  args["bench"] = bench_member;
  OJ scores = OJ::array(), names = OJ::array(), responses = OJ::array();
  for (const SystemMetrics& s : m.systems) {
    names.push_back(s.name);
    if (auto r = add_system(files, report_dir, s, scores)) responses.push_back(*r);
  }
  args["scores"] = scores;
  args["names"] = names;
  // The responses for the examples, given explicitly when rebuilding (the scores manifests record
  // them as `orbit score` was given them, relative to where it ran); only when every system has one.
  args["responses"] = responses.size() == scores.size() ? responses : OJ::array();
  args["bootstrap"] = m.settings.bootstrap_draws;
  args["seed"] = m.settings.seed;
  args["level"] = m.settings.level;
  args["examples"] = examples;
  add_extra_sections(files, m, metrics_path, args);
  return pack(files, report_dir, args);
}

Supplement read_supplement(std::string_view archive, std::string_view where) {
  Supplement s;
  s.members = io::read_ustar(archive, where);
  std::map<std::string, const io::TarMember*> by;
  for (const auto& m : s.members) by[m.path] = &m;
  auto sums = by.find(std::string(kSupplementSums));
  if (sums == by.end())
    fail("{}: no {} member: not a supplement of `numcheck orbit supplement`", where, kSupplementSums);
  std::set<std::string> listed;
  const std::string& text = sums->second->bytes;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto nl = text.find('\n', i);
    if (nl == std::string::npos) fail("{}: {}: the last line is not terminated", where, kSupplementSums);
    const std::string line = text.substr(i, nl - i);
    i = nl + 1;
    if (line.size() < 67 || line.substr(64, 2) != "  ")
      fail("{}: {}: malformed line '{}'", where, kSupplementSums, line);
    const std::string hex = line.substr(0, 64), path = line.substr(66);
    auto it = by.find(path);
    if (it == by.end())
      fail("{}: {} lists '{}', which the archive does not hold", where, kSupplementSums, path);
    if (!listed.insert(path).second) fail("{}: {} lists '{}' twice", where, kSupplementSums, path);
    if (io::sha256_hex(it->second->bytes) != hex) {
      fail("{}: member '{}' does not match its SHA-256 in {} (changed or damaged)", where, path,
           kSupplementSums);
    }
  }
  for (const auto& m : s.members) {
    if (m.path != kSupplementSums && !listed.count(m.path)) {
      fail("{}: member '{}' is not listed in {}", where, m.path, kSupplementSums);
    }
  }
  auto info = by.find(std::string(kSupplementInfo));
  if (info == by.end()) fail("{}: no {} member", where, kSupplementInfo);
  s.info = io::parse_ordered_json(info->second->bytes, fmt::format("{}:{}", where, kSupplementInfo));
  if (!s.info.is_object() || s.info.value("kind", std::string()) != "numcheck.orbit_supplement" ||
      !s.info.contains("report_args") || !s.info["report_args"].is_object()) {
    fail("{}: {} is not one written by `numcheck orbit supplement`", where, kSupplementInfo);
  }
  check_report_args(s.info["report_args"], fmt::format("{}: {} report_args", where, kSupplementInfo));
  return s;
}

void extract_supplement(const Supplement& s, const fs::path& dir) {
  for (const auto& m : s.members) {
    io::check_member_path(m.path, "supplement");
    const fs::path p = dir / fs::path(m.path);
    fs::create_directories(p.parent_path());
    io::write_file_atomic(p, m.bytes);
  }
}

}  // namespace numcheck::report
