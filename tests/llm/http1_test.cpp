// numcheck's own HTTP/1.1 client (llm/http1.hpp): the response parser on every framing and every
// way of splitting the bytes, its refusals, and the client against scripted servers on raw
// sockets (keep-alive reuse, a server that closed an idle connection, empty and cut replies,
// refused connections, timeouts, a stalled response, chunked bodies, many requests at once).
// The runner's own tests (runner_test.cpp) run over this client too, against the OpenAI-compatible
// test server, and once more over libcurl (ctest's "libcurl." tests).
#include "llm/http1.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

namespace numcheck::llm::http1 {
namespace {

using Failure = Result::Failure;
using State = ResponseParser::State;

// ---- the parser --------------------------------------------------------------------------------

struct Parsed {
  State state;
  int status;
  std::string body;
  bool keep_alive;
  std::optional<std::string> retry_after;
  std::size_t used;
  bool too_large;
  bool operator==(const Parsed&) const = default;
};

// Feeds `bytes` in pieces cut at `cuts` (sorted offsets), then the end of the stream if asked.
Parsed parse(const std::string& bytes, const std::vector<std::size_t>& cuts, bool eof = false,
             std::size_t max_body = 1 << 20) {
  ResponseParser p(max_body);
  std::size_t used = 0;
  std::size_t from = 0;
  std::vector<std::size_t> ends = cuts;
  ends.push_back(bytes.size());
  for (const std::size_t to : ends) {
    if (to < from) continue;
    if (p.done() || p.failed()) break;
    used += p.feed(std::string_view(bytes).substr(from, to - from));
    from = to;
  }
  if (eof && !p.done() && !p.failed()) p.end_of_stream();
  return {p.state(), p.status(), p.body(), p.keep_alive(), p.retry_after(), used, p.too_large()};
}

Parsed whole(const std::string& bytes, bool eof = false, std::size_t max_body = 1 << 20) {
  return parse(bytes, {}, eof, max_body);
}

// Every split into two pieces and byte by byte give what the whole does.
void expect_split_invariant(const std::string& bytes, bool eof = false) {
  const Parsed w = whole(bytes, eof);
  for (std::size_t cut = 0; cut <= bytes.size(); ++cut)
    ASSERT_EQ(parse(bytes, {cut}, eof), w) << "cut at " << cut;
  std::vector<std::size_t> every;
  for (std::size_t k = 1; k < bytes.size(); ++k) every.push_back(k);
  ASSERT_EQ(parse(bytes, every, eof), w);
}

// A whole response, taken to its last byte, cut anywhere.
void expect_response(const std::string& r, int status, const std::string& body) {
  const Parsed p = whole(r);
  EXPECT_EQ(p.state, State::kDone);
  EXPECT_EQ(p.status, status);
  EXPECT_EQ(p.body, body);
  EXPECT_TRUE(p.keep_alive);
  EXPECT_EQ(p.used, r.size());
  expect_split_invariant(r);
}

TEST(Http1Parser, ContentLengthBody) {
  expect_response(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"a\":\"b c\"}", 200,
      "{\"a\":\"b c\"}");
}

TEST(Http1Parser, ChunkedBodyWithExtensionsAndTrailers) {
  expect_response(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5;name=value\r\nhello\r\n1 \r\n,\r\nA\r\n world!!!!\r\n0\r\nX-Trailer: 1\r\n\r\n",
      200, "hello, world!!!!");
}

TEST(Http1Parser, InterimResponsesAreSkippedAndBareLineFeedsAccepted) {
  const std::string r =
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\nLink: x\n\n"
      "HTTP/1.1 429 Too Many Requests\nRetry-After:  7 \nContent-Length: 2\n\nno";
  expect_response(r, 429, "no");
  EXPECT_EQ(whole(r).retry_after, std::optional<std::string>("7"));
}

TEST(Http1Parser, ConnectionReuseRules) {
  EXPECT_FALSE(whole("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").keep_alive);
  EXPECT_FALSE(
      whole("HTTP/1.1 200 OK\r\nConnection: Upgrade, CLOSE\r\nContent-Length: 0\r\n\r\n").keep_alive);
  EXPECT_FALSE(whole("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").keep_alive);
  EXPECT_TRUE(whole("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n").keep_alive);
  EXPECT_TRUE(whole("HTTP/1.1 204 No Content\r\n\r\n").keep_alive);
  EXPECT_EQ(whole("HTTP/1.1 204 No Content\r\n\r\n").state, State::kDone);
}

TEST(Http1Parser, BodyToTheEndOfTheConnection) {
  const std::string r = "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it";
  EXPECT_EQ(whole(r).state, State::kBody);
  const Parsed p = whole(r, true);
  EXPECT_EQ(p.state, State::kDone);
  EXPECT_EQ(p.body, "all of it");
  EXPECT_FALSE(p.keep_alive);
  expect_split_invariant(r, true);
}

TEST(Http1Parser, BytesAfterTheResponseAreNotTaken) {
  const std::string r = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200";
  const Parsed p = whole(r);
  EXPECT_EQ(p.state, State::kDone);
  EXPECT_EQ(p.body, "ok");
  EXPECT_EQ(p.used, r.size() - 12);
}

TEST(Http1Parser, MalformedResponsesAreRefusedWithAReason) {
  for (const std::string& r : {
           std::string("SSH-2.0-OpenSSH_9.2\r\n\r\n"),
           std::string("HTTP/2 200\r\n\r\n"),
           std::string("HTTP/1.1 2x0 OK\r\n\r\n"),
           std::string("HTTP/1.1 099 Low\r\n\r\n"),
           std::string("\r\nHTTP/1.1 200 OK\r\n\r\n"),
           std::string("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"),
           std::string("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n"),
           std::string("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n"),
           std::string("HTTP/1.1 200 OK\r\nno colon here\r\n\r\n"),
           std::string("HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n"),
           std::string("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"),
           std::string("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
           std::string("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n"),
           std::string("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1000000000000000\r\n"),
           std::string("HTTP/1.1 101 Switching Protocols\r\n\r\n"),
       }) {
    ResponseParser p(1 << 20);
    (void)p.feed(r);
    EXPECT_TRUE(p.failed()) << r;
    EXPECT_FALSE(p.error().empty()) << r;
    EXPECT_EQ(p.error().find('\n'), std::string::npos) << r;
  }
}

TEST(Http1Parser, LimitsOnTheHeadAndTheBody) {
  std::string big_head = "HTTP/1.1 200 OK\r\n";
  while (big_head.size() <= ResponseParser::kMaxHead)
    big_head += "X-Filler: " + std::string(100, 'f') + "\r\n";
  ResponseParser head(1 << 20);
  (void)head.feed(big_head);
  EXPECT_TRUE(head.failed());
  EXPECT_NE(head.error().find("headers larger"), std::string::npos);
  // A body over the limit: announced (refused before it arrives), chunked, or read to the end.
  EXPECT_TRUE(whole("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n", false, 10).too_large);
  EXPECT_FALSE(whole("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789", false, 10).too_large);
  EXPECT_TRUE(whole("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n5\r\n", false, 10)
                  .too_large);
  EXPECT_TRUE(whole("HTTP/1.1 200 OK\r\n\r\n01234567890", false, 10).too_large);
  EXPECT_EQ(whole("HTTP/1.1 200 OK\r\n\r\n0123456789", true, 10).state, State::kDone);
}

// Found by fuzz_http1_response: a body refused as too large kept what had arrived before the
// piece that crossed the limit, so the outcome depended on how the bytes were cut.
TEST(Http1Parser, ARefusedResponseHasNoBodyWhateverThePieces) {
  const std::string r = "HTTP/1.1 200 OK\r\n\r\n" + std::string(30, 'x');
  for (const std::size_t cut : {std::size_t{0}, std::size_t{19}, std::size_t{25}, std::size_t{28}}) {
    const Parsed p = parse(r, {cut}, false, 20);
    EXPECT_TRUE(p.too_large) << cut;
    EXPECT_EQ(p.body, "") << cut;
  }
}

TEST(Http1Parser, TheEndOfTheStreamBeforeTheEnd) {
  ResponseParser empty(100);
  empty.end_of_stream();
  EXPECT_TRUE(empty.failed());
  EXPECT_EQ(empty.error(), "empty reply from server");
  for (const std::string& r : {std::string("HTTP/1.1 200 OK\r\nContent-Le"),
                               std::string("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabc"),
                               std::string("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab")}) {
    const Parsed p = whole(r, true);
    EXPECT_EQ(p.state, State::kError) << r;
  }
}

// Random well-formed responses (framing, body bytes, header case, line ends) cut at random places
// give their body and status back exactly.
TEST(Http1Parser, RandomResponsesInRandomPieces) {
  std::mt19937_64 rng(20261202);  // test inputs only
  for (int round = 0; round < 2000; ++round) {
    std::string body(rng() % 300, '\0');
    for (char& c : body) c = static_cast<char>(rng() % 256);
    const int status = 200 + static_cast<int>(rng() % 400);
    const char* eol = (rng() % 2) != 0 ? "\r\n" : "\n";
    const int framing = static_cast<int>(rng() % 3);
    std::string r = fmt::format("HTTP/1.1 {} Whatever{}", status, eol);
    r += fmt::format("{}: {}{}", (rng() % 2) != 0 ? "x-other" : "X-Other", "v", eol);
    if (framing == 0) {
      r += fmt::format("{}: {}{}{}", (rng() % 2) != 0 ? "content-length" : "Content-Length", body.size(), eol,
                       eol);
      r += body;
    } else if (framing == 1) {
      r += fmt::format("Transfer-Encoding: chunked{}{}", eol, eol);
      std::size_t at = 0;
      while (at < body.size()) {
        const std::size_t n = std::min<std::size_t>(body.size() - at, 1 + rng() % 40);
        r += fmt::format("{:x}{}", n, eol) + body.substr(at, n) + eol;
        at += n;
      }
      r += fmt::format("0{}{}", eol, eol);
    } else {
      r += fmt::format("Connection: close{}{}", eol, eol);
      r += body;
    }
    std::vector<std::size_t> cuts;
    for (int k = 0, n = static_cast<int>(rng() % 6); k < n; ++k) cuts.push_back(rng() % (r.size() + 1));
    std::sort(cuts.begin(), cuts.end());
    const Parsed p = parse(r, cuts, framing == 2);
    const bool no_body = status == 204 || status == 304;
    ASSERT_EQ(p.state, State::kDone) << round;
    ASSERT_EQ(p.status, status);
    ASSERT_EQ(p.body, no_body ? std::string() : body) << round;
    ASSERT_EQ(p.keep_alive, framing != 2);
  }
}

TEST(Http1Target, PlainHttpUrlsOnly) {
  const auto t = plain_http_target("http://127.0.0.1:8080/v1/");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->host, "127.0.0.1");
  EXPECT_EQ(t->port, "8080");
  EXPECT_EQ(t->path, "/v1");
  EXPECT_EQ(t->host_header, "127.0.0.1:8080");
  const auto v6 = plain_http_target("http://[::1]:9/v1");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->host_header, "[::1]:9");
  const auto bare = plain_http_target("http://gpu-box");
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->port, "80");
  EXPECT_EQ(bare->path, "");
  for (const char* url : {"https://api.example.com/v1", "http://user:pw@host/v1", "http://host:0/v1",
                          "http://host:65536/v1", "http://host:/v1", "http:///v1", "http://host/v1?x=1",
                          "http://ho st/v1", "http://[::1/v1", "ftp://host/"}) {
    EXPECT_FALSE(plain_http_target(url)) << url;
  }
}

