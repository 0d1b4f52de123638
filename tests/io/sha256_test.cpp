// numcheck's SHA-256 layer over OpenSSL: the examples of FIPS 180-4 and NIST's test vectors,
// incremental hashing in pieces, copies of a partial state, and hashing ranges of a descriptor.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/prng.hpp"
#include "io/sha256.hpp"

namespace numcheck::io {
namespace {

std::string openssl_sha256(std::string_view bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EXPECT_EQ(EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr), 1);
  std::string out;
  for (unsigned int i = 0; i < len; ++i) out += fmt::format("{:02x}", md[i]);
  return out;
}

std::string random_bytes(Rng& rng, std::size_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng.below(256));
  return s;
}

TEST(Sha256, StandardVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 448 bits: the padding needs a second block.
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(
      sha256_hex(
          "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
          "mnopqrstnopqrstu"),
      "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// The incremental hash equals the one-shot one whatever the pieces (empty pieces included).
TEST(Sha256, IncrementalEqualsOneShot) {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += fmt::format("line {} of the scores\n", i);
  for (const std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{64}, std::size_t{4096}}) {
    Sha256 h;
    h.update("");
    for (std::size_t at = 0; at < text.size(); at += piece)
      h.update(std::string_view(text).substr(at, piece));
    EXPECT_EQ(h.hex_digest(), sha256_hex(text)) << piece;
  }
  Sha256 empty;
  EXPECT_EQ(empty.hex_digest(), sha256_hex(""));
}

// A copy continues from the state it was copied at: a prefix hashed once, then finished with
// different tails (the response cache's keys), gives what hashing each whole message gives; the
// original is untouched by what the copy hashes, and an assigned hash takes the other's state.
TEST(Sha256, CopiesContinueFromTheSameState) {
  Rng rng(20260725, "sha256-copies");
  Sha256 prefix;
  const std::string head = random_bytes(rng, 100);
  prefix.update(head);
  for (const std::size_t n :
       {std::size_t{0}, std::size_t{1}, std::size_t{27}, std::size_t{64}, std::size_t{5000}}) {
    const std::string tail = random_bytes(rng, n);
    Sha256 h = prefix;
    h.update(tail);
    EXPECT_EQ(h.hex_digest(), sha256_hex(head + tail)) << n;
  }
  Sha256 assigned;
  assigned.update("overwritten");
  assigned = prefix;
  EXPECT_EQ(assigned.hex_digest(), sha256_hex(head));
  EXPECT_EQ(prefix.hex_digest(), sha256_hex(head));
}

// Random messages hashed in random pieces (empty ones included) equal the one-shot hash, around
// every padding case (0 to 300 bytes) and for longer messages.
TEST(Sha256, RandomPiecesEqualOneShot) {
  Rng rng(20260725, "sha256-pieces");
  std::vector<std::size_t> lengths;
  for (std::size_t n = 0; n <= 300; ++n) lengths.push_back(n);
  for (int i = 0; i < 50; ++i) lengths.push_back(rng.below(70000));
  for (const std::size_t n : lengths) {
    const std::string msg = random_bytes(rng, n);
    Sha256 h;
    for (std::size_t at = 0; at < n;) {
      const std::size_t piece = std::min<std::size_t>(n - at, rng.below(200));
      h.update(std::string_view(msg).substr(at, piece));
      at += piece;
    }
    ASSERT_EQ(h.hex_digest(), sha256_hex(msg)) << "length " << n;
  }
}

TEST(Sha256, DigestIsTheHexDigestsBytes) {
  Sha256 a, b;
  a.update("numcheck");
  b.update("numcheck");
  const auto bytes = a.digest();
  std::string hex;
  for (const auto c : bytes) hex += fmt::format("{:02x}", c);
  EXPECT_EQ(hex, b.hex_digest());
}

// sha256_fd hashes a range of a descriptor (or the rest of the file) as sha256_hex hashes those
// bytes, across its 256 KiB pieces, leaves the descriptor's position alone, reports a file shorter
// than the range as EIO, and stops with ECANCELED once `stop` is set (the index cache's check,
// which nobody may wait for any more); sha256_file is the whole file.
TEST(Sha256, DescriptorRangesAndCancellation) {
  Rng rng(7);
  const std::string data = random_bytes(rng, (std::size_t{5} << 20) / 2 + 77);  // 2.5 MiB + 77
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / fmt::format("numcheck_sha256_fd_{}", ::getpid());
  {
    std::FILE* f = std::fopen(file.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(data.data(), 1, data.size(), f), data.size());
    std::fclose(f);
  }
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::string hex;
  for (const auto& [offset, size] :
       std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 0},
                                                            {0, 1},
                                                            {3, (std::size_t{1} << 20) - 3},
                                                            {5, (std::size_t{256} << 10) - 5},
                                                            {(std::size_t{256} << 10) - 1, 2},
                                                            {1, std::size_t{1} << 20},
                                                            {12345, 2100000},
                                                            {0, data.size()},
                                                            {data.size(), 0}}) {
    ASSERT_EQ(sha256_fd(fd, offset, size, hex), 0) << offset << " " << size;
    EXPECT_EQ(hex, sha256_hex(std::string_view(data).substr(offset, size))) << offset << " " << size;
  }
  ASSERT_EQ(sha256_fd(fd, 999, std::nullopt, hex), 0);
  EXPECT_EQ(hex, sha256_hex(std::string_view(data).substr(999)));
  EXPECT_EQ(::lseek(fd, 0, SEEK_CUR), 0);
  EXPECT_EQ(sha256_fd(fd, 10, data.size(), hex), EIO);
  std::atomic<bool> stop{true};
  EXPECT_EQ(sha256_fd(fd, 0, std::nullopt, hex, &stop), ECANCELED);
  stop = false;
  ASSERT_EQ(sha256_fd(fd, 0, std::nullopt, hex, &stop), 0);
  EXPECT_EQ(hex, sha256_file(file));
  EXPECT_EQ(hex, openssl_sha256(data));
  ::close(fd);
  std::filesystem::remove(file);
  EXPECT_THROW((void)sha256_file(file), Error);
}

}  // namespace
}  // namespace numcheck::io
