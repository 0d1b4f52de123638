#include "orbit/benchmark.hpp"

#include <exception>
#include <limits>
#include <set>
#include <thread>

#include "core/error.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "io/sha256.hpp"
#include "orbit/record_fields.hpp"

namespace numcheck::orbit {

namespace {

// The field `key` of a line as an exact rational into `into` (detail::read_rational on the line's
// own text: no copy).
void exact_into(const io::LineRecord& r, std::string_view key, num::Rational& into) {
  detail::read_rational(r, r.string_view(key), key, into);
}

}  // namespace

std::optional<std::size_t> Benchmark::view_position(std::string_view prompt_id) const {
  return position_find(view_slots_, prompt_id, short_string_hash(prompt_id),
                       [this](std::size_t i) -> std::string_view { return views[i].prompt_id; });
}

std::optional<std::size_t> Benchmark::base_position(std::string_view base_id) const {
  return position_find(base_slots_, base_id, short_string_hash(base_id),
                       [this](std::size_t i) -> std::string_view { return bases[i].base_id; });
}

const View* Benchmark::find_view(std::string_view prompt_id) const {
  const auto i = view_position(prompt_id);
  return i ? &views[*i] : nullptr;
}

const Base* Benchmark::find_base(std::string_view base_id) const {
  const auto i = base_position(base_id);
  return i ? &bases[*i] : nullptr;
}

namespace {
// position_insert's precondition (32-bit positions).
void check_positions(std::size_t i, const char* what) {
  if (i >= std::numeric_limits<std::uint32_t>::max() - 1)
    fail("the benchmark has too many {} to index", what);
}
}  // namespace

bool Benchmark::index_base(std::size_t i) {
  check_positions(i, "bases");
  return position_insert(
      base_slots_, i, bases.at(i).base_id, short_string_hash(bases[i].base_id),
      [this](std::size_t k) -> std::string_view { return bases[k].base_id; }, &short_string_hash);
}

bool Benchmark::index_view(std::size_t i) {
  check_positions(i, "views");
  return position_insert(
      view_slots_, i, views.at(i).prompt_id, short_string_hash(views[i].prompt_id),
      [this](std::size_t k) -> std::string_view { return views[k].prompt_id; }, &short_string_hash);
}

void Benchmark::reserve_index(std::size_t n_bases, std::size_t n_views) {
  if (base_slots_.empty()) base_slots_.assign(numcheck::detail::table_capacity(n_bases), 0);
  if (view_slots_.empty()) view_slots_.assign(numcheck::detail::table_capacity(n_views), 0);
}

void Benchmark::reindex() {
  base_slots_.clear();
  view_slots_.clear();
  reserve_index(bases.size(), views.size());
  for (std::size_t i = 0; i < bases.size(); ++i)
    if (!index_base(i)) fail("duplicate base_id '{}'", bases[i].base_id);
  for (std::size_t i = 0; i < views.size(); ++i)
    if (!index_view(i)) fail("duplicate prompt_id '{}'", views[i].prompt_id);
}

Benchmark load_benchmark(const std::filesystem::path& dir) {
  Benchmark b;
  b.dir = dir;
  b.manifest_json = detail::read_manifest(dir);

  // The two files' SHA-256 on a thread of their own while they are parsed here (reading them twice
  // costs the page cache, not the disk); joined before the load returns or throws.
  std::map<std::string, std::string> hashes;
  std::exception_ptr hash_error;
  std::jthread hasher([&dir, &hashes, &hash_error] {
    try {
      for (const char* name : {"bases.jsonl", "views.jsonl"}) hashes[name] = io::sha256_file(dir / name);
    } catch (...) {
      hash_error = std::current_exception();
    }
  });

  const auto bases_path = dir / "bases.jsonl";
  // Room for as many bases as the file could hold (a base's record has at least ~100 bytes; memory
  // reserved and never written is not resident) without reading it twice: a Base holds GMP values,
  // which a growing vector copies (their move is not noexcept), so growth would copy every base
  // read so far, again and again.
  std::error_code ec;
  const auto bases_bytes = std::filesystem::file_size(bases_path, ec);
  b.bases.reserve(ec ? 0 : static_cast<std::size_t>(bases_bytes / 100));
  // Both files through the fast reader (simdjson; the same records, rule and errors as read_jsonl).
  (void)io::read_jsonl_fast(bases_path, [&](const io::LineRecord& j, std::size_t) {
    const std::string_view where = j.where();
    // Built in place: a Base holds GMP values, whose move allocates (the moved-from value is
    // initialised again); a record that fails ends the load, so a half-filled one is never seen.
    Base& base = b.bases.emplace_back();
    base.base_id = j.string_view("base_id");
    base.template_id = j.string_view("template");
    base.dimension = j.string_view("dimension");
    base.canonical_unit = j.string_view("canonical_unit");
    const io::LineRecord params = j.object("params");
    const auto names = params.keys();
    base.params.reserve(names.size());
    for (const std::string_view name : names) {
      auto& p = base.params.emplace_back();
      p.first = name;
      exact_into(params, name, p.second);
    }
    exact_into(j, "answer", base.answer);
    base.views = j.strings("views");
    if (!b.index_base(b.bases.size() - 1)) fail("{}: duplicate base_id '{}'", where, base.base_id);
  });

  // Every view is listed by its base: the views' count, known before they are read (a View holds a
  // GMP value too).
  std::size_t listed = 0;
  for (const auto& base : b.bases) listed += base.views.size();
  b.views.reserve(listed);
  b.reserve_index(0, listed);
  const auto views_path = dir / "views.jsonl";
  (void)io::read_jsonl_fast(views_path, [&](const io::LineRecord& j, std::size_t) {
    const std::string_view where = j.where();
    View& v = b.views.emplace_back();  // in place, as the bases
    v.prompt_id = j.string_view("prompt_id");
    v.base_id = j.string_view("base_id");
    v.template_id = j.string_view("template");
    v.view = j.string_view("view");
    (void)j.at("family");  // required, may be null
    if (auto fam = j.opt_string_view("family")) v.family = std::string(*fam);
    v.prompt = j.string_view("prompt");
    exact_into(j, "expected", v.expected);
    v.answer_unit = j.string_view("answer_unit");
    const std::string_view id = v.prompt_id;
    if (id.size() != v.base_id.size() + 1 + v.view.size() || !id.starts_with(v.base_id) ||
        id[v.base_id.size()] != ':' || !id.ends_with(v.view))
      fail("{}: prompt_id '{}' is not '<base_id>:<view>'", where, v.prompt_id);
    if (!b.base_position(v.base_id)) fail("{}: base_id '{}' is not in bases.jsonl", where, v.base_id);
    if (!b.index_view(b.views.size() - 1)) fail("{}: duplicate prompt_id '{}'", where, v.prompt_id);
  });

  hasher.join();
  if (hash_error) std::rethrow_exception(hash_error);
  b.file_sha256 = std::move(hashes);
  return b;
}

namespace detail {

std::string read_manifest(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir))
    fail(ErrorCode::kIo, "{}: not a benchmark directory", dir.string());
  const auto manifest_path = dir / "manifest.json";
  if (!std::filesystem::exists(manifest_path))
    fail(ErrorCode::kIo, "{}: file not found", manifest_path.string());
  std::string manifest = io::read_file(manifest_path);
  (void)io::Record::of(io::parse_json(manifest, manifest_path.string()), manifest_path.string());
  return manifest;
}

