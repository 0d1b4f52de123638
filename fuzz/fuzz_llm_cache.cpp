// Fuzz target for the response cache's store (src/llm/cache.cpp): its files are read back from
// disk, where anything may have happened to them (a crash, a full disk, a hand edit, another
// program). The input is split into an entries file and an index file, each after its valid
// header (or, when the input says so, with no header at all): opening the store, reading its keys,
// looking entries up, counting its stats, committing a new entry and clearing a model must end in
// results or in numcheck's own error, never out of bounds, and an entry stored after whatever the
// files held must be served back.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "io/json.hpp"
#include "llm/cache.hpp"

namespace {

namespace fs = std::filesystem;

void write(const fs::path& path, std::string_view head, std::string_view body) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(head.data(), static_cast<std::streamsize>(head.size()));
  f.write(body.data(), static_cast<std::streamsize>(body.size()));
}

// A folder of this process's own, in memory when the machine has /dev/shm (the store flushes the
// files it rewrites, which on a disk would be most of each run).
const fs::path& folder() {
  static const fs::path dir = [] {
    const fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    fs::path d = base / ("numcheck_fuzz_cache_" + std::to_string(::getpid()));
    fs::create_directories(d);
    std::atexit([] { fs::remove_all(folder()); });
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace numcheck;
  if (size < 2) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  // First byte: bit 0 drops the entries file's header, bit 1 the index's. Second byte: where the
  // rest is cut between the two files (as a share of it).
  const auto flags = static_cast<unsigned char>(in[0]);
  const std::string_view rest = in.substr(2);
  const std::size_t cut = rest.size() * static_cast<unsigned char>(in[1]) / 255;
  const fs::path path = folder() / "responses.cache";
  for (const char* suffix : {"", ".index", ".index.tmp", ".tmp"}) fs::remove(path.string() + suffix);
  write(path, (flags & 1U) != 0 ? "" : "numcheck-cache1\n", rest.substr(0, cut));
  write(path.string() + ".index", (flags & 2U) != 0 ? "" : "numcheck-index1\n", rest.substr(cut));
  const io::Json identity = {{"model", "m"}};
  const io::Json body = {{"q", 1}};
  const std::string key = llm::cache_key(identity, body);
  const std::string req = llm::request_hash(body);
  try {
    llm::ResponseCache cache(path);
    std::size_t n = 0;
    if (const auto snap = cache.key_snapshot(1U << 20)) n += snap->size();
    for (const std::string& k :
         {key, std::string(64, '0'), std::string("0123456789abcdef") + std::string(48, 'f')})
      n += cache.get(k, req).has_value() ? 1 : 0;
    const auto st = cache.stats();
    n += st.entries + st.per_model.size() + st.oldest.size();
    llm::Completion c;
    c.content = "stored";
    cache.put(key, req, "m", identity, c);
    cache.commit();
    const auto hit = cache.get(key, req);
    if (!hit || hit->content != "stored") std::abort();  // what was just stored is served
    n += cache.clear("m");
    if (cache.get(key, req).has_value()) std::abort();  // and cleared
    return n == static_cast<std::size_t>(-1) ? 1 : 0;
  } catch (const Error&) {
    return 0;  // a file the store refuses (not a cache): numcheck's error, never a crash
  }
}