TEST(Http1Date, TheThreeFormsOfRfc9110) {
  constexpr std::int64_t kWhen = 784111777;  // 1994-11-06 08:49:37 UTC, RFC 9110's example
  EXPECT_EQ(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), kWhen);
  EXPECT_EQ(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), kWhen);
  EXPECT_EQ(parse_http_date("Sun Nov  6 08:49:37 1994"), kWhen);
  EXPECT_EQ(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), 0);
  EXPECT_EQ(parse_http_date("Tue, 29 Feb 2028 23:59:59 GMT"), 1835481599);
  EXPECT_EQ(parse_http_date("Wednesday, 01-Mar-45 00:00:00 GMT"), 2371939200);  // 2045: two-digit rule
  for (const char* bad :
       {"", "soon", "Sun, 06 Nov 1994", "Sun, 06 Nox 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT",
        "Sun, 36 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT 7", "06 Nov 12345 08:49:37"}) {
    EXPECT_FALSE(parse_http_date(bad)) << bad;
  }
}

// ---- the client against scripted servers --------------------------------------------------------

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
        const std::size_t cl = in.find("Content-Length: ");
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

std::string body_of(const std::string& request) { return request.substr(request.find("\r\n\r\n") + 4); }

std::string ok(std::string_view body, std::string_view extra = "") {
  return fmt::format("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n{}\r\n{}", body.size(), extra, body);
}

