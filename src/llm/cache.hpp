#pragma once
// The response cache: answers keyed by SHA-256 over the server's model identity and build plus the
// full request body, so one model's answers can never be served for another's (and a different
// prompt, sampling setting or extra field is a different key). Only successful completions are
// stored; error responses never are. One SQLite database (docs/runner.md, "The response cache"),
// safe to share between processes (WAL journal, a busy timeout); one ResponseCache object is one
// connection, used from one thread at a time.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/json.hpp"
#include "io/sha256.hpp"
#include "llm/backend.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace numcheck::llm {

// responses.sqlite3 in the user's cache folder (io::user_cache_dir: $NUMCHECK_CACHE_DIR, else
// $XDG_CACHE_HOME/numcheck, else $HOME/.cache/numcheck). `dir` overrides when not empty.
[[nodiscard]] std::filesystem::path default_cache_path(const std::filesystem::path& dir = {});

// sha256 hex of {"identity": identity, "request": <body parsed and re-serialized with sorted
// keys>}: equal for byte-different but equal JSON bodies, different for anything else.
[[nodiscard]] std::string cache_key(const io::Json& identity, const io::Json& request_body);

// sha256 hex of the request body with sorted keys: stored with each entry and checked on every hit.
[[nodiscard]] std::string request_hash(const io::Json& request_body);

// The same two keys from the values' JSONL lines (io::to_line of the io::Json values, whose keys are
// sorted): what the runner uses, since it has serialized the body to send it anyway. Equal to
// cache_key(identity, body) and request_hash(body) for identity_line = to_line(identity) and
// body_line = to_line(body).
[[nodiscard]] std::string cache_key_from_lines(std::string_view identity_line, std::string_view body_line);
// cache_key_from_lines for many bodies and one identity: the hash of what comes before the body
// (the same for every request to one server) is made once, and each key goes on from a copy of it.
class CacheKeyHasher {
 public:
  explicit CacheKeyHasher(std::string_view identity_line);
  [[nodiscard]] std::string key(
      std::string_view body_line) const;  // cache_key_from_lines(identity_line, body_line)

 private:
  io::Sha256 prefix_;
};
[[nodiscard]] std::string request_hash_from_line(std::string_view body_line);

struct CacheStats {
  std::uint64_t entries = 0;
  std::uint64_t bytes = 0;                                       // the database and its log on disk
  std::uint64_t hits = 0;                                        // total times entries were served
  std::vector<std::pair<std::string, std::uint64_t>> per_model;  // model -> entries
  std::string oldest, newest;  // ISO-8601 UTC creation times ("" when empty)
};

// An entry get() served, to be counted by the connection that writes (take_hits, add_hits).
struct CacheHit {
  std::string key;
};

// The database: one table,
//   entries(key TEXT PRIMARY KEY, request_sha256, check_sha256, model, identity, created,
//           completion, hits)
// (docs/runner.md gives the exact schema). check_sha256 is SHA-256 over key, request hash and
// completion, checked on every hit: a row edited, moved or damaged is a miss counted in rejected(),
// never served. A commit is one transaction. A store-format cache of earlier numcheck versions
// beside the database (<path> with extension .cache, and its .index) is copied in once, when the
// database is made; a SQLite cache of the versions before those (its `entries` table with a
// key_prefix column, or a `responses` table) at the database's own path is converted in place.
class ResponseCache {
 public:
  // What a connection does with an error of the database (opening it included): kThrow throws
  // Error (kIo) naming the path (the `cache` commands); kGoOn (a run) turns the connection off:
  // get() misses and put() stores nothing from then on, failure() says why, nothing throws.
  enum class OnError : std::uint8_t { kThrow, kGoOn };
  explicit ResponseCache(const std::filesystem::path& path, OnError on_error = OnError::kThrow);
  ~ResponseCache();
  ResponseCache(const ResponseCache&) = delete;
  ResponseCache& operator=(const ResponseCache&) = delete;

