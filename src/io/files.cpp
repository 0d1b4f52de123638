#include "io/files.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace numcheck::io {
namespace fs = std::filesystem;

std::string read_file(const fs::path& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ErrorCode::kIo, "cannot read {}: {}", path.string(), std::strerror(errno));
  in.seekg(0, std::ios::end);
  const auto size = in.tellg();
  if (size < 0) fail(ErrorCode::kIo, "cannot read {}: not a regular file", path.string());
  if (static_cast<std::size_t>(size) > max_bytes) {
    fail(ErrorCode::kIo, "{} is {} bytes, over the limit of {}", path.string(), static_cast<long long>(size),
         max_bytes);
  }
  std::string out(static_cast<std::size_t>(size), '\0');
  in.seekg(0);
  in.read(out.data(), size);
  if (!in) fail(ErrorCode::kIo, "error while reading {}", path.string());
  return out;
}

// AtomicFile's kDirect writes: two blocks aligned for O_DIRECT, one filled by the caller while the
// other is written by the thread of the file's own. Every write's memory, offset and length are
// multiples of kAlign (4096: the page size, and a multiple of every common logical block size); the
// last block is padded with zeros and the file cut back to its size by AtomicFile::commit().
//
// A file to be synced (`sync_ahead`) also gets a second thread that fdatasyncs it each time the
// writer has put another kSyncStep bytes on the disk. An O_DIRECT write is on the device but may
// still sit in its volatile cache (a virtual disk's host, a drive's cache) until a flush; left to
// commit()'s fsync, the flush of a 378 MB output took 145-240 ms at the end of the command, against
// 15-17 ms with the flushes made along the way (docs/performance.md, "The ends of `orbit score`
// and `orbit run` flushed along the way"). A failed flush is the file's write error: its error is
// reported once per descriptor, so commit()'s own fsync would not see it again.
class AtomicFile::DirectWrites {
 public:
  static constexpr std::size_t kAlign = 4096;
  static constexpr std::size_t kBlock = std::size_t{2} << 20;
  static constexpr std::uint64_t kSyncStep = std::uint64_t{32} << 20;

  DirectWrites(int fd, fs::path path, bool sync_ahead) : fd_(fd), path_(std::move(path)) {
    for (auto& b : blocks_) {
      b.reset(static_cast<char*>(std::aligned_alloc(kAlign, kBlock)));
      if (!b) throw std::bad_alloc();
    }
    thread_ = std::thread([this] { loop(); });
    if (sync_ahead) {
      try {
        syncer_ = std::thread([this] { sync_loop(); });
      } catch (const std::system_error&) {  // no thread for it: commit()'s fsync does all the flushing
      }
    }
  }
  DirectWrites(const DirectWrites&) = delete;
  DirectWrites& operator=(const DirectWrites&) = delete;
  ~DirectWrites() {
    stop_threads();  // after the block in flight and the flush in flight, if any
    if (read_fd_ >= 0) ::close(read_fd_);
  }

  // The flushes started along the way so far (for the tests).
  [[nodiscard]] std::size_t syncs_ahead() {
    const std::lock_guard lock(m_);
    return syncs_;
  }

  // The bytes written so far (on the disk, on their way, or in the block being filled).
  [[nodiscard]] std::uint64_t size() const noexcept { return handed_ + fill_; }

  // 0, or the errno of a failed write (this one's or an earlier block's).
  int append(std::string_view bytes) {
    while (!bytes.empty()) {
      const std::size_t take = std::min(bytes.size(), kBlock - fill_);
      std::memcpy(blocks_[cur_].get() + fill_, bytes.data(), take);
      fill_ += take;
      bytes.remove_prefix(take);
      if (fill_ == kBlock) {
        if (const int err = hand_over(kBlock); err != 0) return err;
      }
    }
    return 0;
  }

