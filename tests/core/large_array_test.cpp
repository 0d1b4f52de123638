// core/large_array: large arrays in memory of their own, and memory a caller mapped handed to the
// next array of its size.
#include "core/large_array.hpp"

#include <sys/mman.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

namespace numcheck::core {
namespace {

// A large array's memory of its own: zero-filled and writable.
TEST(MapLarge, ZeroFilledAndWritable) {
  constexpr std::size_t kBytes = std::size_t{6} << 20;
  auto* p = static_cast<unsigned char*>(map_large(kBytes));
  for (std::size_t i = 0; i < kBytes; i += 4096) ASSERT_EQ(p[i], 0) << i;
  p[kBytes - 1] = 9;
  EXPECT_EQ(p[kBytes - 1], 9);
  unmap_large(p, kBytes);
}

// VmSize of this process in kB (/proc/self/status).
std::size_t vm_size_kb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7));
  }
  return 0;
}

// The mapping starts on a 2 MiB boundary (transparent huge pages can back it) and is exactly the
// array's pages: unmap_large frees all of it (no leftover head or tail: a hundred maps and unmaps
// leave the address space as it was), and the range is unmapped afterwards.
TEST(MapLarge, HugePageAlignedAndFreedWhole) {
  constexpr std::size_t kBytes = (std::size_t{6} << 20) + 12345;
  const std::size_t before = vm_size_kb();
  for (int i = 0; i < 100; ++i) {
    auto* p = static_cast<unsigned char*>(map_large(kBytes));
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(p) % (std::size_t{2} << 20), 0u);
    p[0] = 1;
    p[kBytes - 1] = 2;
    unmap_large(p, kBytes);
    if (i == 99) {
      errno = 0;
      EXPECT_EQ(::msync(p, kBytes, MS_ASYNC), -1) << "still mapped";
      EXPECT_EQ(errno, ENOMEM);
    }
  }
  EXPECT_LT(vm_size_kb(), before + 4096) << "kB of address space left behind";
}

// A HugeVector of a megabyte or more lives in map_huge's memory (on a 2 MiB boundary) and is a
// plain vector: elements value-initialized, contents kept when it grows into a new mapping, and
// every mapping (whole 2 MiB pages) freed whole when it goes.
TEST(HugeVector, BigArraysAreHugePageMappingsOfPlainElements) {
  const std::size_t before = vm_size_kb();
  const std::size_t n = kHugeArrayBytes / sizeof(std::string) + 7;
  for (int i = 0; i < 50; ++i) {
    HugeVector<std::string> v(n);
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % kHugePageBytes, 0u);
    for (const auto& s : v) ASSERT_TRUE(s.empty());
    v.front() = std::string(100, 'x');
    v.back() = "end";
    v.resize(3 * n);
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % kHugePageBytes, 0u);
    EXPECT_EQ(v.front(), std::string(100, 'x'));
    EXPECT_EQ(v[n - 1], "end");
    EXPECT_TRUE(v.back().empty());
  }
  const HugeVector<int> small(10);  // ordinary memory, zero-filled like any vector
  for (const int x : small) EXPECT_EQ(x, 0);
  EXPECT_LT(vm_size_kb(), before + 4096) << "kB of address space left behind";
}

// A LargeVector resized to the adopted mapping's size holds the mapping's bytes as they are (no
// copy, no zero-filling); a mapping no allocation took is unmapped by its AdoptMapping.
TEST(AdoptMapping, ALargeVectorOfItsSizeTakesTheBytesAsTheyAre) {
  constexpr std::size_t kCount = kLargeArrayBytes / sizeof(std::uint32_t);
  constexpr std::size_t kBytes = kCount * sizeof(std::uint32_t);
  void* map = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  auto* words = static_cast<std::uint32_t*>(map);
  for (std::size_t i = 0; i < kCount; ++i) words[i] = static_cast<std::uint32_t>(i * 7);
  {
    AdoptMapping adopt(map, kBytes);
    LargeVector<std::uint32_t> v;
    v.resize(kCount);
    EXPECT_TRUE(adopt.taken());
    EXPECT_EQ(static_cast<void*>(v.data()), map);
    for (std::size_t i = 0; i < kCount; i += 997) ASSERT_EQ(v[i], i * 7) << i;
  }
  void* other = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(other, MAP_FAILED);
  {
    AdoptMapping adopt(other, kBytes);
    LargeVector<std::uint32_t> small(10);  // another size: ordinary memory
    EXPECT_FALSE(adopt.taken());
    EXPECT_NE(static_cast<void*>(small.data()), other);
  }
}

}  // namespace
}  // namespace numcheck::core
