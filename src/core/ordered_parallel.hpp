#pragma once
// The project's one way to spread work over threads (nothing else in src/ starts a pool of its
// own): parallel_for for independent pieces of work written to their own places, ordered_parallel
// when the results must be taken in order on the calling thread.
//
// parallel_for(n, threads, fn): fn(i) for i = 0..n-1 on up to `threads` threads, the calling
// thread being one of them; indexes are handed out one at a time in increasing order. After a
// failure no new index is started; once every thread has ended, the exception of the lowest
// failed index is rethrown. With threads <= 1 (or n <= 1) it is a plain loop on the calling thread.
//
// ordered_parallel: work split over threads, results taken in order: produce(i, slot) runs for
// i = 0..n-1 on worker threads, each into its own slot, and consume(i, slot) runs on the calling
// thread strictly in the order of i, as soon as slot i is ready. At most `window` slots are in flight
// (produced and not yet consumed), so memory stays bounded however large n is; a slot is reused for i +
// window once i is consumed: produce finds the slot as the last consume left it (reuse its capacity, reset
// its contents). With threads <= 1 everything runs on the calling thread, one slot, same order, so the output
// of an ordered consumer is the same whatever the thread count.
//
// An exception thrown by produce(i) is kept and rethrown by the calling thread when i's turn
// comes (so the first failure in order wins, as in a serial loop); one thrown by consume stops the
// workers. Either way no thread outlives the call.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace numcheck::core {

// The threads to use for a `threads` option: itself, or with 0 one per core (at least one).
[[nodiscard]] inline std::size_t thread_count(std::size_t threads) noexcept {
  return threads != 0 ? threads : std::max<std::size_t>(1, std::thread::hardware_concurrency());
}

template <typename Fn>
void parallel_for(std::size_t n, std::size_t threads, Fn&& fn) {
  if (threads <= 1 || n <= 1) {
    for (std::size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  threads = std::min(threads, n);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::vector<std::exception_ptr> errors(n);
  const auto work = [&] {
    for (std::size_t i = next++; i < n && !failed.load(std::memory_order_relaxed); i = next++) {
      try {
        fn(i);
      } catch (...) {
        errors[i] = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
      }
    }
  };
  {
    std::vector<std::jthread> workers;
    workers.reserve(threads - 1);
    for (std::size_t t = 1; t < threads; ++t) workers.emplace_back(work);
    work();
  }  // the jthreads join here
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

template <typename Slot, typename Produce, typename Consume>
void ordered_parallel(std::size_t n, std::size_t threads, std::size_t window, Produce&& produce,
                      Consume&& consume) {
  if (threads <= 1 || n <= 1) {
    Slot slot{};
    for (std::size_t i = 0; i < n; ++i) {
      produce(i, slot);
      consume(i, slot);
    }
    return;
  }
  threads = std::min(threads, n);
  window = std::max(window, threads);
  struct Entry {
    Slot slot{};
    std::exception_ptr error;
    bool ready = false;
  };
  std::vector<Entry> ring(window);
  std::mutex mu;
  std::condition_variable work_cv, done_cv;
  std::size_t next = 0;      // next index to produce
  std::size_t consumed = 0;  // indexes below this are consumed
  bool stopping = false;
  auto work = [&] {
    for (;;) {
      std::size_t i = 0;
      {
        std::unique_lock<std::mutex> lock(mu);
        work_cv.wait(lock, [&] { return stopping || next >= n || next < consumed + window; });
        if (stopping || next >= n) return;
        i = next++;
      }
      Entry& e = ring[i % window];
      try {
        produce(i, e.slot);
      } catch (...) {
        e.error = std::current_exception();
      }
      {
        const std::lock_guard<std::mutex> lock(mu);
        e.ready = true;
      }
      done_cv.notify_all();
    }
  };
  std::vector<std::thread> workers;
  auto stop = [&] {
    {
      const std::lock_guard<std::mutex> lock(mu);
      stopping = true;
    }
    work_cv.notify_all();
    for (auto& w : workers) w.join();
    workers.clear();
  };
  try {
    workers.reserve(threads);
    for (std::size_t t = 0; t < threads; ++t) workers.emplace_back(work);
    for (std::size_t i = 0; i < n; ++i) {
      Entry& e = ring[i % window];
      {
        std::unique_lock<std::mutex> lock(mu);
        done_cv.wait(lock, [&] { return e.ready; });
      }
      if (e.error) std::rethrow_exception(e.error);
      consume(i, e.slot);
      {
        const std::lock_guard<std::mutex> lock(mu);
        e.ready = false;
        ++consumed;
      }
      work_cv.notify_all();
    }
  } catch (...) {
    stop();
    throw;
  }
  stop();
}

}  // namespace numcheck::core