  // Writes the last, partial block padded to kAlign and waits for every write: 0 or an errno. The
  // file is then size() rounded up to kAlign bytes long; no append may follow.
  int finish() {
    if (fill_ > 0) {
      const std::uint64_t bytes = size();
      const std::size_t padded = (fill_ + kAlign - 1) / kAlign * kAlign;
      std::memset(blocks_[cur_].get() + fill_, 0, padded - fill_);
      if (const int err = hand_over(padded); err != 0) return err;
      handed_ = bytes;
    }
    if (const int err = wait(); err != 0) return err;
    // The flush due, if any, starts; then no other does, and the one in flight is waited for and
    // its error taken.
    if (syncer_.joinable()) {
      {
        std::unique_lock lock(m_);
        cv_.wait(lock, [&] { return unsynced_ < kSyncStep; });
        sync_stop_ = true;
      }
      sync_cv_.notify_all();
      syncer_.join();
    }
    return wait();
  }

  // Appends the `length` bytes at `offset` of what was written to `out`: 0 or an errno.
  int read_back(std::uint64_t offset, std::size_t length, std::string& out) {
    if (const int err = wait(); err != 0) return err;
    if (offset + length > size()) return EIO;
    if (offset < handed_) {  // on the disk: read through the page cache on a descriptor of its own
      if (read_fd_ < 0) read_fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
      if (read_fd_ < 0) return errno;
      const auto from_disk = static_cast<std::size_t>(std::min<std::uint64_t>(length, handed_ - offset));
      const std::size_t start = out.size();
      out.resize(start + from_disk);
      if (const int err = pread_exact(read_fd_, offset, out.data() + start, from_disk); err != 0) {
        out.resize(start);
        return err;
      }
      offset += from_disk;
      length -= from_disk;
    }
    out.append(blocks_[cur_].get() + (offset - handed_), length);  // the block being filled
    return 0;
  }

  // Forgets what was written (the caller truncates the file): 0 or an errno.
  int reset() {
    const int err = wait();
    handed_ = 0;
    fill_ = 0;
    return err;
  }

 private:
  struct Free {
    void operator()(char* p) const noexcept { std::free(p); }
  };

  // Waits for the block in flight, then hands the current one (its first `length` bytes) to the
  // thread and switches blocks.
  int hand_over(std::size_t length) {
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return !busy_; });
    if (error_ != 0) return error_;
    job_ = {cur_, handed_, length};
    busy_ = true;
    lock.unlock();
    cv_.notify_all();
    handed_ += length;
    cur_ ^= 1U;
    fill_ = 0;
    return 0;
  }

  int wait() {
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return !busy_; });
    return error_;
  }

  void stop_threads() {
    {
      const std::lock_guard lock(m_);
      stop_ = true;
      sync_stop_ = true;
    }
    cv_.notify_all();
    sync_cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    if (syncer_.joinable()) syncer_.join();
  }

  void loop() {
    std::unique_lock lock(m_);
    for (;;) {
      cv_.wait(lock, [&] { return busy_ || stop_; });
      if (!busy_) return;
      const Job job = job_;
      lock.unlock();
      const int err = write_block(blocks_[job.block].get(), job.length, job.offset);
      lock.lock();
      if (error_ == 0) error_ = err;
      busy_ = false;
      unsynced_ += job.length;
      if (unsynced_ >= kSyncStep) sync_cv_.notify_one();
      cv_.notify_all();
    }
  }

  // The flushes along the way (sync_ahead only): one fdatasync each time the writer has put another
  // kSyncStep bytes on the disk since the last one started.
  void sync_loop() {
    std::unique_lock lock(m_);
    for (;;) {
      sync_cv_.wait(lock, [&] { return sync_stop_ || unsynced_ >= kSyncStep; });
      if (sync_stop_) return;
      unsynced_ = 0;
      ++syncs_;
      cv_.notify_all();  // finish() waits for the flush due to start
      lock.unlock();
      const int err = ::fdatasync(fd_) == 0 ? 0 : errno;
      lock.lock();
      if (error_ == 0) error_ = err;
    }
  }

  // pwrite(2) of a whole block. A file system or device that refuses it as misaligned (EINVAL)
  // gets this block and the rest through the page cache: O_DIRECT is cleared on the descriptor.
  int write_block(const char* p, std::size_t length, std::uint64_t offset) {
    std::size_t done = 0;
    while (done < length) {
      const ssize_t n = ::pwrite(fd_, p + done, length - done, static_cast<off_t>(offset + done));
      if (n < 0) {
        const int err = errno;
        if (err == EINTR) continue;
        if (err == EINVAL && direct_) {
          const int flags = ::fcntl(fd_, F_GETFL);
          if (flags >= 0 && ::fcntl(fd_, F_SETFL, flags & ~O_DIRECT) == 0) {
            direct_ = false;
            continue;
          }
        }
        return err;
      }
      done += static_cast<std::size_t>(n);
    }
    return 0;
  }

  struct Job {
    unsigned block = 0;
    std::uint64_t offset = 0;
    std::size_t length = 0;
  };

  int fd_;
  fs::path path_;
  int read_fd_ = -1;
  std::unique_ptr<char, Free> blocks_[2];
  unsigned cur_ = 0;          // the block being filled
  std::size_t fill_ = 0;      // bytes in it
  std::uint64_t handed_ = 0;  // bytes handed to the thread (the file offset of the block being filled)
  bool direct_ = true;        // the thread's: O_DIRECT still set on fd_
  std::mutex m_;
  std::condition_variable cv_, sync_cv_;
  Job job_;
  bool busy_ = false, stop_ = false, sync_stop_ = false;
  int error_ = 0;               // the first failed write's (or flush's) errno
  std::uint64_t unsynced_ = 0;  // bytes written since the last flush started
  std::size_t syncs_ = 0;       // flushes started
  std::thread thread_, syncer_;
};

