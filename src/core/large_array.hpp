#pragma once
// Memory for large arrays: pages of 2 MiB where the kernel offers them, and arrays that grow
// without zero-filling. On the 2-core development machine (a virtual machine) every page touched
// for the first time costs a fault that is dear; the retrieval index builder's tables and the orbit
// benchmark index come in 2 MiB pages instead of 4 KiB ones (285k -> 97k faults building the
// 423k-snippet index).
#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace numcheck::core {

// Memory of its own for one large array: anonymous, zero-filled, advised to use transparent huge
// pages (madvise MADV_HUGEPAGE; a hint, ignored where unsupported). Throws std::bad_alloc.
void* map_large(std::size_t bytes);
void unmap_large(void* p, std::size_t bytes) noexcept;
inline constexpr std::size_t kLargeArrayBytes = std::size_t{4} << 20;  // smaller: the heap

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

// Backs the first `bytes` of the process's main heap (glibc malloc's main arena) with 2 MiB pages:
// what glibc does with GLIBC_TUNABLES=glibc.malloc.hugetlb=1, which only the environment can ask
// for. Grows the heap once by `bytes` of address space (no memory until a page is touched), advises
// it MADV_HUGEPAGE, and keeps it: malloc no longer trims the heap, and blocks below 32 MiB come from
// the heap instead of mappings of their own. For a short-lived command that builds many small
// objects (a benchmark's views, a run's records) this saves most first-touch faults. Call once at
// the start of main, before other threads exist. A hint: where anything fails (another libc, a
// sanitizer's allocator, no transparent huge pages), nothing else changes.
void huge_page_heap(std::size_t bytes) noexcept;

// What huge_page_heap does for the main heap, for the calling thread's own malloc arena: glibc gives
// each of a process's first threads an arena of its own, a mapping of 64 MiB that it makes
// writable 4 KiB at a time as the arena grows (one mprotect each), and a fault only gets a 2 MiB
// page whose whole 2 MiB are writable. This advises that mapping MADV_HUGEPAGE (found in
// /proc/self/maps: the anonymous one holding a block this thread allocates, with the reserved rest
// after it) and makes 31 MiB of it writable at once (one block allocated and freed: call it after
// huge_page_heap, whose mapping and trim thresholds keep that block in the arena). Once per
// thread; for the workers of a parallel benchmark load, which build most of a large benchmark's
// objects. A hint: where the block comes from the main heap or anything fails, nothing changes.
void huge_page_thread_heap() noexcept;

// Advises the whole 2 MiB pages inside [p, p + bytes) MADV_HUGEPAGE: for a large block that malloc
// mapped and nothing has touched yet (a vector just reserved), so that filling it takes one fault
// per 2 MiB instead of one per 4 KiB. A hint: does nothing for a block that holds no whole 2 MiB
// page, or where it fails.
void advise_huge_pages(const void* p, std::size_t bytes) noexcept;

// An allocator whose resize leaves new elements uninitialized (default-initialized): a large
// table is sized without zero-filling it first, and whoever fills it touches its pages. Arrays of
// kLargeArrayBytes and more get memory of their own (map_large).
template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  using value_type = T;
  DefaultInitAllocator() = default;
  template <class U>
  explicit DefaultInitAllocator(const DefaultInitAllocator<U>& /*other*/) noexcept {}
  [[nodiscard]] T* allocate(std::size_t n) {
    if (n >= kLargeArrayBytes / sizeof(T)) {
      if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
      return static_cast<T*>(map_large(n * sizeof(T)));
    }
    return std::allocator<T>::allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n >= kLargeArrayBytes / sizeof(T)) {
      unmap_large(p, n * sizeof(T));
    } else {
      std::allocator<T>::deallocate(p, n);
    }
  }
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

}  // namespace numcheck::core
