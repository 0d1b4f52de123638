#include "io/files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
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

void write_file_atomic(const fs::path& path, std::string_view bytes) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  fs::path tmp = path;
  tmp += fmt::format(".tmp.{}", ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(ErrorCode::kIo, "cannot write {}: {}", tmp.string(), std::strerror(errno));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      fail(ErrorCode::kIo, "cannot write {}: {}", tmp.string(), std::strerror(e));
    }
    done += static_cast<std::size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) fail(ErrorCode::kIo, "cannot rename {} to {}: {}", tmp.string(), path.string(), ec.message());
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

void for_each_line(const fs::path& path, const std::function<void(const Line&)>& fn) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ErrorCode::kIo, "cannot read {}: {}", path.string(), std::strerror(errno));
  std::string buf;
  std::size_t number = 0;
  while (std::getline(in, buf)) {
    ++number;
    Line line;
    line.number = number;
    line.terminated = !in.eof();
    std::string_view t(buf);
    if (!t.empty() && t.back() == '\r') t.remove_suffix(1);
    line.text = t;
    fn(line);
  }
  if (in.bad()) fail(ErrorCode::kIo, "error while reading {}", path.string());
}

AppendFile::AppendFile(const fs::path& path, bool durable) : durable_(durable), path_(path) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  f_ = std::fopen(path.c_str(), "ab");
  if (f_ == nullptr)
    fail(ErrorCode::kIo, "cannot open {} for appending: {}", path.string(), std::strerror(errno));
}

AppendFile::AppendFile(AppendFile&& o) noexcept : f_(o.f_), durable_(o.durable_), path_(std::move(o.path_)) {
  o.f_ = nullptr;
}

AppendFile& AppendFile::operator=(AppendFile&& o) noexcept {
  if (this != &o) {
    close();
    f_ = o.f_;
    durable_ = o.durable_;
    path_ = std::move(o.path_);
    o.f_ = nullptr;
  }
  return *this;
}

AppendFile::~AppendFile() { close(); }

void AppendFile::close() {
  if (f_ != nullptr) {
    std::fclose(f_);
    f_ = nullptr;
  }
}

void AppendFile::append_line(std::string_view line) {
  if (f_ == nullptr) fail(ErrorCode::kIo, "append to a closed file");
  std::string rec;
  rec.reserve(line.size() + 1);
  rec.append(line);
  rec.push_back('\n');
  if (std::fwrite(rec.data(), 1, rec.size(), f_) != rec.size() || std::fflush(f_) != 0) {
    fail(ErrorCode::kIo, "cannot append to {}: {}", path_.string(), std::strerror(errno));
  }
  if (durable_) ::fsync(::fileno(f_));
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
