// SHA-256 of a message of 64 B (a cache key), 1 KiB (a request body) and 1 MiB (a slice of a file):
// numcheck's own hash (io::Sha256, with the SHA extensions where the processor has them), its
// portable block function alone, and OpenSSL's libcrypto (EVP_Digest, the library numcheck used
// to dlopen). Bytes/s.
#include <benchmark/benchmark.h>
#include <openssl/evp.h>

#include <cstdint>
#include <string>

#include "io/sha256.hpp"

namespace {

namespace io = numcheck::io;

std::string message(std::int64_t n) {
  std::string s(static_cast<std::size_t>(n), '\0');
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = static_cast<char>((i * 131 + 7) & 0xff);
  return s;
}

void BM_Sha256Numcheck(benchmark::State& state) {
  const std::string m = message(state.range(0));
  for (auto _ : state) {
    io::Sha256 h;
    h.update(m);
    auto d = h.digest();
    benchmark::DoNotOptimize(d);
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
  state.SetLabel(io::detail::sha256_has_shani() ? "SHA extensions" : "portable");
}
BENCHMARK(BM_Sha256Numcheck)->Arg(64)->Arg(1024)->Arg(1 << 20);

// The portable block function over whole blocks (no padding): what a processor without the SHA
// extensions gets.
void BM_Sha256PortableBlocks(benchmark::State& state) {
  const std::string m = message(state.range(0));
  for (auto _ : state) {
    std::uint32_t st[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                           0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    io::detail::sha256_blocks_portable(st, reinterpret_cast<const unsigned char*>(m.data()), m.size() / 64);
    benchmark::DoNotOptimize(st);
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Sha256PortableBlocks)->Arg(64)->Arg(1024)->Arg(1 << 20);

void BM_Sha256Libcrypto(benchmark::State& state) {
  const std::string m = message(state.range(0));
  for (auto _ : state) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_Digest(m.data(), m.size(), md, &len, EVP_sha256(), nullptr);
    benchmark::DoNotOptimize(md);
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Sha256Libcrypto)->Arg(64)->Arg(1024)->Arg(1 << 20);

}  // namespace

BENCHMARK_MAIN();
