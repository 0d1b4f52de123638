// Fuzz target for the reader of store-format caches (llm::detail::read_store, src/llm/cache.cpp):
// the response cache numcheck kept in files of its own before its SQLite database is copied into a
// new database once, from files on disk where anything may have happened to them (a crash, a full
// disk, a hand edit, another program). The input is split into an entries file and an index file,
// each after its valid header (or, when the input says so, with no header at all). Every record the
// reader hands back must lie inside the entries file's bytes, in file order, and it must never read
// out of bounds.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "llm/cache.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  // First byte: bit 0 drops the entries file's header, bit 1 the index's. Second byte: where the
  // rest is cut between the two files (as a share of it).
  const auto flags = static_cast<unsigned char>(in[0]);
  const std::string_view rest = in.substr(2);
  const std::size_t cut = rest.size() * static_cast<unsigned char>(in[1]) / 255;
  const std::string entries =
      ((flags & 1U) != 0 ? "" : "numcheck-cache1\n") + std::string(rest.substr(0, cut));
  const std::string index = ((flags & 2U) != 0 ? "" : "numcheck-index1\n") + std::string(rest.substr(cut));
  const char* begin = entries.data();
  const char* end = begin + entries.size();
  const char* last = begin;
  std::uint64_t seen = 0;
  const std::uint64_t n =
      numcheck::llm::detail::read_store(entries, index, [&](const numcheck::llm::detail::StoreRecord& r) {
        for (const std::string_view f :
             {r.key, r.request_sha256, r.check, r.model, r.identity, r.created, r.completion}) {
          if (!f.empty() && (f.data() < begin || f.data() + f.size() > end)) std::abort();
        }
        if (r.key.data() < last) std::abort();  // file order
        last = r.key.data();
        ++seen;
      });
  if (n != seen) std::abort();
  return 0;
}
