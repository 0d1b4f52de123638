#include "orbit/benchmark.hpp"

#include <algorithm>
#include <exception>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "core/error.hpp"
#include "core/ordered_parallel.hpp"
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

namespace {

// One record of bases.jsonl / views.jsonl into `base` / `v` (built in place: a Base or View holds
// GMP values). The view's base must be in `b` (whose bases are complete). Throws Error naming the
// line; the checks that depend on earlier records (duplicate ids) are the caller's.
void read_base(const io::LineRecord& j, Base& base) {
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
}

void read_view(const io::LineRecord& j, View& v, const Benchmark& b) {
  const std::string_view where = j.where();
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
}

[[noreturn]] void duplicate(const std::filesystem::path& file, std::size_t line, const char* what,
                            const std::string& id) {
  fail("{}:{}: duplicate {} '{}'", file.string(), line, what, id);
}

// Below this size of views.jsonl, load_benchmark reads on one thread (threads = 0): starting the
// workers and handing each record over cost more than they save (docs/performance.md: at 3 MB,
// 8,600 prompts, two threads took about 9 ms longer; at 59 MB, 172,000 prompts, 160 ms shorter).
constexpr std::uintmax_t kParallelLoadBytes = std::uintmax_t{8} << 20;

// What the workers of load_benchmark build from one block of a file (io::read_jsonl_fast_parallel):
// its records' bases or views, complete, with their lines; the calling thread then moves them into
// the benchmark in file order and indexes them.
struct LoadBlock {
  std::vector<Base> bases;
  std::vector<View> views;
  std::vector<std::size_t> lines;  // one per complete record (a record that fails is never counted)
  void clear() {
    bases.clear();
    views.clear();
    lines.clear();
  }
};

// Room for as many bases as the file could hold (a base's record has at least ~100 bytes; memory
// reserved and never written is not resident) without reading it twice: a growing vector would
// copy every base read so far, again and again. Then, once the bases are in: every view is listed
// by its base, so the views' count is known before they are read.
void reserve_bases(Benchmark& b, const std::filesystem::path& bases_path) {
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(bases_path, ec);
  b.bases.reserve(ec ? 0 : static_cast<std::size_t>(bytes / 100));
}
void reserve_views(Benchmark& b) {
  std::size_t listed = 0;
  for (const auto& base : b.bases) listed += base.views.size();
  b.views.reserve(listed);
  b.reserve_index(0, listed);
}

// On the calling thread, with the two files' SHA-256 on a thread of their own while they are parsed
// here (reading them twice costs the page cache, not the disk); joined before it returns or throws.
void load_sequential(Benchmark& b, const std::filesystem::path& bases_path,
                     const std::filesystem::path& views_path) {
  std::map<std::string, std::string> hashes;
  std::exception_ptr hash_error;
  std::jthread hasher([&] {
    try {
      hashes["bases.jsonl"] = io::sha256_file(bases_path);
      hashes["views.jsonl"] = io::sha256_file(views_path);
    } catch (...) {
      hash_error = std::current_exception();
    }
  });
  (void)io::read_jsonl_fast(bases_path, [&](const io::LineRecord& j, std::size_t line) {
    read_base(j, b.bases.emplace_back());  // a record that fails ends the load
    if (!b.index_base(b.bases.size() - 1)) duplicate(bases_path, line, "base_id", b.bases.back().base_id);
  });
  reserve_views(b);
  (void)io::read_jsonl_fast(views_path, [&](const io::LineRecord& j, std::size_t line) {
    read_view(j, b.views.emplace_back(), b);
    if (!b.index_view(b.views.size() - 1)) duplicate(views_path, line, "prompt_id", b.views.back().prompt_id);
  });
  hasher.join();
  if (hash_error) std::rethrow_exception(hash_error);
  b.file_sha256 = std::move(hashes);
}

// Block by block on `threads` threads, which check and build each record (the costly part: the
// exact rationals and the strings); the calling thread hashes the bytes as they are read and adds
// the records in file order, so the errors are those of a sequential read (the first in file
// order, after the same records).
void load_parallel(Benchmark& b, const std::filesystem::path& bases_path,
                   const std::filesystem::path& views_path, std::size_t threads) {
  io::ParallelJsonl how;
  how.threads = threads;
  std::vector<LoadBlock> blocks(io::parallel_jsonl_slots(threads));

  io::Sha256 bases_hash;
  how.on_bytes = [&bases_hash](std::string_view bytes) { bases_hash.update(bytes); };
  how.on_record = [&blocks](std::size_t slot, const io::LineRecord& j, std::size_t line) {
    LoadBlock& k = blocks[slot];
    read_base(j, k.bases.emplace_back());
    k.lines.push_back(line);  // counted only once complete
  };
  how.on_block = [&](std::size_t slot) {
    LoadBlock& k = blocks[slot];
    for (std::size_t i = 0; i < k.lines.size(); ++i) {
      b.bases.push_back(std::move(k.bases[i]));
      if (!b.index_base(b.bases.size() - 1))
        duplicate(bases_path, k.lines[i], "base_id", b.bases.back().base_id);
    }
    k.clear();
  };
  (void)io::read_jsonl_fast_parallel(bases_path, how);
  b.file_sha256["bases.jsonl"] = bases_hash.hex_digest();

  reserve_views(b);
  io::Sha256 views_hash;
  how.on_bytes = [&views_hash](std::string_view bytes) { views_hash.update(bytes); };
  // The workers look bases up (read only: the bases are complete) while the calling thread adds views.
  how.on_record = [&blocks, &b](std::size_t slot, const io::LineRecord& j, std::size_t line) {
    LoadBlock& k = blocks[slot];
    read_view(j, k.views.emplace_back(), b);
    k.lines.push_back(line);
  };
  how.on_block = [&](std::size_t slot) {
    LoadBlock& k = blocks[slot];
    for (std::size_t i = 0; i < k.lines.size(); ++i) {
      b.views.push_back(std::move(k.views[i]));
      if (!b.index_view(b.views.size() - 1)) {
        duplicate(views_path, k.lines[i], "prompt_id", b.views.back().prompt_id);
      }
    }
    k.clear();
  };
  (void)io::read_jsonl_fast_parallel(views_path, how);
  b.file_sha256["views.jsonl"] = views_hash.hex_digest();
}

}  // namespace

