#include "llm/threaded_session.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace numcheck::llm {

Attempt send_guarded(Session& session, const Request& request, std::size_t endpoint) {
  try {
    return session.send(request, endpoint);
  } catch (const std::exception& e) {
    Attempt a;
    a.status = Attempt::Status::kFatal;
    a.error = std::string("internal error: ") + e.what();
    return a;
  }
}

namespace {

class ThreadedSession : public AsyncSession {
 public:
  ThreadedSession(Backend& backend, std::size_t threads) {
    sessions_.reserve(threads);
    for (std::size_t i = 0; i < threads; ++i) sessions_.push_back(backend.open_session());
    workers_.reserve(threads);
    for (std::size_t i = 0; i < threads; ++i) workers_.emplace_back([this, i] { work(*sessions_[i]); });
  }
  ThreadedSession(const ThreadedSession&) = delete;
  ThreadedSession& operator=(const ThreadedSession&) = delete;
  ~ThreadedSession() override {
    {
      std::lock_guard lock(m_);
      closing_ = true;
    }
    queued_cv_.notify_all();
    for (auto& w : workers_) w.join();
  }

  void start(std::uint64_t tag, const Request& request, std::size_t endpoint) override {
    {
      std::lock_guard lock(m_);
      queue_.push_back(Started{tag, request, endpoint});
      ++in_flight_;
    }
    queued_cv_.notify_one();
  }

  std::vector<std::pair<std::uint64_t, Attempt>> wait(std::chrono::milliseconds timeout) override {
    std::unique_lock lock(m_);
    done_cv_.wait_for(lock, timeout, [&] { return !done_.empty(); });
    std::vector<std::pair<std::uint64_t, Attempt>> out = std::exchange(done_, {});
    in_flight_ -= out.size();
    return out;
  }

  [[nodiscard]] std::size_t in_flight() const override {
    std::lock_guard lock(m_);
    return in_flight_;
  }

 private:
  struct Started {
    std::uint64_t tag = 0;
    Request request;
    std::size_t endpoint = 0;
  };

  void work(Session& session) {
    for (;;) {
      Started s;
      {
        std::unique_lock lock(m_);
        queued_cv_.wait(lock, [&] { return closing_ || !queue_.empty(); });
        if (closing_) return;
        s = std::move(queue_.front());
        queue_.pop_front();
      }
      Attempt a = send_guarded(session, s.request, s.endpoint);
      {
        std::lock_guard lock(m_);
        done_.emplace_back(s.tag, std::move(a));
      }
      done_cv_.notify_all();
    }
  }

  std::vector<std::unique_ptr<Session>> sessions_;
  std::vector<std::thread> workers_;
  mutable std::mutex m_;
  std::condition_variable queued_cv_, done_cv_;
  std::deque<Started> queue_;
  std::vector<std::pair<std::uint64_t, Attempt>> done_;
  std::size_t in_flight_ = 0;
  bool closing_ = false;
};

}  // namespace

std::unique_ptr<AsyncSession> make_threaded_session(Backend& backend, std::size_t threads) {
  return std::make_unique<ThreadedSession>(backend, threads);
}

}  // namespace numcheck::llm
