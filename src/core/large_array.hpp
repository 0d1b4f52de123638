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

// Memory of its own for one large array: anonymous and zero-filled. Throws std::bad_alloc.
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
