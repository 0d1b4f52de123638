#include "llm/cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <map>
#include <system_error>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "io/cache_dir.hpp"
#include "io/files.hpp"
#include "io/json_writer.hpp"
#include "io/sha256.hpp"
#include "llm/sqlite_api.hpp"

namespace numcheck::llm {

namespace fs = std::filesystem;

namespace {

std::string now_iso() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// ---- The store's formats (cache.hpp; docs/runner.md, "The response cache") ----
// Every integer is little-endian, whatever the machine.
constexpr std::string_view kEntriesHeader = "numcheck-cache1\n";  // 16 bytes
constexpr std::string_view kIndexHeader = "numcheck-index1\n";    // 16 bytes
constexpr std::uint64_t kHeaderSize = 16;
static_assert(kEntriesHeader.size() == kHeaderSize && kIndexHeader.size() == kHeaderSize);
// A record: this magic number, the length of what follows, then seven fields, each its length
// and its bytes: key, request hash, check, model, identity, creation time, completion.
constexpr std::uint32_t kRecordMagic = 0x31524e43;  // "CNR1"
constexpr std::size_t kRecordFields = 7;
// The most a record may hold: a completion of up to 256 MiB (the HTTP client's own bound is lower).
constexpr std::uint64_t kMaxRecord = std::uint64_t{1} << 28;
// An index line: key prefix (8), record offset (8), record length or hit count (4), kind (4), seal (8).
constexpr std::uint64_t kLineSize = 32;
enum Kind : std::uint32_t { kEntryLine = 0, kHitLine = 1 };
// The index is rewritten (compact_index) when a connection reading it whole finds more than this
// many lines per live entry, plus kCompactSlack: each cached answer served adds a hit line, so an
// index would otherwise grow with every run over the same prompts.
constexpr std::uint64_t kCompactFactor = 4;
constexpr std::uint64_t kCompactSlack = 65536;  // lines (2 MiB)
// How long a connection waits for another's lock on the store before it reports the cache busy: a
// writer holds it for two writes, `cache clear` for a rewrite of the files.
constexpr auto kLockPatience = std::chrono::seconds(120);

void put_u32(std::string& out, std::uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xffU);
  out.append(b, 4);
}
void put_u64(std::string& out, std::uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xffU);
  out.append(b, 8);
}
std::uint32_t get_u32(const char* p) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
std::uint64_t get_u64(const char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// The seal of an index line: a mix of its other fields (splitmix64's finalizer), so that a line
// torn by a crash or overwritten with anything else is recognised and skipped.
std::uint64_t seal(std::uint64_t prefix, std::uint64_t offset, std::uint32_t count, std::uint32_t kind) {
  std::uint64_t x = prefix ^ 0x6e756d636865636bULL;  // "numcheck"
  for (const std::uint64_t v : {offset, (std::uint64_t{count} << 32) | kind}) {
    x += 0x9e3779b97f4a7c15ULL + v;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
  }
  return x;
}

void put_line(std::string& out, std::uint64_t prefix, std::uint64_t offset, std::uint32_t count, Kind kind) {
  put_u64(out, prefix);
  put_u64(out, offset);
  put_u32(out, count);
  put_u32(out, kind);
  put_u64(out, seal(prefix, offset, count, kind));
}

struct Line {
  std::uint64_t prefix = 0, offset = 0;
  std::uint32_t count = 0;
  Kind kind = kEntryLine;
};

// An index line read back, or nullopt when its seal does not match or its kind is unknown.
std::optional<Line> read_line(const char* p) {
  Line l;
  l.prefix = get_u64(p);
  l.offset = get_u64(p + 8);
  l.count = get_u32(p + 16);
  const std::uint32_t kind = get_u32(p + 20);
  if (kind > kHitLine || get_u64(p + 24) != seal(l.prefix, l.offset, l.count, kind)) return std::nullopt;
  l.kind = static_cast<Kind>(kind);
  return l;
}

// The fields of a record, in their order in it.
struct RecordFields {
  std::string_view key, request_sha256, check, model, identity, created, completion;
};

void append_record(std::string& out, std::string_view key, std::string_view request_sha256,
                   std::string_view check, std::string_view model, std::string_view identity,
                   std::string_view created, std::string_view completion) {
  const std::array<std::string_view, kRecordFields> fields = {key,      request_sha256, check,     model,
                                                              identity, created,        completion};
  std::size_t payload = 0;
  for (const auto f : fields) payload += 4 + f.size();
  out.reserve(out.size() + 8 + payload);
  put_u32(out, kRecordMagic);
  put_u32(out, static_cast<std::uint32_t>(payload));
  for (const auto f : fields) {
    put_u32(out, static_cast<std::uint32_t>(f.size()));
    out.append(f);
  }
}

// The fields of the whole record in `r` (magic, length and seven fields that fill it exactly), or
// nullopt for anything else.
std::optional<RecordFields> parse_record(std::string_view r) {
  if (r.size() < 8 || get_u32(r.data()) != kRecordMagic || get_u32(r.data() + 4) != r.size() - 8)
    return std::nullopt;
  std::array<std::string_view, kRecordFields> f;
  std::size_t at = 8;
  for (auto& field : f) {
    if (r.size() - at < 4) return std::nullopt;
    const std::uint32_t n = get_u32(r.data() + at);
    at += 4;
    if (r.size() - at < n) return std::nullopt;
    field = r.substr(at, n);
    at += n;
  }
  if (at != r.size()) return std::nullopt;
  return RecordFields{f[0], f[1], f[2], f[3], f[4], f[5], f[6]};
}

// Where an entry's record is.
struct Loc {
  std::uint64_t offset = 0;
  std::uint32_t length = 0;  // 0: an empty slot
};

// Key prefix -> record: open addressing with linear probing, a power-of-two number of slots at
// most half full. Holds the latest entry line of each prefix (a later line replaces an earlier one).
class LocTable {
 public:
  void put(std::uint64_t prefix, Loc loc) {
    if ((used_ + 1) * 2 > slots_.size()) grow();
    Slot& s = find_slot(prefix);
    if (s.loc.length == 0) ++used_;
    s.prefix = prefix;
    s.loc = loc;
  }
  [[nodiscard]] const Loc* find(std::uint64_t prefix) const {
    if (slots_.empty()) return nullptr;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = home(prefix);; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.loc.length == 0) return nullptr;
      if (s.prefix == prefix) return &s.loc;
    }
  }
  [[nodiscard]] std::size_t size() const noexcept { return used_; }
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (const Slot& s : slots_)
      if (s.loc.length != 0) fn(s.prefix, s.loc);
  }
  void clear() {
    slots_.clear();
    used_ = 0;
  }

 private:
  struct Slot {
    std::uint64_t prefix = 0;
    Loc loc;
  };
  [[nodiscard]] std::size_t home(std::uint64_t prefix) const noexcept {
    // Fibonacci hashing: prefixes of keys that are not SHA-256 hex may share their low bits.
    return static_cast<std::size_t>((prefix * 0x9e3779b97f4a7c15ULL) >> shift_);
  }
  Slot& find_slot(std::uint64_t prefix) {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = home(prefix);; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.loc.length == 0 || s.prefix == prefix) return s;
    }
  }
  void grow() {
    std::vector<Slot> old =
        std::exchange(slots_, std::vector<Slot>(std::max<std::size_t>(64, slots_.size() * 2)));
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(slots_.size()));
    used_ = 0;
    for (const Slot& s : old)
      if (s.loc.length != 0) put(s.prefix, s.loc);
  }
  std::vector<Slot> slots_;
  std::size_t used_ = 0;
  unsigned shift_ = 58;
};

