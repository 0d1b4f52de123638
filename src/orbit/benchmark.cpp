#include "orbit/benchmark.hpp"

#include <set>

#include "core/error.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "io/sha256.hpp"

namespace numcheck::orbit {

namespace {

using OJ = io::OrderedJson;

std::string where_of(const std::filesystem::path& file, std::size_t line) {
  return fmt::format("{}:{}", file.string(), line);
}

const OJ& req(const OJ& obj, std::string_view key, std::string_view where) {
  auto it = obj.find(key);
  if (it == obj.end()) fail("{}: missing field '{}'", where, key);
  return *it;
}

std::string req_string(const OJ& obj, std::string_view key, std::string_view where) {
  const OJ& v = req(obj, key, where);
  if (!v.is_string()) fail("{}: field '{}' must be a string", where, key);
  return v.get<std::string>();
}

num::Rational req_rational(const OJ& obj, std::string_view key, std::string_view where) {
  const std::string s = req_string(obj, key, where);
  auto r = num::Rational::from_string(s);
  if (!r) fail("{}: field '{}' must be an exact rational ('p/q' or an integer), got '{}'", where, key, s);
  return *r;
}

std::vector<std::string> req_string_list(const OJ& obj, std::string_view key, std::string_view where) {
  const OJ& v = req(obj, key, where);
  if (!v.is_array()) fail("{}: field '{}' must be a list of strings", where, key);
  std::vector<std::string> out;
  out.reserve(v.size());
  for (const auto& e : v) {
    if (!e.is_string()) fail("{}: field '{}' must be a list of strings", where, key);
    out.push_back(e.get<std::string>());
  }
  return out;
}

// Reads a JSONL file record by record; a torn or empty line is an error naming the line.
template <typename Fn>
void read_jsonl(const std::filesystem::path& path, Fn&& fn) {
  if (!std::filesystem::exists(path)) fail(ErrorCode::kIo, "{}: file not found", path.string());
  io::for_each_line(path, [&](const io::Line& line) {
    const std::string where = where_of(path, line.number);
    if (line.text.empty()) fail("{}: empty line (one JSON object per line expected)", where);
    if (!line.terminated) fail("{}: last line is not terminated (file truncated?)", where);
    const OJ j = io::parse_ordered_json(line.text, where);
    if (!j.is_object()) fail("{}: expected a JSON object", where);
    fn(j, where);
  });
}

}  // namespace

const View* Benchmark::find_view(std::string_view prompt_id) const {
  auto it = prompt_index.find(std::string(prompt_id));
  return it == prompt_index.end() ? nullptr : &views[it->second];
}

const Base* Benchmark::find_base(std::string_view base_id) const {
  auto it = base_index.find(std::string(base_id));
  return it == base_index.end() ? nullptr : &bases[it->second];
}

Benchmark load_benchmark(const std::filesystem::path& dir) {
  Benchmark b;
  b.dir = dir;
  if (!std::filesystem::is_directory(dir))
    fail(ErrorCode::kIo, "{}: not a benchmark directory", dir.string());

  const auto manifest_path = dir / "manifest.json";
  if (!std::filesystem::exists(manifest_path))
    fail(ErrorCode::kIo, "{}: file not found", manifest_path.string());
  b.manifest_json = io::read_file(manifest_path);
  {
    const io::Json m = io::parse_json(b.manifest_json, manifest_path.string());
    if (!m.is_object()) fail("{}: expected a JSON object", manifest_path.string());
  }

  const auto bases_path = dir / "bases.jsonl";
  read_jsonl(bases_path, [&](const OJ& j, const std::string& where) {
    Base base;
    base.base_id = req_string(j, "base_id", where);
    base.template_id = req_string(j, "template", where);
    base.dimension = req_string(j, "dimension", where);
    base.canonical_unit = req_string(j, "canonical_unit", where);
    const OJ& params = req(j, "params", where);
    if (!params.is_object()) fail("{}: field 'params' must be an object of exact rationals", where);
    for (const auto& [name, value] : params.items()) {
      if (!value.is_string()) fail("{}: params.{} must be an exact rational string", where, name);
      auto r = num::Rational::from_string(value.get<std::string>());
      if (!r) fail("{}: params.{} must be an exact rational ('p/q' or an integer)", where, name);
      base.params.emplace_back(name, *r);
    }
    base.answer = req_rational(j, "answer", where);
    base.views = req_string_list(j, "views", where);
    if (b.base_index.count(base.base_id)) fail("{}: duplicate base_id '{}'", where, base.base_id);
    b.base_index.emplace(base.base_id, b.bases.size());
    b.bases.push_back(std::move(base));
  });

  const auto views_path = dir / "views.jsonl";
  read_jsonl(views_path, [&](const OJ& j, const std::string& where) {
    View v;
    v.prompt_id = req_string(j, "prompt_id", where);
    v.base_id = req_string(j, "base_id", where);
    v.template_id = req_string(j, "template", where);
    v.view = req_string(j, "view", where);
    const OJ& fam = req(j, "family", where);
    if (fam.is_string()) {
      v.family = fam.get<std::string>();
    } else if (!fam.is_null()) {
      fail("{}: field 'family' must be a string or null", where);
    }
    v.prompt = req_string(j, "prompt", where);
    v.expected = req_rational(j, "expected", where);
    v.answer_unit = req_string(j, "answer_unit", where);
    if (v.prompt_id != v.base_id + ":" + v.view)
      fail("{}: prompt_id '{}' is not '<base_id>:<view>'", where, v.prompt_id);
    if (!b.base_index.count(v.base_id)) fail("{}: base_id '{}' is not in bases.jsonl", where, v.base_id);
    if (b.prompt_index.count(v.prompt_id)) fail("{}: duplicate prompt_id '{}'", where, v.prompt_id);
    b.prompt_index.emplace(v.prompt_id, b.views.size());
    b.views.push_back(std::move(v));
  });

  for (const char* name : {"bases.jsonl", "views.jsonl"}) b.file_sha256[name] = io::sha256_file(dir / name);
  return b;
}

std::map<std::string, std::string> manifest_file_hashes(const Benchmark& bench) {
  std::map<std::string, std::string> out;
  const io::Json m = io::parse_json(bench.manifest_json, (bench.dir / "manifest.json").string());
  auto files = m.find("files");
  if (files == m.end() || !files->is_object()) return out;
  for (const auto& [name, entry] : files->items()) {
    if (entry.is_object() && entry.contains("sha256") && entry["sha256"].is_string()) {
      out[name] = entry["sha256"].get<std::string>();
    } else if (entry.is_string()) {
      out[name] = entry.get<std::string>();
    }
  }
  return out;
}

void verify_benchmark(const Benchmark& bench) {
  for (const auto& [name, recorded] : manifest_file_hashes(bench)) {
    auto it = bench.file_sha256.find(name);
    if (it != bench.file_sha256.end() && it->second != recorded) {
      fail("{}: sha256 {} does not match the manifest's {} (the benchmark was changed after generation)",
           (bench.dir / name).string(), it->second, recorded);
    }
  }
}

}  // namespace numcheck::orbit
