// core/large_array: the main heap in 2 MiB pages (huge_page_heap) and large arrays in memory of
// their own.
#include "core/large_array.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace numcheck::core {
namespace {

// The VmFlags of the mapping that holds `p`, from /proc/self/smaps ("" when none does).
std::string vm_flags_of(const void* p) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::ifstream in("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    const auto dash = line.find('-');
    const auto space = line.find(' ');
    if (dash != std::string::npos && space != std::string::npos && dash < space &&
        line.find_first_not_of("0123456789abcdef") == dash) {
      const std::uintptr_t from = std::stoull(line.substr(0, dash), nullptr, 16);
      const std::uintptr_t to = std::stoull(line.substr(dash + 1, space - dash - 1), nullptr, 16);
      inside = from <= at && at < to;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line.substr(8);
    }
  }
  return "";
}

bool sanitized() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

// After huge_page_heap, blocks malloc hands out from the grown heap lie in memory advised for
// transparent huge pages ("hg"), blocks up to 32 MiB come from the heap, and malloc works as before.
TEST(HugePageHeap, BlocksFromTheGrownHeapAreAdvisedAndMallocStillWorks) {
  if (sanitized()) GTEST_SKIP() << "a sanitizer's allocator replaces malloc's heap";
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage"))
    GTEST_SKIP() << "this kernel has no transparent huge pages";
  huge_page_heap(std::size_t{32} << 20);
  constexpr std::size_t kBlock = std::size_t{8} << 20;
  auto* big = static_cast<char*>(std::malloc(kBlock));
  ASSERT_NE(big, nullptr);
  std::memset(big, 7, kBlock);
  const std::string flags = vm_flags_of(big + kBlock - 1);
  EXPECT_NE(flags, "") << "no mapping holds the block";
  std::istringstream words(flags);
  bool advised = false;
  for (std::string w; words >> w;) advised = advised || w == "hg";
  EXPECT_TRUE(advised) << "VmFlags:" << flags;
  std::free(big);

  // Many small blocks, written and read back, freed in another order.
  std::vector<std::string> strings;
  strings.reserve(200000);
  for (int i = 0; i < 200000; ++i)
    strings.push_back(std::string(40 + i % 64, static_cast<char>('a' + i % 26)));
  for (std::size_t i = 0; i < strings.size(); i += 2) {
    strings[i].clear();
    strings[i].shrink_to_fit();
  }
  for (std::size_t i = 1; i < strings.size(); i += 2) {
    ASSERT_EQ(strings[i].size(), 40 + i % 64) << i;
    ASSERT_EQ(strings[i].front(), static_cast<char>('a' + i % 26)) << i;
  }
}

// A large array's memory of its own: zero-filled, writable, advised likewise.
TEST(MapLarge, ZeroFilledWritableAndAdvised) {
  constexpr std::size_t kBytes = std::size_t{6} << 20;
  auto* p = static_cast<unsigned char*>(map_large(kBytes));
  for (std::size_t i = 0; i < kBytes; i += 4096) ASSERT_EQ(p[i], 0) << i;
  p[kBytes - 1] = 9;
  EXPECT_EQ(p[kBytes - 1], 9);
  if (std::filesystem::exists("/sys/kernel/mm/transparent_hugepage")) {
    EXPECT_NE(vm_flags_of(p).find(" hg"), std::string::npos) << vm_flags_of(p);
  }
  unmap_large(p, kBytes);
}

}  // namespace
}  // namespace numcheck::core
