#include "core/large_array.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

// A sanitizer's allocator replaces malloc: the heap below is not the one malloc uses.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NUMCHECK_OWN_HEAP 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define NUMCHECK_OWN_HEAP 0
#endif
#endif
#ifndef NUMCHECK_OWN_HEAP
#define NUMCHECK_OWN_HEAP 1
#endif

namespace numcheck::core {

void* map_large(std::size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  (void)::madvise(p, bytes, MADV_HUGEPAGE);  // a hint: where it fails, 4 KiB pages as before
  return p;
}

void unmap_large(void* p, std::size_t bytes) noexcept { (void)::munmap(p, bytes); }

void huge_page_heap(std::size_t bytes) noexcept {
#if defined(__GLIBC__) && NUMCHECK_OWN_HEAP
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  constexpr int kMmapThreshold = 32 << 20;  // glibc's largest on 64-bit systems
  if (bytes < kHuge) return;
  // Keep the heap's top (no trimming) and large blocks in the heap, then make the top grow by
  // `bytes` at the next growth: one small block that does not fit the current top.
  if (mallopt(M_TRIM_THRESHOLD, static_cast<int>(std::min<std::size_t>(2 * bytes, 1U << 30))) == 0 ||
      mallopt(M_MMAP_THRESHOLD, kMmapThreshold) == 0 ||
      mallopt(M_TOP_PAD, static_cast<int>(std::min<std::size_t>(bytes, 1U << 30))) == 0) {
    return;
  }
  char* const before = static_cast<char*>(::sbrk(0));
  // A block larger than the free top of the heap (keepcost), so that the heap grows now.
  void* probe = std::malloc(mallinfo2().keepcost + (std::size_t{64} << 10));
  char* const after = static_cast<char*>(::sbrk(0));
  std::free(probe);
  (void)mallopt(M_TOP_PAD, 128 << 10);  // glibc's default again for any later growth
  if (probe == nullptr || reinterpret_cast<std::uintptr_t>(before) == ~std::uintptr_t{0} || after <= before)
    return;
  // The whole 2 MiB pages between the old and the new end of the heap.
  char* const from = before + (kHuge - reinterpret_cast<std::uintptr_t>(before) % kHuge) % kHuge;
  if (after - from >= static_cast<std::ptrdiff_t>(kHuge)) {
    (void)::madvise(from, static_cast<std::size_t>(after - from) / kHuge * kHuge, MADV_HUGEPAGE);
  }
#else
  (void)bytes;
#endif
}

}  // namespace numcheck::core
