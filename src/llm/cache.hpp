#pragma once
// The response cache: SQLite, one table, keyed by SHA-256 over the server's model identity and
// build plus the full request body, so one model's answers can never be served for another's
// (and a different prompt, sampling setting or extra field is a different key). Only successful
// completions are stored; error responses never are. Safe to share between processes (WAL mode,
// busy timeout); one ResponseCache object is used from one thread.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "io/json.hpp"
#include "llm/backend.hpp"

namespace numcheck::llm {

// $NUMCHECK_CACHE_DIR, else $XDG_CACHE_HOME/numcheck, else $HOME/.cache/numcheck; the file is
// responses.sqlite3 in that folder. `dir` overrides when not empty.
[[nodiscard]] std::filesystem::path default_cache_path(const std::filesystem::path& dir = {});

// sha256 hex of {"identity": identity, "request": <body parsed and re-serialized with sorted
// keys>}: equal for byte-different but equal JSON bodies, different for anything else.
[[nodiscard]] std::string cache_key(const io::Json& identity, const io::Json& request_body);

struct CacheStats {
  std::uint64_t entries = 0;
  std::uint64_t bytes = 0;                                       // file size on disk (plus WAL)
  std::uint64_t hits = 0;                                        // total times entries were served
  std::vector<std::pair<std::string, std::uint64_t>> per_model;  // model -> entries
  std::string oldest, newest;  // ISO-8601 UTC creation times ("" when empty)
};

class ResponseCache {
 public:
  // Opens (creating folder, file and schema when missing). Throws Error (kIo) naming the path.
  explicit ResponseCache(const std::filesystem::path& path);
  ~ResponseCache();
  ResponseCache(const ResponseCache&) = delete;
  ResponseCache& operator=(const ResponseCache&) = delete;

  [[nodiscard]] std::optional<Completion> get(const std::string& key);
  // Stores a successful completion. Writes are batched in a transaction; commit() ends it.
  void put(const std::string& key, const std::string& model, const io::Json& identity,
           const Completion& completion);
  void commit();
  [[nodiscard]] CacheStats stats();
  // Removes every entry (model empty) or the entries of one model; returns how many.
  std::uint64_t clear(const std::string& model = {});
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
  void* db_ = nullptr;
  bool in_tx_ = false;
  std::size_t pending_ = 0;
};

// Completion <-> JSON (what the cache stores; also used by records).
[[nodiscard]] io::Json completion_to_json(const Completion& c);
[[nodiscard]] Completion completion_from_json(const io::Json& j);

}  // namespace numcheck::llm
