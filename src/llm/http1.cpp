#include "llm/http1.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

#include "core/ascii.hpp"
#include "core/error.hpp"

namespace numcheck::llm::http1 {

namespace {

using Clock = std::chrono::steady_clock;

using ascii::iequals;
using ascii::trim;

// Calls fn(token) for each comma-separated, trimmed, non-empty token of a header value.
template <typename Fn>
void for_each_token(std::string_view value, Fn fn) {
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    const std::string_view token = trim(value.substr(0, comma));
    if (!token.empty()) fn(token);
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
}

// A whole token as an unsigned number in `base` (no sign, no space, no overflow); nullopt else.
std::optional<std::uint64_t> whole_number(std::string_view token, int base = 10) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v, base);
  if (ec != std::errc() || end != token.data() + token.size() || token.empty()) return std::nullopt;
  return v;
}

// Printable bytes of a server's line for an error message: at most 60, controls shown as '?'.
std::string shown(std::string_view s) {
  std::string out;
  for (const char c : s.substr(0, 60)) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  if (s.size() > 60) out += "...";
  return out;
}

}  // namespace

std::optional<Target> plain_http_target(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (url.substr(0, kScheme.size()) != kScheme) return std::nullopt;
  url.remove_prefix(kScheme.size());
  for (const char c : url) {  // leave anything unusual (spaces, controls, non-ASCII) to libcurl
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f) return std::nullopt;
  }
  if (url.find_first_of("?#") != std::string_view::npos) return std::nullopt;
  const std::size_t slash = url.find('/');
  const std::string_view authority = url.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view() : url.substr(slash);
  if (authority.empty() || authority.find('@') != std::string_view::npos) return std::nullopt;
  Target t;
  std::string_view port;
  if (authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos || close == 1) return std::nullopt;
    t.host = std::string(authority.substr(1, close - 1));
    const std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return std::nullopt;
      port = rest.substr(1);
    }
  } else {
    const std::size_t colon = authority.find(':');
    t.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
    if (t.host.empty()) return std::nullopt;
  }
  if (port.empty()) {
    if (!authority.empty() && authority.back() == ':') return std::nullopt;
    t.port = "80";
  } else {
    const std::optional<std::uint64_t> value = port.size() <= 5 ? whole_number(port) : std::nullopt;
    if (!value || *value == 0 || *value > 65535) return std::nullopt;
    t.port = std::to_string(*value);
  }
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  t.path = std::string(path);
  t.host_header = std::string(authority);
  return t;
}

bool proxy_in_environment() {
  for (const char* name : {"http_proxy", "all_proxy", "ALL_PROXY"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != 0) return true;
  }
  return false;
}

// ---- ResponseParser ------------------------------------------------------------------------------

void ResponseParser::reset() {
  state_ = State::kHead;
  framing_ = Framing::kNone;
  chunk_ = Chunk::kSize;
  head_.clear();
  line_start_ = 0;
  body_.clear();
  error_.clear();
  retry_after_.reset();
  remaining_ = 0;
  bytes_ = 0;
  status_ = 0;
  keep_alive_ = false;
  too_large_ = false;
}

void ResponseParser::fail_with(std::string why) {
  state_ = State::kError;
  error_ = std::move(why);
  keep_alive_ = false;
  std::string().swap(body_);  // a refused response has no body (and gives its memory back now)
}

std::size_t ResponseParser::feed(std::string_view data) {
  std::size_t used = 0;
  while (used < data.size() && (state_ == State::kHead || state_ == State::kBody)) {
    const std::string_view rest = data.substr(used);
    const std::size_t n = state_ == State::kHead ? feed_head(rest) : feed_body(rest);
    used += n;
    bytes_ += n;
    if (n == 0) break;  // only a finished response takes nothing more
  }
  return used;
}

