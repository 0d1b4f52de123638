#pragma once
// The response cache: answers keyed by SHA-256 over the server's model identity and build plus the
// full request body, so one model's answers can never be served for another's (and a different
// prompt, sampling setting or extra field is a different key). Only successful completions are
// stored; error responses never are. Safe to share between processes (an append-only store with a
// lock for its writers, below); one ResponseCache object is used from one thread. Entries are found
// by their key's first 64 bits (key_prefix) and served only when the whole key matches: two keys
// that share a prefix cost a miss (the later one replaces the earlier), never a wrong answer.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/json.hpp"
#include "io/sha256.hpp"
#include "llm/backend.hpp"

namespace numcheck::llm {

// responses.cache in the user's cache folder (io::user_cache_dir: $NUMCHECK_CACHE_DIR, else
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

// The keys of a cache's entries at one moment, so that a run can skip the lookups that cannot hit
// (ResponseCache::key_snapshot). Keeps each key's first 64 bits (ResponseCache::key_prefix, what the
// cache's index holds): a collision costs one lookup that misses, never a wrong answer (get() still
// decides every hit).
class KeySnapshot {
 public:
  explicit KeySnapshot(std::vector<std::uint64_t> hashes);
  [[nodiscard]] bool may_contain(std::string_view key) const noexcept;
  [[nodiscard]] std::size_t size() const noexcept { return hashes_.size(); }
  [[nodiscard]] static std::uint64_t hash(std::string_view key) noexcept;

 private:
  std::vector<std::uint64_t> hashes_;  // sorted, unique
};

struct CacheStats {
  std::uint64_t entries = 0;
  std::uint64_t bytes = 0;                                       // the store's two files on disk
  std::uint64_t hits = 0;                                        // total times entries were served
  std::vector<std::pair<std::string, std::uint64_t>> per_model;  // model -> entries
  std::string oldest, newest;  // ISO-8601 UTC creation times ("" when empty)
};

// An entry get() served, to be counted by the connection that writes (take_hits, add_hits).
struct CacheHit {
  std::uint64_t prefix = 0;  // the entry's key_prefix
  std::uint64_t offset = 0;  // where its record starts in the entries file
};

// The store (docs/runner.md, "The response cache"): two files written once, append only.
//   <path>        the entries: a 16-byte header, then one record per stored answer (key, request
//                 hash, check, model, identity, creation time, completion), each framed by a magic
//                 number and its length;
//   <path>.index  32 bytes per entry (its key's first 64 bits, where its record is, its length) or
//                 per count of hits, each sealed by a 64-bit mix of its fields;
//   <path>.lock   what writers take (flock) while they append, and readers while they read the
//                 index: nothing else is in it.
// A connection keeps the index in memory (a hash table of key prefix -> record) and reads a record
// only for the entry a lookup finds. A commit appends its records, then their index lines, in two
// writes under the lock: another process sees all of a commit or none of it. Nothing is fsync'd: an
// answer lost with the machine is a miss, and a damaged record fails its check and is never served.
// `clear` rewrites the files (new files renamed over the old, which other connections notice).
// A SQLite cache that earlier numcheck versions kept beside it (<path> with extension .sqlite3) is
// copied into a new store once, when the store is made; the SQLite file is left as it was.
class ResponseCache {
 public:
  // Opens (creating folder and files when missing). Throws Error (kIo) naming the path.
  explicit ResponseCache(const std::filesystem::path& path);
  ~ResponseCache();
  ResponseCache(const ResponseCache&) = delete;
  ResponseCache& operator=(const ResponseCache&) = delete;

  // The entry for `key`, when it belongs to the request with hash `request_sha256` (request_hash)
  // and passes its check; an entry that does not (edited, moved or damaged) is a miss counted in
  // rejected().
  [[nodiscard]] std::optional<Completion> get(const std::string& key, const std::string& request_sha256);
  // Stores a successful completion. Writes (and hit counts) are batched in memory and written by
  // commit() (automatically every set_batch_size() entries: 256 unless set).
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
  void reserve(std::size_t n) { pending_.reserve(pending_.size() + std::min(n, batch_size_)); }
  void commit();
  // Entries put() holds before it commits by itself (256 unless set; at least 1).
  void set_batch_size(std::size_t n) noexcept { batch_size_ = n == 0 ? 1 : n; }
  // The keys of the stored entries (every entry get() could serve, and records it would refuse as
  // well) when the index holds at most `max_entries` lines (which costs no read); nullopt when it
  // may hold more, or when `max_entries` is 0.
  [[nodiscard]] std::optional<KeySnapshot> key_snapshot(std::uint64_t max_entries);
  // The entries get() served since the last commit (their hits are written by commit()), taken out
  // to be counted by another connection: the runner looks entries up on one connection per event
  // loop and writes on another.
  [[nodiscard]] std::vector<CacheHit> take_hits();
  void add_hits(std::vector<CacheHit> hits);
  // Entries refused by get() because they failed their check.
  [[nodiscard]] std::size_t rejected() const noexcept { return rejected_; }
  [[nodiscard]] CacheStats stats();
  // Removes every entry (model empty) or the entries of one model; returns how many.
  std::uint64_t clear(const std::string& model = {});
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

  // The key's first 64 bits as stored in the cache's index: its first 16 hex digits (every key
  // cache_key makes is hex), else the first 8 bytes of the key's SHA-256. Stable across machines
  // and versions, since caches keep it.
  [[nodiscard]] static std::int64_t key_prefix(std::string_view key) noexcept;

 private:
  struct Pending {
    Entry entry;
    std::size_t source = 0;  // its model and identity: sources_[source]
  };
  struct Store;  // the open files and the in-memory index (cache.cpp)
  [[nodiscard]] static std::string entry_check(std::string_view key, std::string_view request_sha256,
                                               std::string_view completion);

  std::filesystem::path path_;
  std::unique_ptr<Store> store_;
  std::vector<Pending> pending_;
  std::vector<std::pair<std::string, std::string>> sources_;  // (model, identity line) of pending_
  std::vector<CacheHit> hits_;
  std::size_t rejected_ = 0;
  std::size_t batch_size_ = 256;
};

// Completion <-> JSON: what a cache entry stores, as a DOM (completion_to_json) and as the text
// written into the cache (completion_line: io::to_line(completion_to_json(c)), written directly);
// completion_from_json reads it back.
[[nodiscard]] io::Json completion_to_json(const Completion& c);
[[nodiscard]] std::string completion_line(const Completion& c);
[[nodiscard]] Completion completion_from_json(const io::Json& j);

}  // namespace numcheck::llm
