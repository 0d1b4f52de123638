#include "view/lines.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace numcheck::view {
namespace {

constexpr std::size_t kChunk = std::size_t{1} << 20;
constexpr std::size_t kPadding = 64;

// Up to `n` bytes at `offset` (0 at the end of the file); throws Error naming the file.
std::size_t read_at(int fd, char* out, std::size_t n, std::uint64_t offset,
                    const std::filesystem::path& path) {
  ssize_t got = 0;
  do {
    got = ::pread(fd, out, n, static_cast<off_t>(offset));
  } while (got < 0 && errno == EINTR);
  if (got < 0) fail(ErrorCode::kIo, "{}: cannot read: {}", path.string(), std::strerror(errno));
  return static_cast<std::size_t>(got);
}

}  // namespace

LineReader::LineReader(const std::filesystem::path& path, std::uint64_t offset, std::size_t cap)
    : path_(path), cap_(cap), file_pos_(offset), pos_(offset) {
  fd_.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd_.get() < 0) fail(ErrorCode::kIo, "{}: cannot open: {}", path.string(), std::strerror(errno));
}

bool LineReader::fill() {
  if (eof_) return false;
  if (begin_ > 0) {  // keep the unread bytes at the front
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  // The buffer starts small and doubles while a line does not fit, up to the cap and a chunk.
  if (buf_.empty()) {
    buf_.resize(std::min(kChunk, cap_ + 1) + kPadding);
  } else if (end_ == buf_.size() - kPadding) {
    buf_.resize(std::min(2 * (buf_.size() - kPadding), cap_ + kChunk) + kPadding);
  }
  const std::size_t room = buf_.size() - kPadding - end_;
  if (room == 0) return true;
  const std::size_t n = read_at(fd_.get(), buf_.data() + end_, std::min(room, kChunk), file_pos_, path_);
  if (n == 0) {
    eof_ = true;
    return false;
  }
  end_ += n;
  file_pos_ += n;
  return true;
}

bool LineReader::next(FileLine& out) {
  for (;;) {
    const char* start = buf_.data() + begin_;
    const void* nl = end_ > begin_ ? std::memchr(start, '\n', end_ - begin_) : nullptr;
    if (nl != nullptr) {
      const auto len = static_cast<std::size_t>(static_cast<const char*>(nl) - start);
      out = FileLine{pos_, pos_ + len + 1, std::string_view(start, len), len, false, true};
      if (!out.text.empty() && out.text.back() == '\r') out.text.remove_suffix(1);
      begin_ += len + 1;
      pos_ += len + 1;
      return true;
    }
    if (end_ - begin_ >= cap_) {
      // A line longer than the cap: keep its beginning where it lies, skip the rest.
      const std::uint64_t at = pos_;
      std::uint64_t len = end_ - begin_;
      const std::size_t kept = cap_;
      std::memmove(buf_.data(), start, kept);
      if (buf_.size() < kept + kChunk + kPadding) buf_.resize(kept + kChunk + kPadding);
      begin_ = end_ = 0;
      bool terminated = false;
      while (!terminated) {
        // Read past the kept bytes into the rest of the buffer, never keeping them.
        const std::size_t room = buf_.size() - kPadding - kept;
        const std::size_t n =
            read_at(fd_.get(), buf_.data() + kept, std::min(room, kChunk), file_pos_, path_);
        if (n == 0) {
          eof_ = true;
          break;
        }
        const char* piece = buf_.data() + kept;
        const void* p = std::memchr(piece, '\n', n);
        const std::size_t used =
            p != nullptr ? static_cast<std::size_t>(static_cast<const char*>(p) - piece) + 1 : n;
        file_pos_ += used;
        len += p != nullptr ? used - 1 : used;
        terminated = p != nullptr;
      }
      // Text: the kept beginning; the bytes read past the "\n" are read again by the next fill.
      pos_ = file_pos_;
      out = FileLine{at, pos_, std::string_view(buf_.data(), kept), len, true, terminated};
      begin_ = end_ = kept;  // nothing unread: the next call refills after the kept text
      return true;
    }
    if (!fill()) {
      if (end_ == begin_) return false;
      const std::size_t len = end_ - begin_;
      out = FileLine{pos_, pos_ + len, std::string_view(buf_.data() + begin_, len), len, false, false};
      begin_ = end_;
      pos_ += len;
      return true;
    }
  }
}

std::size_t LineReader::readable_after(const FileLine& l) const noexcept {
  const char* end = l.text.data() + l.text.size();
  const char* buf_end = buf_.data() + buf_.size();
  return end >= buf_.data() && end <= buf_end ? static_cast<std::size_t>(buf_end - end) : 0;
}

}  // namespace numcheck::view
