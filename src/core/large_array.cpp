#include "core/large_array.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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

namespace {

struct Adoptable {
  void* p = nullptr;
  std::size_t bytes = 0;
  bool* taken = nullptr;
};
thread_local Adoptable adoptable;  // the newest AdoptMapping's, until map_large takes it

}  // namespace

AdoptMapping::AdoptMapping(void* p, std::size_t bytes) noexcept : p_(p), bytes_(bytes) {
  adoptable = {p, bytes, &taken_};
}

AdoptMapping::~AdoptMapping() {
  if (adoptable.taken == &taken_) adoptable = {};
  if (!taken_) ::munmap(p_, bytes_);
}

void* map_large(std::size_t bytes) {
  if (adoptable.p != nullptr && adoptable.bytes == bytes) {
    void* const p = adoptable.p;
    *adoptable.taken = true;
    adoptable = {};
    return p;
  }
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  (void)::madvise(p, bytes, MADV_HUGEPAGE);  // a hint: where it fails, 4 KiB pages as before
  return p;
}

void unmap_large(void* p, std::size_t bytes) noexcept { (void)::munmap(p, bytes); }

void huge_page_thread_heap() noexcept {
#if defined(__GLIBC__) && NUMCHECK_OWN_HEAP
  thread_local bool done = false;
  if (done) return;
  done = true;
  void* const probe = std::malloc(64);
  if (probe == nullptr) return;
  const auto at = reinterpret_cast<std::uintptr_t>(probe);
  std::free(probe);
  std::FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps == nullptr) return;
  // The mapping holding the block (anonymous, writable), then the reserved rest right after it.
  std::uintptr_t from = 0;
  std::uintptr_t to = 0;
  char line[4096];  // a longer line (a long path) is read in parts: they do not parse and are skipped
  while (std::fgets(line, sizeof line, maps) != nullptr) {
    std::uintptr_t start = 0;
    std::uintptr_t end = 0;
    char perms[5] = {};
    std::uint64_t offset = 0;
    char dev[16] = {};
    std::uint64_t inode = 0;
    if (std::sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %4s %" SCNx64 " %15s %" SCNu64, &start, &end, perms,
                    &offset, dev, &inode) != 6)
      continue;
    const bool anonymous =
        inode == 0 && std::strchr(line, '/') == nullptr && std::strchr(line, '[') == nullptr;
    if (to == 0) {
      if (at >= start && at < end && anonymous && perms[0] == 'r' && perms[1] == 'w') {
        from = start;
        to = end;
      }
    } else {
      if (start == to && anonymous && std::strncmp(perms, "---", 3) == 0) to = end;
      break;
    }
  }
  std::fclose(maps);
  // Nothing found: the block came from the main heap ("[heap]": huge_page_heap's business).
  if (to == 0) return;
  advise_huge_pages(reinterpret_cast<const void*>(from), to - from);  // NOLINT(performance-no-int-to-ptr)
  // glibc makes an arena's mapping writable only as far as each allocation needs (a 4 KiB mprotect
  // at a time: thousands of calls for a large load), and a 2 MiB page is only given to a fault
  // whose whole 2 MiB are writable. One block just below the mapping threshold (huge_page_heap:
  // 32 MiB), freed at once, makes 31 MiB writable in one call; no memory until touched, and freed
  // memory is kept (the trim threshold huge_page_heap set).
  if (void* grow = std::malloc(std::size_t{31} << 20)) std::free(grow);
#endif
}

void advise_huge_pages(const void* p, std::size_t bytes) noexcept {
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  if (p == nullptr || begin > ~std::uintptr_t{0} - bytes) return;
  const std::uintptr_t from = (begin + kHuge - 1) / kHuge * kHuge;
  const std::uintptr_t to = (begin + bytes) / kHuge * kHuge;
  // NOLINTNEXTLINE(performance-no-int-to-ptr): the block's own address, rounded to its 2 MiB pages
  if (to > from) (void)::madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);
}

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
  advise_huge_pages(before, static_cast<std::size_t>(after - before));
#else
  (void)bytes;
#endif
}

}  // namespace numcheck::core
