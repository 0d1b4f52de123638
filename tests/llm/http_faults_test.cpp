// The HTTP backend (libcurl's multi interface) against scripted servers on raw sockets: what a
// server can do to a connection that the OpenAI-compatible test server cannot script. Keep-alive
// reuse, a server that closed an idle connection or closes one under a reused request, empty, cut
// and garbled replies, an announced body over the limit, a silent server and a trickling one,
// 429 with Retry-After, a large request body, many requests at once over connections that close.
// Cut bodies are never answers: every such attempt is a failure without a completion.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "llm/http_backend.hpp"

namespace numcheck::llm {
namespace {

// A server on 127.0.0.1 that hands every accepted connection to `serve(fd, connection_number)` on
// a thread of its own.
class ScriptedServer {
 public:
  explicit ScriptedServer(std::function<void(int, int)> serve) : serve_(std::move(serve)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    (void)::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(fd_, 128), 0);
    socklen_t len = sizeof a;
    (void)::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    accept_ = std::thread([this] {
      for (int n = 0;; ++n) {
        const int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0 || stop_) {
          if (c >= 0) ::close(c);
          return;
        }
        ++accepted_;
        workers_.emplace_back([this, c, n] {
          serve_(c, n);
          ::close(c);
        });
      }
    });
  }
  ~ScriptedServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    accept_.join();
    for (auto& w : workers_) w.join();
  }
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;
  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] int accepted() const { return accepted_.load(); }

 private:
  std::function<void(int, int)> serve_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::thread accept_;
  std::vector<std::thread> workers_;
};

// Reads one request (head and Content-Length body); "" when the connection ended first.
std::string read_request(int fd) {
  std::string in;
  std::size_t need = 0;  // the whole request's size, once its head has arrived
  std::vector<char> buf(1 << 16);
  for (;;) {
    if (need == 0) {
      const std::size_t head_end = in.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        std::size_t cl = in.find("Content-Length: ");
        if (cl == std::string::npos) cl = in.find("content-length: ");
        need = head_end + 4 + (cl == std::string::npos || cl > head_end ? 0 : std::stoul(in.substr(cl + 16)));
      }
    }
    if (need != 0 && in.size() >= need) return in;
    const ssize_t got = ::recv(fd, buf.data(), buf.size(), 0);
    if (got <= 0) return "";
    in.append(buf.data(), static_cast<std::size_t>(got));
  }
}

void write_all(int fd, std::string_view s) {
  while (!s.empty()) {
    const ssize_t n = ::send(fd, s.data(), s.size(), MSG_NOSIGNAL);
    if (n <= 0) return;
    s.remove_prefix(static_cast<std::size_t>(n));
  }
}

// The request's prompt: the test requests' bodies are {"p":"<prompt>"}.
std::string prompt_of(const std::string& request) {
  const std::string body = request.substr(request.find("\r\n\r\n") + 4);
  const auto from = body.find(":\"");
  return from == std::string::npos ? body : body.substr(from + 2, body.rfind('"') - from - 2);
}

std::string completion_body(const std::string& text) {
  return fmt::format(R"({{"choices":[{{"message":{{"content":"{}"}},"finish_reason":"stop"}}]}})", text);
}

std::string ok(const std::string& text, std::string_view extra = "") {
  const std::string body = completion_body(text);
  return fmt::format("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{}\r\n{}",
                     body.size(), extra, body);
}

HttpConfig config(int port, std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
  HttpConfig c;
  c.endpoints = {fmt::format("http://127.0.0.1:{}/v1", port)};
  c.model = "m";
  c.timeout = timeout;
  c.max_response_bytes = std::size_t{1} << 20;
  return c;
}

Request request(const std::string& prompt) {
  Request r;
  r.item_id = prompt;
  r.prompt = prompt;
  r.body = fmt::format(R"({{"p":"{}"}})", prompt);
  return r;
}

// Starts each prompt on `session` (at most `in_flight` at once) and waits for every answer.
std::map<std::uint64_t, Attempt> run_all(AsyncSession& session, const std::vector<std::string>& prompts,
                                         std::size_t in_flight = 64) {
  std::map<std::uint64_t, Attempt> done;
  std::uint64_t next = 0;
  while (done.size() < prompts.size()) {
    while (next < prompts.size() && session.in_flight() < in_flight) {
      session.start(next, request(prompts[next]), 0);
      ++next;
    }
    for (auto& [tag, a] : session.wait(std::chrono::milliseconds(100))) done.emplace(tag, std::move(a));
  }
  return done;
}

Attempt one(AsyncSession& session, const std::string& prompt) {
  return run_all(session, {prompt}).begin()->second;
}

