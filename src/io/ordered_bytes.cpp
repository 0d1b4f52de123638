#include "io/ordered_bytes.hpp"

namespace numcheck::io {

OrderedBytes::OrderedBytes(const std::function<void(std::string_view)>& fn)
    : fn_(fn), thread_([this] { run(); }) {}

OrderedBytes::~OrderedBytes() {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void OrderedBytes::push(std::string_view bytes) {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(bytes);
  }
  cv_.notify_all();
}

void OrderedBytes::wait(std::size_t count) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return passed_ >= count || error_; });
  if (error_) std::rethrow_exception(error_);
}

void OrderedBytes::run() {
  for (;;) {
    std::string_view b;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_ || error_) return;
      b = queue_.front();
      queue_.pop_front();
    }
    try {
      fn_(b);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(mu_);
      error_ = std::current_exception();
    }
    {
      const std::lock_guard<std::mutex> lock(mu_);
      ++passed_;
    }
    cv_.notify_all();
  }
}

}  // namespace numcheck::io