Benchmark load_benchmark(const std::filesystem::path& dir, std::size_t threads) {
  Benchmark b;
  b.dir = dir;
  b.manifest_json = detail::read_manifest(dir);
  const auto bases_path = dir / "bases.jsonl";
  const auto views_path = dir / "views.jsonl";
  if (threads == 0) {
    std::error_code ec;
    const auto views_bytes = std::filesystem::file_size(views_path, ec);
    threads = !ec && views_bytes >= kParallelLoadBytes ? core::thread_count(0) : 1;
  }
  reserve_bases(b, bases_path);
  if (threads == 1) {
    load_sequential(b, bases_path, views_path);
  } else {
    load_parallel(b, bases_path, views_path, threads);
  }
  return b;
}

namespace {

// What the readers of manifest.json need from it (the files' recorded hashes, the generator's
// provenance), taken from one parse. read_manifest parses the manifest to check it anyway and keeps
// these beside its text; manifest_file_hashes and generator_provenance find them there when they
// are handed the same text (compared whole: 0.1 ms at a million prompts, against 12 ms to parse the
// 1.3 MB again), so a command parses its benchmark's manifest once instead of four times. Any
// other text is parsed as before, and its facts kept in turn.
struct ManifestFacts {
  std::map<std::string, std::string> file_sha256;
  io::OrderedJson provenance = io::OrderedJson::object();
};

ManifestFacts facts_of(const io::Json& m) {
  ManifestFacts f;
  if (auto files = m.find("files"); files != m.end() && files->is_object()) {
    for (const auto& [name, entry] : files->items()) {
      if (entry.is_object() && entry.contains("sha256") && entry["sha256"].is_string()) {
        f.file_sha256[name] = entry["sha256"].get<std::string>();
      } else if (entry.is_string()) {
        f.file_sha256[name] = entry.get<std::string>();
      }
    }
  }
  for (const char* key : {"generator_version", "prompt_version", "seed", "spec_sha256"}) {
    if (auto it = m.find(key); it != m.end()) f.provenance[key] = *it;
  }
  return f;
}

class ManifestMemo {
 public:
  void keep(const std::string& text, ManifestFacts facts) {
    const std::lock_guard<std::mutex> lock(mu_);
    text_ = text;
    facts_ = std::move(facts);
  }
  [[nodiscard]] std::optional<ManifestFacts> find(const std::string& text) {
    const std::lock_guard<std::mutex> lock(mu_);
    if (text_.empty() || text_ != text) return std::nullopt;
    return facts_;
  }

 private:
  std::mutex mu_;
  std::string text_;
  ManifestFacts facts_;
};

ManifestMemo& memo() {
  static ManifestMemo m;
  return m;
}

ManifestFacts manifest_facts(const std::filesystem::path& dir, const std::string& manifest_json) {
  if (auto f = memo().find(manifest_json)) return std::move(*f);
  ManifestFacts f = facts_of(io::parse_json(manifest_json, (dir / "manifest.json").string()));
  memo().keep(manifest_json, f);
  return f;
}

}  // namespace

namespace detail {

std::string read_manifest(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir))
    fail(ErrorCode::kIo, "{}: not a benchmark directory", dir.string());
  const auto manifest_path = dir / "manifest.json";
  if (!std::filesystem::exists(manifest_path))
    fail(ErrorCode::kIo, "{}: file not found", manifest_path.string());
  std::string manifest = io::read_file(manifest_path);
  const io::Json m = io::parse_json(manifest, manifest_path.string());
  (void)io::Record::of(m, manifest_path.string());
  memo().keep(manifest, facts_of(m));
  return manifest;
}

std::map<std::string, std::string> manifest_file_hashes(const std::filesystem::path& dir,
                                                        const std::string& manifest_json) {
  return manifest_facts(dir, manifest_json).file_sha256;
}

io::OrderedJson generator_provenance(const std::filesystem::path& dir, const std::string& manifest_json) {
  if (manifest_json.empty()) return io::OrderedJson::object();  // built in memory: no manifest
  return manifest_facts(dir, manifest_json).provenance;
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