TEST(HttpFaults, KeepAliveCarriesEveryRequestOverOneConnection) {
  std::vector<std::string> seen;
  std::mutex m;
  ScriptedServer server([&](int fd, int) {
    for (;;) {
      const std::string req = read_request(fd);
      if (req.empty()) return;
      {
        std::lock_guard lock(m);
        seen.push_back(req);
      }
      write_all(fd, ok("echo " + prompt_of(req)));
    }
  });
  auto b = make_http_backend(config(server.port()));
  auto session = b->open_async_session();
  for (int k = 0; k < 5; ++k) {
    const Attempt a = one(*session, fmt::format("n{}", k));
    ASSERT_EQ(a.status, Attempt::Status::kOk) << a.error;
    EXPECT_EQ(a.completion.content, fmt::format("echo n{}", k));
  }
  EXPECT_EQ(server.accepted(), 1);
  std::lock_guard lock(m);
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[0].rfind("POST /v1/chat/completions HTTP/1.1\r\n", 0), 0u) << seen[0];
}

TEST(HttpFaults, AnIdleConnectionTheServerClosedIsReplacedWithoutAFailure) {
  // Each connection answers one request without saying "Connection: close", then closes.
  ScriptedServer server([](int fd, int n) {
    const std::string req = read_request(fd);
    if (!req.empty()) write_all(fd, ok(fmt::format("conn {}", n)));
  });
  auto b = make_http_backend(config(server.port()));
  auto session = b->open_async_session();
  for (int k = 0; k < 4; ++k) {
    const Attempt a = one(*session, "x");
    ASSERT_EQ(a.status, Attempt::Status::kOk) << a.error;
    EXPECT_EQ(a.completion.content, fmt::format("conn {}", k));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the close reaches the client
  }
  EXPECT_EQ(server.accepted(), 4);
}

TEST(HttpFaults, AConnectionClosedUnderAReusedRequestIsSentOnceMoreOnAFreshOne) {
  // The first connection answers once, then reads the next request and closes without a byte: the
  // client cannot tell that from a connection closed while idle, so it sends again, once.
  ScriptedServer server([](int fd, int n) {
    if (n == 0) {
      write_all(fd, read_request(fd).empty() ? "" : ok("first"));
      (void)read_request(fd);
      return;
    }
    const std::string req = read_request(fd);
    if (!req.empty()) write_all(fd, ok("fresh " + prompt_of(req)));
  });
  auto b = make_http_backend(config(server.port()));
  auto session = b->open_async_session();
  EXPECT_EQ(one(*session, "a").completion.content, "first");
  const Attempt a = one(*session, "b");
  EXPECT_EQ(a.status, Attempt::Status::kOk) << a.error;
  EXPECT_EQ(a.completion.content, "fresh b");
  EXPECT_EQ(server.accepted(), 2);
}

