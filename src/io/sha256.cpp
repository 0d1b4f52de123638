#include "io/sha256.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace numcheck::io {
namespace {

// The digest, fetched once: OpenSSL 3 would otherwise look SHA-256 up in its provider tables at
// every EVP_DigestInit_ex (an implicit fetch under a lock).
const EVP_MD* sha256_md() {
  static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  if (md == nullptr) fail(ErrorCode::kIo, "OpenSSL has no SHA-256 (libcrypto's default provider)");
  return md;
}

}  // namespace

void Sha256::Free::operator()(void* ctx) const noexcept { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx)); }

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr || EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_.get()), sha256_md(), nullptr) != 1)
    fail(ErrorCode::kIo, "OpenSSL could not start a SHA-256");
}

Sha256::Sha256(const Sha256& other) : ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr || EVP_MD_CTX_copy_ex(static_cast<EVP_MD_CTX*>(ctx_.get()),
                                            static_cast<const EVP_MD_CTX*>(other.ctx_.get())) != 1)
    fail(ErrorCode::kIo, "OpenSSL could not copy a SHA-256");
}

Sha256& Sha256::operator=(const Sha256& other) {
  if (this != &other) *this = Sha256(other);
  return *this;
}

void Sha256::update(std::string_view bytes) {
  if (bytes.empty()) return;
  if (EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_.get()), bytes.data(), bytes.size()) != 1)
    fail(ErrorCode::kIo, "OpenSSL could not hash {} bytes", bytes.size());
}

std::array<std::uint8_t, 32> Sha256::digest() {
  std::array<std::uint8_t, 32> out{};
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_.get()), out.data(), &len) != 1 || len != out.size())
    fail(ErrorCode::kIo, "OpenSSL could not finish a SHA-256");
  return out;
}

std::string Sha256::hex_digest() {
  static constexpr char kHex[] = "0123456789abcdef";
  const auto md = digest();
  std::string out(64, '\0');
  for (std::size_t i = 0; i < md.size(); ++i) {
    out[2 * i] = kHex[md[i] >> 4];
    out[2 * i + 1] = kHex[md[i] & 15];
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 h;
  h.update(bytes);
  return h.hex_digest();
}

int sha256_fd(int fd, std::uint64_t offset, std::optional<std::uint64_t> size, std::string& out,
              const std::atomic<bool>* stop) {
  Sha256 h;
  // Not zero-filled, and a quarter of a MiB: the first touch of fresh memory is what costs (a 1 MiB
  // zero-filled buffer was 500 page faults of a run's start, hashing the benchmark's two files).
  constexpr std::size_t kBuffer = std::size_t{256} << 10;
  const std::unique_ptr<char[]> buf(new char[kBuffer]);  // NOLINT(cppcoreguidelines-avoid-c-arrays)
  for (;;) {
    if (stop != nullptr && stop->load(std::memory_order_relaxed)) return ECANCELED;
    if (size && *size == 0) break;
    const std::size_t want =
        size ? static_cast<std::size_t>(std::min<std::uint64_t>(*size, kBuffer)) : kBuffer;
    const ssize_t n = ::pread(fd, buf.get(), want, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) {
      if (size) return EIO;  // shorter than asked
      break;
    }
    const auto got = static_cast<std::size_t>(n);
    h.update(std::string_view(buf.get(), got));
    offset += got;
    if (size) *size -= got;
  }
  out = h.hex_digest();
  return 0;
}

std::string sha256_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(ErrorCode::kIo, "cannot read {}: {}", path.string(), std::strerror(errno));
  std::string hex;
  const int err = sha256_fd(fd, 0, std::nullopt, hex);
  ::close(fd);
  if (err != 0) fail(ErrorCode::kIo, "error while reading {}: {}", path.string(), std::strerror(err));
  return hex;
}

}  // namespace numcheck::io