AtomicFile::AtomicFile(fs::path path, Durability durability, Caching caching)
    : path_(std::move(path)), durability_(durability) {
  if (path_.has_parent_path()) {
    std::error_code ec;
    fs::create_directories(path_.parent_path(), ec);
    if (ec) fail(ErrorCode::kIo, "cannot create {}: {}", path_.parent_path().string(), ec.message());
  }
  tmp_ = path_;
  tmp_ += fmt::format(".tmp.{}", ::getpid());
  constexpr int kFlags = O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC;
  if (caching == Caching::kDirect) {
    fd_ = ::open(tmp_.c_str(), kFlags | O_DIRECT, 0644);
    if (fd_ >= 0) {
      try {
        direct_ = std::make_unique<DirectWrites>(fd_, tmp_, durability_ == Durability::kSynced);
        return;
      } catch (const std::exception&) {  // no memory or no thread for it: the page cache instead
        ::close(fd_);
        fd_ = -1;
      }
    } else if (errno != EINVAL) {
      fail(ErrorCode::kIo, "cannot write {}: {}", path_.string(), std::strerror(errno));
    }
    // EINVAL: the file system does not take O_DIRECT (tmpfs before Linux 6.6); the page cache then.
  }
  fd_ = ::open(tmp_.c_str(), kFlags, 0644);
  if (fd_ < 0) fail(ErrorCode::kIo, "cannot write {}: {}", path_.string(), std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  direct_.reset();
  if (fd_ >= 0) {
    ::close(fd_);
    std::error_code ec;
    fs::remove(tmp_, ec);
  }
}

void AtomicFile::abort_with(const char* what, int err) {
  direct_.reset();
  ::close(fd_);
  fd_ = -1;
  std::error_code ec;
  fs::remove(tmp_, ec);
  fail(ErrorCode::kIo, "cannot {} {}: {}", what, path_.string(), std::strerror(err));
}

void AtomicFile::write(std::string_view bytes) {
  if (fd_ < 0) fail(ErrorCode::kIo, "cannot write {}: the file is closed", path_.string());
  if (direct_) {
    if (const int err = direct_->append(bytes); err != 0) abort_with("write", err);
    return;
  }
  // At most 1 MiB per write(2): one write of a 115 MB buffer cost the kernel about 1 CPU second on
  // this machine kind, against 0.15 s for a whole 522 MB file in 1 MiB slices (the retrieval index).
  // Each time the file passes a multiple of 8 MiB, the disk writes of what is not yet on its way
  // are started, so that commit()'s fsync finds little left to do (the fsync of the 522 MB index
  // took 0.3 s of wall clock when all of it was left to it, almost none with the writes started
  // early; of a 32 MB scores file, 64 ms and 25 ms). A hint only: a failure is ignored, and
  // durability is still the fsync's.
  constexpr std::size_t kSlice = std::size_t{1} << 20;
  constexpr off_t kStep = off_t{8} << 20;
  off_t pos = ::lseek(fd_, 0, SEEK_CUR);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, std::min(bytes.size() - done, kSlice));
    if (n < 0) {
      if (errno == EINTR) continue;
      abort_with("write", errno);
    }
    done += static_cast<std::size_t>(n);
    if (pos < 0 || durability_ == Durability::kCache) continue;
    const off_t after = pos + static_cast<off_t>(n);
    if (after / kStep != pos / kStep) {
      const off_t from = pos / kStep * kStep;
      (void)::sync_file_range(fd_, from, after - from, SYNC_FILE_RANGE_WRITE);
    }
    pos = after;
  }
}

