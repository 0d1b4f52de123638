#include "llm/cache.hpp"

#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <system_error>
#include <unordered_map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "io/cache_dir.hpp"
#include "io/files.hpp"
#include "io/json_writer.hpp"
#include "io/sha256.hpp"

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

// The database's schema and its version (PRAGMA user_version). A database of another version is
// new (version 0, no table), an earlier numcheck's SQLite cache (version 0), or not ours.
constexpr int kSchemaVersion = 3;
constexpr const char* kSchema =
    "CREATE TABLE entries (\n"
    "  key TEXT PRIMARY KEY NOT NULL,  -- SHA-256 of the server identity and the request body\n"
    "  request_sha256 TEXT NOT NULL,   -- SHA-256 of the request body\n"
    "  check_sha256 TEXT NOT NULL,     -- SHA-256 of key, request_sha256 and completion\n"
    "  model TEXT NOT NULL,            -- the model the answer is stored under\n"
    "  identity TEXT NOT NULL,         -- the server identity (JSON)\n"
    "  created TEXT NOT NULL,          -- ISO-8601 UTC\n"
    "  completion TEXT NOT NULL,       -- the answer (JSON)\n"
    "  hits INTEGER NOT NULL DEFAULT 0 -- times it was served\n"
    ")";
// How long a statement waits for another connection's write lock before it fails: a commit holds
// it for milliseconds, the first open of an earlier cache for the copy of its entries.
constexpr int kBusyTimeoutMs = 10000;
// The largest completion stored (far beyond what any server sends).
constexpr std::size_t kMaxCompletion = std::size_t{1} << 28;

[[noreturn]] void fail_db(sqlite3* db, const fs::path& path, std::string_view what) {
  fail(ErrorCode::kIo, "response cache {}: {}: {}", path.string(), what,
       db != nullptr ? sqlite3_errmsg(db) : "out of memory");
}

std::string_view column(sqlite3_stmt* s, int i) {
  const auto* p = sqlite3_column_text(s, i);
  return p == nullptr ? std::string_view()
                      : std::string_view(reinterpret_cast<const char*>(p),
                                         static_cast<std::size_t>(sqlite3_column_bytes(s, i)));
}

void bind_text(sqlite3_stmt* s, int i, std::string_view text) {
  // The text outlives the statement's step and reset (SQLITE_STATIC: no copy).
  sqlite3_bind_text64(s, i, text.data(), text.size(), SQLITE_STATIC, SQLITE_UTF8);
}

// Resets a statement (and drops its bindings) when it goes out of scope.
struct Reset {
  sqlite3_stmt* s;
  explicit Reset(sqlite3_stmt* stmt) : s(stmt) {}
  Reset(const Reset&) = delete;
  Reset& operator=(const Reset&) = delete;
  ~Reset() {
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
  }
};

// A statement prepared for one use.
class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql, const fs::path& path) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s_, nullptr) != SQLITE_OK) fail_db(db, path, "cannot read");
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  [[nodiscard]] sqlite3_stmt* get() const noexcept { return s_; }

 private:
  sqlite3_stmt* s_ = nullptr;
};

// ---- The store format (numcheck's own cache before this database; read to copy it in) ----
// <path>.cache: a 16-byte header, then records: the magic number "CNR1", the length of the rest,
// then seven fields of a length and bytes each (key, request hash, check, model, identity,
// created, completion). <path>.cache.index: a 16-byte header, then 32-byte lines (key prefix,
// record offset, record length or hit count, kind, seal). Integers are little-endian.
constexpr std::string_view kEntriesHeader = "numcheck-cache1\n";
constexpr std::string_view kIndexHeader = "numcheck-index1\n";
constexpr std::string_view kRecordMagic = "CNR1";
constexpr std::size_t kHeaderSize = 16;
constexpr std::size_t kLineSize = 32;
constexpr std::uint32_t kHitLine = 1;

