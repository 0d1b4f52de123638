#pragma once
// SHA-256 (FIPS 180-4) of strings and files, as lowercase hex, computed by OpenSSL's libcrypto
// (EVP, which uses the processor's SHA extensions where it has them). libcrypto is linked anyway:
// libcurl's TLS needs it.
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
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

// Incremental hashing for data written in pieces. A copy continues from the same state (a common
// prefix hashed once, then finished with different tails).
class Sha256 {
 public:
  Sha256();
  Sha256(const Sha256& other);
  Sha256& operator=(const Sha256& other);
  Sha256(Sha256&&) noexcept = default;
  Sha256& operator=(Sha256&&) noexcept = default;
  ~Sha256() = default;

  void update(std::string_view bytes);
  [[nodiscard]] std::string hex_digest();               // finishes the hash; call once
  [[nodiscard]] std::array<std::uint8_t, 32> digest();  // the same as 32 bytes; call once

 private:
  struct Free {
    void operator()(void* ctx) const noexcept;
  };
  std::unique_ptr<void, Free> ctx_;  // an EVP_MD_CTX
};

}  // namespace numcheck::io
