#include "io/files.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <system_error>
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

AtomicFile::AtomicFile(fs::path path, Durability durability)
    : path_(std::move(path)), durability_(durability) {
  if (path_.has_parent_path()) {
    std::error_code ec;
    fs::create_directories(path_.parent_path(), ec);
    if (ec) fail(ErrorCode::kIo, "cannot create {}: {}", path_.parent_path().string(), ec.message());
  }
  tmp_ = path_;
  tmp_ += fmt::format(".tmp.{}", ::getpid());
  fd_ = ::open(tmp_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(ErrorCode::kIo, "cannot write {}: {}", path_.string(), std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    std::error_code ec;
    fs::remove(tmp_, ec);
  }
}

void AtomicFile::abort_with(const char* what, int err) {
  ::close(fd_);
  fd_ = -1;
  std::error_code ec;
  fs::remove(tmp_, ec);
  fail(ErrorCode::kIo, "cannot {} {}: {}", what, path_.string(), std::strerror(err));
}

void AtomicFile::write(std::string_view bytes) {
  if (fd_ < 0) fail(ErrorCode::kIo, "cannot write {}: the file is closed", path_.string());
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      abort_with("write", errno);
    }
    done += static_cast<std::size_t>(n);
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

// fsync(2) of a folder, so that a name just given in it survives a crash of the machine. A file
// system that cannot sync a folder (EINVAL) has nothing to make durable.
void sync_folder(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail(ErrorCode::kIo, "cannot open {} to sync it: {}", dir.string(), std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0 && err != EINVAL) fail(ErrorCode::kIo, "cannot sync {}: {}", dir.string(), std::strerror(err));
}

}  // namespace

void AtomicFile::read_back(std::uint64_t offset, std::size_t length, std::string& out) {
  if (fd_ < 0) fail(ErrorCode::kIo, "cannot read {}: the file is closed", tmp_.string());
  if (const int err = pread_append(fd_, offset, length, out); err != 0) abort_with("read back", err);
}

void AtomicFile::reset() {
  if (fd_ < 0) fail(ErrorCode::kIo, "cannot write {}: the file is closed", path_.string());
  if (::ftruncate(fd_, 0) != 0 || ::lseek(fd_, 0, SEEK_SET) != 0) abort_with("write", errno);
}

void AtomicFile::commit() {
  if (fd_ < 0) fail(ErrorCode::kIo, "cannot write {}: the file is closed", path_.string());
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
  // The new name is durable once the folder holding it is.
  if (durability_ == Durability::kSynced)
    sync_folder(path_.has_parent_path() ? path_.parent_path() : fs::path("."));
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
  // A buffer grown for a long line (a 50 MB response) goes back once its block is read: the ring
  // of blocks of the parallel readers would otherwise keep one such buffer per block.
  constexpr std::size_t kPad = LineBlock::kReadableAfter;
  if (out.capacity_ > 4 * std::max(block_, carry_.size() + 1) + kPad) {
    out.data_.reset();
    out.capacity_ = 0;
  }
  out.reserve(std::max(block_, carry_.size()) + 1 + kPad);
  if (!carry_.empty()) std::memcpy(out.data_.get(), carry_.data(), carry_.size());
  out.size_ = carry_.size();
  carry_.clear();
  // Read until the block holds at least block_ bytes and a "\n", or the file ends.
  std::size_t searched = 0;  // bytes of `out` known to hold no "\n"
  while (!eof_) {
    const std::size_t have = out.size_;
    const std::size_t want = have < block_ ? block_ - have : block_;
    out.reserve(have + want + kPad);
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
}

AppendFile::AppendFile(AppendFile&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)),
      durable_(o.durable_),
      dirty_(o.dirty_.load()),
      path_(std::move(o.path_)) {}

AppendFile& AppendFile::operator=(AppendFile&& o) noexcept {
  if (this != &o) {
    close();
    fd_ = std::exchange(o.fd_, -1);
    durable_ = o.durable_;
    dirty_.store(o.dirty_.load());
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
  if (durable_) sync();
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
