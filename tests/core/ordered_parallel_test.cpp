// core::ordered_parallel: results consumed in order whatever the threads, never more than the
// window in flight, the first failure in order rethrown, a failing consumer stops the workers.
// core::parallel_for: every index once, on several threads at a time, the lowest failed index's
// exception rethrown after every thread has ended.
#include "core/ordered_parallel.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/prng.hpp"

namespace numcheck::core {
namespace {

// A little work of varying length, so workers finish out of order.
void jitter(std::size_t i) {
  if (i % 7 == 3) std::this_thread::sleep_for(std::chrono::microseconds(200));
  if (i % 5 == 1) std::this_thread::yield();
}

TEST(OrderedParallel, ConsumesInOrderWhateverTheThreadsAndWindow) {
  for (const std::size_t threads : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{8}}) {
    for (const std::size_t window : {std::size_t{1}, std::size_t{2}, std::size_t{5}}) {
      for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{200}}) {
        std::vector<std::size_t> seen;
        ordered_parallel<std::string>(
            n, threads, window,
            [](std::size_t i, std::string& slot) {
              jitter(i);
              slot = std::to_string(i * i);
            },
            [&](std::size_t i, std::string& slot) {
              EXPECT_EQ(slot, std::to_string(i * i));
              seen.push_back(i);
            });
        ASSERT_EQ(seen.size(), n) << threads << " " << window;
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(seen[i], i);
      }
    }
  }
}

TEST(OrderedParallel, NeverMoreThanTheWindowInFlight) {
  for (const std::size_t window : {std::size_t{2}, std::size_t{4}}) {
    std::atomic<int> in_flight{0};
    std::atomic<int> most{0};
    ordered_parallel<int>(
        300, 4, window,
        [&](std::size_t i, int& slot) {
          const int now = ++in_flight;
          int m = most.load();
          while (now > m && !most.compare_exchange_weak(m, now)) {
          }
          jitter(i);
          slot = static_cast<int>(i);
        },
        [&](std::size_t, int&) { --in_flight; });
    EXPECT_LE(most.load(), static_cast<int>(std::max<std::size_t>(window, 4))) << window;
    EXPECT_GE(most.load(), 2) << "the workers never overlapped";
  }
}

TEST(OrderedParallel, TheFirstFailureInOrderIsRethrownAfterEverythingBeforeIt) {
  for (const std::size_t threads : {std::size_t{1}, std::size_t{3}}) {
    std::vector<std::size_t> seen;
    try {
      ordered_parallel<int>(
          100, threads, 6,
          [](std::size_t i, int& slot) {
            if (i == 50) throw std::runtime_error("fifty");
            if (i == 37) {
              std::this_thread::sleep_for(std::chrono::milliseconds(5));  // 50 may fail first in time
              throw std::runtime_error("thirty-seven");
            }
            slot = static_cast<int>(i);
          },
          [&](std::size_t i, int&) { seen.push_back(i); });
      ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "thirty-seven") << threads;
    }
    ASSERT_EQ(seen.size(), 37U) << threads;
    for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], i);
  }
}

TEST(OrderedParallel, AFailingConsumerStopsTheWorkers) {
  std::atomic<std::size_t> produced{0};
  std::size_t consumed = 0;
  EXPECT_THROW(ordered_parallel<int>(
                   10000, 3, 4, [&](std::size_t, int&) { ++produced; },
                   [&](std::size_t i, int&) {
                     if (i == 10) throw std::runtime_error("stop");
                     ++consumed;
                   }),
               std::runtime_error);
  EXPECT_EQ(consumed, 10U);
  // The window bounds what was produced after the failure: the workers stopped, none outlived the call.
  EXPECT_LE(produced.load(), 10U + 1 + 4);
}

TEST(ParallelFor, RunsEveryIndexOnceWhateverTheThreads) {
  for (std::size_t threads : {0, 1, 2, 3, 8, 100}) {
    for (std::size_t n : {0, 1, 2, 7, 1000}) {
      std::vector<std::atomic<int>> runs(n);
      parallel_for(n, threads, [&](std::size_t i) {
        jitter(i);
        ++runs[i];
      });
      for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(runs[i].load(), 1) << "n " << n << " threads " << threads;
    }
  }
}

TEST(ParallelFor, UsesSeveralThreadsAtOnce) {
  // Four indexes that each wait (at most 5 s) until all four have started: they all see the four
  // only when four threads run them at once.
  std::atomic<int> started{0}, saw_all{0};
  parallel_for(4, 4, [&](std::size_t) {
    ++started;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (started.load() < 4 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    if (started.load() == 4) ++saw_all;
  });
  EXPECT_EQ(saw_all.load(), 4);
}

TEST(ParallelFor, TheLowestFailedIndexIsRethrownAfterEveryThreadEnded) {
  std::atomic<int> running{0};
  try {
    parallel_for(64, 4, [&](std::size_t i) {
      ++running;
      jitter(i);
      --running;
      if (i == 9 || i == 5) throw std::runtime_error("index " + std::to_string(i));
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "index 5");
  }
  EXPECT_EQ(running.load(), 0);
  // Serially the first failure stops the loop, as a plain loop would.
  std::size_t ran = 0;
  EXPECT_THROW(parallel_for(10, 1,
                            [&](std::size_t i) {
                              ++ran;
                              if (i == 3) throw std::runtime_error("3");
                            }),
               std::runtime_error);
  EXPECT_EQ(ran, 4U);
}

}  // namespace
}  // namespace numcheck::core
