// The benchmark index cache (index.hpp, IndexCache): the index of a benchmark folder in a binary
// file, read back instead of parsing bases.jsonl and views.jsonl again.
//
// File: "NCORBIX4" | body | u64 body size | SHA-256 of the body (64 hex digits). Integers are this
// machine's (the magic, read as a u64, also tells the byte order). The body:
//   head:  numcheck version, the folder (canonical path), SHA-256 of manifest.json, bases.jsonl and
//          views.jsonl, the two files' stamps (size, device, inode, modification and change times)
//          taken before they were read, and the wall-clock time of that stamping
//   index: the four name tables (views, families, templates, units), the prompts' text, entries and
//          hash table, the bases' text, offsets and hash table
// Strings and arrays are a u64 count and their bytes; an array of core::kLargeArrayBytes or more
// has zero bytes before its first so that it starts at a multiple of kAlign in the file (and is
// mapped instead of read: Source::map). A file is used only when its magic and size check, its
// head matches the folder now (version, path, manifest.json's hash, stamps) and its tables are
// within bounds (so every accessor stays in bounds: fuzz/fuzz_orbit_index_cache.cpp);
// its own SHA-256 is then checked beside the caller (IndexCacheCheck), and so are the two files'
// unless their last change lay kSettledNs before the stamping (then their unchanged stamps stand
// for the recorded hashes, as a clean file in git's index does); nothing may be written from the
// index before the checks pass. Change kMagic whenever the index's content or this layout changes.
#include "orbit/index_cache.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <ctime>
#include <functional>
#include <future>
#include <optional>
#include <system_error>
#include <type_traits>

#include "core/error.hpp"
#include "core/large_array.hpp"
#include "core/version.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"

namespace numcheck::orbit {

namespace fs = std::filesystem;

class IndexCacheCheck {
 public:
  // Hashes the benchmark's files (`expected`: name -> hex; empty when their stamps stand for them)
  // and the cache file's body (`fd`, owned from here on: the very file that is read) on threads of
  // their own. Started as soon as the cache's head is read, so that the hashing runs beside the
  // reading of its tables.
  IndexCacheCheck(const fs::path& dir, const std::map<std::string, std::string>& expected, int fd,
                  std::uint64_t body_offset, std::uint64_t body_size, std::string body_sha256)
      : fd_(fd) {
    try {
      checks_.push_back(
          std::async(std::launch::async, [this, body_offset, body_size, want = std::move(body_sha256)] {
            std::string hex;
            return io::sha256_fd(fd_, body_offset, body_size, hex, &stop_) == 0 && hex == want;
          }).share());
      for (const auto& [name, hash] : expected) {
        checks_.push_back(std::async(std::launch::async, [this, path = dir / name, want = hash] {
                            const int file = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
                            if (file < 0) return false;  // unreadable now: not confirmed (the files say why)
                            std::string hex;
                            const int err = io::sha256_fd(file, 0, std::nullopt, hex, &stop_);
                            ::close(file);
                            return err == 0 && hex == want;
                          }).share());
      }
    } catch (...) {  // no thread: the ones started stop; `fd` stays the caller's, who reads the files instead
      stop_ = true;
      for (const auto& c : checks_) c.wait();
      throw;
    }
  }
  IndexCacheCheck(const IndexCacheCheck&) = delete;
  IndexCacheCheck& operator=(const IndexCacheCheck&) = delete;
  // Stops the hashing that nobody waited for (a cache refused after its head, a command that ended
  // in an error).
  ~IndexCacheCheck() {
    stop_ = true;
    for (const auto& c : checks_) c.wait();
    ::close(fd_);
  }
  [[nodiscard]] bool ok() const {
    return std::all_of(checks_.begin(), checks_.end(), [](const auto& c) { return c.get(); });
  }