TEST(HttpFaults, EmptyCutAndGarbledRepliesAndAnOversizedBodyAreFailuresNeverAnswers) {
  ScriptedServer server([](int fd, int) {
    const std::string req = read_request(fd);
    if (req.empty()) return;
    const std::string p = prompt_of(req);
    const std::string body = completion_body("a cut answer");
    if (p == "cut")
      write_all(fd, fmt::format("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{}", body.size() + 40, body));
    if (p == "chunked-cut")
      write_all(fd, fmt::format("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{}\r\n",
                                body.size(), body));
    if (p == "garbage") write_all(fd, "220 smtp.example.com ESMTP\r\n\r\n");
    if (p == "huge") write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 999999999\r\n\r\n{\"choices\":");
    if (p == "huge-chunked") {
      write_all(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
      const std::string piece(1 << 16, 'x');
      for (int k = 0; k < 40; ++k) write_all(fd, fmt::format("{:x}\r\n{}\r\n", piece.size(), piece));
    }
  });
  auto b = make_http_backend(config(server.port()));
  auto session = b->open_async_session();
  const auto done = run_all(*session, {"empty", "cut", "chunked-cut", "garbage", "huge", "huge-chunked"});
  for (std::uint64_t k = 0; k < 4; ++k) {
    const Attempt& a = done.at(k);
    EXPECT_EQ(a.status, Attempt::Status::kRetryable) << k << ": " << a.error;
    EXPECT_NE(a.error.find("connection error"), std::string::npos) << k << ": " << a.error;
    EXPECT_TRUE(a.completion.content.empty()) << k;
  }
  for (std::uint64_t k = 4; k < 6; ++k) {
    const Attempt& a = done.at(k);
    EXPECT_EQ(a.status, Attempt::Status::kFatal) << k << ": " << a.error;
    EXPECT_NE(a.error.find("larger than 1048576 bytes"), std::string::npos) << k << ": " << a.error;
    EXPECT_TRUE(a.completion.content.empty()) << k;
  }
}

TEST(HttpFaults, ASilentServerTimesOutAndATricklingResponseIsAbandoned) {
  ScriptedServer server([](int fd, int) {
    const std::string req = read_request(fd);
    if (req.empty()) return;
    if (prompt_of(req) == "trickle") {
      write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n");
      for (int k = 0; k < 40 && ::send(fd, "x", 1, MSG_NOSIGNAL) == 1; ++k)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      return;
    }
    char c;
    (void)::recv(fd, &c, 1, 0);  // waits for the client to give up
  });
  HttpConfig cfg = config(server.port(), std::chrono::milliseconds(1500));
  cfg.low_speed_bytes = 1000;
  cfg.low_speed_time = std::chrono::milliseconds(200);
  auto b = make_http_backend(cfg);
  auto session = b->open_async_session();
  const auto done = run_all(*session, {"silent", "trickle"});
  EXPECT_EQ(done.at(0).status, Attempt::Status::kRetryable);
  EXPECT_NE(done.at(0).error.find("timeout after 1.5 s"), std::string::npos) << done.at(0).error;
  EXPECT_EQ(done.at(1).status, Attempt::Status::kRetryable);
  EXPECT_NE(done.at(1).error.find("stalled server"), std::string::npos) << done.at(1).error;
}

TEST(HttpFaults, A429CarriesItsRetryAfterInSecondsOrAsADate) {
  ScriptedServer server([](int fd, int) {
    for (;;) {
      const std::string req = read_request(fd);
      if (req.empty()) return;
      const std::string when = prompt_of(req) == "seconds" ? "3" : "Sun, 06 Nov 2094 08:49:37 GMT";
      const std::string body = R"({"error":{"message":"slow down"}})";
      write_all(fd, fmt::format("HTTP/1.1 429 Too Many Requests\r\nRetry-After: {}\r\nContent-Length: "
                                "{}\r\n\r\n{}",
                                when, body.size(), body));
    }
  });
  auto b = make_http_backend(config(server.port()));
  auto session = b->open_async_session();
  const auto done = run_all(*session, {"seconds", "date"});
  EXPECT_EQ(done.at(0).status, Attempt::Status::kRetryable);
  EXPECT_EQ(done.at(0).http_status, 429);
  EXPECT_EQ(done.at(0).error, "HTTP 429: slow down");
  EXPECT_EQ(done.at(0).retry_after_s, 3.0);
  ASSERT_TRUE(done.at(1).retry_after_s);
  EXPECT_GT(*done.at(1).retry_after_s, 60.0 * 60 * 24 * 365 * 60);  // 2094 is more than 60 years off
}

// A body larger than the socket's buffer goes out in pieces while the server reads slowly.
TEST(HttpFaults, ALargeRequestBodyIsSentWhole) {
  ScriptedServer server([](int fd, int) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the client's buffer fills first
    const std::string req = read_request(fd);
    if (req.empty()) return;
    const std::string p = prompt_of(req);
    const bool same = p.size() == 12u << 20 && p.find_first_not_of('y') == std::string::npos;
    write_all(fd, ok(fmt::format("{} {}", p.size(), same ? "intact" : "damaged")));
  });
  auto b = make_http_backend(config(server.port()));
  auto session = b->open_async_session();
  const Attempt a = one(*session, std::string(12u << 20, 'y'));
  EXPECT_EQ(a.status, Attempt::Status::kOk) << a.error;
  EXPECT_EQ(a.completion.content, fmt::format("{} intact", 12u << 20));
}

TEST(HttpFaults, ManyRequestsAtOnceOverClosingConnectionsEachGetTheirOwnAnswer) {
  ScriptedServer server([](int fd, int n) {
    for (int k = 0;; ++k) {
      const std::string req = read_request(fd);
      if (req.empty()) return;
      const std::string body = completion_body("re: " + prompt_of(req));
      if ((n + k) % 3 == 0) {  // chunked, in pieces
        write_all(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        write_all(fd, fmt::format("{:x}\r\n{}\r\n{:x}\r\n{}\r\n0\r\n\r\n", 5, body.substr(0, 5),
                                  body.size() - 5, body.substr(5)));
      } else if ((n + k) % 3 == 1) {
        write_all(fd, ok("re: " + prompt_of(req)));
      } else {  // the last answer on this connection
        write_all(fd, ok("re: " + prompt_of(req), "Connection: close\r\n"));
        return;
      }
    }
  });
  auto b = make_http_backend(config(server.port()));
  auto session = b->open_async_session();
  std::vector<std::string> prompts;
  for (int k = 0; k < 500; ++k) prompts.push_back(fmt::format("item {}", k));
  const auto done = run_all(*session, prompts);
  ASSERT_EQ(done.size(), 500u);
  for (const auto& [tag, a] : done) {
    ASSERT_EQ(a.status, Attempt::Status::kOk) << tag << ": " << a.error;
    ASSERT_EQ(a.completion.content, fmt::format("re: item {}", tag));
  }
}

}  // namespace
}  // namespace numcheck::llm
