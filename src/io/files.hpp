#pragma once
// Files: whole-file reads, atomic writes, crash-safe appends, and the data directory.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace numcheck::io {

// Reads a whole file; throws Error (kIo) naming the path when it cannot. Files larger than
// max_bytes are refused with a clear error instead of exhausting memory.
[[nodiscard]] std::string read_file(const std::filesystem::path& path,
                                    std::size_t max_bytes = std::size_t{1} << 32);

// The crash-safe writers: AtomicFile / write_file_atomic (whole files) and AppendFile (records).
// Every numcheck file that must survive a crash is written through one of them.

// A whole file written in pieces to "<path>.tmp.<pid>", then fsync'd and renamed over `path` by
// commit(): readers see the old file or the new one, never a half-written one. Any failure (a
// full disk, an I/O error) and a destruction without commit() remove the temporary file.
class AtomicFile {
 public:
  // kSynced: commit() makes the file durable (fsync) before it takes the name, and the name
  // durable after (fsync of the folder). kCache: for a rebuildable cache (the benchmark index
  // cache): the name still changes atomically, but nothing waits for the disk, so after a crash of
  // the machine the file may be missing or torn (its reader must check it).
  enum class Durability { kSynced, kCache };
  explicit AtomicFile(std::filesystem::path path,
                      Durability durability = Durability::kSynced);  // creates missing parent folders
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  void write(std::string_view bytes);  // throws Error (kIo) naming the file; the temp file is gone
  // Appends the `length` bytes at `offset` of what was written so far to `out`; throws Error (kIo).
  void read_back(std::uint64_t offset, std::size_t length, std::string& out);
  // Forgets what was written: the file is empty again (still not in place).
  void reset();
  void commit();  // throws Error (kIo) likewise; afterwards `path` is the new file
  [[nodiscard]] const std::filesystem::path& temp_path() const noexcept { return tmp_; }

 private:
  [[noreturn]] void abort_with(const char* what, int err);
  std::filesystem::path path_, tmp_;
  int fd_ = -1;
  Durability durability_;
};

// Writes `bytes` with one AtomicFile.
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

// Reads exactly `length` bytes at `offset` of fd into `out` (pread, EINTR retried): 0, or the errno
// (EIO for a file shorter than asked; `out` then holds a part).
[[nodiscard]] int pread_exact(int fd, std::uint64_t offset, void* out, std::size_t length) noexcept;
// Writes all of `bytes` at `offset` of fd (pwrite, EINTR retried, short writes continued): 0, or
// the errno (`bytes` may then be partly written).
[[nodiscard]] int pwrite_exact(int fd, std::uint64_t offset, std::string_view bytes) noexcept;

// A scratch file for records written once and read back in another order (orbit score's spool):
// "<near>.spool.<pid>" next to `near` (same file system as the output), unlinked as soon as it is
// open, so the data lives only as long as the descriptor and no exit path, not even a kill, leaves
// it behind. Writes are buffered; read() sees everything appended. Parent folders it had to create
// are removed again if they are still empty when it goes.
class SpoolFile {
 public:
  explicit SpoolFile(const std::filesystem::path& near);
  SpoolFile(const SpoolFile&) = delete;
  SpoolFile& operator=(const SpoolFile&) = delete;
  ~SpoolFile();

  // Appends bytes; returns their offset. Throws Error (kIo) naming the spool (a full disk).
  std::uint64_t append(std::string_view bytes);
  // Appends the `length` bytes at `offset` (earlier appended) to `out`. Throws Error (kIo).
  void read(std::uint64_t offset, std::size_t length, std::string& out);
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }

 private:
  void flush();
  std::filesystem::path path_;
  std::vector<std::filesystem::path> created_;  // parent folders made here, innermost last
  int fd_ = -1;
  std::string buffer_;
  std::uint64_t flushed_ = 0;  // bytes on disk
  std::uint64_t size_ = 0;     // bytes appended
};

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

// Calls fn for each line of the file, in order. Streams; memory use is one block (1 MiB) or, for a
// longer line, that line.
void for_each_line(const std::filesystem::path& path, const std::function<void(const Line&)>& fn);

