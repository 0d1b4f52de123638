// Fuzz target for the benchmark index cache's reader (src/orbit/index_cache.cpp). The file's
// SHA-256 is checked beside the caller, after the index is in use, so the reader's structural
// checks alone must keep every accessor in bounds: the fuzzer's bytes follow a head that matches
// (version, folder, hashes, stamps), and any index they load must answer every accessor and lookup
// without reading out of bounds (or they load nothing).
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "core/version.hpp"
#include "orbit/index_cache.hpp"

namespace {

void put_u64(std::string& out, std::uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }
void put_str(std::string& out, std::string_view s) {
  put_u64(out, s.size());
  out.append(s);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace numcheck::orbit;
  static const detail::IndexStamps stamps{
      "/fuzz/bench", {100, 2049, 7, 1234567890, 1234567890}, {200, 2049, 8, 1234567891, 1234567895}, 0};
  static const std::string manifest_sha(64, 'a');
  std::string body;
  put_str(body, numcheck::kVersion);
  put_str(body, stamps.dir);
  put_str(body, manifest_sha);
  put_str(body, std::string(64, 'b'));
  put_str(body, std::string(64, 'c'));
  for (const auto* f : {&stamps.bases, &stamps.views}) {
    put_u64(body, f->size);
    put_u64(body, f->device);
    put_u64(body, f->inode);
    put_u64(body, static_cast<std::uint64_t>(f->mtime_ns));
    put_u64(body, static_cast<std::uint64_t>(f->ctime_ns));
  }
  put_u64(body, 9'000'000'000);  // the stamping's time
  body.append(reinterpret_cast<const char*>(data), size);
  const auto x = detail::parse_index_cache_body(body, stamps, manifest_sha);
  if (!x) return 0;
  std::size_t n = 0;
  for (std::size_t i = 0; i < x->size(); ++i) {
    n += x->prompt_id(i).size() + x->base_id(i).size() + x->view(i).size() + x->template_id(i).size();
    n += x->expected(i).size() + x->answer_unit(i).size() + (x->family(i) ? x->family(i)->size() : 0);
    n += x->find(x->prompt_id(i)).value_or(0) + x->find(x->prompt_id(i), i + 1).value_or(0);
    n += x->unit_id(i);
  }
  for (std::size_t b = 0; b < x->base_count(); ++b)
    n += x->base_at(b).size() + (x->has_base(x->base_at(b)) ? 1 : 0);
  n += x->find("fuzz").value_or(0) + (x->has_base("fuzz") ? 1 : 0);
  return n == static_cast<std::size_t>(-1) ? 1 : 0;
}