ClientConfig config(int port, std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
  ClientConfig c;
  c.endpoints.push_back(*plain_http_target(fmt::format("http://127.0.0.1:{}/v1", port)));
  c.route = "/chat/completions";
  c.extra_headers = "Authorization: Bearer k\r\n";
  c.timeout = timeout;
  return c;
}

// Waits until every started request has come back.
std::map<std::uint64_t, Result> collect(Client& client) {
  std::map<std::uint64_t, Result> out;
  while (client.in_flight() > 0) {
    for (auto& [tag, r] : client.wait(std::chrono::milliseconds(100))) out.emplace(tag, std::move(r));
  }
  return out;
}

TEST(Http1Client, SendsTheRequestAndReusesTheConnection) {
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
      write_all(fd, ok("echo " + body_of(req)));
    }
  });
  Client client(config(server.port()));
  for (std::uint64_t tag = 0; tag < 5; ++tag) {
    client.start(tag, 0, fmt::format("{{\"n\":{}}}", tag));
    const auto done = collect(client);
    ASSERT_EQ(done.size(), 1u);
    const Result& r = done.at(tag);
    EXPECT_EQ(r.failure, Failure::kNone) << r.error;
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, fmt::format("echo {{\"n\":{}}}", tag));
  }
  EXPECT_EQ(server.accepted(), 1);
  std::lock_guard lock(m);
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[0], fmt::format("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n"
                                 "Authorization: Bearer k\r\nContent-Length: 7\r\n\r\n{{\"n\":0}}",
                                 server.port()));
}