 private:
  int fd_;
  std::atomic<bool> stop_{false};
  std::vector<std::shared_future<bool>> checks_;
};

bool BenchmarkIndex::confirmed() const { return cache_check == nullptr || cache_check->ok(); }

namespace {

constexpr char kMagic[8] = {'N', 'C', 'O', 'R', 'B', 'I', 'X', '4'};
constexpr std::size_t kTrailer = 8 + 64;
constexpr std::size_t kKeep = 16;  // cache files kept in the folder; the oldest go
// An array of core::kLargeArrayBytes or more starts at a multiple of this in the file, so that the
// reader can map it (where the system's page size divides it; elsewhere it reads it).
constexpr std::uint64_t kAlign = 4096;
constexpr std::uint64_t padding_at(std::uint64_t file_offset) {
  return (kAlign - file_offset % kAlign) % kAlign;
}

struct BadCache {};  // the file is not a usable cache (thrown inside, never out of this file)

// Writes the body through an AtomicFile, hashing it.
class Sink {
 public:
  explicit Sink(io::AtomicFile& f) : f_(f) {}
  void bytes(const void* p, std::size_t n) {
    const std::string_view s(static_cast<const char*>(p), n);
    hash_.update(s);
    f_.write(s);
    size_ += n;
  }
  void u64(std::uint64_t v) { bytes(&v, sizeof v); }
  void str(std::string_view s) {
    u64(s.size());
    bytes(s.data(), s.size());
  }
  template <typename V>
  void array(const V& v) {
    static_assert(std::is_trivially_copyable_v<typename V::value_type>);
    u64(v.size());
    const std::size_t n = v.size() * sizeof(typename V::value_type);
    if (n >= core::kLargeArrayBytes) {
      static constexpr char kZeros[kAlign] = {};
      bytes(kZeros, padding_at(sizeof kMagic + size_));
    }
    bytes(v.data(), n);
  }
  void finish() {
    const std::uint64_t size = size_;
    const std::string hex = hash_.hex_digest();
    f_.write(std::string_view(reinterpret_cast<const char*>(&size), sizeof size));
    f_.write(hex);
  }

 private:
  io::AtomicFile& f_;
  io::Sha256 hash_;
  std::uint64_t size_ = 0;
};

// Reads the body from a descriptor; never reads past the body, never allocates more than what is
// left of it. (Its hash is checked beside the caller: IndexCacheCheck.)
class Source {
 public:
  Source(int fd, std::uint64_t offset, std::uint64_t size) : fd_(fd), at_(offset), left_(size) {}
  explicit Source(std::string_view body) : mem_(body), left_(body.size()) {}
  void bytes(void* p, std::size_t n) {
    if (n > left_) throw BadCache{};
    auto* out = static_cast<char*>(p);
    if (fd_ < 0) {
      if (n > 0) std::memcpy(out, mem_.data() + (mem_.size() - left_), n);
      left_ -= n;
      return;
    }
    if (io::pread_exact(fd_, at_, out, n) != 0) throw BadCache{};
    at_ += n;
    left_ -= n;
  }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    bytes(&v, sizeof v);
    return v;
  }
  std::size_t count(std::size_t unit) {
    const std::uint64_t n = u64();
    if (unit == 0 || n > left_ / unit) throw BadCache{};
    return static_cast<std::size_t>(n);
  }
  std::string str() {
    std::string s(count(1), '\0');
    bytes(s.data(), s.size());
    return s;
  }
  // An array (a LargeVector, or a vector of small elements); one of core::kLargeArrayBytes or more
  // comes after padding to kAlign and is mapped from the file where it can be (map below).
  template <typename V>
  void array(V& v) {
    using T = typename V::value_type;
    static_assert(std::is_trivially_copyable_v<T>);
    const std::size_t n = count(sizeof(T));
    const std::size_t size = n * sizeof(T);
    if (size >= core::kLargeArrayBytes) {
      skip(padding_at(file_offset()));
      if (map(v, n, size)) return;
    }
    v.resize(n);
    bytes(v.data(), size);
  }
  [[nodiscard]] std::uint64_t left() const noexcept { return left_; }

