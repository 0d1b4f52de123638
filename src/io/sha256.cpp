#include "io/sha256.hpp"

#include <openssl/evp.h>

#include <fstream>

#include "core/dynlib.hpp"
#include "core/error.hpp"

#ifndef NUMCHECK_LIBCRYPTO_SONAME
#define NUMCHECK_LIBCRYPTO_SONAME "libcrypto.so.3"
#endif

namespace numcheck::io {
namespace {

// OpenSSL's libcrypto, loaded the first time something is hashed: commands that hash nothing
// (--version, --help, grade) start without it (its initialisation costs about 0.6 ms). Only its
// headers are used at build time.
struct Evp {
  decltype(&::EVP_MD_CTX_new) ctx_new;
  decltype(&::EVP_MD_CTX_free) ctx_free;
  decltype(&::EVP_sha256) sha256;
  decltype(&::EVP_DigestInit_ex) init;
  decltype(&::EVP_DigestUpdate) update;
  decltype(&::EVP_DigestFinal_ex) final;
};

const Evp& evp() {
  static const Evp api = [] {
    const core::SharedLibrary lib("libcrypto", NUMCHECK_LIBCRYPTO_SONAME, "SHA-256");
    Evp e{};
    lib.bind(e.ctx_new, "EVP_MD_CTX_new");
    lib.bind(e.ctx_free, "EVP_MD_CTX_free");
    lib.bind(e.sha256, "EVP_sha256");
    lib.bind(e.init, "EVP_DigestInit_ex");
    lib.bind(e.update, "EVP_DigestUpdate");
    lib.bind(e.final, "EVP_DigestFinal_ex");
    return e;  // the library stays loaded for the life of the process
  }();
  return api;
}

}  // namespace

Sha256::Sha256() : ctx_(evp().ctx_new()) {
  if (ctx_ == nullptr || evp().init(static_cast<EVP_MD_CTX*>(ctx_), evp().sha256(), nullptr) != 1) {
    fail(ErrorCode::kIo, "OpenSSL: cannot initialise SHA-256");
  }
}

Sha256::~Sha256() { evp().ctx_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256::update(std::string_view bytes) {
  evp().update(static_cast<EVP_MD_CTX*>(ctx_), bytes.data(), bytes.size());
}

std::string Sha256::hex_digest() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  evp().final(static_cast<EVP_MD_CTX*>(ctx_), md, &len);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(std::size_t{len} * 2);
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[md[i] >> 4]);
    out.push_back(kHex[md[i] & 15]);
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 h;
  h.update(bytes);
  return h.hex_digest();
}

std::string sha256_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ErrorCode::kIo, "cannot read {}", path.string());
  Sha256 h;
  std::string buf(1 << 16, '\0');
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    h.update(std::string_view(buf.data(), static_cast<std::size_t>(in.gcount())));
  }
  if (in.bad()) fail(ErrorCode::kIo, "error while reading {}", path.string());
  return h.hex_digest();
}

}  // namespace numcheck::io