std::size_t ResponseParser::feed_head(std::string_view data) {
  std::size_t i = 0;
  while (i < data.size() && state_ == State::kHead) {
    const std::size_t nl = data.find('\n', i);
    const std::size_t end = nl == std::string_view::npos ? data.size() : nl + 1;
    if (head_.size() + (end - i) > kMaxHead) {
      fail_with(fmt::format("response headers larger than {} bytes", kMaxHead));
      return end;
    }
    head_.append(data.data() + i, end - i);
    i = end;
    if (nl == std::string_view::npos) break;
    // A line ended (it may have begun in an earlier piece): a blank one ends the head.
    const std::string_view line = std::string_view(head_).substr(line_start_);
    line_start_ = head_.size();
    if (line != "\n" && line != "\r\n") continue;
    if (head_.size() == line.size()) {
      fail_with("response begins with a blank line");
      return i;
    }
    if (!parse_head()) return i;
  }
  return i;
}

bool ResponseParser::parse_head() {
  std::string_view head(head_);
  std::size_t eol = head.find('\n');
  const std::string_view status_line = trim(head.substr(0, eol));
  // "HTTP/1.x SSS reason"
  if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." || status_line[7] < '0' ||
      status_line[7] > '9' || status_line[8] != ' ' || (status_line.size() > 12 && status_line[12] != ' ')) {
    fail_with("not an HTTP/1.x response: '" + shown(status_line) + "'");
    return false;
  }
  const std::optional<std::uint64_t> code = whole_number(status_line.substr(9, 3));
  if (!code) {
    fail_with("not an HTTP/1.x response: '" + shown(status_line) + "'");
    return false;
  }
  const int status = static_cast<int>(*code);
  if (status < 100) {
    fail_with(fmt::format("HTTP status {} is not a status", status));
    return false;
  }
  const bool http10 = status_line[7] == '0';
  bool close = false;
  bool keep_alive_token = false;
  bool chunked = false;
  std::optional<std::uint64_t> length;
  head.remove_prefix(eol + 1);
  while (!head.empty()) {
    eol = head.find('\n');
    const std::string_view raw = head.substr(0, eol);
    head.remove_prefix(eol == std::string_view::npos ? head.size() : eol + 1);
    if (raw.empty() || raw == "\r") break;
    if (raw.front() == ' ' || raw.front() == '\t') continue;  // obsolete line folding: ignored
    const std::size_t colon = raw.find(':');
    const std::string_view name = raw.substr(0, colon);
    if (colon == std::string_view::npos || name.empty() ||
        name.find_first_of(" \t") != std::string_view::npos) {
      fail_with("malformed header line: '" + shown(trim(raw)) + "'");
      return false;
    }
    const std::string_view value = trim(raw.substr(colon + 1));
    if (iequals(name, "content-length")) {
      bool bad = false;  // repeated values must agree (RFC 9112 6.3)
      for_each_token(value, [&](std::string_view token) {
        const std::optional<std::uint64_t> v = whole_number(token);
        bad = bad || !v || (length && *length != *v);
        if (!bad) length = v;
      });
      if (bad || !length) {
        fail_with("bad Content-Length: '" + shown(value) + "'");
        return false;
      }
    } else if (iequals(name, "transfer-encoding")) {
      bool last_chunked = false;
      bool other = false;
      for_each_token(value, [&](std::string_view token) {
        last_chunked = iequals(token, "chunked");
        if (!last_chunked && !iequals(token, "identity")) other = true;
      });
      if (other) {
        fail_with("unsupported Transfer-Encoding: '" + shown(value) + "'");
        return false;
      }
      chunked = chunked || last_chunked;
    } else if (iequals(name, "connection")) {
      for_each_token(value, [&](std::string_view token) {
        if (iequals(token, "close")) close = true;
        if (iequals(token, "keep-alive")) keep_alive_token = true;
      });
    } else if (iequals(name, "retry-after")) {
      retry_after_ = std::string(value);
    }
  }
  head_.clear();
  line_start_ = 0;
  if (status < 200) {  // an interim response (100 Continue, 103 Early Hints): the real one follows
    if (status == 101) {
      fail_with("the server switched protocols (HTTP 101)");
      return false;
    }
    retry_after_.reset();
    return true;
  }
  status_ = status;
  keep_alive_ = http10 ? (keep_alive_token && !close) : !close;
  if (status == 204 || status == 304) {
    framing_ = Framing::kNone;
  } else if (chunked) {
    framing_ = Framing::kChunked;
    chunk_ = Chunk::kSize;
  } else if (length) {
    framing_ = Framing::kLength;
    remaining_ = *length;
    if (*length > max_body_) {
      too_large_ = true;
      fail_with(fmt::format("response body larger than {} bytes", max_body_));
      return false;
    }
    body_.reserve(static_cast<std::size_t>(*length));
  } else {
    framing_ = Framing::kToEof;
    keep_alive_ = false;
  }
  state_ = (framing_ == Framing::kNone || (framing_ == Framing::kLength && remaining_ == 0)) ? State::kDone
                                                                                             : State::kBody;
  return true;
}

