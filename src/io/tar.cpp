#include "io/tar.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"

namespace numcheck::io {

namespace {

constexpr std::size_t kBlock = 512;
constexpr std::uint64_t kMaxSize = 077777777777ULL;  // 11 octal digits (8 GiB - 1)

void put_octal(std::string& h, std::size_t off, std::size_t width, std::uint64_t v) {
  // width - 1 octal digits, zero-padded, then NUL.
  const std::string s = fmt::format("{:0{}o}", v, width - 1);
  h.replace(off, width - 1, s);
  h[off + width - 1] = '\0';
}

std::uint64_t get_octal(std::string_view f, std::string_view where, const std::string& member) {
  std::uint64_t v = 0;
  bool any = false;
  for (char c : f) {
    if (c == '\0' || c == ' ') {
      if (any) break;
      continue;
    }
    if (c < '0' || c > '7') fail("{}: member '{}': a numeric header field is not octal", where, member);
    if (v > (kMaxSize >> 3)) fail("{}: member '{}': a numeric header field is too large", where, member);
    v = v * 8 + static_cast<std::uint64_t>(c - '0');
    any = true;
  }
  return v;
}

std::string field(std::string_view h, std::size_t off, std::size_t width) {
  std::string_view f = h.substr(off, width);
  const auto nul = f.find('\0');
  return std::string(nul == std::string_view::npos ? f : f.substr(0, nul));
}

std::uint64_t checksum(std::string_view h) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < kBlock; ++i) {
    sum += (i >= 148 && i < 156) ? static_cast<unsigned char>(' ') : static_cast<unsigned char>(h[i]);
  }
  return sum;
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
  std::string out;
  std::set<std::string> seen;
  for (const auto& m : members) {
    check_member_path(m.path, "tar");
    if (!seen.insert(m.path).second) fail("tar: member '{}' given twice", m.path);
    if (m.bytes.size() > kMaxSize) fail("tar: member '{}' is larger than ustar allows", m.path);
    std::string name = m.path, prefix;
    if (name.size() > 100) {
      // Split at a '/' so that the prefix has at most 155 bytes and the name at most 100.
      std::size_t cut = std::string::npos;
      for (std::size_t i = 0; i < m.path.size(); ++i) {
        if (m.path[i] == '/' && i <= 155 && m.path.size() - i - 1 <= 100) {
          cut = i;
          break;
        }
      }
      if (cut == std::string::npos) fail("tar: member path '{}' is too long for ustar", m.path);
      prefix = m.path.substr(0, cut);
      name = m.path.substr(cut + 1);
    }
    std::string h(kBlock, '\0');
    h.replace(0, name.size(), name);
    put_octal(h, 100, 8, 0644);
    put_octal(h, 108, 8, 0);
    put_octal(h, 116, 8, 0);
    put_octal(h, 124, 12, m.bytes.size());
    put_octal(h, 136, 12, 0);
    h[156] = '0';
    h.replace(257, 6, std::string("ustar\0", 6));
    h.replace(263, 2, "00");
    put_octal(h, 329, 8, 0);
    put_octal(h, 337, 8, 0);
    h.replace(345, prefix.size(), prefix);
    const std::string sum = fmt::format("{:06o}", checksum(h));
    h.replace(148, 6, sum);
    h[154] = '\0';
    h[155] = ' ';
    out += h;
    out += m.bytes;
    out.append((kBlock - m.bytes.size() % kBlock) % kBlock, '\0');
  }
  out.append(2 * kBlock, '\0');
  return out;
}

std::vector<TarMember> read_ustar(std::string_view a, std::string_view where) {
  std::vector<TarMember> out;
  std::set<std::string> seen;
  std::size_t pos = 0;
  bool ended = false;
  while (pos + kBlock <= a.size()) {
    const std::string_view h = a.substr(pos, kBlock);
    if (std::all_of(h.begin(), h.end(), [](char c) { return c == '\0'; })) {
      ended = true;
      break;
    }
    std::string name = field(h, 0, 100);
    const std::string prefix = field(h, 345, 155);
    if (!prefix.empty()) name = fmt::format("{}/{}", prefix, name);
    const std::string magic(h.substr(257, 5));
    if (magic != "ustar") fail("{}: member '{}' at byte {} has no ustar header", where, name, pos);
    if (get_octal(h.substr(148, 8), where, name) != checksum(h)) {
      fail("{}: member '{}' at byte {}: header checksum mismatch", where, name, pos);
    }
    const char type = h[156];
    if (type != '0' && type != '\0')
      fail("{}: member '{}' is not a regular file (type '{}')", where, name, type);
    check_member_path(name, where);
    if (!seen.insert(name).second) fail("{}: member '{}' appears twice", where, name);
    const std::uint64_t size = get_octal(h.substr(124, 12), where, name);
    pos += kBlock;
    if (size > a.size() - pos) fail("{}: member '{}' is truncated ({} bytes announced)", where, name, size);
    out.push_back(TarMember{name, std::string(a.substr(pos, size))});
    pos += (size + kBlock - 1) / kBlock * kBlock;
  }
  if (!ended) fail("{}: truncated archive (no end-of-archive blocks)", where);
  check_no_file_folder(out, where);
  return out;
}

}  // namespace numcheck::io