int pread_exact(int fd, std::uint64_t offset, void* out, std::size_t length) noexcept {
  auto* p = static_cast<char*>(out);
  std::size_t done = 0;
  while (done < length) {
    const ssize_t n = ::pread(fd, p + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

void UniqueFd::reset(int fd) noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

int pwrite_exact(int fd, std::uint64_t offset, std::string_view bytes) noexcept {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n =
        ::pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

namespace {

// Appends the `length` bytes at `offset` of fd to `out`; on failure `out` is as it was and the
// result is the errno (EIO for a file shorter than asked), else 0.
int pread_append(int fd, std::uint64_t offset, std::size_t length, std::string& out) {
  const std::size_t start = out.size();
  out.resize(start + length);
  const int err = pread_exact(fd, offset, out.data() + start, length);
  if (err != 0) out.resize(start);
  return err;
}

}  // namespace

void AtomicFile::read_back(std::uint64_t offset, std::size_t length, std::string& out) {
  if (fd_ < 0) fail(ErrorCode::kIo, "cannot read {}: the file is closed", tmp_.string());
  const int err = direct_ ? direct_->read_back(offset, length, out) : pread_append(fd_, offset, length, out);
  if (err != 0) abort_with("read back", err);
}

void AtomicFile::reset() {
  if (fd_ < 0) fail(ErrorCode::kIo, "cannot write {}: the file is closed", path_.string());
  if (direct_) {
    if (const int err = direct_->reset(); err != 0) abort_with("write", err);
  }
  if (::ftruncate(fd_, 0) != 0 || ::lseek(fd_, 0, SEEK_SET) != 0) abort_with("write", errno);
}

void AtomicFile::commit() {
  if (fd_ < 0) fail(ErrorCode::kIo, "cannot write {}: the file is closed", path_.string());
  if (direct_) {
    if (const int err = direct_->finish(); err != 0) abort_with("write", err);
    const std::uint64_t size = direct_->size();
    syncs_ahead_ = direct_->syncs_ahead();
    direct_.reset();
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0)
      abort_with("write", errno);  // the last block's padding
  }
  if (durability_ == Durability::kSynced && ::fsync(fd_) != 0) abort_with("write", errno);
  if (::close(fd_) != 0) {
    fd_ = -1;
    const int e = errno;
    std::error_code ec;
    fs::remove(tmp_, ec);
    fail(ErrorCode::kIo, "cannot write {}: {}", path_.string(), std::strerror(e));
  }
  fd_ = -1;
  std::error_code ec;
  fs::rename(tmp_, path_, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp_, ignored);
    fail(ErrorCode::kIo, "cannot rename {} to {}: {}", tmp_.string(), path_.string(), ec.message());
  }
}

SpoolFile::SpoolFile(const fs::path& near) {
  std::error_code probe;
  for (fs::path p = near.parent_path(); !p.empty() && !fs::exists(p, probe) && !probe; p = p.parent_path()) {
    created_.insert(created_.begin(), p);
    if (p == p.parent_path()) break;
  }
  if (near.has_parent_path()) {
    std::error_code ec;
    fs::create_directories(near.parent_path(), ec);
    if (ec) fail(ErrorCode::kIo, "cannot create {}: {}", near.parent_path().string(), ec.message());
  }
  path_ = near;
  path_ += fmt::format(".spool.{}", ::getpid());
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd_ < 0)
    fail(ErrorCode::kIo, "cannot create the spool file {}: {}", path_.string(), std::strerror(errno));
  ::unlink(path_.c_str());
}

SpoolFile::~SpoolFile() {
  if (fd_ >= 0) ::close(fd_);
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    std::error_code ec;
    fs::remove(*it, ec);  // only when empty
  }
}