bool ResponseParser::append_body(std::string_view data) {
  if (body_.size() + data.size() > max_body_) {
    too_large_ = true;
    fail_with(fmt::format("response body larger than {} bytes", max_body_));
    return false;
  }
  body_.append(data);
  return true;
}

std::size_t ResponseParser::feed_body(std::string_view data) {
  switch (framing_) {
    case Framing::kLength: {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, data.size()));
      if (!append_body(data.substr(0, n))) return n;
      remaining_ -= n;
      if (remaining_ == 0) state_ = State::kDone;
      return n;
    }
    case Framing::kToEof:
      (void)append_body(data);
      return data.size();
    case Framing::kChunked:
      return feed_chunked(data);
    case Framing::kNone:
      break;
  }
  state_ = State::kDone;
  return 0;
}

std::size_t ResponseParser::feed_chunked(std::string_view data) {
  if (chunk_ == Chunk::kData) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, data.size()));
    if (!append_body(data.substr(0, n))) return n;
    remaining_ -= n;
    if (remaining_ == 0) chunk_ = Chunk::kDataEnd;
    return n;
  }
  // A line: the chunk size, the CRLF after a chunk's data, or a trailer line.
  const std::size_t nl = data.find('\n');
  const std::size_t take = nl == std::string_view::npos ? data.size() : nl + 1;
  const std::size_t limit = chunk_ == Chunk::kTrailer ? kMaxHead : 1024;
  if (head_.size() + take > limit) {
    fail_with(chunk_ == Chunk::kTrailer ? "chunked trailer line too long" : "chunk size line too long");
    return take;
  }
  head_.append(data.data(), take);
  if (nl == std::string_view::npos) return take;
  const std::string_view line = trim(std::string_view(head_).substr(0, head_.size() - 1));
  switch (chunk_) {
    case Chunk::kSize: {
      // Hexadecimal digits, then nothing or chunk extensions (";name=value").
      const std::size_t digits = std::min(line.find_first_of("; \t"), line.size());
      const std::optional<std::uint64_t> parsed = whole_number(line.substr(0, digits), 16);
      const std::string_view after = trim(line.substr(digits));
      if (!parsed || !(after.empty() || after.front() == ';')) {
        fail_with("bad chunk size line: '" + shown(line) + "'");
        return take;
      }
      const std::uint64_t size = *parsed;
      if (size > max_body_ || body_.size() + size > max_body_) {
        too_large_ = true;
        fail_with(fmt::format("response body larger than {} bytes", max_body_));
        return take;
      }
      remaining_ = size;
      chunk_ = size == 0 ? Chunk::kTrailer : Chunk::kData;
      break;
    }
    case Chunk::kDataEnd:
      if (!line.empty()) {
        fail_with("chunk data not followed by a line end");
        return take;
      }
      chunk_ = Chunk::kSize;
      break;
    case Chunk::kTrailer:
      if (line.empty()) state_ = State::kDone;
      break;
    case Chunk::kData:
      break;
  }
  head_.clear();
  return take;
}