std::uint64_t get_le(const char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// The seal of an index line (splitmix64's finalizer over its fields).
std::uint64_t seal(std::uint64_t prefix, std::uint64_t offset, std::uint64_t count, std::uint64_t kind) {
  std::uint64_t x = prefix ^ 0x6e756d636865636bULL;  // "numcheck"
  for (const std::uint64_t v : {offset, (count << 32) | kind}) {
    x += 0x9e3779b97f4a7c15ULL + v;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
  }
  return x;
}

// The record that starts at `at` (its fields and whole length), or nullopt.
std::optional<std::pair<detail::StoreRecord, std::size_t>> record_at(std::string_view b, std::size_t at) {
  if (b.size() - at < 8 || b.substr(at, 4) != kRecordMagic) return std::nullopt;
  const std::uint64_t length = get_le(b.data() + at + 4, 4);
  if (length > b.size() - at - 8) return std::nullopt;
  const std::string_view r = b.substr(at + 8, length);
  std::string_view f[7];
  std::size_t pos = 0;
  for (auto& field : f) {
    if (r.size() - pos < 4) return std::nullopt;
    const std::uint64_t n = get_le(r.data() + pos, 4);
    pos += 4;
    if (r.size() - pos < n) return std::nullopt;
    field = r.substr(pos, n);
    pos += n;
  }
  if (pos != r.size()) return std::nullopt;
  return std::pair{detail::StoreRecord{f[0], f[1], f[2], f[3], f[4], f[5], f[6], 0}, 8 + r.size()};
}

}  // namespace

std::uint64_t detail::read_store(std::string_view entries, std::string_view index,
                                 const std::function<void(const StoreRecord&)>& fn) {
  if (entries.substr(0, kHeaderSize) != kEntriesHeader) return 0;
  std::unordered_map<std::uint64_t, std::uint64_t> hits;  // record offset -> hits counted
  if (index.substr(0, kHeaderSize) == kIndexHeader) {
    for (std::size_t at = kHeaderSize; index.size() - at >= kLineSize; at += kLineSize) {
      const char* p = index.data() + at;
      const std::uint64_t prefix = get_le(p, 8), offset = get_le(p + 8, 8), count = get_le(p + 16, 4),
                          kind = get_le(p + 20, 4);
      if (kind == kHitLine && get_le(p + 24, 8) == seal(prefix, offset, count, kind)) hits[offset] += count;
    }
  }
  std::uint64_t n = 0;
  std::size_t at = kHeaderSize;
  while (at < entries.size()) {
    if (auto r = record_at(entries, at)) {
      if (const auto h = hits.find(at); h != hits.end()) r->first.hits = h->second;
      fn(r->first);
      ++n;
      at += r->second;
      continue;
    }
    at = entries.find(kRecordMagic, at + 1);  // not a record: on to the next magic number
  }
  return n;
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
  return (dir.empty() ? io::user_cache_dir() : dir) / "responses.sqlite3";
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

// ---- The database ----

ResponseCache::ResponseCache(const fs::path& path, OnError on_error) : path_(path), on_error_(on_error) {
  try {
    guarded([&] { open(); });
  } catch (...) {  // kThrow: no destructor runs for an object its constructor left
    close();
    throw;
  }
}

ResponseCache::~ResponseCache() {
  try {
    commit();
  } catch (...) {  // NOLINT(bugprone-empty-catch): nothing to do in a destructor
  }
  close();
}

void ResponseCache::close() noexcept {
  for (auto*& s : statements_) {
    sqlite3_finalize(s);
    s = nullptr;
  }
  sqlite3_close(db_);
  db_ = nullptr;
}

template <class Fn>
void ResponseCache::guarded(Fn&& fn) {
  if (off()) return;
  try {
    fn();
  } catch (const Error& e) {
    if (on_error_ == OnError::kThrow) throw;
    failure_ = e.what();
    close();
  }
}

void ResponseCache::exec(const char* sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return;
  const std::string msg = err != nullptr ? err : sqlite3_errstr(rc);
  sqlite3_free(err);
  fail(ErrorCode::kIo, "response cache {}: {}", path_.string(), msg);
}

sqlite3_stmt* ResponseCache::prepared(Query q) {
  static constexpr const char* kSql[kQueries] = {
      "SELECT request_sha256, check_sha256, completion FROM entries WHERE key = ?1",
      "INSERT INTO entries (key, request_sha256, check_sha256, model, identity, created, completion) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (key) DO UPDATE SET request_sha256 = "
      "excluded.request_sha256, check_sha256 = excluded.check_sha256, model = excluded.model, identity = "
      "excluded.identity, created = excluded.created, completion = excluded.completion",
      "UPDATE entries SET hits = hits + ?2 WHERE key = ?1",
  };
  if (statements_[q] == nullptr &&
      sqlite3_prepare_v3(db_, kSql[q], -1, SQLITE_PREPARE_PERSISTENT, &statements_[q], nullptr) != SQLITE_OK)
    fail_db(db_, path_, "cannot read");
  return statements_[q];
}

void ResponseCache::set_max_pages(std::uint64_t pages) {
  guarded([&] {
    if (pages > 0) exec(fmt::format("PRAGMA max_page_count = {}", pages).c_str());
  });
}

void ResponseCache::open() {
  std::error_code ec;
  if (path_.has_parent_path()) fs::create_directories(path_.parent_path(), ec);
  if (ec)
    fail(ErrorCode::kIo, "cannot create the cache folder {}: {}", path_.parent_path().string(), ec.message());
  if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                      nullptr) != SQLITE_OK) {
    const std::string msg = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
    close();
    fail(ErrorCode::kIo, "response cache {}: cannot open: {}", path_.string(), msg);
  }
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
  if (const char* pages = std::getenv("NUMCHECK_CACHE_MAX_PAGES"); pages != nullptr && *pages != '\0')
    exec(fmt::format("PRAGMA max_page_count = {}", std::strtoull(pages, nullptr, 10)).c_str());
  // The schema first: a database that is not a cache is refused before anything in it changes.
  if (user_version() != kSchemaVersion) set_up();
  // WAL: readers and a writer do not block each other; NORMAL: a commit waits for no disk flush,
  // and a process killed at any moment leaves the database whole (a power cut may lose the last
  // commits, never damage it).
  exec("PRAGMA journal_mode = WAL");
  exec("PRAGMA synchronous = NORMAL");
}

