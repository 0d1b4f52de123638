#include "io/tar.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <memory>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"

namespace numcheck::io {

namespace {

constexpr std::size_t kBlock = 512;
constexpr std::uint64_t kMaxSize = 077777777777ULL;  // 11 octal digits (8 GiB - 1)

struct ArchiveWriteFree {
  void operator()(archive* a) const noexcept { archive_write_free(a); }
};
struct ArchiveReadFree {
  void operator()(archive* a) const noexcept { archive_read_free(a); }
};
struct EntryFree {
  void operator()(archive_entry* e) const noexcept { archive_entry_free(e); }
};

std::string error_of(archive* a) {
  const char* s = archive_error_string(a);
  return s != nullptr ? s : "unknown libarchive error";
}

la_ssize_t append_to_string(archive*, void* out, const void* data, size_t n) {
  static_cast<std::string*>(out)->append(static_cast<const char*>(data), n);
  return static_cast<la_ssize_t>(n);
}

}  // namespace

void check_member_path(std::string_view path, std::string_view where) {
  if (path.empty()) fail("{}: an empty member name", where);
  if (path.front() == '/') fail("{}: member '{}' is an absolute path", where, path);
  if (path.find('\0') != std::string_view::npos || path.find('\\') != std::string_view::npos) {
    fail("{}: member '{}' holds a NUL or a backslash", where, path);
  }
  std::size_t i = 0;
  while (i <= path.size()) {
    const auto slash = path.find('/', i);
    const std::string_view part =
        path.substr(i, slash == std::string_view::npos ? std::string_view::npos : slash - i);
    if (part.empty() || part == "." || part == "..") {
      fail("{}: member '{}' has an empty, '.' or '..' component", where, path);
    }
    if (slash == std::string_view::npos) break;
    i = slash + 1;
  }
}

void check_no_file_folder(const std::vector<TarMember>& members, std::string_view where) {
  std::set<std::string_view> names;
  for (const auto& m : members) names.insert(m.path);
  for (const auto& m : members) {
    for (auto slash = m.path.find('/'); slash != std::string::npos; slash = m.path.find('/', slash + 1)) {
      const std::string_view folder = std::string_view(m.path).substr(0, slash);
      if (names.count(folder) != 0) {
        fail("{}: member '{}' is a file and also the folder of member '{}' (not an archive numcheck wrote)",
             where, folder, m.path);
      }
    }
  }
}

std::string write_ustar(const std::vector<TarMember>& members) {
  check_no_file_folder(members, "tar");
  std::set<std::string_view> seen;
  for (const auto& m : members) {
    check_member_path(m.path, "tar");
    if (!seen.insert(m.path).second) fail("tar: member '{}' given twice", m.path);
    if (m.bytes.size() > kMaxSize) fail("tar: member '{}' is larger than ustar allows", m.path);
  }
  std::string out;
  const std::unique_ptr<archive, ArchiveWriteFree> a(archive_write_new());
  if (!a) fail(ErrorCode::kIo, "tar: libarchive could not start an archive");
  // Unblocked: headers, contents padded to 512 bytes, and the two end blocks, nothing more (tar's
  // default 10 KiB blocking would only add zeros).
  if (archive_write_set_format_ustar(a.get()) != ARCHIVE_OK ||
      archive_write_add_filter_none(a.get()) != ARCHIVE_OK ||
      archive_write_set_bytes_per_block(a.get(), 0) != ARCHIVE_OK ||
      archive_write_open(a.get(), &out, nullptr, append_to_string, nullptr) != ARCHIVE_OK) {
    fail(ErrorCode::kIo, "tar: {}", error_of(a.get()));
  }
  const std::unique_ptr<archive_entry, EntryFree> e(archive_entry_new());
  for (const auto& m : members) {
    // Every field but the name and size fixed, so the same members always give the same bytes.
    archive_entry_clear(e.get());
    archive_entry_copy_pathname(e.get(), m.path.c_str());
    archive_entry_set_filetype(e.get(), AE_IFREG);
    archive_entry_set_perm(e.get(), 0644);
    archive_entry_set_size(e.get(), static_cast<la_int64_t>(m.bytes.size()));
    archive_entry_set_mtime(e.get(), 0, 0);
    archive_entry_set_uid(e.get(), 0);
    archive_entry_set_gid(e.get(), 0);
    if (archive_write_header(a.get(), e.get()) != ARCHIVE_OK)
      fail("tar: member '{}': {}", m.path, error_of(a.get()));
    if (!m.bytes.empty() && archive_write_data(a.get(), m.bytes.data(), m.bytes.size()) !=
                                static_cast<la_ssize_t>(m.bytes.size())) {
      fail(ErrorCode::kIo, "tar: member '{}': {}", m.path, error_of(a.get()));
    }
    if (archive_write_finish_entry(a.get()) != ARCHIVE_OK)
      fail(ErrorCode::kIo, "tar: member '{}': {}", m.path, error_of(a.get()));
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) fail(ErrorCode::kIo, "tar: {}", error_of(a.get()));
  return out;
}

std::vector<TarMember> read_ustar(std::string_view bytes, std::string_view where) {
  // libarchive accepts an archive that simply stops after a member; numcheck's archives end with
  // tar's two zero blocks, and one without them was cut short.
  const bool ended = bytes.size() >= 2 * kBlock && bytes.size() % kBlock == 0 &&
                     std::all_of(bytes.end() - 2 * kBlock, bytes.end(), [](char c) { return c == '\0'; });
  const std::unique_ptr<archive, ArchiveReadFree> a(archive_read_new());
  if (!a) fail(ErrorCode::kIo, "{}: libarchive could not start reading", where);
  if (archive_read_support_format_tar(a.get()) != ARCHIVE_OK ||
      archive_read_open_memory(a.get(), bytes.data(), bytes.size()) != ARCHIVE_OK) {
    fail("{}: not a tar archive: {}", where, error_of(a.get()));
  }
  std::vector<TarMember> out;
  std::set<std::string> seen;
  for (;;) {
    archive_entry* e = nullptr;
    const int r = archive_read_next_header(a.get(), &e);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK) {
      fail("{}: {} (after {} member{})", where, error_of(a.get()), out.size(), out.size() == 1 ? "" : "s");
    }
    const char* raw = archive_entry_pathname(e);
    const std::string name = raw != nullptr ? raw : "";
    if (archive_entry_filetype(e) != AE_IFREG) fail("{}: member '{}' is not a regular file", where, name);
    check_member_path(name, where);
    if (!seen.insert(name).second) fail("{}: member '{}' appears twice", where, name);
    const la_int64_t size = archive_entry_size(e);
    if (size < 0 || static_cast<std::uint64_t>(size) > bytes.size())
      fail("{}: member '{}' is truncated ({} bytes announced)", where, name, size);
    std::string content(static_cast<std::size_t>(size), '\0');
    std::size_t got = 0;
    while (got < content.size()) {
      const la_ssize_t n = archive_read_data(a.get(), content.data() + got, content.size() - got);
      if (n < 0) fail("{}: member '{}': {}", where, name, error_of(a.get()));
      if (n == 0) fail("{}: member '{}' is truncated ({} bytes announced)", where, name, size);
      got += static_cast<std::size_t>(n);
    }
    out.push_back(TarMember{name, std::move(content)});
  }
  if (!ended) fail("{}: truncated archive (no end-of-archive blocks)", where);
  check_no_file_folder(out, where);
  return out;
}

}  // namespace numcheck::io