// The preflight's probes: GETs of other paths than the POST route, on one connection.
TEST(Http1Client, GetsOfAnyPathShareTheConnection) {
  std::vector<std::string> seen;
  std::mutex m;
  ScriptedServer server([&](int fd, int) {
    for (;;) {
      std::string req = read_request(fd);
      if (req.empty()) return;
      const std::string line = req.substr(0, req.find("\r\n"));
      {
        std::lock_guard lock(m);
        seen.push_back(req);
      }
      write_all(fd, ok("got " + line));
    }
  });
  Client client(config(server.port()));
  EXPECT_EQ(client.get(0, "/v1/models").body, "got GET /v1/models HTTP/1.1");
  EXPECT_EQ(client.get(0, "/props").body, "got GET /props HTTP/1.1");
  EXPECT_EQ(client.request(0, "{}").body, "got POST /v1/chat/completions HTTP/1.1");
  EXPECT_EQ(server.accepted(), 1);
  std::lock_guard lock(m);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0],
            fmt::format("GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer k\r\n\r\n",
                        server.port()));
}

// A body larger than the socket's buffer goes out in pieces (send says EAGAIN; the rest follows
// when the socket is writable), while the server reads slowly.
TEST(Http1Client, ALargeRequestBodyIsSentWhole) {
  ScriptedServer server([](int fd, int) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the client's buffer fills first
    const std::string req = read_request(fd);
    if (req.empty()) return;
    const std::string b = body_of(req);
    const bool same = b.size() == 12u << 20 && b.find_first_not_of('y') == std::string::npos;
    write_all(fd, ok(fmt::format("{} {}", b.size(), same ? "intact" : "damaged")));
  });
  Client client(config(server.port()));
  const Result r = client.request(0, std::string(12u << 20, 'y'));
  EXPECT_EQ(r.failure, Failure::kNone) << r.error;
  EXPECT_EQ(r.body, fmt::format("{} intact", 12u << 20));
}

TEST(Http1Client, AnIdleConnectionTheServerClosedIsReplacedWithoutAFailure) {
  // Each connection answers one request without saying "Connection: close", then closes.
  ScriptedServer server([](int fd, int n) {
    const std::string req = read_request(fd);
    if (!req.empty()) write_all(fd, ok(fmt::format("conn {}", n)));
  });
  Client client(config(server.port()));
  for (std::uint64_t tag = 0; tag < 4; ++tag) {
    client.start(tag, 0, "{}");
    const auto done = collect(client);
    ASSERT_EQ(done.at(tag).failure, Failure::kNone) << done.at(tag).error;
    EXPECT_EQ(done.at(tag).body, fmt::format("conn {}", tag));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the close reaches the client
  }
  EXPECT_EQ(server.accepted(), 4);
}

TEST(Http1Client, AConnectionClosedUnderAReusedRequestIsSentOnceMoreOnAFreshOne) {
  // The first connection answers once, then reads the next request and closes without a byte: the
  // client cannot tell that from a connection closed while idle, so it sends again, once.
  ScriptedServer server([](int fd, int n) {
    if (n == 0) {
      write_all(fd, read_request(fd).empty() ? "" : ok("first"));
      (void)read_request(fd);
      return;
    }
    const std::string req = read_request(fd);
    if (!req.empty()) write_all(fd, ok("fresh " + body_of(req)));
  });
  Client client(config(server.port()));
  client.start(1, 0, "a");
  EXPECT_EQ(collect(client).at(1).body, "first");
  client.start(2, 0, "b");
  const Result r = collect(client).at(2);
  EXPECT_EQ(r.failure, Failure::kNone) << r.error;
  EXPECT_EQ(r.body, "fresh b");
  EXPECT_EQ(server.accepted(), 2);
}

