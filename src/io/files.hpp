#pragma once
// Files: whole-file reads, atomic writes, crash-safe appends, and the data directory.
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace numcheck::io {

// Reads a whole file; throws Error (kIo) naming the path when it cannot. Files larger than
// max_bytes are refused with a clear error instead of exhausting memory.
[[nodiscard]] std::string read_file(const std::filesystem::path& path,
                                    std::size_t max_bytes = std::size_t{1} << 32);

// Writes via a temporary file in the same folder, fsync and rename: readers see the old file or
// the new one, never a half-written one.
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

// Path of a file shipped in numcheck's data folder (units.json, orbit/default_spec.json, ...).
// Looks in $NUMCHECK_DATA_DIR, then next to the executable (../share/numcheck), then the source
// tree's data/ folder the build was configured with. Throws Error naming the places it looked.
[[nodiscard]] std::filesystem::path data_path(std::string_view relative);

// One line of a JSONL (or any line-based) file: its 1-based number and its bytes without the
// line terminator ("\n" or "\r\n").
struct Line {
  std::size_t number = 0;
  std::string_view text;
  bool terminated = true;  // false only for a last line without "\n" (possibly torn by a crash)
};

// Calls fn for each line of the file, in order. Streams; memory use is one line.
void for_each_line(const std::filesystem::path& path, const std::function<void(const Line&)>& fn);

// Appends records to a file, one write + flush (+ fsync when durable) per record, so that a crash
// at any moment leaves every earlier record intact and at most a torn last line.
class AppendFile {
 public:
  AppendFile() = default;
  AppendFile(const std::filesystem::path& path, bool durable);
  AppendFile(AppendFile&& other) noexcept;
  AppendFile& operator=(AppendFile&& other) noexcept;
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;
  ~AppendFile();

  // Writes `line` followed by "\n" (line must not contain "\n").
  void append_line(std::string_view line);
  [[nodiscard]] bool is_open() const noexcept { return f_ != nullptr; }
  void close();

 private:
  std::FILE* f_ = nullptr;
  bool durable_ = false;
  std::filesystem::path path_;
};

// If the file ends without "\n" (a torn last line from a crash), cuts that partial line off and
// returns the number of bytes removed (0 when the file was whole or absent).
std::size_t repair_torn_tail(const std::filesystem::path& path);

}  // namespace numcheck::io
