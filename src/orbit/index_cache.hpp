#pragma once
// The benchmark index cache's file (index_cache.cpp; the user-facing side is IndexCache in
// index.hpp). Internal to the orbit library: load_benchmark_index uses it.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "io/cache_dir.hpp"
#include "orbit/index.hpp"

namespace numcheck::orbit::detail {

// What tells a file changed without reading it, as git's index does: size, device and inode (a
// file replaced by rename has a new one), modification time, and the inode's change time, which
// every write, truncation, rename over it and utimensat() sets to the kernel's clock and which no
// call can set back.
struct FileStamp {
  std::uint64_t size = 0;
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};
struct IndexStamps {
  std::string dir;  // the benchmark folder's canonical path
  FileStamp bases, views;
  // The wall clock (CLOCK_REALTIME, the clock of file times) when the stamps were taken, before the
  // files were read: a cache's file hashes are those of the files' bytes at that moment or later.
  std::int64_t stamped_ns = 0;
};
// How long before the stamping a file's last change must lie for its stamp to stand for its bytes:
// a change after the stamping gets a change time at least one tick of the kernel's coarse clock
// later than anything before the stamping minus that tick, and 2 s is above every file system's
// tick (FAT's 2 s times included).
inline constexpr std::int64_t kSettledNs = 2'000'000'000;
// True when both files' last change lies kSettledNs or more before `stamped_ns` (a file whose
// change time is 0, as on file systems that keep none, never is): then a file whose stamp is still
// the same has the bytes it had when the cache's hashes were taken, and they are not hashed again.
[[nodiscard]] bool settled(const IndexStamps& stamps, std::int64_t stamped_ns) noexcept;
// nullopt when the folder or one of the two files cannot be stat'ed (the loader then says why).
[[nodiscard]] std::optional<IndexStamps> stamps_of(const std::filesystem::path& dir);

// <folder>/orbit-index/<first 32 hex digits of SHA-256 of the canonical path>.idx
[[nodiscard]] std::filesystem::path index_cache_file(const std::filesystem::path& folder,
                                                     const IndexStamps& stamps);

// The index in `file` when it is a valid cache of `dir` as stamped now, made from this
// manifest.json; its check (BenchmarkIndex::cache_check) is started: the SHA-256 of the cache
// file's body, and of bases.jsonl and views.jsonl unless the stamps were settled() when the cache
// was made (then their stamps stand for their recorded hashes). nullopt otherwise (missing,
// torn, corrupt, another version, another folder, changed files). Only a regular file is read: a
// FIFO, device or socket at that path is never waited on (opened without blocking, refused by its
// type), and `warning` (when given) then says so.
[[nodiscard]] std::optional<BenchmarkIndex> read_index_cache(const std::filesystem::path& file,
                                                             const std::filesystem::path& dir,
                                                             const IndexStamps& stamps,
                                                             std::string manifest_json,
                                                             std::string* warning = nullptr);
// The index in a cache file's body (between the magic and the trailer), without the checks of its
// hash: nullopt unless its head matches and its structure holds (bounds, tables that end). For the
// fuzz target (fuzz/fuzz_orbit_index_cache.cpp); read_index_cache reads the same way from the file.
[[nodiscard]] std::optional<BenchmarkIndex> parse_index_cache_body(std::string_view body,
                                                                   const IndexStamps& stamps,
                                                                   const std::string& manifest_sha256);
// Writes the cache file of an index built from the files (stamped before they were read); throws
// Error (kIo) when it cannot. Keeps the folder's newest 16 cache files.
void write_index_cache(const std::filesystem::path& file, const BenchmarkIndex& b, const IndexStamps& stamps);

}  // namespace numcheck::orbit::detail
