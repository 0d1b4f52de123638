#pragma once
// Reading a line-based file forward from any byte offset, with bounded memory: the viewer's pages
// start at a cursor (a byte offset) and its indexes remember offsets, so it never holds a whole
// file. A line longer than the cap is handed out cut (`cut` set, `bytes` its full length) and the
// reader skips to the next "\n" without keeping the rest.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "io/files.hpp"

namespace numcheck::view {

struct FileLine {
  std::uint64_t offset = 0;  // of the line's first byte
  std::uint64_t next = 0;    // of the byte after its "\n" (the next line's offset)
  std::string_view text;     // without "\n" (and "\r"), at most the cap; valid until the next call
  std::uint64_t bytes = 0;   // the line's full length
  bool cut = false;          // longer than the cap: text is its beginning
  bool terminated = true;    // false for a last line without "\n"
};

class LineReader {
 public:
  static constexpr std::size_t kDefaultCap = std::size_t{8} << 20;
  // Throws Error (kIo) naming the file when it cannot be opened.
  LineReader(const std::filesystem::path& path, std::uint64_t offset, std::size_t cap = kDefaultCap);
  // The next line; false at the end of the file.
  bool next(FileLine& out);
  [[nodiscard]] std::uint64_t offset() const noexcept { return pos_; }
  // Bytes readable after a line's text (simdjson's padding needs 64): the buffer keeps room.
  [[nodiscard]] std::size_t readable_after(const FileLine& l) const noexcept;

 private:
  bool fill();  // reads more bytes after the kept ones; false at the end of the file
  std::filesystem::path path_;
  io::UniqueFd fd_;
  std::size_t cap_;
  std::string buf_;
  std::size_t begin_ = 0, end_ = 0;  // unread bytes in buf_
  std::uint64_t file_pos_ = 0;       // file offset of buf_[end_]
  std::uint64_t pos_ = 0;            // file offset of buf_[begin_]
  bool eof_ = false;
};

}  // namespace numcheck::view