void SpoolFile::flush() {
  std::size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(ErrorCode::kIo, "cannot write the spool file {}: {}", path_.string(), std::strerror(errno));
    }
    done += static_cast<std::size_t>(n);
  }
  flushed_ += buffer_.size();
  buffer_.clear();
}

std::uint64_t SpoolFile::append(std::string_view bytes) {
  const std::uint64_t at = size_;
  buffer_.append(bytes);
  size_ += bytes.size();
  if (buffer_.size() >= (std::size_t{1} << 20)) flush();
  return at;
}

void SpoolFile::read(std::uint64_t offset, std::size_t length, std::string& out) {
  if (offset + length > size_) {
    fail(ErrorCode::kIo, "spool file {}: read of {} bytes at {} past its end ({})", path_.string(), length,
         offset, size_);
  }
  if (offset + length > flushed_) flush();
  if (const int err = pread_append(fd_, offset, length, out); err != 0) {
    fail(ErrorCode::kIo, "cannot read the spool file {}: {}", path_.string(),
         err == EIO ? "unexpected end" : std::strerror(err));
  }
}

void write_file_atomic(const fs::path& path, std::string_view bytes) {
  AtomicFile f(path);
  f.write(bytes);
  f.commit();
}

static fs::path exe_dir() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : p.parent_path();
}

fs::path data_path(std::string_view relative) {
  std::vector<fs::path> roots;
  if (const char* env = std::getenv("NUMCHECK_DATA_DIR"); env != nullptr && *env != '\0') {
    roots.emplace_back(env);
  }
  if (auto d = exe_dir(); !d.empty()) roots.push_back(d.parent_path() / "share" / "numcheck");
#ifdef NUMCHECK_DEFAULT_DATA_DIR
  roots.emplace_back(NUMCHECK_DEFAULT_DATA_DIR);
#endif
  std::string looked;
  for (const auto& r : roots) {
    fs::path p = r / fs::path(std::string(relative));
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p;
    looked += (looked.empty() ? "" : ", ") + p.string();
  }
  fail(ErrorCode::kIo, "data file '{}' not found (looked in: {}); set NUMCHECK_DATA_DIR", relative, looked);
}

LineBlockReader::LineBlockReader(const fs::path& path, std::size_t block_bytes)
    : path_(path), block_(std::max<std::size_t>(block_bytes, 1)) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) fail(ErrorCode::kIo, "cannot read {}: {}", path.string(), std::strerror(errno));
}

std::size_t count_lines(std::string_view text) noexcept {
  std::size_t n = 0;
  for (const char *p = text.data(), *e = p + text.size();
       (p = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(e - p)))) != nullptr;
       ++p) {
    ++n;
  }
  return n + (!text.empty() && text.back() != '\n' ? 1 : 0);
}

std::size_t count_file_lines(const std::filesystem::path& path) {
  LineBlockReader reader(path);
  LineBlock block;
  std::size_t n = 0;
  while (reader.next(block)) n += count_lines(block.text());
  return n;
}

LineBlockReader::~LineBlockReader() {
  if (fd_ >= 0) ::close(fd_);
}

