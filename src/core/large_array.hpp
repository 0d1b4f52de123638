#pragma once
// Memory for large arrays: arrays that grow without zero-filling, in mappings of their own, which
// a mapped file can hand its bytes to (the benchmark index cache maps its tables from its file
// into LargeVectors without copying them).
#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace numcheck::core {

// Memory of its own for one large array: anonymous and zero-filled, starting on a 2 MiB boundary
// and advised for transparent huge pages (madvise MADV_HUGEPAGE), so that its whole 2 MiB pieces
// are faulted in one at a time instead of 4 KiB by 4 KiB (a page fault costs microseconds, many
// more under a hypervisor, and an array is touched page by page as it fills). Exactly the array's
// pages are mapped. Throws std::bad_alloc.
void* map_large(std::size_t bytes);
void unmap_large(void* p, std::size_t bytes) noexcept;
inline constexpr std::size_t kLargeArrayBytes = std::size_t{4} << 20;  // smaller: the heap

// The same for arrays of kHugeArrayBytes and more that are not LargeVectors (HugeVector below):
// the mapping is rounded up to whole 2 MiB pages, so that all of it can be huge pages (an array of
// 1.9 MiB in 4 KiB pages is 490 faults; in one huge page, one).
inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
inline constexpr std::size_t kHugeArrayBytes = std::size_t{1} << 20;
void* map_huge(std::size_t bytes);
void unmap_huge(void* p, std::size_t bytes) noexcept;

// Hands memory the caller mapped (mmap; `p` page-aligned, at least `bytes` long) to the calling
// thread's next map_large of exactly `bytes`, which returns it instead of new memory; the array
// that gets it unmaps it as its own (unmap_large). So a LargeVector of kLargeArrayBytes or more
// resized on this thread while the object lives holds the mapping's bytes without copying them
// (DefaultInitAllocator leaves its elements as they are): the benchmark index cache maps its
// tables from its file this way. What no allocation took is unmapped when the object goes.
class AdoptMapping {
 public:
  AdoptMapping(void* p, std::size_t bytes) noexcept;
  ~AdoptMapping();
  AdoptMapping(const AdoptMapping&) = delete;
  AdoptMapping& operator=(const AdoptMapping&) = delete;
  // True once an allocation took the mapping.
  [[nodiscard]] bool taken() const noexcept { return taken_; }

 private:
  void* p_;
  std::size_t bytes_;
  bool taken_ = false;
};

// std::allocator that puts arrays of MinBytes and more in memory of their own (Map, freed with
// Unmap). Elements are value-initialized as usual; DefaultInitAllocator below changes that.
template <class T, std::size_t MinBytes, void* (*Map)(std::size_t),
          void (*Unmap)(void*, std::size_t) noexcept>
struct MappingAllocator : std::allocator<T> {
  using value_type = T;
  template <class U>
  struct rebind {  // NOLINT(readability-identifier-naming): the name the allocator requirements give
    using other = MappingAllocator<U, MinBytes, Map, Unmap>;
  };
  MappingAllocator() = default;
  template <class U>
  explicit MappingAllocator(const MappingAllocator<U, MinBytes, Map, Unmap>& /*other*/) noexcept {}
  [[nodiscard]] T* allocate(std::size_t n) {
    if (n >= MinBytes / sizeof(T)) {
      if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
      return static_cast<T*>(Map(n * sizeof(T)));
    }
    return std::allocator<T>::allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n >= MinBytes / sizeof(T)) {
      Unmap(p, n * sizeof(T));
    } else {
      std::allocator<T>::deallocate(p, n);
    }
  }
};

// An allocator whose resize leaves new elements uninitialized (default-initialized): a large
// table is sized without zero-filling it first, and whoever fills it touches its pages. Arrays of
// kLargeArrayBytes and more get memory of their own (map_large).
template <class T>
struct DefaultInitAllocator : MappingAllocator<T, kLargeArrayBytes, map_large, unmap_large> {
  template <class U>
  struct rebind {  // NOLINT(readability-identifier-naming): the name the allocator requirements give
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() = default;
  template <class U>
  explicit DefaultInitAllocator(const DefaultInitAllocator<U>& /*other*/) noexcept {}
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    std::allocator_traits<std::allocator<T>>::construct(static_cast<std::allocator<T>&>(*this), p,
                                                        std::forward<Args>(args)...);
  }
};

// A vector of a large array's elements in that memory.
template <class T>
using LargeVector = std::vector<T, DefaultInitAllocator<T>>;

// A plain vector whose arrays of kHugeArrayBytes and more are in map_huge's memory: for the arrays
// of class objects a command fills once and keeps (the report's per-prompt scores and bootstrap
// totals, a loaded benchmark's prompts).
template <class T>
using HugeVector = std::vector<T, MappingAllocator<T, kHugeArrayBytes, map_huge, unmap_huge>>;

}  // namespace numcheck::core