int ResponseCache::user_version() {
  const Stmt s(db_, "PRAGMA user_version", path_);
  if (sqlite3_step(s.get()) != SQLITE_ROW) fail_db(db_, path_, "cannot read");
  return sqlite3_column_int(s.get(), 0);
}

// Under a write transaction (several processes may open a new cache at once: the first sets it up,
// the others then find it done): the table, the entries of an earlier SQLite cache in this file
// (moved into the table) and of a store-format cache beside it (copied), then the version.
void ResponseCache::set_up() {
  exec("BEGIN IMMEDIATE");
  try {
    const int version = user_version();
    if (version != kSchemaVersion) {
      if (version != 0)
        fail(ErrorCode::kIo,
             "{} is not a numcheck response cache of this version: move it away or use another --cache-dir",
             path_.string());
      // An earlier numcheck's tables: `entries` (with key_prefix) and, before it, `responses`.
      bool old_entries = false, old_responses = false;
      {
        const Stmt t(db_, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'",
                     path_);
        while (sqlite3_step(t.get()) == SQLITE_ROW) {
          const std::string_view name = column(t.get(), 0);
          if (name == "entries" && has_column("entries", "key_prefix")) {
            old_entries = true;
          } else if (name == "responses") {
            old_responses = true;
          } else {
            fail(ErrorCode::kIo,
                 "{} is not a numcheck response cache: move it away or use another --cache-dir",
                 path_.string());
          }
        }
      }
      if (old_entries) exec("ALTER TABLE entries RENAME TO entries_before");
      exec(kSchema);
      for (const auto& [old, there] :
           {std::pair{"entries_before", old_entries}, {"responses", old_responses}}) {
        if (!there) continue;
        // Rows without a check were never served: left out.
        if (has_column(old, "check_sha256"))
          exec(fmt::format(
                   "INSERT OR REPLACE INTO entries (key, request_sha256, check_sha256, model, identity, "
                   "created, completion, hits) SELECT key, request_sha256, check_sha256, model, identity, "
                   "created, completion, hits FROM {} WHERE check_sha256 IS NOT NULL ORDER BY rowid",
                   old)
                   .c_str());
        exec(fmt::format("DROP TABLE {}", old).c_str());
      }
      copy_store();
      exec(fmt::format("PRAGMA user_version = {}", kSchemaVersion).c_str());
    }
    exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

bool ResponseCache::has_column(std::string_view table, std::string_view column_name) {
  const Stmt s(
      db_, fmt::format("SELECT 1 FROM pragma_table_info('{}') WHERE name = '{}'", table, column_name), path_);
  return sqlite3_step(s.get()) == SQLITE_ROW;
}

// The entries of a store-format cache beside the database (<path>.cache and <path>.cache.index), with
// their hit counts; records that fail their check were never servable and are left out. The store's
// files are left as they were.
void ResponseCache::copy_store() {
  fs::path store = path_;
  store.replace_extension(".cache");
  std::error_code ec;
  if (store == path_ || !fs::is_regular_file(store, ec)) return;
  const std::string entries = io::read_file(store);
  const fs::path index_path = store.string() + ".index";
  const std::string index = fs::is_regular_file(index_path, ec) ? io::read_file(index_path) : std::string();
  const Stmt insert(db_,
                    "INSERT OR REPLACE INTO entries (key, request_sha256, check_sha256, model, identity, "
                    "created, completion, hits) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    path_);
  (void)detail::read_store(entries, index, [&](const detail::StoreRecord& r) {
    if (r.check != entry_check(r.key, r.request_sha256, r.completion)) return;
    const Reset reset{insert.get()};
    const std::string_view fields[] = {r.key,      r.request_sha256, r.check,     r.model,
                                       r.identity, r.created,        r.completion};
    for (int i = 0; i < 7; ++i) bind_text(insert.get(), i + 1, fields[i]);
    sqlite3_bind_int64(insert.get(), 8,
                       static_cast<sqlite3_int64>(std::min<std::uint64_t>(r.hits, INT64_MAX)));
    if (sqlite3_step(insert.get()) != SQLITE_DONE) fail_db(db_, path_, "cannot copy the earlier cache in");
  });
}

std::optional<Completion> ResponseCache::get(const std::string& key, const std::string& request_sha256) {
  std::optional<Completion> out;
  guarded([&] {
    sqlite3_stmt* s = prepared(kGet);
    const Reset reset{s};
    bind_text(s, 1, key);
    const int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE) return;
    if (rc != SQLITE_ROW) fail_db(db_, path_, "cannot read");
    const std::string_view completion = column(s, 2);
    // The entry must belong to this request: its request hash and the check binding key, request
    // and completion. A row edited by hand (or damaged) is a miss, and counted.
    if (column(s, 0) != request_sha256 || column(s, 1) != entry_check(key, request_sha256, completion)) {
      ++rejected_;
      return;
    }
    io::Json j = io::Json::parse(completion, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      ++rejected_;
      return;
    }
    hits_.push_back(CacheHit{key});
    out = completion_from_json(j);
  });
  return out;
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
  if (off()) return;
  // A batch's entries almost always share one model and identity: each is kept once.
  if (sources_.empty() || sources_.back().first != model || sources_.back().second != identity_line)
    sources_.emplace_back(model, identity_line);
  pending_.push_back(Pending{std::move(entry), sources_.size() - 1});
  if (pending_.size() >= batch_size_) commit();
}

void ResponseCache::reserve(std::size_t n) {
  if (!off()) pending_.reserve(pending_.size() + std::min(n, batch_size_));
}

// The batch's entries and hits in one transaction. Whatever happens, the batch is gone afterwards:
// an error throws (kThrow) or turns the connection off (kGoOn), and the transaction is rolled back.
void ResponseCache::commit() {
  if (pending_.empty() && hits_.empty()) return;
  struct Clear {
    ResponseCache& c;
    explicit Clear(ResponseCache& cache) : c(cache) {}
    Clear(const Clear&) = delete;
    Clear& operator=(const Clear&) = delete;
    ~Clear() {
      c.pending_.clear();
      c.sources_.clear();
      c.hits_.clear();
    }
  } clear{*this};
  guarded([&] {
    const std::string created = now_iso();
    exec("BEGIN IMMEDIATE");
    try {
      sqlite3_stmt* insert = prepared(kInsert);
      for (const auto& p : pending_) {
        if (p.entry.completion.size() > kMaxCompletion) continue;
        const Reset reset{insert};
        const std::string_view fields[] = {p.entry.key,
                                           p.entry.request_sha256,
                                           p.entry.check,
                                           sources_[p.source].first,
                                           sources_[p.source].second,
                                           created,
                                           p.entry.completion};
        for (int i = 0; i < 7; ++i) bind_text(insert, i + 1, fields[i]);
        if (sqlite3_step(insert) != SQLITE_DONE) fail_db(db_, path_, "cannot store answers");
      }
      sqlite3_stmt* hit = prepared(kHit);
      for (const CacheHit& h : hits_) {
        const Reset reset{hit};
        bind_text(hit, 1, h.key);
        sqlite3_bind_int64(hit, 2, 1);
        if (sqlite3_step(hit) != SQLITE_DONE) fail_db(db_, path_, "cannot count hits");
      }
      exec("COMMIT");
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  });
}

std::vector<CacheHit> ResponseCache::take_hits() { return std::exchange(hits_, {}); }

void ResponseCache::add_hits(std::vector<CacheHit> hits) {
  if (off()) return;
  if (hits_.empty()) {
    hits_ = std::move(hits);
  } else {
    hits_.insert(hits_.end(), std::make_move_iterator(hits.begin()), std::make_move_iterator(hits.end()));
  }
}

CacheStats ResponseCache::stats() {
  commit();
  CacheStats st;
  guarded([&] {
    exec("BEGIN");  // one snapshot for both queries
    try {
      {
        const Stmt s(db_,
                     "SELECT count(*), total(hits), coalesce(min(created), ''), coalesce(max(created), '') "
                     "FROM entries",
                     path_);
        if (sqlite3_step(s.get()) != SQLITE_ROW) fail_db(db_, path_, "cannot read");
        st.entries = static_cast<std::uint64_t>(sqlite3_column_int64(s.get(), 0));
        st.hits = static_cast<std::uint64_t>(sqlite3_column_double(s.get(), 1));
        st.oldest = column(s.get(), 2);
        st.newest = column(s.get(), 3);
      }
      const Stmt m(db_, "SELECT model, count(*) FROM entries GROUP BY model ORDER BY model", path_);
      int rc = 0;
      while ((rc = sqlite3_step(m.get())) == SQLITE_ROW)
        st.per_model.emplace_back(column(m.get(), 0),
                                  static_cast<std::uint64_t>(sqlite3_column_int64(m.get(), 1)));
      if (rc != SQLITE_DONE) fail_db(db_, path_, "cannot read");
      exec("COMMIT");
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
    std::error_code ec;
    for (const char* suffix : {"", "-wal"}) {
      const auto n = fs::file_size(path_.string() + suffix, ec);
      if (!ec) st.bytes += n;
    }
  });
  return st;
}

std::uint64_t ResponseCache::clear(const std::string& model) {
  commit();
  std::uint64_t n = 0;
  guarded([&] {
    const Stmt s(db_, model.empty() ? "DELETE FROM entries" : "DELETE FROM entries WHERE model = ?1", path_);
    if (!model.empty()) bind_text(s.get(), 1, model);
    if (sqlite3_step(s.get()) != SQLITE_DONE) fail_db(db_, path_, "cannot remove entries");
    n = static_cast<std::uint64_t>(sqlite3_changes64(db_));
  });
  if (n > 0 && !off()) {
    // The freed pages back to the disk, the log cut back: best effort (another connection reading
    // or writing the cache leaves them for later).
    sqlite3_busy_timeout(db_, 0);
    sqlite3_exec(db_, "VACUUM", nullptr, nullptr, nullptr);
    sqlite3_exec(db_, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr);
    sqlite3_busy_timeout(db_, kBusyTimeoutMs);
  }
  return n;
}

}  // namespace numcheck::llm