void LineBlock::reserve(std::size_t n) {
  if (n <= capacity_) return;
  const std::size_t cap = std::max(n, capacity_ + capacity_ / 2);
  auto bigger = std::make_unique_for_overwrite<char[]>(cap);
  if (size_ != 0) std::memcpy(bigger.get(), data_.get(), size_);
  data_ = std::move(bigger);
  capacity_ = cap;
}

bool LineBlockReader::next(LineBlock& out) {
  out.size_ = 0;
  out.reserve(std::max(block_, carry_.size()) + 1);
  if (!carry_.empty()) std::memcpy(out.data_.get(), carry_.data(), carry_.size());
  out.size_ = carry_.size();
  carry_.clear();
  // Read until the block holds at least block_ bytes and a "\n", or the file ends.
  std::size_t searched = 0;  // bytes of `out` known to hold no "\n"
  while (!eof_) {
    const std::size_t have = out.size_;
    const std::size_t want = have < block_ ? block_ - have : block_;
    out.reserve(have + want);
    ssize_t n = 0;
    do {
      n = ::read(fd_, out.data_.get() + have, want);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
      const int err = errno;
      out.size_ = 0;
      fail(ErrorCode::kIo, "error while reading {}: {}", path_.string(), std::strerror(err));
    }
    if (n == 0) {
      eof_ = true;
      break;
    }
    out.size_ = have + static_cast<std::size_t>(n);
    if (on_bytes_) on_bytes_(out.text().substr(have));
    if (out.size_ < block_) continue;
    if (out.text().find('\n', searched) != std::string_view::npos) break;
    searched = out.size_;
  }
  if (!eof_) {
    // Keep the bytes after the last "\n" for the next block.
    const std::size_t last = out.text().rfind('\n');
    carry_.assign(out.text().substr(last + 1));
    out.size_ = last + 1;
  }
  return !out.empty();
}

void for_each_line(const fs::path& path, const std::function<void(const Line&)>& fn) {
  LineBlockReader reader(path);
  LineBlock block;
  std::size_t number = 0;
  Line line;
  while (reader.next(block)) {
    const std::string_view text = block.text();
    std::size_t pos = 0;
    while (pos < text.size()) {
      std::size_t e = text.find('\n', pos);
      line.terminated = e != std::string_view::npos;
      if (!line.terminated) e = text.size();
      std::string_view t = text.substr(pos, e - pos);
      pos = e + 1;
      if (!t.empty() && t.back() == '\r') t.remove_suffix(1);
      line.number = ++number;
      line.text = t;
      fn(line);
    }
  }
}

AppendFile::AppendFile(const fs::path& path, bool durable) : durable_(durable), path_(path) {
  if (path.has_parent_path()) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec) fail(ErrorCode::kIo, "cannot create {}: {}", path.parent_path().string(), ec.message());
  }
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(ErrorCode::kIo, "cannot open {} for appending: {}", path.string(), std::strerror(errno));
  const off_t size = ::lseek(fd_, 0, SEEK_END);
  end_.store(size > 0 ? static_cast<std::uint64_t>(size) : 0);
}

AppendFile::AppendFile(AppendFile&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)),
      durable_(o.durable_),
      dirty_(o.dirty_.load()),
      end_(o.end_.load()),
      writebacks_(o.writebacks_.load()),
      path_(std::move(o.path_)) {}

AppendFile& AppendFile::operator=(AppendFile&& o) noexcept {
  if (this != &o) {
    close();
    fd_ = std::exchange(o.fd_, -1);
    durable_ = o.durable_;
    dirty_.store(o.dirty_.load());
    end_.store(o.end_.load());
    writebacks_.store(o.writebacks_.load());
    path_ = std::move(o.path_);
  }
  return *this;
}

AppendFile::~AppendFile() { close(); }

void AppendFile::close() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