// A block of whole lines read by LineBlockReader: bytes in a buffer kept from block to block (never
// zero-filled, grown for a longer block).
class LineBlock {
 public:
  [[nodiscard]] std::string_view text() const noexcept { return {data_.get(), size_}; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  // The bytes the buffer holds room for (a buffer grown for a long line is given back when the
  // next, shorter block is read).
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  // Bytes after text() that may be read (never parsed): at least kReadableAfter, so that a line
  // can be parsed by simdjson where it lies (it reads up to 64 bytes past the end).
  static constexpr std::size_t kReadableAfter = 64;
  [[nodiscard]] std::size_t readable_after() const noexcept { return capacity_ - size_; }

 private:
  friend class LineBlockReader;
  void reserve(std::size_t n);  // keeps the bytes held
  std::unique_ptr<char[]> data_;
  std::size_t size_ = 0, capacity_ = 0;
};

// Reads a file in blocks of whole lines: each block holds about `block_bytes` or more of complete
// lines and ends just after a "\n", except the file's last block when the file does not end in
// "\n" (its last line is then unterminated). A line longer than a block makes its block longer.
// read(2) in large pieces: the line splitting is the caller's (for_each_line, the JSONL readers).
class LineBlockReader {
 public:
  explicit LineBlockReader(const std::filesystem::path& path, std::size_t block_bytes = std::size_t{1} << 20);
  LineBlockReader(const LineBlockReader&) = delete;
  LineBlockReader& operator=(const LineBlockReader&) = delete;
  ~LineBlockReader();
  // The next block into `out` (replacing its contents); false at the end of the file. Throws
  // Error (kIo) naming the file when it cannot be read.
  bool next(LineBlock& out);

 private:
  std::filesystem::path path_;
  std::size_t block_;
  int fd_ = -1;
  bool eof_ = false;
  std::string carry_;  // the bytes read after the last block's final "\n"
};

// Lines in a block of whole lines (LineBlock::text): its "\n"s, and one more for an unterminated
// last line.
[[nodiscard]] std::size_t count_lines(std::string_view text) noexcept;
// The lines of a file (what for_each_line hands out, blank ones included), read in blocks.
// Throws Error (kIo) naming the file when it cannot be read.
[[nodiscard]] std::size_t count_file_lines(const std::filesystem::path& path);

// Appends records to a file with one write(2) per line or per batch of lines (O_APPEND): a process killed at
// any moment leaves every earlier line intact and at most one torn last line (repair_torn_tail), and lines
// appended from several threads never interleave. `durable` fdatasyncs after every line (every batch, for
// append_lines); otherwise sync() does it for every line appended since the last sync (the runner calls it at
// most once a second).
class AppendFile {
 public:
  AppendFile() = default;
  AppendFile(const std::filesystem::path& path, bool durable);  // creates missing parent folders
  AppendFile(AppendFile&& other) noexcept;
  AppendFile& operator=(AppendFile&& other) noexcept;
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;
  ~AppendFile();

  // Writes `line` followed by "\n" (line must not contain "\n"). Safe to call from several threads.
  void append_line(std::string_view line);
  // Writes lines already ended by "\n" (each without another "\n" inside) in one write(2): what
  // several answers that arrived together cost as one system call instead of one each. The same
  // guarantee as a write per line: lines from other threads never fall between them, and a process
  // killed during the write leaves every earlier line intact and at most one torn last line.
  // Nothing for an empty `lines`; a last line without its "\n" gets one.
  void append_lines(std::string_view lines);
  void sync();
  [[nodiscard]] bool is_open() const noexcept { return fd_ >= 0; }
  void close();

 private:
  void write_all(std::string_view a, std::string_view b);

  int fd_ = -1;
  bool durable_ = false;
  std::atomic<bool> dirty_{false};
  std::filesystem::path path_;
};

// An open file descriptor, closed when the object goes (or is reset); -1 holds none.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }
  [[nodiscard]] int get() const noexcept { return fd_; }
  // Gives the descriptor up without closing it.
  int release() noexcept {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes the descriptor held, if any, and holds `fd` instead.
  void reset(int fd = -1) noexcept;

 private:
  int fd_ = -1;
};

// An exclusive advisory lock (flock) on a lock file, held while the object lives; the kernel
// releases it when the process ends, however it ends. The file itself is left in place.
class FileLock {
 public:
  FileLock() = default;
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();
  // Creates the file when missing and takes the lock without waiting: false when another process
  // (or another FileLock in this one) holds it. Throws Error (kIo) when the file cannot be opened.
  [[nodiscard]] bool try_lock(const std::filesystem::path& path);

 private:
  int fd_ = -1;
};

// If the file ends without "\n" (a torn last line from a crash), cuts that partial line off and
// returns the number of bytes removed (0 when the file was whole or absent).
std::size_t repair_torn_tail(const std::filesystem::path& path);

}  // namespace numcheck::io
