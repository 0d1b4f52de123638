#pragma once
// numcheck's own HTTP/1.1 client for plain-HTTP endpoints (http://host:port/...): the runner's
// request path to a local server (llama-server, vLLM, Ollama on the same machine or network),
// where libcurl's per-request work (its state machine, header handling, poll) was the largest
// single cost after the runner's own (docs/performance.md, "Our own HTTP/1.1 client"). One
// Client is one event loop's connections (epoll, non-blocking sockets, keep-alive per endpoint);
// it sends a POST and reads its response, nothing else. TLS, proxies, credentials in the URL and
// the blocking side routes (the preflight probe, /embeddings) stay with libcurl
// (llm/http_backend.cpp decides which client a session gets).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace numcheck::llm::http1 {

// Where an http:// base URL points: host (without brackets for an IPv6 literal), port (default
// 80) and the path prefix ("/v1"). nullopt for anything the client does not take: another
// scheme, user info ("user:pass@"), a query or fragment, an empty host or a port out of range.
struct Target {
  std::string host;
  std::string port;
  std::string path;         // without a trailing slash ("" for the root)
  std::string host_header;  // "host:port" as the Host header carries it
};
[[nodiscard]] std::optional<Target> plain_http_target(std::string_view url);

// True when the environment names a proxy libcurl would use for http:// (http_proxy, all_proxy,
// ALL_PROXY): the own client does not speak to proxies, so such runs keep libcurl.
[[nodiscard]] bool proxy_in_environment();

// An HTTP/1.x response read incrementally from whatever pieces the socket gives: status line and
// headers (at most kMaxHead bytes, bare LF line ends accepted, 1xx interim responses skipped),
// then a body framed by Content-Length, chunked transfer coding, or the end of the connection.
// Any malformed byte ends it in kError with one line saying why; a body over `max_body` ends it
// with too_large() (as soon as a Content-Length announces it); a refused response has no body.
class ResponseParser {
 public:
  static constexpr std::size_t kMaxHead = std::size_t{100} << 10;  // libcurl's limit too
  enum class State : std::uint8_t { kHead, kBody, kDone, kError };

  explicit ResponseParser(std::size_t max_body) : max_body_(max_body) {}
  // Back to the start for the next response on the same connection.
  void reset();
  // Takes bytes; returns how many belong to this response (the rest, if any, follow it).
  std::size_t feed(std::string_view data);
  // The connection ended: completes a body read to the end of the connection, fails otherwise.
  void end_of_stream();

  [[nodiscard]] State state() const { return state_; }
  [[nodiscard]] bool done() const { return state_ == State::kDone; }
  [[nodiscard]] bool failed() const { return state_ == State::kError; }
  [[nodiscard]] bool too_large() const { return too_large_; }
  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] int status() const { return status_; }
  [[nodiscard]] std::string& body() { return body_; }
  [[nodiscard]] const std::string& body() const { return body_; }
  [[nodiscard]] const std::optional<std::string>& retry_after() const { return retry_after_; }
  // The connection may carry another request after this response (HTTP/1.1 without
  // "Connection: close", HTTP/1.0 with "Connection: keep-alive"; never after a body read to EOF).
  [[nodiscard]] bool keep_alive() const { return keep_alive_; }
  // Bytes taken so far, head included (the low-speed guard counts them).
  [[nodiscard]] std::uint64_t bytes() const { return bytes_; }

 private:
  enum class Framing : std::uint8_t { kNone, kLength, kChunked, kToEof };
  enum class Chunk : std::uint8_t { kSize, kData, kDataEnd, kTrailer };
  std::size_t feed_head(std::string_view data);
  std::size_t feed_body(std::string_view data);
  std::size_t feed_chunked(std::string_view data);
  bool parse_head();
  bool append_body(std::string_view data);
  void fail_with(std::string why);

  std::size_t max_body_;
  State state_ = State::kHead;
  Framing framing_ = Framing::kNone;
  Chunk chunk_ = Chunk::kSize;
  std::string head_;            // the head (or a chunk-size or trailer line) being gathered
  std::size_t line_start_ = 0;  // where head_'s current line begins
  std::string body_;
  std::string error_;
  std::optional<std::string> retry_after_;
  std::uint64_t remaining_ = 0;  // of the Content-Length or of the current chunk
  std::uint64_t bytes_ = 0;
  int status_ = 0;
  bool keep_alive_ = false;
  bool too_large_ = false;
};