void ResponseParser::end_of_stream() {
  if (state_ == State::kBody && framing_ == Framing::kToEof) {
    state_ = State::kDone;
    return;
  }
  if (state_ == State::kHead || state_ == State::kBody) {
    fail_with(bytes_ == 0 ? "empty reply from server"
                          : "connection closed before the whole response arrived");
  }
}

// ---- Client --------------------------------------------------------------------------------------

namespace {

struct Address {
  sockaddr_storage addr{};
  socklen_t len = 0;
  int family = AF_INET;
};

struct Conn {
  explicit Conn(std::size_t max_body) : parser(max_body) {}
  int fd = -1;
  std::size_t endpoint = 0;
  bool dead = false;         // closed; freed at the end of the current call
  bool active = false;       // carries a request (else idle in its endpoint's pool)
  bool connecting = false;   // connect() in progress
  bool sending = false;      // request bytes left to send
  bool want_out = false;     // registered for EPOLLOUT
  bool reused = false;       // the connection served a response before this request
  bool fresh_retry = false;  // this request was already sent again on a fresh connection
  std::size_t address = 0;   // the address being tried
  int last_errno = 0;
  std::uint64_t tag = 0;
  std::string out;  // the request's bytes
  std::size_t out_off = 0;
  ResponseParser parser;
  Clock::time_point start, deadline, connect_deadline;
  bool guard_on = false;
  Clock::time_point window_start;
  std::uint64_t window_bytes = 0;
};

struct Endpoint {
  Target target;
  std::string head;  // a POST's request line and headers, up to its Content-Length
  std::vector<Address> addresses;
  bool resolved = false;
  std::vector<Conn*> idle;
};

}  // namespace

struct Client::Impl {
  ClientConfig cfg;
  int ep = -1;
  std::vector<Endpoint> endpoints;
  std::vector<std::unique_ptr<Conn>> conns;
  std::vector<std::pair<std::uint64_t, Result>> finished;
  std::size_t active = 0;
  std::array<char, 65536> buf{};

  ~Impl() {
    for (auto& c : conns) {
      if (c->fd >= 0) ::close(c->fd);
    }
    if (ep >= 0) ::close(ep);
  }

  void close_conn(Conn& c) {
    if (c.fd >= 0) ::close(c.fd);
    c.fd = -1;
    c.dead = true;
    if (!c.active) {
      auto& idle = endpoints[c.endpoint].idle;
      idle.erase(std::remove(idle.begin(), idle.end(), &c), idle.end());
    }
  }

  void sweep() {
    conns.erase(std::remove_if(conns.begin(), conns.end(), [](const auto& c) { return c->dead; }),
                conns.end());
  }

  void set_events(Conn& c, bool out) {
    if (c.want_out == out) return;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP | (out ? EPOLLOUT : 0U);
    ev.data.ptr = &c;
    (void)::epoll_ctl(ep, EPOLL_CTL_MOD, c.fd, &ev);
    c.want_out = out;
  }

