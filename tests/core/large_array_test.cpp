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
#include <thread>
#include <vector>

#include <sys/mman.h>

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

// The extent [from, to) of the mapping that holds `p`, and its name ("" for an anonymous one),
// from /proc/self/maps; {0, 0, ""} when none does.
struct Mapping {
  std::uintptr_t from = 0, to = 0;
  std::string name;
};
Mapping mapping_of(const void* p) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::ifstream in("/proc/self/maps");
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode, name;
    fields >> range >> perms >> offset >> dev >> inode >> name;
    const auto dash = range.find('-');
    const std::uintptr_t from = std::stoull(range.substr(0, dash), nullptr, 16);
    const std::uintptr_t to = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (from <= at && at < to) return {from, to, name};
  }
  return {};
}

bool advised(const void* p) {
  std::istringstream words(vm_flags_of(p));
  for (std::string w; words >> w;)
    if (w == "hg") return true;
  return false;
}

// advise_huge_pages marks the whole 2 MiB pages inside a block and nothing outside them; a block
// that holds no whole page is left alone.
TEST(AdviseHugePages, TheWhole2MiBPagesInsideTheBlockAndNothingElse) {
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage"))
    GTEST_SKIP() << "this kernel has no transparent huge pages";
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  constexpr std::size_t kBytes = std::size_t{16} << 20;  // room for every block below after a 2 MiB boundary
  void* const map = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  auto* const base = static_cast<char*>(map);
  ASSERT_FALSE(advised(base)) << vm_flags_of(base);
  // A block that starts one byte past a 2 MiB boundary and ends one byte before another.
  const std::uintptr_t first = (reinterpret_cast<std::uintptr_t>(base) + kHuge - 1) / kHuge * kHuge;
  char* const begin = base + (first - reinterpret_cast<std::uintptr_t>(base)) + 1;
  const std::size_t bytes = 3 * kHuge;  // [first + 1, first + 3 * 2 MiB + 1): two whole pages inside
  ASSERT_LE(begin + bytes, base + kBytes);
  advise_huge_pages(begin, bytes);
  EXPECT_FALSE(advised(begin)) << "the page the block starts in is not whole in it";
  EXPECT_TRUE(advised(begin - 1 + kHuge)) << vm_flags_of(begin - 1 + kHuge);
  EXPECT_TRUE(advised(begin - 1 + 3 * kHuge - 1)) << vm_flags_of(begin - 1 + 3 * kHuge - 1);
  EXPECT_FALSE(advised(begin - 1 + 3 * kHuge)) << "the page the block ends in is not whole in it";
  // A block of 1.5 pages that holds no whole one: nothing.
  char* const small = begin - 1 + 4 * kHuge + 5;
  ASSERT_LE(small + kHuge + kHuge / 2, base + kBytes);
  advise_huge_pages(small, kHuge + kHuge / 2);
  EXPECT_FALSE(advised(small + kHuge)) << vm_flags_of(small + kHuge);
  advise_huge_pages(nullptr, kBytes);  // no block: nothing, no crash
  ::munmap(map, kBytes);
}

// huge_page_thread_heap, on a thread with a malloc arena of its own: that arena's mapping is
// advised for transparent huge pages, at least 31 MiB of it is writable at once (not grown 4 KiB
// at a time), and malloc on the thread works as before. On the main thread it changes nothing.
TEST(HugePageThreadHeap, AThreadsArenaIsAdvisedAndWritableAheadAndMallocStillWorks) {
  if (sanitized()) GTEST_SKIP() << "a sanitizer's allocator replaces malloc's arenas";
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage"))
    GTEST_SKIP() << "this kernel has no transparent huge pages";
  huge_page_heap(std::size_t{32} << 20);  // its trim threshold keeps what the thread's call grows

  // On the main thread: the block stays in the main heap, whose mapping is left as it was.
  void* const main_block = std::malloc(64);
  const Mapping main_heap = mapping_of(main_block);
  huge_page_thread_heap();
  EXPECT_EQ(mapping_of(main_block).from, main_heap.from);
  std::free(main_block);

  std::string skip;
  std::thread worker([&] {
    void* const first = std::malloc(64);
    const Mapping before = mapping_of(first);
    std::free(first);
    if (before.name == "[heap]") {
      skip = "this thread shares the main heap (no arena of its own)";
      return;
    }
    ASSERT_NE(before.to, 0U) << "no mapping holds the thread's block";
    huge_page_thread_heap();
    huge_page_thread_heap();  // a second call does nothing more
    std::vector<std::string> strings;
    strings.reserve(100000);
    for (int i = 0; i < 100000; ++i)
      strings.push_back(std::string(40 + i % 64, static_cast<char>('a' + i % 26)));
    const Mapping after = mapping_of(strings.back().data());
    EXPECT_EQ(after.name, "");
    EXPECT_TRUE(advised(strings.back().data())) << vm_flags_of(strings.back().data());
    EXPECT_GE(after.to - after.from, std::size_t{31} << 20) << "the arena was not made writable ahead";
    for (std::size_t i = 0; i < strings.size(); ++i) {
      ASSERT_EQ(strings[i].size(), 40 + i % 64) << i;
      ASSERT_EQ(strings[i].back(), static_cast<char>('a' + i % 26)) << i;
    }
  });
  worker.join();
  if (!skip.empty()) GTEST_SKIP() << skip;
}

}  // namespace
}  // namespace numcheck::core
