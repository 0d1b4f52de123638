// The deterministic ustar writer and the strict reader (io/tar.hpp): round trips, long names
// (prefix split), fixed bytes for fixed members (pinned), GNU tar reads what we write, and every
// hostile archive (bad checksum, truncation, unsafe or duplicate names, links) is a clear error.
#include "io/tar.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"

namespace numcheck::io {
namespace {

namespace fs = std::filesystem;

std::vector<TarMember> sample() {
  return {{"a.txt", "hello\n"},
          {"dir/empty", ""},
          {"dir/block", std::string(512, 'x')},
          {std::string(120, 'p') + "/" + std::string(90, 'n'), "long name"}};
}

TEST(Tar, RoundTripAndFixedBytes) {
  const std::string t = write_ustar(sample());
  EXPECT_EQ(t.size() % 512, 0u);
  EXPECT_EQ(write_ustar(sample()), t);  // deterministic
  const auto back = read_ustar(t, "t.tar");
  ASSERT_EQ(back.size(), 4u);
  for (std::size_t i = 0; i < back.size(); ++i) {
    EXPECT_EQ(back[i].path, sample()[i].path);
    EXPECT_EQ(back[i].bytes, sample()[i].bytes);
  }
  // Pinned: the format (header fields, padding, end blocks) never changes by accident.
  EXPECT_EQ(sha256_hex(t), "5e95f35b14ef4b2f8493ebbc8e3f3e6f62138b75c9fa06646c43248fc1706e7a");
}

TEST(Tar, GnuTarReadsIt) {
  if (std::system("command -v tar >/dev/null 2>&1") != 0) GTEST_SKIP() << "no tar";
  const fs::path d = fs::temp_directory_path() / fmt::format("numcheck_tar_{}", ::getpid());
  fs::remove_all(d);
  fs::create_directories(d / "x");
  write_file_atomic(d / "t.tar", write_ustar(sample()));
  ASSERT_EQ(
      std::system(fmt::format("tar -xf '{}' -C '{}'", (d / "t.tar").string(), (d / "x").string()).c_str()),
      0);
  for (const auto& m : sample()) EXPECT_EQ(read_file(d / "x" / m.path), m.bytes) << m.path;
  fs::remove_all(d);
}

TEST(Tar, UnsafeOrImpossibleNamesAreRefused) {
  for (const char* bad : {"/etc/passwd", "../x", "a/../b", "a//b", "./a", "a/", ""}) {
    EXPECT_THROW((void)write_ustar({{bad, "x"}}), Error) << bad;
  }
  EXPECT_THROW((void)write_ustar({{"a", "1"}, {"a", "2"}}), Error);
  EXPECT_THROW((void)write_ustar({{std::string(300, 'a'), "x"}}), Error);  // no '/' to split at
}

TEST(Tar, HostileArchivesAreErrors) {
  const std::string good = write_ustar({{"a.txt", "hello"}});
  std::string t = good;
  t[600] = 'j';  // content changes are the manifest's business, not the reader's
  EXPECT_NO_THROW((void)read_ustar(t, "t"));
  t = good;
  t[10] = 'z';  // the name: the header checksum no longer matches
  EXPECT_THROW((void)read_ustar(t, "t"), Error);
  EXPECT_THROW((void)read_ustar(good.substr(0, 700), "t"), Error);   // truncated content
  EXPECT_THROW((void)read_ustar(good.substr(0, 1024), "t"), Error);  // no end blocks
  EXPECT_THROW((void)read_ustar("not a tar at all", "t"), Error);
  // A symbolic link member (type '2') and a path escaping the folder: refused.
  auto with_header = [&](std::size_t off, std::string_view bytes) {
    std::string h = good.substr(0, 512);
    h.replace(off, bytes.size(), bytes);
    h.replace(148, 8, std::string(8, ' '));
    std::uint64_t sum = 0;
    for (char c : h) sum += static_cast<unsigned char>(c);
    h.replace(148, 7, fmt::format("{:06o}", sum) + std::string(1, '\0'));
    return h + good.substr(512);
  };
  EXPECT_NO_THROW((void)read_ustar(with_header(0, "b.txt"), "t"));  // the re-checksum helper itself works
  EXPECT_THROW((void)read_ustar(with_header(156, "2"), "t"), Error);
  EXPECT_THROW((void)read_ustar(with_header(0, "../evil"), "t"), Error);
  EXPECT_THROW((void)read_ustar(with_header(0, "/abs"), "t"), Error);
  const std::string two = write_ustar({{"a", "1"}});
  EXPECT_THROW((void)read_ustar(two.substr(0, 1024) + two, "t"), Error);  // the same member twice
}

}  // namespace
}  // namespace numcheck::io