  // Ends c's request with `failure` (kNone: its response arrived); the connection goes back to
  // the idle pool when `reusable` and the response allows it, else it is closed.
  void end(Conn& c, Result::Failure failure, std::string error, bool reusable = false) {
    Result r;
    r.failure = failure;
    r.status = c.parser.status();
    r.error = std::move(error);
    r.latency = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - c.start);
    if (failure == Result::Failure::kNone) {
      r.body = std::move(c.parser.body());
      r.retry_after = c.parser.retry_after();
    }
    finished.emplace_back(c.tag, std::move(r));
    --active;
    const bool keep = reusable && failure == Result::Failure::kNone && c.parser.keep_alive() && !c.sending;
    c.active = false;
    c.out.clear();
    c.parser.reset();
    if (keep) {
      c.reused = true;
      set_events(c, false);
      endpoints[c.endpoint].idle.push_back(&c);
    } else {
      close_conn(c);
    }
  }

  // A connection failed under a request. On a reused connection before any byte of the response,
  // the server had most likely closed it while it was idle: the request goes once more on a fresh
  // connection (the server cannot have acted on it: it sent nothing).
  void conn_failed(Conn& c, Result::Failure failure, std::string error) {
    if (c.reused && !c.fresh_retry && c.parser.bytes() == 0 &&
        (failure == Result::Failure::kSend || failure == Result::Failure::kRecv ||
         failure == Result::Failure::kEmpty)) {
      ::close(c.fd);
      c.fd = -1;
      c.want_out = false;
      c.reused = false;
      c.fresh_retry = true;
      c.sending = false;
      c.out_off = 0;
      c.parser.reset();
      c.address = 0;
      connect(c);
      return;
    }
    end(c, failure, std::move(error));
  }

  bool resolve(Endpoint& e, std::string& why) {
    e.addresses.clear();
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* res = nullptr;
    const int rc = ::getaddrinfo(e.target.host.c_str(), e.target.port.c_str(), &hints, &res);
    if (rc != 0) {
      why = fmt::format("could not resolve host {}: {}", e.target.host, ::gai_strerror(rc));
      return false;
    }
    for (const addrinfo* a = res; a != nullptr; a = a->ai_next) {
      if (a->ai_addrlen > sizeof(sockaddr_storage)) continue;
      Address addr;
      std::memcpy(&addr.addr, a->ai_addr, a->ai_addrlen);
      addr.len = a->ai_addrlen;
      addr.family = a->ai_family;
      e.addresses.push_back(addr);
    }
    ::freeaddrinfo(res);
    e.resolved = !e.addresses.empty();
    if (!e.resolved) why = fmt::format("could not resolve host {}: no address", e.target.host);
    return e.resolved;
  }

  // Opens a connection for c's request, trying the endpoint's addresses from c.address on.
  void connect(Conn& c) {
    Endpoint& e = endpoints[c.endpoint];
    if (!e.resolved) {
      std::string why;
      if (!resolve(e, why)) {
        end(c, Result::Failure::kResolve, why);
        return;
      }
    }
    for (; c.address < e.addresses.size(); ++c.address) {
      const Address& a = e.addresses[c.address];
      const int fd = ::socket(a.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0) {
        c.last_errno = errno;
        continue;
      }
      const int one = 1;
      const int idle_s = 60;
      (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      (void)::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);  // libcurl's TCP keep-alive
      (void)::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s, sizeof idle_s);
      (void)::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &idle_s, sizeof idle_s);
      int rc = 0;
      do {
        rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&a.addr), a.len);
      } while (rc != 0 && errno == EINTR);
      if (rc != 0 && errno != EINPROGRESS) {
        c.last_errno = errno;
        ::close(fd);
        continue;
      }
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLRDHUP | EPOLLOUT;
      ev.data.ptr = &c;
      if (::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
        c.last_errno = errno;
        ::close(fd);
        continue;
      }
      c.fd = fd;
      c.want_out = true;
      c.connecting = rc != 0;
      c.sending = true;
      if (!c.connecting) send(c);
      return;
    }
    e.resolved = false;  // resolved again for the next attempt
    end(c, Result::Failure::kConnect,
        fmt::format("failed to connect to {} port {}: {}", e.target.host, e.target.port,
                    std::strerror(c.last_errno != 0 ? c.last_errno : ECONNREFUSED)));
  }

  void send(Conn& c) {
    while (c.out_off < c.out.size()) {
      const ssize_t n = ::send(c.fd, c.out.data() + c.out_off, c.out.size() - c.out_off, MSG_NOSIGNAL);
      if (n > 0) {
        c.out_off += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        set_events(c, true);
        return;
      }
      conn_failed(c, Result::Failure::kSend, fmt::format("send failure: {}", std::strerror(errno)));
      return;
    }
    c.sending = false;
    set_events(c, false);
  }

  void receive(Conn& c) {
    for (;;) {
      const ssize_t n = ::recv(c.fd, buf.data(), buf.size(), 0);
      if (n > 0) {
        const std::string_view data(buf.data(), static_cast<std::size_t>(n));
        const std::size_t used = c.parser.feed(data);
        if (!c.guard_on) {  // the response has begun: the low-speed guard counts from here
          c.guard_on = true;
          c.window_start = Clock::now();
          c.window_bytes = c.parser.bytes();
        }
        if (c.parser.failed()) {
          end(c, c.parser.too_large() ? Result::Failure::kTooLarge : Result::Failure::kProtocol,
              c.parser.error());
          return;
        }
        if (c.parser.done()) {
          end(c, Result::Failure::kNone, "", used == data.size());  // bytes after it: not reused
          return;
        }
        if (static_cast<std::size_t>(n) < buf.size()) return;
        continue;
      }
      if (n == 0) {
        const bool nothing = c.parser.bytes() == 0;
        c.parser.end_of_stream();
        if (c.parser.done()) {
          end(c, Result::Failure::kNone, "");  // the connection has ended: not kept
        } else if (nothing) {
          conn_failed(c, Result::Failure::kEmpty, "empty reply from server");
        } else {
          end(c, Result::Failure::kPartial, c.parser.error());
        }
        return;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      conn_failed(c, Result::Failure::kRecv, fmt::format("recv failure: {}", std::strerror(errno)));
      return;
    }
  }

  void on_event(Conn& c, std::uint32_t events) {
    if (c.dead) return;
    if (!c.active) {  // an idle connection the server closed (or wrote to): not usable any more
      close_conn(c);
      return;
    }
    if (c.connecting) {
      if ((events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) == 0) return;
      int err = 0;
      socklen_t len = sizeof err;
      if (::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      if (err != 0) {
        c.last_errno = err;
        ::close(c.fd);
        c.fd = -1;
        c.want_out = false;
        c.connecting = false;
        ++c.address;
        connect(c);
        return;
      }
      c.connecting = false;
    }
    if (c.sending && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) != 0) {
      send(c);
      if (c.dead || !c.active || c.fd < 0) return;
    }
    if ((events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) receive(c);
  }

  // Starts request `tag` on endpoint number `endpoint`: on a kept-alive connection when one is free
  // (sent at once), else on a new one; write(out, endpoint) puts the request's bytes into out.
  template <class Write>
  void begin(std::uint64_t tag, std::size_t endpoint, Write&& write) {
    const std::size_t e = endpoint % endpoints.size();
    Endpoint& ep = endpoints[e];
    Conn* c = nullptr;
    if (!ep.idle.empty()) {
      c = ep.idle.back();
      ep.idle.pop_back();
    } else {
      conns.push_back(std::make_unique<Conn>(cfg.max_body));
      c = conns.back().get();
      c->endpoint = e;
    }
    c->active = true;
    ++active;
    c->tag = tag;
    c->out.clear();
    write(c->out, static_cast<const Endpoint&>(ep));
    c->out_off = 0;
    c->parser.reset();
    c->fresh_retry = false;
    c->guard_on = false;
    c->start = Clock::now();
    c->deadline = c->start + std::max(cfg.timeout, std::chrono::milliseconds(1));
    c->connect_deadline =
        c->start + std::max(std::min(cfg.timeout, cfg.connect_timeout), std::chrono::milliseconds(1));
    c->address = 0;
    c->last_errno = 0;
    if (c->fd >= 0) {
      c->sending = true;
      send(*c);
    } else {
      c->reused = false;
      connect(*c);
    }
    sweep();
  }

  // Deadlines, connect timeouts and the low-speed guard; returns the next time to look.
  Clock::time_point check_times(Clock::time_point now) {
    Clock::time_point next = Clock::time_point::max();
    for (auto& p : conns) {
      Conn& c = *p;
      if (c.dead || !c.active) continue;
      if (now >= c.deadline) {
        end(c, Result::Failure::kTimeout,
            fmt::format("operation timed out after {} milliseconds", cfg.timeout.count()));
        continue;
      }
      if (c.connecting && now >= c.connect_deadline) {
        const Endpoint& e = endpoints[c.endpoint];
        end(c, Result::Failure::kConnect,
            fmt::format("failed to connect to {} port {}: timed out after {} milliseconds", e.target.host,
                        e.target.port, std::min(cfg.timeout, cfg.connect_timeout).count()));
        continue;
      }
      next = std::min(next, c.connecting ? std::min(c.deadline, c.connect_deadline) : c.deadline);
      if (c.guard_on && cfg.low_speed_time.count() > 0) {
        if (now - c.window_start >= cfg.low_speed_time) {
          const double seconds = std::chrono::duration<double>(now - c.window_start).count();
          const std::uint64_t got = c.parser.bytes() - c.window_bytes;
          if (static_cast<double>(got) < static_cast<double>(cfg.low_speed_bytes) * seconds) {
            end(c, Result::Failure::kTooSlow, "response arrived too slowly");
            continue;
          }
          c.window_start = now;
          c.window_bytes = c.parser.bytes();
        }
        next = std::min(next, c.window_start + cfg.low_speed_time);
      }
    }
    return next;
  }
};

Client::Client(ClientConfig config) : impl_(std::make_unique<Impl>()) {
  impl_->cfg = std::move(config);
  if (impl_->cfg.endpoints.empty()) fail(ErrorCode::kUsage, "http1::Client needs an endpoint");
  impl_->ep = ::epoll_create1(EPOLL_CLOEXEC);
  if (impl_->ep < 0) fail(ErrorCode::kNetwork, "epoll_create1: {}", std::strerror(errno));
  for (const auto& t : impl_->cfg.endpoints) {
    Endpoint e;
    e.target = t;
    e.head = fmt::format("POST {}{} HTTP/1.1\r\nHost: {}\r\n{}", t.path, impl_->cfg.route, t.host_header,
                         impl_->cfg.extra_headers);
    impl_->endpoints.push_back(std::move(e));
  }
}

Client::~Client() = default;

void Client::start(std::uint64_t tag, std::size_t endpoint, std::string_view body) {
  impl_->begin(tag, endpoint, [&](std::string& out, const Endpoint& ep) {
    out.reserve(ep.head.size() + 24 + body.size());
    out.append(ep.head);
    out.append("Content-Length: ");
    out.append(std::to_string(body.size()));
    out.append("\r\n\r\n");
    out.append(body);
  });
}

std::vector<std::pair<std::uint64_t, Result>> Client::wait(std::chrono::milliseconds timeout) {
  Impl& m = *impl_;
  if (m.finished.empty() && m.active > 0) {
    const auto now = Clock::now();
    const auto next = m.check_times(now);
    auto until = now + std::max(timeout, std::chrono::milliseconds(0));
    if (next < until) until = next;
    if (m.finished.empty()) {
      const auto ms = std::chrono::ceil<std::chrono::milliseconds>(until - now).count();
      std::array<epoll_event, 64> events{};
      const int n = ::epoll_wait(m.ep, events.data(), static_cast<int>(events.size()),
                                 static_cast<int>(std::clamp<std::int64_t>(ms, 0, 1 << 30)));
      for (int i = 0; i < n; ++i)
        m.on_event(*static_cast<Conn*>(events[static_cast<std::size_t>(i)].data.ptr),
                   events[static_cast<std::size_t>(i)].events);
      (void)m.check_times(Clock::now());
    }
  }
  m.sweep();
  return std::exchange(m.finished, {});
}

std::size_t Client::in_flight() const { return impl_->active + impl_->finished.size(); }

Result Client::request(std::size_t endpoint, std::string_view body) {
  if (in_flight() != 0) fail(ErrorCode::kUsage, "http1::Client::request with requests in flight");
  start(0, endpoint, body);
  return wait_one();
}

Result Client::get(std::size_t endpoint, std::string_view path) {
  if (in_flight() != 0) fail(ErrorCode::kUsage, "http1::Client::get with requests in flight");
  impl_->begin(0, endpoint, [&](std::string& out, const Endpoint& ep) {
    out = fmt::format("GET {} HTTP/1.1\r\nHost: {}\r\n{}\r\n", path.empty() ? std::string_view("/") : path,
                      ep.target.host_header, impl_->cfg.extra_headers);
  });
  return wait_one();
}

Result Client::wait_one() {
  for (;;) {
    auto done = wait(std::chrono::milliseconds(1000));
    if (!done.empty()) return std::move(done.front().second);
  }
}

std::optional<std::int64_t> parse_http_date(std::string_view text) {
  // The three forms differ in separators and order; their tokens do not: a weekday, a month name,
  // a day of 1-2 digits, a year of 2 or 4 digits, hh:mm:ss and (except asctime) "GMT".
  static constexpr std::array<std::string_view, 12> kMonths = {"jan", "feb", "mar", "apr", "may", "jun",
                                                               "jul", "aug", "sep", "oct", "nov", "dec"};
  static constexpr std::array<std::string_view, 7> kDays = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};
  int month = -1;
  int day = -1;
  int year = -1;
  int hh = -1;
  int mm = -1;
  int ss = -1;
  bool weekday = false;
  std::size_t i = 0;
  const auto digits = [](std::string_view t) {
    const std::optional<std::uint64_t> v = t.size() <= 4 ? whole_number(t) : std::nullopt;
    return v ? static_cast<int>(*v) : -1;
  };
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',' || text[i] == '-' || text[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < text.size() && !(text[j] == ' ' || text[j] == ',' || text[j] == '-' || text[j] == '\t')) ++j;
    const std::string_view t = text.substr(i, j - i);
    i = j;
    if (t.empty()) continue;
    if (t.size() == 8 && t[2] == ':' && t[5] == ':' && hh < 0) {
      hh = digits(t.substr(0, 2));
      mm = digits(t.substr(3, 2));
      ss = digits(t.substr(6, 2));
      if (hh < 0 || mm < 0 || ss < 0) return std::nullopt;
    } else if (t[0] >= '0' && t[0] <= '9') {
      const int v = digits(t);
      if (v < 0) return std::nullopt;
      if (t.size() <= 2 && day < 0) {
        day = v;
      } else if ((t.size() == 2 || t.size() == 4) && year < 0) {
        year = t.size() == 2 ? (v < 50 ? 2000 + v : 1900 + v) : v;  // RFC 9110: two-digit years
      } else {
        return std::nullopt;
      }
    } else {
      const std::string low = ascii::lower(t);
      if (low == "gmt" || low == "utc") continue;
      const std::string_view head = std::string_view(low).substr(0, 3);
      if (t.size() == 3 && month < 0 && std::find(kMonths.begin(), kMonths.end(), head) != kMonths.end()) {
        month = static_cast<int>(std::find(kMonths.begin(), kMonths.end(), head) - kMonths.begin()) + 1;
      } else if (!weekday && std::find(kDays.begin(), kDays.end(), head) != kDays.end()) {
        weekday = true;
      } else {
        return std::nullopt;
      }
    }
  }
  if (month < 0 || day < 1 || day > 31 || year < 1970 || hh > 23 || mm > 59 || ss > 60 || hh < 0)
    return std::nullopt;
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hh;
  tm.tm_min = mm;
  tm.tm_sec = ss;
  return static_cast<std::int64_t>(::timegm(&tm));  // UTC, whatever the TZ
}

}  // namespace numcheck::llm::http1
