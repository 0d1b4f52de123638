#include "core/large_array.hpp"

#include <sys/mman.h>

namespace numcheck::core {

void* map_large(std::size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  (void)::madvise(p, bytes, MADV_HUGEPAGE);  // a hint: where it fails, 4 KiB pages as before
  return p;
}

void unmap_large(void* p, std::size_t bytes) noexcept { (void)::munmap(p, bytes); }

}  // namespace numcheck::core
