#include "core/large_array.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <new>

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
  return p;
}

void unmap_large(void* p, std::size_t bytes) noexcept { (void)::munmap(p, bytes); }

}  // namespace numcheck::core
