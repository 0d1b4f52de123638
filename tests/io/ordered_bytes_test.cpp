// io::OrderedBytes: ranges passed on in the order pushed, on another thread; wait(k) returns once
// the first k are passed on; an exception of the function is rethrown by wait, and nothing after
// it is passed on; destruction without waiting drops what was not passed on, without hanging.
#include "io/ordered_bytes.hpp"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace numcheck::io {
namespace {

TEST(OrderedBytes, PassesRangesOnInOrderOnAnotherThread) {
  std::string seen;
  std::thread::id where;
  const std::function<void(std::string_view)> fn = [&](std::string_view b) {
    where = std::this_thread::get_id();
    seen.append(b);
  };
  std::vector<std::string> parts;
  for (int i = 0; i < 500; ++i) parts.push_back(std::to_string(i) + ",");
  std::string want;
  {
    OrderedBytes ob(fn);
    for (std::size_t i = 0; i < parts.size(); ++i) {
      ob.push(parts[i]);
      want += parts[i];
      if (i % 97 == 0) {
        ob.wait(i + 1);
        EXPECT_EQ(seen, want) << i;  // everything pushed so far was passed on
      }
    }
    ob.wait(parts.size());
    EXPECT_EQ(seen, want);
    EXPECT_NE(where, std::this_thread::get_id());
  }
}

TEST(OrderedBytes, AnErrorIsRethrownByWaitAndStopsThePassing) {
  std::atomic<int> calls{0};
  const std::function<void(std::string_view)> fn = [&](std::string_view b) {
    ++calls;
    if (b == "bad") fail("refused '{}'", b);
  };
  OrderedBytes ob(fn);
  ob.push("a");
  ob.push("bad");
  ob.push("c");
  try {
    ob.wait(3);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "refused 'bad'");
  }
  EXPECT_THROW(ob.wait(1), Error);  // the error stays
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(calls.load(), 2);  // "c" never passed on
}

TEST(OrderedBytes, DestroyedWithRangesPendingDoesNotHang) {
  std::atomic<int> calls{0};
  const std::function<void(std::string_view)> fn = [&](std::string_view) {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  };
  {
    OrderedBytes ob(fn);
    for (int i = 0; i < 100; ++i) ob.push("x");
  }
  EXPECT_LT(calls.load(), 100);
}

}  // namespace
}  // namespace numcheck::io