 private:
  [[nodiscard]] std::uint64_t file_offset() const noexcept {
    return fd_ >= 0 ? at_ : sizeof kMagic + (mem_.size() - left_);
  }
  void skip(std::uint64_t n) {
    if (n > left_) throw BadCache{};
    at_ += n;
    left_ -= n;
  }
  // A large array's bytes mapped from the file (private, populated: the page cache's pages, neither
  // zero-filled nor copied) and handed to the array's allocation (core::AdoptMapping). False where
  // it cannot be (no file, an offset that is not a multiple of the page size, mmap failed): then the
  // caller reads it. The mapping lies within the body, whose size was checked against the file's;
  // a cache file is only ever replaced by rename, never cut short in place, by numcheck.
  template <typename V>
  bool map(V& v, std::size_t n, std::size_t size) {
    const long page = ::sysconf(_SC_PAGESIZE);
    if (fd_ < 0 || size > left_ || page <= 0 || at_ % static_cast<std::uint64_t>(page) != 0) return false;
    // Populated read-only, so that the page cache's pages are mapped as they are (populating a
    // writable private mapping would copy each one to break its copy-on-write up front); then made
    // writable like any array's memory, its pages still shared until something writes to one.
    void* const p =
        ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd_, static_cast<off_t>(at_));
    if (p == MAP_FAILED) return false;
    const core::AdoptMapping adopt(p, size);
    if (::mprotect(p, size, PROT_READ | PROT_WRITE) != 0) return false;
    v.resize(n);
    if (!adopt.taken()) return false;  // the array did not come from map_large: read instead
    skip(size);
    return true;
  }

  int fd_ = -1;           // the file's descriptor, or -1: the body is `mem_`
  std::string_view mem_;  // a body in memory (the fuzz target's)
  std::uint64_t at_ = 0;  // the file's offset of the next byte
  std::uint64_t left_;
};

void write_stamp(Sink& s, const detail::FileStamp& f) {
  s.u64(f.size);
  s.u64(f.device);
  s.u64(f.inode);
  s.u64(static_cast<std::uint64_t>(f.mtime_ns));
  s.u64(static_cast<std::uint64_t>(f.ctime_ns));
}

detail::FileStamp read_stamp(Source& s) {
  detail::FileStamp f;
  f.size = s.u64();
  f.device = s.u64();
  f.inode = s.u64();
  f.mtime_ns = static_cast<std::int64_t>(s.u64());
  f.ctime_ns = static_cast<std::int64_t>(s.u64());
  return f;
}

// A hash table of indices + 1 for `count` keys: a power of two, at least twice as large, every value
// at most `count`, and an empty slot (so that every probe ends).
bool table_ok(const core::LargeVector<std::uint32_t>& slots, std::size_t count) {
  if (slots.empty()) return count == 0;
  if ((slots.size() & (slots.size() - 1)) != 0 || slots.size() < 2 * count) return false;
  bool empty = false;
  for (const std::uint32_t v : slots) {
    if (v > count) return false;
    empty = empty || v == 0;
  }
  return empty;
}

}  // namespace

class IndexCacheFile {
  static_assert(sizeof(BenchmarkIndex::Entry) == 16 && std::is_trivially_copyable_v<BenchmarkIndex::Entry>);

 public:
  static void write(io::AtomicFile& file, const BenchmarkIndex& b, const detail::IndexStamps& stamps) {
    file.write(std::string_view(kMagic, sizeof kMagic));
    Sink s(file);
    s.str(kVersion);
    s.str(stamps.dir);
    s.str(io::sha256_hex(b.manifest_json));
    s.str(b.file_sha256.at("bases.jsonl"));
    s.str(b.file_sha256.at("views.jsonl"));
    write_stamp(s, stamps.bases);
    write_stamp(s, stamps.views);
    s.u64(static_cast<std::uint64_t>(stamps.stamped_ns));
    for (const auto* t : {&b.views_names_, &b.families_, &b.templates_, &b.units_}) {
      s.u64(t->names.size());
      for (const auto& n : t->names) s.str(n);
    }
    s.array(b.text_);
    s.array(b.views_);
    positions(s, b.view_tags_, b.view_slots_);
    s.str(b.base_text_);
    s.array(b.base_offsets_);
    positions(s, b.base_tags_, b.base_slots_);
    s.finish();
  }

  // A hash table as the file keeps it: the positions alone (those of the tagged table while the
  // index is being built: BenchmarkIndex::finish's).
  static void positions(Sink& s, const core::LargeVector<std::uint64_t>& tags,
                        const core::LargeVector<std::uint32_t>& slots) {
    if (tags.empty()) {
      s.array(slots);
      return;
    }
    core::LargeVector<std::uint32_t> p;
    BenchmarkIndex::positions_of(tags, p);
    s.array(p);
  }