// What became of one request.
struct Result {
  enum class Failure : std::uint8_t {
    kNone,      // a whole response arrived: status, body, retry_after are set
    kResolve,   // the host name did not resolve
    kConnect,   // no address accepted a connection (refused, unreachable, connect timeout)
    kTimeout,   // the request's time ran out (ClientConfig::timeout)
    kSend,      // the connection failed while the request was being sent
    kRecv,      // the connection failed while the response was being read
    kEmpty,     // the server closed the connection without a byte of response
    kPartial,   // the server closed the connection in the middle of the response
    kProtocol,  // the bytes are not an HTTP/1.x response
    kTooLarge,  // the body is larger than ClientConfig::max_body
    kTooSlow,   // the response, once begun, arrived slower than the low-speed guard allows
  };
  Failure failure = Failure::kNone;
  int status = 0;  // 0 when no status line arrived
  std::string body;
  std::optional<std::string> retry_after;
  std::string error;  // one line for a failure ("" for kNone)
  std::chrono::milliseconds latency{0};
};

struct ClientConfig {
  std::vector<Target> endpoints;
  std::string route;          // appended to each endpoint's path for POSTs ("/chat/completions")
  std::string extra_headers;  // whole header lines, each ending "\r\n" (Authorization, ...)
  std::chrono::milliseconds timeout{600000};
  std::chrono::milliseconds connect_timeout{10000};
  std::size_t max_body = std::size_t{16} << 20;
  // The low-speed guard of llm::HttpConfig: once the response has begun, it must keep arriving at
  // low_speed_bytes per second over windows of low_speed_time (0: no guard).
  std::size_t low_speed_bytes = 100;
  std::chrono::milliseconds low_speed_time{30000};
};

// Many POSTs in flight on one thread. Connections are opened on demand, kept alive and reused
// per endpoint; a request that fails on a reused connection before any byte of its response
// (the server had closed it meanwhile) is sent once more on a fresh connection, as libcurl does.
// A host name is resolved (getaddrinfo) when an endpoint first needs a connection and again after
// a connection to it failed; every address is tried in turn.
class Client {
 public:
  explicit Client(ClientConfig config);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Starts one POST of `body` (copied) to endpoint number `endpoint`; its Result comes back from
  // wait() with `tag`. Sends at once when a kept-alive connection is free.
  void start(std::uint64_t tag, std::size_t endpoint, std::string_view body);
  // Waits up to `timeout` (less when a request's deadline comes first) and returns the requests
  // that ended, possibly none.
  [[nodiscard]] std::vector<std::pair<std::uint64_t, Result>> wait(std::chrono::milliseconds timeout);
  // Requests started and not yet returned by wait().
  [[nodiscard]] std::size_t in_flight() const;
  // One POST, blocking, when none is in flight (the blocking sessions).
  [[nodiscard]] Result request(std::size_t endpoint, std::string_view body);
  // One GET of `path` ("/v1/models") on the endpoint's connections, blocking, when none is in
  // flight (the preflight's probes: one connection carries them all).
  [[nodiscard]] Result get(std::size_t endpoint, std::string_view path);

 private:
  Result wait_one();  // the one request in flight, when it ends
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// An HTTP-date (RFC 9110: "Sun, 06 Nov 1994 08:49:37 GMT", the obsolete "Sunday, 06-Nov-94
// 08:49:37 GMT" and asctime's "Sun Nov  6 08:49:37 1994") as seconds since 1970-01-01 UTC;
// nullopt when it is none of them.
[[nodiscard]] std::optional<std::int64_t> parse_http_date(std::string_view text);

}  // namespace numcheck::llm::http1