std::map<std::string, std::string> manifest_file_hashes(const std::filesystem::path& dir,
                                                        const std::string& manifest_json) {
  std::map<std::string, std::string> out;
  const io::Json m = io::parse_json(manifest_json, (dir / "manifest.json").string());
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

io::OrderedJson generator_provenance(const std::filesystem::path& dir, const std::string& manifest_json) {
  if (manifest_json.empty()) return io::OrderedJson::object();  // built in memory: no manifest
  const io::Json m = io::parse_json(manifest_json, (dir / "manifest.json").string());
  io::OrderedJson out = io::OrderedJson::object();
  for (const char* key : {"generator_version", "prompt_version", "seed", "spec_sha256"}) {
    if (auto it = m.find(key); it != m.end()) out[key] = *it;
  }
  return out;
}

void verify_benchmark(const std::filesystem::path& dir, const std::string& manifest_json,
                      const std::map<std::string, std::string>& file_sha256) {
  for (const auto& [name, recorded] : manifest_file_hashes(dir, manifest_json)) {
    auto it = file_sha256.find(name);
    if (it != file_sha256.end() && it->second != recorded) {
      fail("{}: sha256 {} does not match the manifest's {} (the benchmark was changed after generation)",
           (dir / name).string(), it->second, recorded);
    }
  }
}

}  // namespace detail

std::map<std::string, std::string> manifest_file_hashes(const Benchmark& bench) {
  return detail::manifest_file_hashes(bench.dir, bench.manifest_json);
}

io::OrderedJson generator_provenance(const Benchmark& bench) {
  return detail::generator_provenance(bench.dir, bench.manifest_json);
}

void verify_benchmark(const Benchmark& bench) {
  detail::verify_benchmark(bench.dir, bench.manifest_json, bench.file_sha256);
}

}  // namespace numcheck::orbit
