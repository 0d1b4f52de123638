#include "core/large_array.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <new>

// LeakSanitizer does not look for pointers in memory a program maps itself: the heap blocks that
// objects in a HugeVector own (a prompt's strings) would look leaked. Sanitizer builds register
// map_huge's mappings as places to look.
#if defined(__SANITIZE_ADDRESS__)
#define NUMCHECK_LSAN_ROOTS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define NUMCHECK_LSAN_ROOTS 1
#endif
#endif
#ifdef NUMCHECK_LSAN_ROOTS
#include <sanitizer/lsan_interface.h>
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

namespace {

// `length` bytes (a multiple of the page size) starting on a 2 MiB boundary, advised for huge pages.
void* map_aligned(std::size_t length) {
  if (length > static_cast<std::size_t>(-1) - kHugePageBytes) throw std::bad_alloc();
  void* raw =
      ::mmap(nullptr, length + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  // The mapping's head up to the first 2 MiB boundary and its tail after `length` are returned.
  auto* const base = static_cast<char*>(raw);
  const std::size_t head =
      (kHugePageBytes - reinterpret_cast<std::uintptr_t>(raw) % kHugePageBytes) % kHugePageBytes;
  if (head > 0) (void)::munmap(base, head);
  (void)::munmap(base + head + length, kHugePageBytes - head);
  void* p = base + head;
  (void)::madvise(p, length, MADV_HUGEPAGE);  // advice: without transparent huge pages, nothing changes
  return p;
}

std::size_t page_rounded(std::size_t bytes) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

std::size_t huge_rounded(std::size_t bytes) {
  return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
}

}  // namespace

void* map_large(std::size_t bytes) {
  if (adoptable.p != nullptr && adoptable.bytes == bytes) {
    void* const p = adoptable.p;
    *adoptable.taken = true;
    adoptable = {};
    return p;
  }
  // Exactly the array's pages: unmap_large frees what an adopted mapping of `bytes` would be.
  return map_aligned(page_rounded(bytes));
}

void unmap_large(void* p, std::size_t bytes) noexcept { (void)::munmap(p, bytes); }

void* map_huge(std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(-1) - kHugePageBytes) throw std::bad_alloc();
  void* p = map_aligned(huge_rounded(bytes));
#ifdef NUMCHECK_LSAN_ROOTS
  __lsan_register_root_region(p, huge_rounded(bytes));
#endif
  return p;
}

void unmap_huge(void* p, std::size_t bytes) noexcept {
#ifdef NUMCHECK_LSAN_ROOTS
  __lsan_unregister_root_region(p, huge_rounded(bytes));
#endif
  (void)::munmap(p, huge_rounded(bytes));
}

}  // namespace numcheck::core
