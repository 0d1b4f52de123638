#include "io/sha256.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define NUMCHECK_SHA256_X86 1
#endif

#include "core/error.hpp"

namespace numcheck::io {
namespace detail {
namespace {

// The 64 round constants (FIPS 180-4, 4.2.2).
alignas(16) constexpr std::uint32_t kK[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

std::uint32_t load_be32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

}  // namespace

void sha256_blocks_portable(std::uint32_t state[8], const unsigned char* data, std::size_t blocks) noexcept {
  std::uint32_t w[64];
  for (; blocks > 0; --blocks, data += 64) {
    for (std::size_t t = 0; t < 16; ++t) w[t] = load_be32(data + 4 * t);
    for (int t = 16; t < 64; ++t) {
      const std::uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
      const std::uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    std::uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    std::uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int t = 0; t < 64; ++t) {
      const std::uint32_t t1 =
          h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kK[t] + w[t];
      const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
  }
}

#ifdef NUMCHECK_SHA256_X86

// The SHA extensions keep the state as two registers, ABEF and CDGH; each sha256rnds2 does two
// rounds, and sha256msg1/sha256msg2 extend the message schedule four words at a time. Sixteen
// groups of four rounds; group g uses the schedule words 4g..4g+3 held in m[g % 4].
__attribute__((target("sha,sse4.1,ssse3"))) void sha256_blocks_shani(std::uint32_t state[8],
                                                                     const unsigned char* data,
                                                                     std::size_t blocks) noexcept {
  const __m128i byteswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i tmp = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[0]));     // DCBA
  __m128i state1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[4]));  // HGFE
  tmp = _mm_shuffle_epi32(tmp, 0xB1);                                             // CDAB
  state1 = _mm_shuffle_epi32(state1, 0x1B);                                       // EFGH
  __m128i state0 = _mm_alignr_epi8(tmp, state1, 8);                               // ABEF
  state1 = _mm_blend_epi16(state1, tmp, 0xF0);                                    // CDGH
  for (; blocks > 0; --blocks, data += 64) {
    const __m128i abef = state0;
    const __m128i cdgh = state1;
    __m128i m[4];
#pragma GCC unroll 16
    for (int g = 0; g < 16; ++g) {
      if (g < 4) {
        m[g] = _mm_shuffle_epi8(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + std::ptrdiff_t{16} * g)), byteswap);
      }
      __m128i msg = _mm_add_epi32(
          m[g % 4], _mm_load_si128(reinterpret_cast<const __m128i*>(&kK[std::ptrdiff_t{4} * g])));
      state1 = _mm_sha256rnds2_epu32(state1, state0, msg);
      if (g >= 3 && g <= 14) {  // finish the words of group g + 1
        const __m128i t = _mm_alignr_epi8(m[g % 4], m[(g + 3) % 4], 4);
        m[(g + 1) % 4] = _mm_sha256msg2_epu32(_mm_add_epi32(m[(g + 1) % 4], t), m[g % 4]);
      }
      msg = _mm_shuffle_epi32(msg, 0x0E);
      state0 = _mm_sha256rnds2_epu32(state0, state1, msg);
      if (g >= 1 && g <= 12) m[(g + 3) % 4] = _mm_sha256msg1_epu32(m[(g + 3) % 4], m[g % 4]);  // group g + 3
    }
    state0 = _mm_add_epi32(state0, abef);
    state1 = _mm_add_epi32(state1, cdgh);
  }
  tmp = _mm_shuffle_epi32(state0, 0x1B);        // FEBA
  state1 = _mm_shuffle_epi32(state1, 0xB1);     // DCHG
  state0 = _mm_blend_epi16(tmp, state1, 0xF0);  // DCBA
  state1 = _mm_alignr_epi8(state1, tmp, 8);     // ABEF
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[0]), state0);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[4]), state1);
}

bool sha256_has_shani() noexcept {
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid(1, &a, &b, &c, &d) == 0) return false;
    const bool ssse3 = (c & (1U << 9)) != 0, sse41 = (c & (1U << 19)) != 0;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return false;
    return ssse3 && sse41 && (b & (1U << 29)) != 0;  // CPUID.(EAX=7,ECX=0):EBX.SHA[bit 29]
  }();
  return has;
}

#else

void sha256_blocks_shani(std::uint32_t state[8], const unsigned char* data, std::size_t blocks) noexcept {
  sha256_blocks_portable(state, data, blocks);
}
bool sha256_has_shani() noexcept { return false; }

#endif

}  // namespace detail

namespace {

void compress(std::uint32_t state[8], const unsigned char* data, std::size_t blocks) {
  if (blocks == 0) return;
  if (detail::sha256_has_shani()) {
    detail::sha256_blocks_shani(state, data, blocks);
  } else {
    detail::sha256_blocks_portable(state, data, blocks);
  }
}

}  // namespace

void Sha256::update(std::string_view bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  std::size_t n = bytes.size();
  bytes_ += n;
  if (pending_len_ > 0) {
    const std::size_t take = std::min(n, pending_.size() - pending_len_);
    std::memcpy(pending_.data() + pending_len_, p, take);
    pending_len_ += take;
    p += take;
    n -= take;
    if (pending_len_ < pending_.size()) return;
    compress(state_.data(), pending_.data(), 1);
    pending_len_ = 0;
  }
  compress(state_.data(), p, n / 64);
  p += n / 64 * 64;
  n %= 64;
  if (n > 0) std::memcpy(pending_.data(), p, n);
  pending_len_ = n;
}

std::array<std::uint8_t, 32> Sha256::digest() {
  // Padding (FIPS 180-4, 5.1.1): 0x80, zeros to 56 mod 64, the length in bits big-endian.
  const std::uint64_t bits = bytes_ * 8;
  unsigned char tail[128] = {};
  std::memcpy(tail, pending_.data(), pending_len_);
  tail[pending_len_] = 0x80;
  const std::size_t len = pending_len_ + 1 + 8 <= 64 ? 64 : 128;
  for (int i = 0; i < 8; ++i)
    tail[len - 1 - static_cast<std::size_t>(i)] = static_cast<unsigned char>(bits >> (8 * i));
  compress(state_.data(), tail, len / 64);
  std::array<std::uint8_t, 32> out{};
  for (std::size_t i = 0; i < 8; ++i) {
    out[4 * i] = static_cast<std::uint8_t>(state_[i] >> 24);
    out[4 * i + 1] = static_cast<std::uint8_t>(state_[i] >> 16);
    out[4 * i + 2] = static_cast<std::uint8_t>(state_[i] >> 8);
    out[4 * i + 3] = static_cast<std::uint8_t>(state_[i]);
  }
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