  // The entry for `key`, when it belongs to the request with hash `request_sha256` (request_hash)
  // and passes its check; an entry that does not (edited, moved or damaged) is a miss counted in
  // rejected().
  [[nodiscard]] std::optional<Completion> get(const std::string& key, const std::string& request_sha256);
  // Stores a successful completion. Writes (and hit counts) are batched in memory and written by
  // commit() in one transaction (automatically every set_batch_size() entries: 256 unless set).
  void put(const std::string& key, const std::string& request_sha256, const std::string& model,
           const io::Json& identity, const Completion& completion);
  // A completion ready to be stored: serialized (completion_line) and its check computed, the
  // costly part of a put, which a caller sharing the cache between threads does outside its lock.
  struct Entry {
    std::string key, request_sha256, completion, check;
  };
  [[nodiscard]] static Entry make_entry(std::string key, std::string request_sha256,
                                        const Completion& completion);
  // put with the entry made and the identity already serialized (io::to_line(identity)).
  void put_entry(Entry entry, std::string_view model, std::string_view identity_line);
  // Room for `n` more put_entry calls before the next commit (no reallocation while they come).
  void reserve(std::size_t n);
  void commit();
  // Entries put() holds before it commits by itself (256 unless set; at least 1).
  void set_batch_size(std::size_t n) noexcept { batch_size_ = n == 0 ? 1 : n; }
  // The entries get() served since the last commit (their hits are written by commit()), taken out
  // to be counted by another connection: the runner looks entries up on one connection per event
  // loop and writes on another.
  [[nodiscard]] std::vector<CacheHit> take_hits();
  void add_hits(std::vector<CacheHit> hits);
  // Entries refused by get() because they failed their check.
  [[nodiscard]] std::size_t rejected() const noexcept { return rejected_; }
  // kGoOn: why the connection was turned off ("" while it works).
  [[nodiscard]] const std::string& failure() const noexcept { return failure_; }
  [[nodiscard]] CacheStats stats();
  // Removes every entry (model empty) or the entries of one model; returns how many.
  std::uint64_t clear(const std::string& model = {});
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

  // Test-only stand-in for a full disk: the database may not grow past this many pages
  // (PRAGMA max_page_count; 0: no bound), so that a write needing more fails with SQLITE_FULL as on
  // a full disk. The environment variable NUMCHECK_CACHE_MAX_PAGES sets it for every connection a
  // process opens (how the CLI's tests fill the disk).
  void set_max_pages(std::uint64_t pages);

 private:
  struct Pending {
    Entry entry;
    std::size_t source = 0;  // its model and identity: sources_[source]
  };
  enum Query : std::uint8_t { kGet, kInsert, kHit, kQueries };
  [[nodiscard]] static std::string entry_check(std::string_view key, std::string_view request_sha256,
                                               std::string_view completion);
  void open();
  // The schema, an earlier cache's entries (under a write transaction).
  void set_up();
  void copy_store();
  [[nodiscard]] int user_version();
  [[nodiscard]] bool has_column(std::string_view table, std::string_view column_name);
  void exec(const char* sql);
  sqlite3_stmt* prepared(Query q);
  // Runs fn, which throws Error on a failure of the database: kThrow lets it through, kGoOn turns
  // the connection off (failure_). Does nothing on a connection that is off.
  template <class Fn>
  void guarded(Fn&& fn);
  [[nodiscard]] bool off() const noexcept { return !failure_.empty(); }
  void close() noexcept;

  std::filesystem::path path_;
  OnError on_error_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* statements_[kQueries] = {};
  std::vector<Pending> pending_;
  std::vector<std::pair<std::string, std::string>> sources_;  // (model, identity line) of pending_
  std::vector<CacheHit> hits_;
  std::size_t rejected_ = 0;
  std::size_t batch_size_ = 256;
  std::string failure_;
};

// Completion <-> JSON: what a cache entry stores, as a DOM (completion_to_json) and as the text
// written into the cache (completion_line: io::to_line(completion_to_json(c)), written directly);
// completion_from_json reads it back.
[[nodiscard]] io::Json completion_to_json(const Completion& c);
[[nodiscard]] std::string completion_line(const Completion& c);
[[nodiscard]] Completion completion_from_json(const io::Json& j);

namespace detail {
// One answer of a store-format cache (numcheck's own format before the SQLite cache): the fields
// of its record, and the hits its index counted for it.
struct StoreRecord {
  std::string_view key, request_sha256, check, model, identity, created, completion;
  std::uint64_t hits = 0;
};
// Calls fn for every whole record of a store's entries file (`entries`: its bytes, header included)
// in file order, with the hits of the index (`index`: its bytes; empty or damaged: no hits). Bytes
// that are not a record (a commit cut by a crash) are passed over to the next record. Returns how
// many records it found; 0 when `entries` is not a store's entries file. Reads untrusted bytes
// (fuzz/fuzz_llm_cache.cpp).
std::uint64_t read_store(std::string_view entries, std::string_view index,
                         const std::function<void(const StoreRecord&)>& fn);
}  // namespace detail

}  // namespace numcheck::llm