  // The index from the body (Source positioned at it), or BadCache. `on_head`, when set, is called
  // once the head matched, before the tables are read, with the files' recorded hashes and whether
  // their stamps stand for them (detail::settled at the cache's stamping).
  static BenchmarkIndex read(
      Source& s, const detail::IndexStamps& stamps, const std::string& manifest_sha256,
      const std::function<void(const std::map<std::string, std::string>&, bool settled)>& on_head = {}) {
    if (s.str() != kVersion || s.str() != stamps.dir || s.str() != manifest_sha256) throw BadCache{};
    BenchmarkIndex b;
    b.file_sha256["bases.jsonl"] = s.str();
    b.file_sha256["views.jsonl"] = s.str();
    if (!(read_stamp(s) == stamps.bases) || !(read_stamp(s) == stamps.views)) throw BadCache{};
    const auto stamped_ns = static_cast<std::int64_t>(s.u64());
    if (on_head) on_head(b.file_sha256, detail::settled(stamps, stamped_ns));
    for (auto* t : {&b.views_names_, &b.families_, &b.templates_, &b.units_}) {
      const std::size_t n = s.count(8);
      if (n >= BenchmarkIndex::kNone) throw BadCache{};
      t->names.reserve(n);
      for (std::size_t i = 0; i < n; ++i) {
        t->names.push_back(s.str());
        if (!t->ids.emplace(t->names.back(), static_cast<std::uint16_t>(i)).second) throw BadCache{};
      }
    }
    s.array(b.text_);
    s.array(b.views_);
    s.array(b.view_slots_);
    b.base_text_ = s.str();
    s.array(b.base_offsets_);
    s.array(b.base_slots_);
    if (s.left() != 0) throw BadCache{};
    check(b);
    return b;
  }

 private:
  // What the accessors rely on: every entry's text and names within bounds, tables that end.
  static void check(const BenchmarkIndex& b) {
    const auto in = [](std::uint16_t id, const BenchmarkIndex::Interned& t) { return id < t.names.size(); };
    for (const auto& e : b.views_) {
      if (std::uint64_t{e.offset} + e.id_length + e.expected_length > b.text_.size() ||
          !in(e.view, b.views_names_) || !in(e.template_id, b.templates_) || !in(e.unit, b.units_) ||
          (e.family != BenchmarkIndex::kNone && !in(e.family, b.families_)) ||
          b.views_names_.names[e.view].size() + 1 > e.id_length) {
        throw BadCache{};
      }
    }
    std::uint32_t last = 0;
    for (const std::uint32_t o : b.base_offsets_) {
      if (o < last || o > b.base_text_.size()) throw BadCache{};
      last = o;
    }
    if (!table_ok(b.view_slots_, b.views_.size()) || !table_ok(b.base_slots_, b.base_offsets_.size())) {
      throw BadCache{};
    }
  }
};