[[noreturn]] void fail_io(const fs::path& path, std::string_view what, int err) {
  fail(ErrorCode::kIo, "response cache {}: {}: {}", path.string(), what, std::strerror(err));
}

int open_fd(const fs::path& path, int flags) {
  for (;;) {
    const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EINTR) return fd;
  }
}

std::uint64_t file_size(int fd, const fs::path& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail_io(path, "cannot read its size", errno);
  return static_cast<std::uint64_t>(st.st_size);
}

// Whether another file now has the name of the one open as `fd` (`cache clear` renames new files
// over). A name that is gone (the folder removed under a run) is not: the open file is used on.
bool replaced_file(int fd, const fs::path& path) {
  struct stat a {
  }, b{};
  if (::stat(path.c_str(), &b) != 0 || ::fstat(fd, &a) != 0) return false;
  return a.st_dev != b.st_dev || a.st_ino != b.st_ino;
}

// The store's lock (flock on <path>.lock), held while this object lives. Waits with pauses while
// another connection holds it, up to kLockPatience, then reports the cache busy.
class StoreLock {
 public:
  StoreLock(int fd, int op, const fs::path& path) : fd_(fd) {
    const auto until = std::chrono::steady_clock::now() + kLockPatience;
    for (int attempt = 0;; ++attempt) {
      if (::flock(fd, op | LOCK_NB) == 0) return;
      const int err = errno;
      if (err == EINTR) continue;
      if (err != EWOULDBLOCK) fail_io(path, "cannot lock the cache", err);
      if (std::chrono::steady_clock::now() >= until)
        fail(ErrorCode::kIo, "response cache {}: still locked by another process after {} s", path.string(),
             kLockPatience.count());
      std::this_thread::sleep_for(std::chrono::microseconds(std::min(50'000, 100 << std::min(attempt, 9))));
    }
  }
  ~StoreLock() { (void)::flock(fd_, LOCK_UN); }
  StoreLock(const StoreLock&) = delete;
  StoreLock& operator=(const StoreLock&) = delete;

 private:
  int fd_;
};

fs::path index_path(const fs::path& p) { return fs::path(p.string() + ".index"); }
fs::path lock_path(const fs::path& p) { return fs::path(p.string() + ".lock"); }

}  // namespace

std::int64_t ResponseCache::key_prefix(std::string_view key) noexcept {
  // The first 16 hex digits of a key (every key cache_key makes), else the first 8 bytes of the
  // key's SHA-256: stable across machines and versions, since caches keep it.
  // Each byte's hex digit, 16 for any other byte: one lookup a digit, no branch (every lookup and
  // every stored answer pays for this).
  static constexpr auto kDigit = [] {
    std::array<std::uint8_t, 256> t{};
    t.fill(16);
    for (int c = '0'; c <= '9'; ++c) t[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(c - '0');
    for (int c = 'a'; c <= 'f'; ++c) t[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(c - 'a' + 10);
    return t;
  }();
  std::uint64_t v = 0;
  unsigned bad = key.size() >= 16 ? 0 : 16;
  for (std::size_t i = 0; bad == 0 && i < 16; ++i) {
    const std::uint8_t d = kDigit[static_cast<unsigned char>(key[i])];
    bad |= d & 16U;
    v = (v << 4) | (d & 15U);
  }
  if (bad != 0) {
    io::Sha256 h;
    h.update(key);
    const auto digest = h.digest();
    v = 0;
    for (std::size_t i = 0; i < 8; ++i) v = (v << 8) | digest[i];
  }
  return static_cast<std::int64_t>(v);
}

std::string ResponseCache::entry_check(std::string_view key, std::string_view request_sha256,
                                       std::string_view completion) {
  io::Sha256 h;  // of key + "\n" + request_sha256 + "\n" + completion, without the copy
  h.update(key);
  h.update("\n");
  h.update(request_sha256);
  h.update("\n");
  h.update(completion);
  return h.hex_digest();
}

std::string request_hash(const io::Json& request_body) {
  return io::sha256_hex(request_body.dump(-1, ' ', false, io::Json::error_handler_t::replace));
}

fs::path default_cache_path(const fs::path& dir) {
  return (dir.empty() ? io::user_cache_dir() : dir) / "responses.cache";
}

std::string request_hash_from_line(std::string_view body_line) { return io::sha256_hex(body_line); }

CacheKeyHasher::CacheKeyHasher(std::string_view identity_line) {
  // The dump of {"identity": identity, "request": body} (keys sorted: "identity" < "request"),
  // hashed in pieces: everything before the body here, the body and the closing brace in key().
  prefix_.update(R"({"identity":)");
  prefix_.update(identity_line);
  prefix_.update(R"(,"request":)");
}

std::string CacheKeyHasher::key(std::string_view body_line) const {
  io::Sha256 h = prefix_;
  h.update(body_line);
  h.update("}");
  return h.hex_digest();
}

std::string cache_key_from_lines(std::string_view identity_line, std::string_view body_line) {
  return CacheKeyHasher(identity_line).key(body_line);
}

std::string cache_key(const io::Json& identity, const io::Json& request_body) {
  // io::Json has sorted object keys, so the dump is a canonical form of the JSON value.
  const io::Json k = {{"identity", identity}, {"request", request_body}};
  return io::sha256_hex(k.dump(-1, ' ', false, io::Json::error_handler_t::replace));
}

io::Json completion_to_json(const Completion& c) {
  io::Json j = {{"content", c.content}, {"finish_reason", c.finish_reason},
                {"usage", c.usage},     {"timings", c.timings},
                {"model", c.model},     {"system_fingerprint", c.system_fingerprint}};
  j["reasoning"] = c.reasoning ? io::Json(*c.reasoning) : io::Json();
  return j;
}

std::string completion_line(const Completion& c) {
  using namespace io::literals;
  // completion_to_json's members in io::Json's (sorted) order.
  std::string line;
  line.reserve(c.content.size() + 256);
  io::JsonWriter w(line);
  w.begin_object().key("content"_key).value(c.content).key("finish_reason"_key).value(c.finish_reason);
  w.key("model"_key).value(c.model).key("reasoning"_key);
  if (c.reasoning) {
    w.value(*c.reasoning);
  } else {
    w.null();
  }
  w.key("system_fingerprint"_key).value(c.system_fingerprint);
  w.key("timings"_key).json(c.timings).key("usage"_key).json(c.usage);
  w.end_object();
  return line;
}

Completion completion_from_json(const io::Json& j) {
  Completion c;
  c.content = j.value("content", std::string());
  c.finish_reason = j.value("finish_reason", std::string());
  if (j.contains("usage")) c.usage = j["usage"];
  if (j.contains("timings")) c.timings = j["timings"];
  c.model = j.value("model", std::string());
  c.system_fingerprint = j.value("system_fingerprint", std::string());
  if (j.contains("reasoning") && j["reasoning"].is_string()) c.reasoning = j["reasoning"].get<std::string>();
  return c;
}

KeySnapshot::KeySnapshot(std::vector<std::uint64_t> hashes) : hashes_(std::move(hashes)) {
  std::sort(hashes_.begin(), hashes_.end());
  hashes_.erase(std::unique(hashes_.begin(), hashes_.end()), hashes_.end());
}

std::uint64_t KeySnapshot::hash(std::string_view key) noexcept {
  return static_cast<std::uint64_t>(ResponseCache::key_prefix(key));
}

bool KeySnapshot::may_contain(std::string_view key) const noexcept {
  return std::binary_search(hashes_.begin(), hashes_.end(), hash(key));
}

// ---- The store ----

namespace {

// A file written from scratch under the store's lock: `path`.tmp, buffered, flushed to the disk and
// renamed over `path` by finish(); removed again when dropped unfinished (an error on the way).
class NewFile {
 public:
  explicit NewFile(fs::path path) : path_(std::move(path)), tmp_(path_.string() + ".tmp") {
    fd_ = io::UniqueFd(open_fd(tmp_, O_WRONLY | O_CREAT | O_TRUNC));
    if (fd_.get() < 0) fail_io(tmp_, "cannot create", errno);
  }
  NewFile(const NewFile&) = delete;
  NewFile& operator=(const NewFile&) = delete;
  ~NewFile() {
    if (done_) return;
    fd_.reset();
    (void)::unlink(tmp_.c_str());
  }
  void append(std::string_view bytes) {
    buf_.append(bytes);
    size_ += bytes.size();
    if (buf_.size() >= (std::size_t{1} << 22)) flush();
  }
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
  void finish() {
    flush();
    if (::fdatasync(fd_.get()) != 0) fail_io(tmp_, "cannot flush", errno);
    fd_.reset();
    if (::rename(tmp_.c_str(), path_.c_str()) != 0)
      fail_io(path_, "cannot rename the new file into place", errno);
    done_ = true;
  }

 private:
  void flush() {
    if (const int err = io::pwrite_exact(fd_.get(), written_, buf_); err != 0)
      fail_io(tmp_, "cannot write", err);
    written_ += buf_.size();
    buf_.clear();
  }
  fs::path path_, tmp_;
  io::UniqueFd fd_;
  std::string buf_;
  std::uint64_t size_ = 0, written_ = 0;
  bool done_ = false;
};

// Calls fn(offset, length, fields) for each record of the entries file `fd` from its header on, in
// order: what a rebuilt index can know. Bytes that are not a whole record (a write cut by a crash,
// with later commits appended after it) are passed over to the next record's magic number.
template <class Fn>
void scan_records(int fd, const fs::path& path, Fn&& fn) {
  const std::uint64_t size = file_size(fd, path);
  constexpr std::size_t kWindow = std::size_t{1} << 20;
  std::string buf;  // the file's bytes [buf_at, buf_at + buf.size())
  std::uint64_t buf_at = 0;
  // Makes buf hold [at, at + n) (n <= what is left of the file); false when the file cannot be read.
  const auto cover = [&](std::uint64_t at, std::uint64_t n) {
    if (at >= buf_at && at + n <= buf_at + buf.size()) return true;
    buf.resize(
        static_cast<std::size_t>(std::min<std::uint64_t>(std::max<std::uint64_t>(n, kWindow), size - at)));
    buf_at = at;
    return io::pread_exact(fd, at, buf.data(), buf.size()) == 0;
  };
  const char magic[4] = {'C', 'N', 'R', '1'};  // kRecordMagic, little-endian
  std::uint64_t at = kHeaderSize;
  while (at <= size && size - at >= 8) {
    if (!cover(at, 8)) return;
    const char* head = buf.data() + (at - buf_at);
    const std::uint64_t length = 8 + std::uint64_t{get_u32(head + 4)};
    if (get_u32(head) == kRecordMagic && length <= kMaxRecord && length <= size - at) {
      if (!cover(at, length)) return;
      if (const auto fields = parse_record(std::string_view(buf.data() + (at - buf_at), length))) {
        fn(at, static_cast<std::uint32_t>(length), *fields);
        at += length;
        continue;
      }
    }
    // Not a record: on to the next magic number.
    for (++at;;) {
      if (size - at < 8) return;
      if (!cover(at, std::min<std::uint64_t>(kWindow, size - at))) return;
      const std::string_view window(buf.data() + (at - buf_at), buf.size() - (at - buf_at));
      const std::size_t found = window.find(std::string_view(magic, 4));
      if (found != std::string_view::npos) {
        at += found;
        break;
      }
      at += window.size() - 3;  // a magic number may straddle the windows
    }
  }
}

// Copies the servable entries of a SQLite cache made by an earlier numcheck (its `entries` table,
// or the `responses` table of the versions before it; rows without a check were never servable and
// are left out) into a new store's files, with their hit counts; returns how many.
std::uint64_t import_sqlite(const fs::path& db_path, NewFile& entries, NewFile& index) {
  const auto& sq = detail::sqlite();
  sqlite3* db = nullptr;
  const auto fail_db = [&](std::string_view what) {
    const std::string msg = db != nullptr ? sq.errmsg(db) : "out of memory";
    fail(ErrorCode::kIo,
         "cannot read the earlier response cache {} ({}): {}; move it away to start an empty cache",
         db_path.string(), what, msg);
  };
  struct Closer {
    sqlite3** db;
    ~Closer() { detail::sqlite().close(*db); }
  } closer{&db};
  if (sq.open_v2(db_path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) fail_db("open");
  sq.busy_timeout(db, 5000);
  std::uint64_t n = 0;
  for (const char* table : {"responses", "entries"}) {
    bool has_check = false;
    {
      sqlite3_stmt* info = nullptr;
      const std::string q = fmt::format("PRAGMA table_info({})", table);
      if (sq.prepare_v2(db, q.c_str(), -1, &info, nullptr) != SQLITE_OK) fail_db("table_info");
      while (sq.step(info) == SQLITE_ROW) {
        const auto* name = sq.column_text(info, 1);
        has_check = has_check || (name != nullptr &&
                                  std::string_view(reinterpret_cast<const char*>(name)) == "check_sha256");
      }
      sq.finalize(info);
    }
    if (!has_check) continue;
    const std::string q = fmt::format(
        "SELECT key, request_sha256, check_sha256, model, identity, created, completion, hits FROM {} "
        "WHERE check_sha256 IS NOT NULL ORDER BY rowid",
        table);
    sqlite3_stmt* rows = nullptr;
    if (sq.prepare_v2(db, q.c_str(), -1, &rows, nullptr) != SQLITE_OK) fail_db("select");
    const auto text = [&](int i) {
      const auto* p = sq.column_text(rows, i);
      return p == nullptr ? std::string_view()
                          : std::string_view(reinterpret_cast<const char*>(p),
                                             static_cast<std::size_t>(sq.column_bytes(rows, i)));
    };
    std::string rec, line;
    int rc = 0;
    while ((rc = sq.step(rows)) == SQLITE_ROW) {
      rec.clear();
      line.clear();
      append_record(rec, text(0), text(1), text(2), text(3), text(4), text(5), text(6));
      if (rec.size() > kMaxRecord) continue;
      const auto prefix = static_cast<std::uint64_t>(ResponseCache::key_prefix(text(0)));
      const std::uint64_t offset = entries.size();
      put_line(line, prefix, offset, static_cast<std::uint32_t>(rec.size()), kEntryLine);
      const std::int64_t hits = sq.column_int64(rows, 7);
      if (hits > 0)
        put_line(line, prefix, offset, static_cast<std::uint32_t>(std::min<std::int64_t>(hits, UINT32_MAX)),
                 kHitLine);
      entries.append(rec);
      index.append(line);
      ++n;
    }
    sq.finalize(rows);
    if (rc != SQLITE_DONE) fail_db("read");
  }
  return n;
}

// The whole lines of an index file of `size` bytes (none when it is shorter than its header).
std::uint64_t whole_lines(std::uint64_t size) {
  return size < kHeaderSize ? 0 : (size - kHeaderSize) / kLineSize;
}

// The live entries of a table, in the order of their records in the entries file.
std::vector<std::pair<std::uint64_t, Loc>> in_file_order(const LocTable& live) {
  std::vector<std::pair<std::uint64_t, Loc>> out;
  out.reserve(live.size());
  live.for_each([&](std::uint64_t prefix, const Loc& loc) { out.emplace_back(prefix, loc); });
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.second.offset < b.second.offset; });
  return out;
}

// The lines of an entry in a rewritten index: its line at offset `at`, and a line with the sum of
// its hits when it has any (`hits_at`, by the offset `was` it had in the index being rewritten).
void put_entry_lines(std::string& out, std::uint64_t prefix, std::uint64_t was, std::uint32_t length,
                     const std::unordered_map<std::uint64_t, std::uint64_t>& hits_at, std::uint64_t at) {
  put_line(out, prefix, at, length, kEntryLine);
  if (const auto h = hits_at.find(was); h != hits_at.end())
    put_line(out, prefix, at, static_cast<std::uint32_t>(std::min<std::uint64_t>(h->second, UINT32_MAX)),
             kHitLine);
}

}  // namespace

struct ResponseCache::Store {
  fs::path path, index_path;
  io::UniqueFd lock, entries, index;
  LocTable table;
  bool loaded = false;                                       // table holds the index up to index_read
  std::uint64_t index_read = 0;                              // bytes of the index taken into table
  std::string record;                                        // get()'s buffer
  std::chrono::steady_clock::time_point replaced_checked{};  // when catch_up last looked

  explicit Store(const fs::path& p) : path(p), index_path(llm::index_path(p)) {}

  // Opens both files (the caller holds the lock): false when one is missing or the index's header is
  // not an index's (both then rebuilt under the exclusive lock); an entries file that is not a
  // numcheck cache is an error, never overwritten.
  bool try_open() {
    io::UniqueFd e(open_fd(path, O_RDWR));
    if (e.get() < 0) {
      if (errno == ENOENT) return false;
      fail_io(path, "cannot open", errno);
    }
    char head[kHeaderSize];
    if (io::pread_exact(e.get(), 0, head, kHeaderSize) != 0 ||
        std::string_view(head, kHeaderSize) != kEntriesHeader)
      fail(ErrorCode::kIo,
           "{} is not a numcheck response cache (another program's file, or another version's): move it away "
           "or use another --cache-dir",
           path.string());
    io::UniqueFd i(open_fd(index_path, O_RDWR));
    if (i.get() < 0) {
      if (errno == ENOENT) return false;
      fail_io(index_path, "cannot open", errno);
    }
    if (io::pread_exact(i.get(), 0, head, kHeaderSize) != 0 ||
        std::string_view(head, kHeaderSize) != kIndexHeader)
      return false;
    entries = std::move(e);
    index = std::move(i);
    table.clear();
    loaded = false;
    index_read = 0;
    return true;
  }

  // Under the exclusive lock: makes a missing store (with the entries of an earlier SQLite cache
  // beside it), or rebuilds a missing or damaged index from the entries, then opens both.
  void make_or_repair() {
    if (!fs::exists(path)) {
      NewFile e(path), i(index_path);
      e.append(kEntriesHeader);
      i.append(kIndexHeader);
      fs::path old = path;
      old.replace_extension(".sqlite3");
      if (old != path && fs::exists(old)) (void)import_sqlite(old, e, i);
      i.finish();  // the index first: a store is there once its entries file is
      e.finish();
    } else {
      io::UniqueFd e(open_fd(path, O_RDONLY));
      if (e.get() < 0) fail_io(path, "cannot open", errno);
      NewFile i(index_path);
      i.append(kIndexHeader);
      std::string line;
      scan_records(e.get(), path, [&](std::uint64_t offset, std::uint32_t length, const RecordFields& f) {
        line.clear();
        put_line(line, static_cast<std::uint64_t>(key_prefix(f.key)), offset, length, kEntryLine);
        i.append(line);
      });
      i.finish();
    }
    if (!try_open())
      fail(ErrorCode::kIo, "response cache {}: cannot open the files just made", path.string());
  }

  // Whether `cache clear` (of any process) put new files in place of the open ones.
  [[nodiscard]] bool replaced() const {
    return replaced_file(entries.get(), path) || replaced_file(index.get(), index_path);
  }

  // After replaced(), under a lock: the new files.
  void reopen(int lock_op) {
    if (try_open()) return;
    if (lock_op != LOCK_EX) {
      // Made or repaired under the exclusive lock only (the caller's shared lock is dropped first).
      return;
    }
    make_or_repair();
  }

  // Takes the index lines written since the last call into the table (all of them the first time).
  // Whether `cache clear` put new files in place is looked at once a second at most (four system
  // calls): until then, entries stored into the new files are misses here, never wrong answers.
  void catch_up() {
    const auto now = std::chrono::steady_clock::now();
    if (!loaded || now - replaced_checked >= std::chrono::seconds(1)) {
      replaced_checked = now;
      if (replaced()) {
        const StoreLock ex(lock.get(), LOCK_EX, path);
        reopen(LOCK_EX);
      }
    }
    const bool whole = !loaded;
    if (whole) {
      table.clear();
      index_read = kHeaderSize;
      loaded = true;
    }
    if (file_size(index.get(), index_path) <= index_read) return;
    {
      const StoreLock sh(lock.get(), LOCK_SH, path);  // no line half written while it is read
      const std::uint64_t size = file_size(index.get(), index_path);
      if (size < index_read) {  // cut short by hand since it was read: read again, whole
        table.clear();
        index_read = kHeaderSize;
      }
      const std::uint64_t end = size < index_read ? index_read : size - (size - index_read) % kLineSize;
      for_each_line(index_read, end, [&](const Line& l) {
        if (l.kind == kEntryLine) table.put(l.prefix, Loc{l.offset, l.count});
      });
      index_read = end;
    }
    if (whole && too_many_lines((index_read - kHeaderSize) / kLineSize, table.size())) {
      compact_index();
      catch_up();  // the new index, read whole (try_open forgot the table)
    }
  }

  // Whether an index of `lines` lines for `entries` live entries has grown enough past them (with
  // the hit lines of run after run, and entries stored again) to be rewritten.
  static bool too_many_lines(std::uint64_t lines, std::uint64_t entries) {
    return lines > kCompactFactor * entries + kCompactSlack;
  }

  // Rewrites the index with one line per live entry and one with the sum of its hits, under the
  // exclusive lock (checked again there: another connection may have done it). The entries file is
  // not touched. Connections that hold the old index see the new one as they see `cache clear`'s.
  void compact_index() {
    const StoreLock ex(lock.get(), LOCK_EX, path);
    if (replaced()) reopen(LOCK_EX);
    LocTable live;
    std::unordered_map<std::uint64_t, std::uint64_t> hits_at;
    read_all(live, hits_at);
    if (!too_many_lines(whole_lines(file_size(index.get(), index_path)), live.size())) {
      (void)try_open();
      return;
    }
    NewFile i(index_path);
    i.append(kIndexHeader);
    std::string lines;
    for (const auto& [prefix, loc] : in_file_order(live)) {
      lines.clear();
      put_entry_lines(lines, prefix, loc.offset, loc.length, hits_at, loc.offset);
      i.append(lines);
    }
    i.finish();
    if (!try_open()) make_or_repair();
  }

  // Calls fn(line) for each line of the index in [from, end) (whole lines; read in chunks of 1 MiB)
  // whose seal matches; the others are skipped.
  template <class Fn>
  void for_each_line(std::uint64_t from, std::uint64_t end, Fn&& fn) const {
    std::string buf;
    while (from < end) {
      const std::uint64_t n = std::min<std::uint64_t>(end - from, kLineSize * 32768);
      buf.resize(static_cast<std::size_t>(n));
      if (const int err = io::pread_exact(index.get(), from, buf.data(), buf.size()); err != 0)
        fail_io(index_path, "cannot read", err);
      for (std::size_t at = 0; at < buf.size(); at += kLineSize)
        if (const auto l = read_line(buf.data() + at)) fn(*l);
      from += n;
    }
  }

  // Every line of the index, read under the caller's lock: the live entries (the latest line of
  // each prefix) and the hits counted for each of them.
  void read_all(LocTable& live, std::unordered_map<std::uint64_t, std::uint64_t>& hits_at) const {
    const std::uint64_t size = file_size(index.get(), index_path);
    const std::uint64_t end = kHeaderSize + whole_lines(size) * kLineSize;
    std::vector<Line> hit_lines;
    for_each_line(kHeaderSize, end, [&](const Line& l) {
      if (l.kind == kEntryLine) {
        live.put(l.prefix, Loc{l.offset, l.count});
      } else {
        hit_lines.push_back(l);
      }
    });
    for (const Line& h : hit_lines) {
      const Loc* loc = live.find(h.prefix);
      if (loc != nullptr && loc->offset == h.offset) hits_at[h.offset] += h.count;
    }
  }

  // The record at `loc` into `out`: its fields, or nullopt when it cannot be read or is not one.
  std::optional<RecordFields> read_record(const Loc& loc, std::string& out) const {
    if (loc.length > kMaxRecord) return std::nullopt;
    // A length no answer has (a damaged line) is checked against the file before any memory is
    // taken for it; a usual record costs one read.
    if (loc.length > (std::uint32_t{1} << 16)) {
      const std::uint64_t size = file_size(entries.get(), path);
      if (loc.offset > size || loc.length > size - loc.offset) return std::nullopt;
    }
    out.resize(loc.length);
    if (io::pread_exact(entries.get(), loc.offset, out.data(), out.size()) != 0) return std::nullopt;
    return parse_record(out);
  }
};

ResponseCache::ResponseCache(const fs::path& path) : path_(path), store_(std::make_unique<Store>(path)) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (ec)
    fail(ErrorCode::kIo, "cannot create the cache folder {}: {}", path.parent_path().string(), ec.message());
  store_->lock = io::UniqueFd(open_fd(lock_path(path), O_RDWR | O_CREAT));
  if (store_->lock.get() < 0) fail_io(lock_path(path), "cannot open", errno);
  {
    const StoreLock sh(store_->lock.get(), LOCK_SH, path_);
    if (store_->try_open()) return;
  }
  const StoreLock ex(store_->lock.get(), LOCK_EX, path_);
  if (!store_->try_open()) store_->make_or_repair();
}

ResponseCache::~ResponseCache() {
  try {
    commit();
  } catch (...) {  // NOLINT(bugprone-empty-catch): nothing to do in a destructor
  }
}

std::optional<Completion> ResponseCache::get(const std::string& key, const std::string& request_sha256) {
  Store& s = *store_;
  if (!s.loaded) s.catch_up();
  const auto prefix = static_cast<std::uint64_t>(key_prefix(key));
  const Loc* loc = s.table.find(prefix);
  if (loc == nullptr) {  // stored since, perhaps by another process
    s.catch_up();
    loc = s.table.find(prefix);
    if (loc == nullptr) return std::nullopt;
  }
  const Loc at = *loc;
  const auto f = s.read_record(at, s.record);
  if (!f) {  // damaged, or not a record at all
    ++rejected_;
    return std::nullopt;
  }
  // Another key with the same first 64 bits is a plain miss (and is replaced when this key's answer
  // is stored).
  if (f->key != key) return std::nullopt;
  // The entry must belong to this request: its request hash and the check binding key, request
  // and completion. A record edited by hand (or damaged) is a miss, and counted.
  if (f->request_sha256 != request_sha256 || f->check != entry_check(key, request_sha256, f->completion)) {
    ++rejected_;
    return std::nullopt;
  }
  io::Json j = io::Json::parse(f->completion, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    ++rejected_;
    return std::nullopt;
  }
  hits_.push_back(CacheHit{prefix, at.offset});
  return completion_from_json(j);
}

void ResponseCache::put(const std::string& key, const std::string& request_sha256, const std::string& model,
                        const io::Json& identity, const Completion& completion) {
  put_entry(make_entry(key, request_sha256, completion), model, io::to_line(identity));
}

ResponseCache::Entry ResponseCache::make_entry(std::string key, std::string request_sha256,
                                               const Completion& completion) {
  Entry e;
  e.key = std::move(key);
  e.request_sha256 = std::move(request_sha256);
  e.completion = completion_line(completion);
  e.check = entry_check(e.key, e.request_sha256, e.completion);
  return e;
}

void ResponseCache::put_entry(Entry entry, std::string_view model, std::string_view identity_line) {
  // A batch's entries almost always share one model and identity: each is kept once.
  if (sources_.empty() || sources_.back().first != model || sources_.back().second != identity_line)
    sources_.emplace_back(model, identity_line);
  pending_.push_back(Pending{std::move(entry), sources_.size() - 1});
  if (pending_.size() >= batch_size_) commit();
}

// Appends the batch's records to the entries file, then their lines (and the hits') to the index,
// in one write each under the exclusive lock: held for two writes, never between commits.
void ResponseCache::commit() {
  if (pending_.empty() && hits_.empty()) return;
  Store& s = *store_;
  const std::string created = now_iso();
  std::string records;
  struct Written {
    std::uint64_t prefix, at;
    std::uint32_t length;
  };
  std::vector<Written> written;
  written.reserve(pending_.size());
  for (const auto& p : pending_) {
    const std::size_t at = records.size();
    append_record(records, p.entry.key, p.entry.request_sha256, p.entry.check, sources_[p.source].first,
                  sources_[p.source].second, created, p.entry.completion);
    if (records.size() - at > kMaxRecord) {  // beyond what any server sends: not kept
      records.resize(at);
      continue;
    }
    written.push_back(Written{static_cast<std::uint64_t>(key_prefix(p.entry.key)), at,
                              static_cast<std::uint32_t>(records.size() - at)});
  }
  {
    const StoreLock ex(s.lock.get(), LOCK_EX, path_);
    if (s.replaced()) s.reopen(LOCK_EX);
    const std::uint64_t end = file_size(s.entries.get(), path_);
    if (const int err = io::pwrite_exact(s.entries.get(), end, records); err != 0)
      fail_io(path_, "cannot write", err);
    // A line cut by a crash (the index's length not a whole number of lines past its header) is cut off.
    std::uint64_t size = file_size(s.index.get(), s.index_path);
    const std::uint64_t whole = size < kHeaderSize ? size : size - (size - kHeaderSize) % kLineSize;
    if (whole < kHeaderSize)
      fail(ErrorCode::kIo, "response cache {}: its index lost its header; move the cache away",
           s.index_path.string());
    if (whole != size && ::ftruncate(s.index.get(), static_cast<off_t>(whole)) != 0)
      fail_io(s.index_path, "cannot cut off a torn line", errno);
    size = whole;
    std::string lines;
    lines.reserve((written.size() + hits_.size()) * kLineSize);
    for (const Written& w : written) put_line(lines, w.prefix, end + w.at, w.length, kEntryLine);
    for (const CacheHit& h : hits_) put_line(lines, h.prefix, h.offset, 1, kHitLine);
    if (const int err = io::pwrite_exact(s.index.get(), size, lines); err != 0)
      fail_io(s.index_path, "cannot write", err);
    if (s.loaded && s.index_read == size) {  // nothing of others' in between: taken in directly
      for (const Written& w : written) s.table.put(w.prefix, Loc{end + w.at, w.length});
      s.index_read = size + lines.size();
    }
  }
  pending_.clear();
  sources_.clear();
  hits_.clear();
}

std::optional<KeySnapshot> ResponseCache::key_snapshot(std::uint64_t max_entries) {
  if (max_entries == 0) return std::nullopt;
  commit();  // this connection's own batch is part of the cache
  Store& s = *store_;
  s.catch_up();
  if (s.table.size() > max_entries) return std::nullopt;
  std::vector<std::uint64_t> hashes;
  hashes.reserve(s.table.size());
  s.table.for_each([&](std::uint64_t prefix, const Loc&) { hashes.push_back(prefix); });
  return KeySnapshot(std::move(hashes));
}

std::vector<CacheHit> ResponseCache::take_hits() { return std::exchange(hits_, {}); }

void ResponseCache::add_hits(std::vector<CacheHit> hits) {
  hits_.insert(hits_.end(), hits.begin(), hits.end());
}

CacheStats ResponseCache::stats() {
  commit();
  Store& s = *store_;
  CacheStats st;
  LocTable live;
  std::unordered_map<std::uint64_t, std::uint64_t> hits_at;
  {
    const StoreLock sh(s.lock.get(), LOCK_SH, path_);
    if (s.replaced()) s.reopen(LOCK_SH);
    s.read_all(live, hits_at);
    std::map<std::string, std::uint64_t, std::less<>> models;
    std::string rec;
    live.for_each([&](std::uint64_t, const Loc& loc) {
      ++st.entries;
      const auto f = s.read_record(loc, rec);
      if (!f) return;
      ++models[std::string(f->model)];
      const std::string_view created = f->created;
      if (st.oldest.empty() || created < st.oldest) st.oldest = created;
      if (created > st.newest) st.newest = created;
    });
    st.per_model.assign(models.begin(), models.end());
    for (const auto& [offset, n] : hits_at) st.hits += n;
    st.bytes = file_size(s.entries.get(), path_) + file_size(s.index.get(), s.index_path);
  }
  return st;
}

std::uint64_t ResponseCache::clear(const std::string& model) {
  commit();
  Store& s = *store_;
  std::uint64_t n = 0;
  {
    const StoreLock ex(s.lock.get(), LOCK_EX, path_);
    if (s.replaced()) s.reopen(LOCK_EX);
    LocTable live;
    std::unordered_map<std::uint64_t, std::uint64_t> hits_at;
    s.read_all(live, hits_at);
    std::vector<std::pair<std::uint64_t, Loc>> kept = in_file_order(live);
    NewFile e(path_), i(s.index_path);
    e.append(kEntriesHeader);
    i.append(kIndexHeader);
    std::string rec, line;
    if (model.empty()) {
      n = kept.size();
      kept.clear();
    }
    for (const auto& [prefix, loc] : kept) {
      const auto f = s.read_record(loc, rec);
      if (!f) continue;  // a damaged record: never servable, not kept
      if (f->model == model) {
        ++n;
        continue;
      }
      line.clear();
      put_entry_lines(line, prefix, loc.offset, loc.length, hits_at, e.size());
      e.append(rec);
      i.append(line);
    }
    i.finish();  // the index first (see make_or_repair)
    e.finish();
    if (!s.try_open()) s.make_or_repair();
  }
  return n;
}

}  // namespace numcheck::llm
