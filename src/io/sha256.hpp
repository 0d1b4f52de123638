#pragma once
// SHA-256 (OpenSSL EVP, libcrypto loaded on first use) of strings and files, as lowercase hex.
#include <filesystem>
#include <string>
#include <string_view>

namespace numcheck::io {

[[nodiscard]] std::string sha256_hex(std::string_view bytes);
// Streams the file; throws Error (kIo) when it cannot be read.
[[nodiscard]] std::string sha256_file(const std::filesystem::path& path);

// Incremental hashing for data written in pieces.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::string_view bytes);
  [[nodiscard]] std::string hex_digest();  // finishes the hash; call once

 private:
  void* ctx_;
};

}  // namespace numcheck::io