TEST(Http1Client, EmptyAndCutRepliesAndGarbageAreFailures) {
  ScriptedServer server([](int fd, int n) {
    const std::string req = read_request(fd);
    if (req.empty()) return;
    const std::string b = body_of(req);
    if (b == "empty") return;
    if (b == "cut") write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part");
    if (b == "garbage") write_all(fd, "220 smtp.example.com ESMTP\r\n\r\n");
    if (b == "huge") write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 999999999\r\n\r\n");
    (void)n;
  });
  Client client(config(server.port()));
  client.start(0, 0, "empty");
  client.start(1, 0, "cut");
  client.start(2, 0, "garbage");
  client.start(3, 0, "huge");
  const auto done = collect(client);
  EXPECT_EQ(done.at(0).failure, Failure::kEmpty);
  EXPECT_EQ(done.at(1).failure, Failure::kPartial);
  EXPECT_EQ(done.at(2).failure, Failure::kProtocol);
  EXPECT_NE(done.at(2).error.find("not an HTTP/1.x response"), std::string::npos);
  EXPECT_EQ(done.at(3).failure, Failure::kTooLarge);
  EXPECT_EQ(done.at(3).status, 200);
}

TEST(Http1Client, RefusedConnectionsAndUnresolvableHostsFail) {
  int port = 0;
  {
    ScriptedServer gone([](int, int) {});
    port = gone.port();
  }  // nothing listens there any more
  Client refused(config(port));
  refused.start(7, 0, "{}");
  const Result r = collect(refused).at(7);
  EXPECT_EQ(r.failure, Failure::kConnect);
  EXPECT_NE(r.error.find("Connection refused"), std::string::npos) << r.error;

  ClientConfig c = config(port);
  c.endpoints[0] = *plain_http_target("http://no-such-host.invalid:8080/v1");
  Client unresolvable(c);
  unresolvable.start(8, 0, "{}");
  EXPECT_EQ(collect(unresolvable).at(8).failure, Failure::kResolve);
}

TEST(Http1Client, ASilentServerTimesOutAndAStalledResponseIsAbandoned) {
  ScriptedServer server([](int fd, int) {
    const std::string req = read_request(fd);
    if (req.empty()) return;
    if (body_of(req) == "trickle") {
      write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n");
      for (int k = 0; k < 40 && ::send(fd, "x", 1, MSG_NOSIGNAL) == 1; ++k)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      return;
    }
    char b;
    (void)::recv(fd, &b, 1, 0);  // waits for the client to give up
  });
  ClientConfig c = config(server.port(), std::chrono::milliseconds(300));
  c.low_speed_bytes = 1000;
  c.low_speed_time = std::chrono::milliseconds(200);
  c.timeout = std::chrono::milliseconds(1500);
  Client client(c);
  client.start(0, 0, "silent");
  client.start(1, 0, "trickle");
  const auto done = collect(client);
  EXPECT_EQ(done.at(0).failure, Failure::kTimeout);
  EXPECT_GE(done.at(0).latency.count(), 1500);
  EXPECT_EQ(done.at(1).failure, Failure::kTooSlow);
  EXPECT_LT(done.at(1).latency.count(), 1500);
}

TEST(Http1Client, ManyRequestsAtOnceEachGetTheirOwnAnswer) {
  ScriptedServer server([](int fd, int n) {
    for (int k = 0;; ++k) {
      const std::string req = read_request(fd);
      if (req.empty()) return;
      const std::string b = body_of(req);
      if ((n + k) % 3 == 0) {  // chunked, in pieces
        write_all(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        write_all(fd, fmt::format("{:x}\r\nre: \r\n{:x}\r\n{}\r\n0\r\n\r\n", 4, b.size(), b));
      } else if ((n + k) % 3 == 1) {
        write_all(fd, ok("re: " + b));
      } else {  // the last answer on this connection
        write_all(fd, ok("re: " + b, "Connection: close\r\n"));
        return;
      }
    }
  });
  Client client(config(server.port()));
  std::map<std::uint64_t, Result> done;
  std::uint64_t next = 0;
  while (done.size() < 500) {
    while (next < 500 && client.in_flight() < 64) {
      client.start(next, 0, fmt::format("item {}", next));
      ++next;
    }
    for (auto& [tag, r] : client.wait(std::chrono::milliseconds(100))) done.emplace(tag, std::move(r));
  }
  for (const auto& [tag, r] : done) {
    ASSERT_EQ(r.failure, Failure::kNone) << tag << ": " << r.error;
    ASSERT_EQ(r.body, fmt::format("re: item {}", tag));
  }
}

}  // namespace
}  // namespace numcheck::llm::http1
