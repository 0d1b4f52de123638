// Fuzz target for the index file reader (src/retrieval/index.hpp). The checksum is not verified
// here (a fuzzer cannot forge SHA-256), so every structural check of the reader is exercised:
// any bytes either load into an index whose every posting is in range, or throw numcheck::Error.
// A loaded index must answer a query, decode its posting blocks and decompress its stored texts
// without reading out of bounds.
#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "retrieval/index.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  using namespace numcheck::retrieval;
  try {
    const Index ix = Index::parse(bytes, "fuzz", false);
    const Searcher s(ix, {});
    Query q;
    for (std::uint32_t t = 0; t < ix.num_terms() && t < 8; ++t) {
      q.terms.emplace_back(ix.term_text(t));
      q.counts.push_back(1);
    }
    (void)s.search(q, 10);
    (void)s.search_exhaustive(q, 10);
    if (ix.num_docs() > 0) (void)s.score(q, ix.num_docs() - 1);
    // Every block of the first terms decoded (the reader checked each one; this must not read
    // past them) and looked up.
    for (std::uint32_t t = 0; t < ix.num_terms() && t < 8; ++t) {
      const auto pl = ix.postings(t);
      for (const auto d : pl.docs)
        if (d >= ix.num_docs() || !ix.contains(t, d)) __builtin_trap();
    }
    // The stored texts are decompressed on demand: a damaged block is an Error, never a read
    // past the block (first and last document, which may sit in different blocks). Blocks are
    // sized as their table records (up to 2^16 times their compressed bytes, as zstd allows):
    // tables that promise gigabytes would only test the allocator, so they are not read here.
    if (ix.num_docs() > 0 && ix.text_raw_bytes() <= (std::uint64_t{256} << 20)) {
      (void)ix.doc_text(0);
      (void)ix.doc_meta(ix.num_docs() - 1);
    }
  } catch (const numcheck::Error&) {
  }
  return 0;
}