void AppendFile::write_all(std::string_view a, std::string_view b) {
  if (fd_ < 0) fail(ErrorCode::kIo, "append to a closed file");
  // a and b in one writev (O_APPEND: the kernel appends them whole, never between another thread's
  // bytes); what a short write leaves (a signal, a full disk) follows in further calls.
  const auto piece = [](std::string_view s) {
    return iovec{const_cast<char*>(s.data()), s.size()};  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  };
  std::size_t done = 0;
  const std::size_t total = a.size() + b.size();
  while (done < total) {
    std::array<iovec, 2> v{};
    int n_iov = 1;
    if (done < a.size()) {
      v[0] = piece(a.substr(done));
      v[1] = piece(b);
      n_iov = b.empty() ? 1 : 2;
    } else {
      v[0] = piece(b.substr(done - a.size()));
    }
    const ssize_t n = ::writev(fd_, v.data(), n_iov);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(ErrorCode::kIo, "cannot append to {}: {}", path_.string(), std::strerror(errno));
    }
    done += static_cast<std::size_t>(n);
  }
  dirty_.store(true);
  if (durable_) {
    sync();
    return;
  }
  // Past another kWritebackStep: the disk writes of the steps this append completed are started.
  // Without it, a run's records waited in the page cache for the next sync (the runner's, once a
  // second and at the end): the last one took 12-22 ms for an 8,600-prompt run's 7 MB, after the
  // last answer (docs/performance.md, "The ends of `orbit score` and `orbit run` flushed along the
  // way"). Another thread's bytes may lie in the range: a hint, whatever the order.
  const std::uint64_t after = end_.fetch_add(total) + total;
  const std::uint64_t before = after - total;
  if (after / kWritebackStep != before / kWritebackStep) {
    const std::uint64_t from = before / kWritebackStep * kWritebackStep;
    const std::uint64_t to = after / kWritebackStep * kWritebackStep;
    (void)::sync_file_range(fd_, static_cast<off_t>(from), static_cast<off_t>(to - from),
                            SYNC_FILE_RANGE_WRITE);
    writebacks_.fetch_add(1);
  }
}

void AppendFile::append_line(std::string_view line) { write_all(line, "\n"); }

void AppendFile::append_lines(std::string_view lines) {
  if (lines.empty()) return;
  write_all(lines, lines.back() == '\n' ? std::string_view() : std::string_view("\n"));
}

void AppendFile::sync() {
  if (fd_ < 0 || !dirty_.exchange(false)) return;
  if (::fdatasync(fd_) != 0) fail(ErrorCode::kIo, "cannot sync {}: {}", path_.string(), std::strerror(errno));
}

FileLock::FileLock(FileLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);
}

bool FileLock::try_lock(const fs::path& path) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(ErrorCode::kIo, "cannot open the lock file {}: {}", path.string(), std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return true;
  const int e = errno;
  ::close(fd_);
  fd_ = -1;
  if (e == EWOULDBLOCK) return false;
  fail(ErrorCode::kIo, "cannot lock {}: {}", path.string(), std::strerror(e));
}

std::size_t repair_torn_tail(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return 0;
  const auto size = fs::file_size(path, ec);
  if (ec || size == 0) return 0;
  std::ifstream in(path, std::ios::binary);
  // Walk back from the end to the last "\n".
  std::uintmax_t pos = size;
  char c = 0;
  const std::uintmax_t chunk = 4096;
  while (pos > 0) {
    const std::uintmax_t start = pos > chunk ? pos - chunk : 0;
    std::string buf(static_cast<std::size_t>(pos - start), '\0');
    in.seekg(static_cast<std::streamoff>(start));
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto nl = buf.rfind('\n');
    if (nl != std::string::npos) {
      pos = start + nl + 1;
      c = '\n';
      break;
    }
    pos = start;
  }
  (void)c;
  const std::uintmax_t keep = pos;  // 0 when there is no "\n" at all: the whole file is torn
  if (keep == size) return 0;
  fs::resize_file(path, keep, ec);
  if (ec) fail(ErrorCode::kIo, "cannot repair {}: {}", path.string(), ec.message());
  return static_cast<std::size_t>(size - keep);
}

}  // namespace numcheck::io
