#pragma once
// A function of byte ranges run on a thread of its own, in the order the ranges are handed over
// (for hashing a file's bytes while the calling thread reads, parses or writes them). The caller
// keeps each range's memory alive until wait() says it was passed on.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string_view>
#include <thread>

namespace numcheck::io {

class OrderedBytes {
 public:
  // `fn` must outlive this object.
  explicit OrderedBytes(const std::function<void(std::string_view)>& fn);
  OrderedBytes(const OrderedBytes&) = delete;
  OrderedBytes& operator=(const OrderedBytes&) = delete;
  // Stops after the range being passed on (ranges not yet passed on are dropped) and joins.
  ~OrderedBytes();
  void push(std::string_view bytes);
  // Waits until the first `count` ranges pushed were passed on; rethrows what fn threw (after
  // which no further range is passed on).
  void wait(std::size_t count);

 private:
  void run();
  const std::function<void(std::string_view)>& fn_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string_view> queue_;
  std::size_t passed_ = 0;
  std::exception_ptr error_;
  bool stopping_ = false;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace numcheck::io
