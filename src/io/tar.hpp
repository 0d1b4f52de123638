#pragma once
// A deterministic POSIX ustar archive (IEEE 1003.1-1988 "ustar" format), written and read through
// libarchive: regular files only, members in the order given, every header field fixed except name
// and size (mode 0644, uid/gid 0, empty user and group names, mtime 0), so the same members always
// give the same bytes. Used by `numcheck orbit
// supplement` (docs/orbit.md). Reading is strict (hostile input): a bad checksum, anything that
// is not a tar archive (libarchive reads ustar, pax and GNU tar), a member that is not a regular file, an
// absolute path or one with a ".." component, a duplicate name, a member that is also the folder of another
// member ("a" and "a/b") or a truncated archive is an Error naming the member.
#include <string>
#include <string_view>
#include <vector>

namespace numcheck::io {

struct TarMember {
  std::string path;   // relative, '/'-separated; at most 255 bytes (split into prefix and name)
  std::string bytes;  // the file's content
};

// The archive: one 512-byte header per member, the content padded to 512 bytes, then two zero
// blocks. Throws Error for a path that ustar cannot hold or that is unsafe (see above).
[[nodiscard]] std::string write_ustar(const std::vector<TarMember>& members);

// The members of an archive, in archive order. `where` names the archive in errors.
[[nodiscard]] std::vector<TarMember> read_ustar(std::string_view archive, std::string_view where);

// Throws Error unless `path` is a safe relative member path (no leading '/', no "." or ".."
// component, no empty component, no NUL or backslash).
void check_member_path(std::string_view path, std::string_view where);

// Throws Error when one member's path is the folder of another's ("a" and "a/b"): such members
// cannot both be extracted as files.
void check_no_file_folder(const std::vector<TarMember>& members, std::string_view where);

}  // namespace numcheck::io
