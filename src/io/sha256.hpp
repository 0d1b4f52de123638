#pragma once
// SHA-256 (FIPS 180-4) of strings and files, as lowercase hex. numcheck's own implementation: the
// x86 SHA extensions (SHA-NI) when the processor has them, else portable C++; no library to load.
// It replaced OpenSSL's libcrypto, whose dlopen cost 3-5 ms of every command that hashed anything
// (docs/performance.md, "Start-up"); tests/io/sha256_test.cpp checks both block functions against
// the standard's examples and libcrypto (linked into that test only).
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace numcheck::io {

[[nodiscard]] std::string sha256_hex(std::string_view bytes);
// Streams the file; throws Error (kIo) when it cannot be read.
[[nodiscard]] std::string sha256_file(const std::filesystem::path& path);
// The same over a descriptor, from `offset`: `size` bytes, or to the end of the file when nullopt
// (pread, in 256 KiB pieces, so the descriptor's position is left alone). 0 with the hex in `out`,
// or an errno: EIO for a file shorter than `size`, ECANCELED when `stop` was set before the end
// (checked between pieces: a hash nobody waits for any more ends early).
[[nodiscard]] int sha256_fd(int fd, std::uint64_t offset, std::optional<std::uint64_t> size, std::string& out,
                            const std::atomic<bool>* stop = nullptr);

// Incremental hashing for data written in pieces. No allocation.
class Sha256 {
 public:
  Sha256() = default;
  void update(std::string_view bytes);
  [[nodiscard]] std::string hex_digest();               // finishes the hash; call once
  [[nodiscard]] std::array<std::uint8_t, 32> digest();  // the same as 32 bytes; call once

 private:
  std::array<std::uint32_t, 8> state_ = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                         0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::uint64_t bytes_ = 0;  // message length so far
  std::array<unsigned char, 64> pending_{};
  std::size_t pending_len_ = 0;
};

namespace detail {
// The compression function over `blocks` 64-byte blocks: portable, and with the SHA extensions
// (call only when sha256_has_shani()). Exposed for tests and benchmarks.
void sha256_blocks_portable(std::uint32_t state[8], const unsigned char* data, std::size_t blocks) noexcept;
void sha256_blocks_shani(std::uint32_t state[8], const unsigned char* data, std::size_t blocks) noexcept;
[[nodiscard]] bool sha256_has_shani() noexcept;
}  // namespace detail

}  // namespace numcheck::io