namespace detail {

namespace {

std::int64_t ns_of(const struct timespec& t) {
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

std::optional<FileStamp> stamp_of(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  FileStamp f;
  f.size = static_cast<std::uint64_t>(st.st_size);
  f.device = static_cast<std::uint64_t>(st.st_dev);
  f.inode = static_cast<std::uint64_t>(st.st_ino);
  f.mtime_ns = ns_of(st.st_mtim);
  f.ctime_ns = ns_of(st.st_ctim);
  return f;
}

}  // namespace

std::optional<IndexStamps> stamps_of(const fs::path& dir) {
  struct timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);  // before the files are stat'ed
  std::error_code ec;
  const fs::path canonical = fs::canonical(dir, ec);
  if (ec) return std::nullopt;
  const auto bases = stamp_of(dir / "bases.jsonl");
  const auto views = stamp_of(dir / "views.jsonl");
  if (!bases || !views) return std::nullopt;
  return IndexStamps{canonical.string(), *bases, *views, ns_of(now)};
}

bool settled(const IndexStamps& stamps, std::int64_t stamped_ns) noexcept {
  // Differences of positive times only (the stamping time comes from a file: no overflow).
  const auto one = [stamped_ns](const FileStamp& f) {
    return f.ctime_ns > 0 && stamped_ns > f.ctime_ns && stamped_ns - f.ctime_ns > kSettledNs;
  };
  return one(stamps.bases) && one(stamps.views);
}

fs::path index_cache_file(const fs::path& folder, const IndexStamps& stamps) {
  return folder / "orbit-index" / (io::sha256_hex(stamps.dir).substr(0, 32) + ".idx");
}

std::optional<BenchmarkIndex> read_index_cache(const fs::path& file, const fs::path& dir,
                                               const IndexStamps& stamps, std::string manifest_json,
                                               std::string* warning) {
  // O_NONBLOCK: opening a FIFO put at the cache's path returns at once instead of waiting for a
  // writer, and the fstat below refuses anything but a regular file before a byte is read.
  io::UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) return std::nullopt;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return std::nullopt;
  if (!S_ISREG(st.st_mode)) {
    if (warning != nullptr) {
      *warning = fmt::format(
          "the benchmark index cache {} is not a regular file (a FIFO, device or socket?): not read; the "
          "index is built from the files (remove it, or use --no-index-cache)",
          file.string());
    }
    return std::nullopt;
  }
  if (static_cast<std::uint64_t>(st.st_size) < sizeof kMagic + kTrailer) return std::nullopt;
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  char magic[sizeof kMagic];
  char trailer[kTrailer];
  if (io::pread_exact(fd.get(), 0, magic, sizeof magic) != 0 ||
      std::memcmp(magic, kMagic, sizeof kMagic) != 0 ||
      io::pread_exact(fd.get(), file_size - kTrailer, trailer, kTrailer) != 0) {
    return std::nullopt;
  }
  std::uint64_t body_size = 0;
  std::memcpy(&body_size, trailer, sizeof body_size);
  if (body_size != file_size - sizeof kMagic - kTrailer) return std::nullopt;
  try {
    Source s(fd.get(), sizeof kMagic, body_size);
    std::shared_ptr<IndexCacheCheck> check;
    BenchmarkIndex b = IndexCacheFile::read(
        s, stamps, io::sha256_hex(manifest_json),
        [&](const std::map<std::string, std::string>& hashes, bool files_settled) {
          // The hashing starts now, beside the reading of the tables (most of the time of a read
          // on a machine where fresh memory is dear); a table refused below stops it. Files whose
          // stamps stand for their recorded hashes are not read.
          check = std::make_shared<IndexCacheCheck>(
              dir, files_settled ? std::map<std::string, std::string>{} : hashes, fd.get(), sizeof kMagic,
              body_size, std::string(trailer + 8, 64));
          (void)fd.release();  // the check's now; `s` reads through it while `check` lives
        });
    b.dir = dir;
    b.manifest_json = std::move(manifest_json);
    b.cache_check = std::move(check);
    return b;
  } catch (const BadCache&) {
    return std::nullopt;
  } catch (const std::bad_alloc&) {
    return std::nullopt;
  } catch (const std::system_error&) {  // no thread for the check: read the files instead
    return std::nullopt;
  }
}

std::optional<BenchmarkIndex> parse_index_cache_body(std::string_view body, const IndexStamps& stamps,
                                                     const std::string& manifest_sha256) {
  try {
    Source s(body);
    return IndexCacheFile::read(s, stamps, manifest_sha256);
  } catch (const BadCache&) {
    return std::nullopt;
  } catch (const std::bad_alloc&) {
    return std::nullopt;
  }
}

void write_index_cache(const fs::path& file, const BenchmarkIndex& b, const IndexStamps& stamps) {
  {
    io::AtomicFile out(file, io::AtomicFile::Durability::kCache);
    IndexCacheFile::write(out, b, stamps);
    out.commit();
  }
  // At most kKeep files: the least recently written go (a folder scored again is written again
  // only when its files changed; a removed one is rebuilt when needed).
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, fs::path>> files;
  for (const auto& e : fs::directory_iterator(file.parent_path(), ec)) {
    if (e.path().extension() == ".idx") files.emplace_back(e.last_write_time(ec), e.path());
  }
  if (files.size() <= kKeep) return;
  std::sort(files.begin(), files.end());
  for (std::size_t i = 0; i + kKeep < files.size(); ++i) fs::remove(files[i].second, ec);
}

}  // namespace detail

IndexCache default_index_cache() { return IndexCache{io::user_cache_dir(), true}; }

}  // namespace numcheck::orbit
