#include "orbit/index.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <thread>

#include "core/error.hpp"
#include "core/ordered_parallel.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "io/sha256.hpp"
#include "num/rational.hpp"
#include "orbit/index_cache.hpp"
#include "orbit/record_fields.hpp"

namespace numcheck::orbit {

namespace fs = std::filesystem;

std::string_view BenchmarkIndex::prompt_id(std::size_t i) const {
  const Entry& e = views_.at(i);
  return text(e.offset, e.id_length);
}

std::string_view BenchmarkIndex::base_id(std::size_t i) const {
  const Entry& e = views_.at(i);
  // prompt_id == base_id + ":" + view (checked at load)
  return text(e.offset, e.id_length - views_names_.names[e.view].size() - 1);
}

std::string_view BenchmarkIndex::view(std::size_t i) const { return views_names_.names[views_.at(i).view]; }

std::optional<std::string_view> BenchmarkIndex::family(std::size_t i) const {
  const Entry& e = views_.at(i);
  if (e.family == kNone) return std::nullopt;
  return families_.names[e.family];
}

std::string_view BenchmarkIndex::template_id(std::size_t i) const {
  return templates_.names[views_.at(i).template_id];
}

std::string_view BenchmarkIndex::expected(std::size_t i) const {
  const Entry& e = views_.at(i);
  return text(e.offset + e.id_length, e.expected_length);
}

std::string_view BenchmarkIndex::answer_unit(std::size_t i) const { return units_.names[views_.at(i).unit]; }

std::string_view BenchmarkIndex::base_at(std::size_t b) const {
  const std::size_t begin = base_offsets_.at(b);
  const std::size_t end = b + 1 < base_offsets_.size() ? base_offsets_[b + 1] : base_text_.size();
  return std::string_view(base_text_).substr(begin, end - begin);
}

std::uint64_t BenchmarkIndex::hash_id(std::string_view id) noexcept { return short_string_hash(id); }

std::optional<std::size_t> BenchmarkIndex::find(std::string_view id) const {
  const auto key_of = [this](std::size_t i) { return prompt_id(i); };
  if (!view_tags_.empty()) return position_find(view_tags_, id, hash_id(id), key_of);
  return position_find(view_slots_, id, hash_id(id), key_of);
}

std::optional<std::size_t> BenchmarkIndex::find(std::string_view id, std::size_t hint) const {
  if (hint < views_.size()) {
    const Entry& e = views_[hint];
    if (e.id_length == id.size() && text(e.offset, e.id_length) == id) return hint;
  }
  return find(id);
}

std::optional<std::size_t> BenchmarkIndex::base_position(std::string_view id) const {
  const auto key_of = [this](std::size_t b) { return base_at(b); };
  if (!base_tags_.empty()) return position_find(base_tags_, id, hash_id(id), key_of);
  return position_find(base_slots_, id, hash_id(id), key_of);
}

bool BenchmarkIndex::has_base(std::string_view id) const { return base_position(id).has_value(); }

std::optional<std::size_t> BenchmarkIndex::find_base(std::string_view id, std::size_t hint) const {
  if (hint < base_offsets_.size() && base_at(hint) == id) return hint;
  return base_position(id);
}

namespace {
// The empty asm keeps the prefetch: g++ 12's interprocedural analysis takes a function whose only
// effect is a prefetch for one without effects and removes the calls (seen with objdump).
void prefetch_slot(const std::uint64_t* slots, std::size_t size, std::uint64_t hash) noexcept {
  if (size == 0) return;
  const std::uint64_t* slot = slots + (hash & (size - 1));
  __builtin_prefetch(slot);
  asm volatile("" : : "r"(slot));
}
}  // namespace

void BenchmarkIndex::prefetch_view(std::uint64_t hash) const noexcept {
  prefetch_slot(view_tags_.data(), view_tags_.size(), hash);
}
void BenchmarkIndex::prefetch_base(std::uint64_t hash) const noexcept {
  prefetch_slot(base_tags_.data(), base_tags_.size(), hash);
}

void BenchmarkIndex::positions_of(const core::LargeVector<std::uint64_t>& tags,
                                  core::LargeVector<std::uint32_t>& slots) {
  slots.resize(tags.size());
  for (std::size_t i = 0; i < tags.size(); ++i) slots[i] = static_cast<std::uint32_t>(tags[i]);
}

void BenchmarkIndex::finish() {
  for (auto [tags, slots] : {std::pair{&view_tags_, &view_slots_}, std::pair{&base_tags_, &base_slots_}}) {
    if (tags->empty()) continue;
    positions_of(*tags, *slots);
    core::LargeVector<std::uint64_t>().swap(*tags);
  }
}

std::uint16_t BenchmarkIndex::intern(Interned& table, std::string_view s, const char* what) {
  if (table.last != kNone && table.names[table.last] == s) return table.last;
  // A few names (views, families, units) are compared in turn; more are looked up.
  constexpr std::size_t kFew = 8;
  if (table.names.size() <= kFew) {
    for (std::size_t i = 0; i < table.names.size(); ++i) {
      if (table.names[i] == s) return table.last = static_cast<std::uint16_t>(i);
    }
  } else if (const auto it = table.ids.find(s); it != table.ids.end()) {
    return table.last = it->second;
  }
  if (table.names.size() >= kNone) fail("the benchmark has more than {} distinct {}", kNone, what);
  const auto id = static_cast<std::uint16_t>(table.names.size());
  table.names.emplace_back(s);
  table.ids.emplace(table.names.back(), id);
  return table.last = id;
}

bool BenchmarkIndex::add_base(std::string_view id, std::optional<std::uint64_t> hash) {
  if (base_text_.size() + id.size() > std::numeric_limits<std::uint32_t>::max() ||
      base_offsets_.size() >= std::numeric_limits<std::uint32_t>::max() - 1) {
    fail("the benchmark has too many bases for the index (4 GB of base ids)");
  }
  if (!position_insert(
          base_tags_, base_offsets_.size(), id, hash ? *hash : hash_id(id),
          [this](std::size_t b) { return base_at(b); }, &hash_id)) {
    return false;
  }
  base_offsets_.push_back(static_cast<std::uint32_t>(base_text_.size()));
  base_text_.append(id);
  return true;
}

bool BenchmarkIndex::add_view(std::string_view id, std::string_view view,
                              std::optional<std::string_view> family, std::string_view template_id,
                              std::string_view expected, std::string_view answer_unit,
                              std::optional<std::uint64_t> hash) {
  constexpr std::size_t kMax16 = std::numeric_limits<std::uint16_t>::max();
  if (id.size() > kMax16 || expected.size() > kMax16) {
    fail("prompt '{}': prompt id or expected answer longer than {} bytes", id.substr(0, 80), kMax16);
  }
  if (text_.size() + id.size() + expected.size() > std::numeric_limits<std::uint32_t>::max() ||
      views_.size() >= std::numeric_limits<std::uint32_t>::max() - 1) {
    fail("the benchmark has too many prompts for the index (4 GB of prompt ids and answers)");
  }
  if (!position_insert(
          view_tags_, views_.size(), id, hash ? *hash : hash_id(id),
          [this](std::size_t i) { return prompt_id(i); }, &hash_id)) {
    return false;
  }
  Entry e{};
  e.offset = static_cast<std::uint32_t>(text_.size());
  e.id_length = static_cast<std::uint16_t>(id.size());
  e.expected_length = static_cast<std::uint16_t>(expected.size());
  e.view = intern(views_names_, view, "view names");
  e.family = family ? intern(families_, *family, "families") : kNone;
  e.template_id = intern(templates_, template_id, "templates");
  e.unit = intern(units_, answer_unit, "answer units");
  text_.insert(text_.end(), id.begin(), id.end());
  text_.insert(text_.end(), expected.begin(), expected.end());
  views_.push_back(e);
  return true;
}

void BenchmarkIndex::reserve(std::size_t n, std::size_t b, bool exact_views) {
  if (exact_views && views_.empty() && view_tags_.size() < numcheck::detail::table_capacity(n)) {
    // Only an empty table is sized up front (a full one grows as it fills).
    view_tags_.assign(numcheck::detail::table_capacity(n), 0);
  }
  views_.reserve(n);
  text_.reserve(n * 32);
  base_offsets_.reserve(b);
  base_text_.reserve(b * 12);
}

BenchmarkIndex BenchmarkIndex::of(const Benchmark& bench) {
  BenchmarkIndex x;
  x.dir = bench.dir;
  x.manifest_json = bench.manifest_json;
  x.file_sha256 = bench.file_sha256;
  x.selection = bench.selection;
  x.reserve(bench.views.size(), bench.bases.size());
  for (const auto& b : bench.bases) x.add_base(b.base_id);
  for (const auto& v : bench.views) {
    std::optional<std::string_view> fam;
    if (v.family) fam = *v.family;
    x.add_view(v.prompt_id, v.view, fam, v.template_id, v.expected.str(), v.answer_unit);
  }
  x.finish();
  return x;
}

namespace {

// The records are read with io::read_jsonl_fast (simdjson; read_jsonl's rule, values and errors).
using OR = io::LineRecord;

}  // namespace

namespace {

// What the workers of load_benchmark_index keep of a block's records (file order): the fields
// add_base / add_view take, as pieces of `text`, and each record's line for the errors only the
// calling thread can find (duplicates, which depend on the records before).
struct IndexBlock {
  struct Piece {
    std::uint32_t begin = 0, size = 0;
  };
  struct Rec {
    std::size_t line = 0;
    Piece id, view, family, template_id, expected, unit;
    bool has_family = false;
    std::uint64_t hash = 0;  // BenchmarkIndex::hash_id of the id
    std::size_t views = 0;   // a base's number of views
  };
  std::vector<Rec> recs;
  std::string text;
  // The base of the last view checked in this slot (its position in bases.jsonl): a base's views
  // are usually consecutive and in the bases' order, so most views need no hash lookup.
  std::optional<std::size_t> last_base;
  std::string canonical;  // an expected answer made canonical (its memory reused)
  Piece put(std::string_view s) {
    const Piece p{static_cast<std::uint32_t>(text.size()), static_cast<std::uint32_t>(s.size())};
    text.append(s);
    return p;
  }
  [[nodiscard]] std::string_view get(Piece p) const { return std::string_view(text).substr(p.begin, p.size); }
  void clear() {
    recs.clear();
    text.clear();
  }
};

}  // namespace

namespace {

// A views.jsonl record checked on a worker (its fields, its prompt id, its base in bases.jsonl)
// and kept in the block, for the calling thread to add in file order.
void add_view_record(IndexBlock& k, const OR& j, std::size_t line, const BenchmarkIndex& b) {
  const std::string_view where = j.where();
  IndexBlock::Rec r;
  r.line = line;
  const std::string_view prompt_id = j.string_view("prompt_id");
  const std::string_view base_id = j.string_view("base_id");
  r.template_id = k.put(j.string_view("template"));
  const std::string_view view = j.string_view("view");
  (void)j.at("family");  // required, may be null
  const std::optional<std::string_view> family = j.opt_string_view("family");
  (void)j.string_view("prompt");
  r.expected = k.put(detail::canonical_rational(j, "expected", k.canonical));
  r.unit = k.put(j.string_view("answer_unit"));
  if (prompt_id.size() != base_id.size() + 1 + view.size() || !prompt_id.starts_with(base_id) ||
      prompt_id[base_id.size()] != ':' || !prompt_id.ends_with(view)) {
    fail("{}: prompt_id '{}' is not '<base_id>:<view>'", where, prompt_id);
  }
  if (!k.last_base || b.base_at(*k.last_base) != base_id) {
    k.last_base = b.find_base(base_id, k.last_base ? *k.last_base + 1 : 0);
    if (!k.last_base) fail("{}: base_id '{}' is not in bases.jsonl", where, base_id);
  }
  r.id = k.put(prompt_id);
  r.hash = BenchmarkIndex::hash_id(prompt_id);
  r.view = k.put(view);
  r.has_family = family.has_value();
  if (family) r.family = k.put(*family);
  k.recs.push_back(r);
}

// The index from bases.jsonl and views.jsonl.
BenchmarkIndex build_index(const fs::path& dir, std::string manifest_json, std::size_t threads) {
  BenchmarkIndex b;
  b.dir = dir;
  b.manifest_json = std::move(manifest_json);

  // Room for as many records as the files could hold (a record has at least ~100 bytes); memory
  // reserved and never written is not resident.
  const auto bases_path = dir / "bases.jsonl";
  const auto views_path = dir / "views.jsonl";
  std::error_code ec;
  const auto bases_bytes = fs::file_size(bases_path, ec);
  const std::size_t base_guess = ec ? 0 : static_cast<std::size_t>(bases_bytes / 100);
  const auto views_bytes = fs::file_size(views_path, ec);
  const std::size_t view_guess = ec ? 0 : static_cast<std::size_t>(views_bytes / 100);
  b.reserve(view_guess, base_guess);

  // Both files are read block by block on `threads` threads: the workers check each record's
  // fields (the expensive part: the exact rationals), the calling thread then adds the records in
  // file order and checks what depends on earlier records. Each file is hashed as it is read.
  io::ParallelJsonl how;
  how.threads = core::thread_count(threads);
  how.block_bytes = std::size_t{256} << 10;
  std::vector<IndexBlock> blocks(io::parallel_jsonl_slots(how.threads));
  const auto hash_into = [&](io::Sha256& h) {
    how.on_bytes = [&h](std::string_view bytes) { h.update(bytes); };
  };

  io::Sha256 bases_hash;
  hash_into(bases_hash);
  how.on_record = [&](std::size_t slot, const OR& j, std::size_t line) {
    IndexBlock& k = blocks[slot];
    IndexBlock::Rec r;
    r.line = line;
    const std::string_view base_id = j.string_view("base_id");
    r.id = k.put(base_id);
    r.hash = BenchmarkIndex::hash_id(base_id);
    (void)j.string_view("template");
    (void)j.string_view("dimension");
    (void)j.string_view("canonical_unit");
    // req_rational's checks and errors, on the text alone (the values are not kept).
    const OR params = j.object("params");
    const auto& values = params.values();
    for (std::size_t c = params.index() + 1; c < values[params.index()].end; c = values[c].end) {
      detail::check_rational(params, params.string_view(values[c].key), values[c].key);
    }
    detail::check_rational(j, j.string_view("answer"), "answer");
    r.views = j.string_count("views");
    k.recs.push_back(r);
  };
  std::size_t views_listed = 0;  // the prompts the bases name: views.jsonl's size when it is valid
  // The records are added in file order, each a hash-table probe at a random place: the slots of
  // the records kPrefetch ahead are asked for meanwhile.
  constexpr std::size_t kPrefetch = 8;
  how.on_block = [&](std::size_t slot) {
    IndexBlock& k = blocks[slot];
    for (std::size_t i = 0; i < k.recs.size(); ++i) {
      if (i + kPrefetch < k.recs.size()) b.prefetch_base(k.recs[i + kPrefetch].hash);
      const auto& r = k.recs[i];
      const std::string_view base_id = k.get(r.id);
      if (!b.add_base(base_id, r.hash)) {
        fail("{}:{}: duplicate base_id '{}'", bases_path.string(), r.line, base_id);
      }
      views_listed += r.views;
    }
    k.clear();
  };
  (void)io::read_jsonl_fast_parallel(bases_path, how);
  b.file_sha256["bases.jsonl"] = bases_hash.hex_digest();
  // The prompts' hash table at its final size (no regrowth); capped by what the file could hold.
  b.reserve(std::min(views_listed, view_guess), 0, true);

  io::Sha256 views_hash;
  hash_into(views_hash);
  how.on_record = [&](std::size_t slot, const OR& j, std::size_t line) {
    add_view_record(blocks[slot], j, line, b);
  };
  how.on_block = [&](std::size_t slot) {
    IndexBlock& k = blocks[slot];
    for (std::size_t i = 0; i < k.recs.size(); ++i) {
      if (i + kPrefetch < k.recs.size()) b.prefetch_view(k.recs[i + kPrefetch].hash);
      const auto& r = k.recs[i];
      const std::string_view prompt_id = k.get(r.id);
      std::optional<std::string_view> fam;
      if (r.has_family) fam = k.get(r.family);
      if (!b.add_view(prompt_id, k.get(r.view), fam, k.get(r.template_id), k.get(r.expected), k.get(r.unit),
                      r.hash)) {
        fail("{}:{}: duplicate prompt_id '{}'", views_path.string(), r.line, prompt_id);
      }
    }
    k.clear();
  };
  (void)io::read_jsonl_fast_parallel(views_path, how);
  b.file_sha256["views.jsonl"] = views_hash.hex_digest();
  b.finish();
  return b;
}

}  // namespace

void IndexCacheWrite::start(const BenchmarkIndex& b) {
  if (!write_ || thread_.joinable()) return;
  thread_ = std::jthread([this, &b] {
    try {
      write_(b);
    } catch (const std::exception&) {
      // A cache that cannot be written (read-only or full disk) only costs the next run its time.
    }
  });
}

BenchmarkIndex load_benchmark_index(const fs::path& dir, std::size_t threads, const IndexCache& cache,
                                    IndexCacheWrite* later) {
  std::string manifest = detail::read_manifest(dir);
  if (cache.folder.empty()) return build_index(dir, std::move(manifest), threads);
  // Stamped before the files are read: a file changed while it is read does not match next time.
  const auto stamps = detail::stamps_of(dir);
  if (!stamps) return build_index(dir, std::move(manifest), threads);  // it says what is missing
  const fs::path file = detail::index_cache_file(cache.folder, *stamps);
  if (cache.read) {
    std::string warning;
    if (auto cached = detail::read_index_cache(file, dir, *stamps, manifest, &warning))
      return std::move(*cached);
    if (!warning.empty() && cache.warn) cache.warn(warning);
  }
  BenchmarkIndex b = build_index(dir, std::move(manifest), threads);
  if (later != nullptr) {
    later->write_ = [file, stamps = *stamps](const BenchmarkIndex& x) {
      detail::write_index_cache(file, x, stamps);
    };
    return b;
  }
  try {
    detail::write_index_cache(file, b, *stamps);
  } catch (const std::exception&) {
    // A cache that cannot be written (read-only or full disk) only costs the next run its time.
  }
  return b;
}

std::map<std::string, std::string> manifest_file_hashes(const BenchmarkIndex& bench) {
  return detail::manifest_file_hashes(bench.dir, bench.manifest_json);
}

io::OrderedJson generator_provenance(const BenchmarkIndex& bench) {
  return detail::generator_provenance(bench.dir, bench.manifest_json);
}

void verify_benchmark(const BenchmarkIndex& bench) {
  detail::verify_benchmark(bench.dir, bench.manifest_json, bench.file_sha256);
}

}  // namespace numcheck::orbit
