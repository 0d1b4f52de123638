#include "llm/http_backend.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include <curl/curl.h>
#include <fmt/format.h>

#include "core/error.hpp"
#include "core/version.hpp"
#include "io/json.hpp"

namespace numcheck::llm {

namespace {

// The length of the spelling of `secret` that starts at text[pos] with JSON string escapes for
// some of its characters (`\/`, `\u0073`, a surrogate pair for a character outside the BMP), or 0.
std::size_t escaped_match(std::string_view text, std::size_t pos, std::string_view secret) {
  const auto hex4 = [&](std::size_t at) -> long {
    if (at + 4 > text.size()) return -1;
    long v = 0;
    for (std::size_t k = at; k < at + 4; ++k) {
      const char c = text[k];
      const int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
      if (d < 0) return -1;
      v = v * 16 + d;
    }
    return v;
  };
  std::size_t i = pos;
  std::size_t k = 0;
  while (k < secret.size()) {
    if (i >= text.size()) return 0;
    if (text[i] != '\\') {
      if (text[i] != secret[k]) return 0;
      ++i;
      ++k;
      continue;
    }
    if (i + 1 >= text.size()) return 0;
    char plain = 0;
    switch (text[i + 1]) {
      case '"':
        plain = '"';
        break;
      case '\\':
        plain = '\\';
        break;
      case '/':
        plain = '/';
        break;
      case 'b':
        plain = '\b';
        break;
      case 'f':
        plain = '\f';
        break;
      case 'n':
        plain = '\n';
        break;
      case 'r':
        plain = '\r';
        break;
      case 't':
        plain = '\t';
        break;
      default:
        break;
    }
    if (plain != 0) {
      if (secret[k] != plain) return 0;
      i += 2;
      ++k;
      continue;
    }
    if (text[i + 1] != 'u') return 0;
    long cp = hex4(i + 2);
    if (cp < 0) return 0;
    i += 6;
    if (cp >= 0xD800 && cp < 0xDC00) {  // a high surrogate: its low half must follow
      if (i + 1 >= text.size() || text[i] != '\\' || text[i + 1] != 'u') return 0;
      const long low = hex4(i + 2);
      if (low < 0xDC00 || low >= 0xE000) return 0;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
      i += 6;
    }
    char utf8[4];
    std::size_t n = 0;
    if (cp < 0x80) {
      utf8[n++] = static_cast<char>(cp);
    } else if (cp < 0x800) {
      utf8[n++] = static_cast<char>(0xC0 | (cp >> 6));
      utf8[n++] = static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      utf8[n++] = static_cast<char>(0xE0 | (cp >> 12));
      utf8[n++] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      utf8[n++] = static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      utf8[n++] = static_cast<char>(0xF0 | (cp >> 18));
      utf8[n++] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      utf8[n++] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      utf8[n++] = static_cast<char>(0x80 | (cp & 0x3F));
    }
    for (std::size_t b = 0; b < n; ++b, ++k) {
      if (k >= secret.size() || secret[k] != utf8[b]) return 0;
    }
  }
  return i - pos;
}

}  // namespace

std::string redact_secret(std::string text, std::string_view secret) {
  if (secret.empty()) return text;
  constexpr std::string_view kMask = "[redacted]";
  std::size_t pos = 0;
  while ((pos = text.find(secret, pos)) != std::string::npos) {
    text.replace(pos, secret.size(), kMask);
    pos += kMask.size();
  }
  // The same key spelt with JSON escapes (a server's JSON encoder may write "/" as "\/", PHP's
  // default, or any character as \uXXXX): masked in the raw text too, so that the text decoded
  // from it (an error message, an answer's content) never holds the key either.
  if (text.find('\\') == std::string::npos) return text;
  std::string out;
  std::size_t copied = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' && text[i] != secret[0]) continue;
    const std::size_t n = escaped_match(text, i, secret);
    if (n == 0) continue;
    out.append(text, copied, i - copied);
    out += kMask;
    i += n - 1;
    copied = i + 1;
  }
  if (copied == 0) return text;
  out.append(text, copied, std::string::npos);
  return out;
}

namespace {

std::string redact(std::string text, const std::string& secret) {
  return redact_secret(std::move(text), secret);
}

// One line, bounded: server error texts go into records and error messages.
std::string one_line(std::string_view s, std::size_t max = 500) {
  std::string out;
  out.reserve(std::min(s.size(), max));
  for (char c : s) {
    if (out.size() >= max) {
      out += "...";
      break;
    }
    out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  }
  return out;
}

std::string strip_trailing_slash(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

// The server root for non-OpenAI routes (/props, /version): the base URL without a final "/v1".
std::string root_of(const std::string& base) {
  if (base.size() >= 3 && base.compare(base.size() - 3, 3, "/v1") == 0)
    return base.substr(0, base.size() - 3);
  return base;
}

// curl_global_init, once (it is not thread-safe in every libcurl version).
void init_curl() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
  std::string body;
  std::size_t limit = 0;
  bool too_large = false;
  // A plain string and a flag, not std::optional<std::string>: g++ 12 -O2 reports a false
  // -Wmaybe-uninitialized on the optional's destructor here.
  std::string retry_after;
  bool has_retry_after = false;
  char errbuf[CURL_ERROR_SIZE] = {0};
  std::chrono::steady_clock::time_point start;
  // The low-speed guard (HttpConfig::low_speed_bytes/time), armed by the first header line.
  std::size_t low_speed_bytes = 0;
  std::chrono::milliseconds low_speed_time{0};
  bool started = false;
  bool too_slow = false;
  std::chrono::steady_clock::time_point window_start;
  curl_off_t window_bytes = 0;
};

// libcurl's progress callback (at least once a second): aborts a response that has begun but
// arrives slower than the guard allows. libcurl's own CURLOPT_LOW_SPEED_LIMIT/TIME would also
// count the silent wait for a non-streamed answer, which can rightly take minutes.
int on_progress(void* user, curl_off_t, curl_off_t dlnow, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  if (!t->started || t->low_speed_time.count() <= 0) return 0;
  const auto now = std::chrono::steady_clock::now();
  if (t->window_start == std::chrono::steady_clock::time_point{}) {
    t->window_start = now;
    t->window_bytes = dlnow;
    return 0;
  }
  if (now - t->window_start < t->low_speed_time) return 0;
  const double seconds = std::chrono::duration<double>(now - t->window_start).count();
  if (static_cast<double>(dlnow - t->window_bytes) < static_cast<double>(t->low_speed_bytes) * seconds) {
    t->too_slow = true;
    return 1;  // aborts the transfer (CURLE_ABORTED_BY_CALLBACK)
  }
  t->window_start = now;
  t->window_bytes = dlnow;
  return 0;
}

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t bytes = size * n;
  if (t->body.size() + bytes > t->limit) {
    t->too_large = true;
    return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
  }
  t->body.append(data, bytes);
  return bytes;
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t bytes = size * n;
  t->started = true;
  std::string_view line(data, bytes);
  constexpr std::string_view kName = "retry-after:";
  if (line.size() > kName.size()) {
    bool match = true;
    for (std::size_t i = 0; i < kName.size(); ++i) {
      const char c = line[i];
      if (static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c) != kName[i]) {
        match = false;
        break;
      }
    }
    if (match) {
      std::string_view v = line.substr(kName.size());
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
      while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' ')) v.remove_suffix(1);
      t->retry_after = std::string(v);
      t->has_retry_after = true;
    }
  }
  return bytes;
}

struct Response {
  CURLcode code = CURLE_OK;
  long status = 0;
  std::string body;
  bool too_large = false;
  bool too_slow = false;
  std::optional<std::string> retry_after;
  std::string curl_error;
  std::chrono::milliseconds latency{0};
};

class Handle {
 public:
  Handle() {
    init_curl();
    h_ = curl_easy_init();
    if (h_ == nullptr) fail(ErrorCode::kNetwork, "libcurl: cannot create a handle");
  }
  ~Handle() {
    if (h_ != nullptr) curl_easy_cleanup(h_);
    if (headers_ != nullptr) curl_slist_free_all(headers_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  void set_low_speed(std::size_t bytes, std::chrono::milliseconds time) {
    low_speed_bytes_ = bytes;
    low_speed_time_ = time;
  }

  void set_headers(const std::string& api_key, bool json_body) {
    secret_ = api_key;
    if (headers_ != nullptr) curl_slist_free_all(headers_);
    headers_ = nullptr;
    headers_ = curl_slist_append(headers_, "Accept: application/json");
    if (json_body) headers_ = curl_slist_append(headers_, "Content-Type: application/json");
    headers_ = curl_slist_append(headers_, "Expect:");
    if (!api_key.empty())
      headers_ = curl_slist_append(headers_, ("Authorization: Bearer " + api_key).c_str());
  }

  // Sets the handle up for one request: POST (body != nullptr; the bytes must outlive the
  // transfer) or GET, writing into *t.
  void prepare(const std::string& url, const std::string* body, std::chrono::milliseconds timeout,
               std::chrono::milliseconds connect_timeout, Transfer* t) {
    t->errbuf[0] = 0;
    curl_easy_setopt(h_, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h_, CURLOPT_TIMEOUT_MS, static_cast<long>(std::max<std::int64_t>(1, timeout.count())));
    curl_easy_setopt(
        h_, CURLOPT_CONNECTTIMEOUT_MS,
        static_cast<long>(std::max<std::int64_t>(1, std::min(timeout, connect_timeout).count())));
    curl_easy_setopt(h_, CURLOPT_TCP_KEEPALIVE, 1L);
    // A body announced larger than the limit fails at once (CURLE_FILESIZE_EXCEEDED); one that
    // grows past it without an announced size is cut by on_body.
    curl_easy_setopt(h_, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(t->limit));
    curl_easy_setopt(h_, CURLOPT_WRITEFUNCTION, &on_body);
    curl_easy_setopt(h_, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(h_, CURLOPT_HEADERFUNCTION, &on_header);
    curl_easy_setopt(h_, CURLOPT_HEADERDATA, t);
    curl_easy_setopt(h_, CURLOPT_ERRORBUFFER, t->errbuf);
    curl_easy_setopt(h_, CURLOPT_HTTPHEADER, headers_);
    curl_easy_setopt(h_, CURLOPT_USERAGENT, (std::string("numcheck/") + kVersion).c_str());
    curl_easy_setopt(h_, CURLOPT_PRIVATE, t);
    curl_easy_setopt(h_, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h_, CURLOPT_XFERINFOFUNCTION, &on_progress);
    curl_easy_setopt(h_, CURLOPT_XFERINFODATA, t);
    t->low_speed_bytes = low_speed_bytes_;
    t->low_speed_time = low_speed_time_;
    t->started = false;
    t->too_slow = false;
    t->window_start = {};
    t->window_bytes = 0;
    if (body != nullptr) {
      curl_easy_setopt(h_, CURLOPT_POST, 1L);
      curl_easy_setopt(h_, CURLOPT_POSTFIELDS, body->data());
      curl_easy_setopt(h_, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
    } else {
      curl_easy_setopt(h_, CURLOPT_HTTPGET, 1L);
    }
    t->start = std::chrono::steady_clock::now();
  }

  Response finish(CURLcode code, Transfer& t) {
    Response r;
    r.code = code;
    r.latency =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t.start);
    curl_easy_getinfo(h_, CURLINFO_RESPONSE_CODE, &r.status);
    // Every string from the server is masked here, before anything parses, cuts or stores it: a
    // server echoing the key never puts it into records, run.json, the cache or an error.
    r.body = redact(std::move(t.body), secret_);
    r.too_large = t.too_large || code == CURLE_FILESIZE_EXCEEDED;
    r.too_slow = t.too_slow;
    if (t.has_retry_after) r.retry_after = redact(std::move(t.retry_after), secret_);
    r.curl_error =
        redact(t.errbuf[0] != 0 ? std::string(t.errbuf) : std::string(curl_easy_strerror(code)), secret_);
    t.body.clear();
    t.too_large = false;
    t.retry_after.clear();
    t.has_retry_after = false;
    return r;
  }

  // POST (body != nullptr) or GET, blocking.
  Response perform(const std::string& url, const std::string* body, std::chrono::milliseconds timeout,
                   std::chrono::milliseconds connect_timeout, std::size_t limit) {
    Transfer t;
    t.limit = limit;
    prepare(url, body, timeout, connect_timeout, &t);
    const CURLcode code = curl_easy_perform(h_);
    return finish(code, t);
  }

  [[nodiscard]] CURL* get() const { return h_; }

 private:
  CURL* h_ = nullptr;
  curl_slist* headers_ = nullptr;
  std::string secret_;  // the API key, masked out of everything received
  std::size_t low_speed_bytes_ = 0;
  std::chrono::milliseconds low_speed_time_{0};
};

bool retryable_curl(CURLcode c) {
  switch (c) {
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_BAD_CONTENT_ENCODING:
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_SSL_CONNECT_ERROR:
    // A reply that is not HTTP at all (libcurl reads it as HTTP/0.9 and refuses it): a garbled
    // answer of a server whose URL was checked as http(s) when the run began, so worth a retry.
    case CURLE_UNSUPPORTED_PROTOCOL:
      return true;
    default:
      return false;
  }
}

std::string request_path(Api api) {
  return api == Api::kChat ? "/chat/completions"
                           : (api == Api::kCompletions ? "/completions" : "/embeddings");
}

class HttpBackend;

// The attempt a finished transfer amounts to.
Attempt classify(Response r, const HttpConfig& cfg) {
  Attempt a;
  a.latency = r.latency;
  a.http_status = r.status;
  if (r.code != CURLE_OK) {
    if (r.too_large) {
      a.status = Attempt::Status::kFatal;
      a.error = fmt::format("response body larger than {} bytes (--max-response-mb)", cfg.max_response_bytes);
    } else if (r.too_slow) {
      a.status = Attempt::Status::kRetryable;
      a.error = fmt::format("response arrived at under {} bytes/s for {:.3g} s (stalled server)",
                            cfg.low_speed_bytes, static_cast<double>(cfg.low_speed_time.count()) / 1000.0);
    } else if (r.code == CURLE_OPERATION_TIMEDOUT) {
      a.status = Attempt::Status::kRetryable;
      a.error = fmt::format("timeout after {:.3g} s", static_cast<double>(cfg.timeout.count()) / 1000.0);
    } else {
      a.status = retryable_curl(r.code) ? Attempt::Status::kRetryable : Attempt::Status::kFatal;
      a.error = fmt::format("connection error: {}", one_line(r.curl_error));
    }
    a.error = redact(a.error, cfg.api_key);
    return a;
  }
  if (r.retry_after) a.retry_after_s = parse_retry_after(*r.retry_after);
  if (r.status >= 200 && r.status < 300) {
    ParsedBody p = parse_completion_body(r.body, cfg.api);
    if (p.ok) {
      a.status = Attempt::Status::kOk;
      a.completion = std::move(p.completion);
      // The raw body was masked (Handle::finish), escapes included; the decoded text is checked
      // once more, so that no spelling the raw pass might not know reaches a record or the cache.
      Completion& c = a.completion;
      if (!cfg.api_key.empty()) {
        c.content = redact(std::move(c.content), cfg.api_key);
        if (c.reasoning) c.reasoning = redact(std::move(*c.reasoning), cfg.api_key);
        c.model = redact(std::move(c.model), cfg.api_key);
      }
      return a;
    }
    a.status = Attempt::Status::kRetryable;
    a.error = redact("malformed response: " + p.error, cfg.api_key);
    return a;
  }
  const std::string msg = error_message_from_body(r.body);
  a.error = redact(fmt::format("HTTP {}{}{}", r.status, msg.empty() ? "" : ": ", msg), cfg.api_key);
  a.status = (r.status == 429 || r.status >= 500) ? Attempt::Status::kRetryable : Attempt::Status::kFatal;
  return a;
}

class HttpSession : public Session {
 public:
  explicit HttpSession(const HttpConfig& cfg) : cfg_(cfg) { handles_.resize(cfg_.endpoints.size()); }

  Attempt send(const Request& request, std::size_t endpoint) override {
    const std::size_t e = endpoint % cfg_.endpoints.size();
    if (!handles_[e]) {
      handles_[e] = std::make_unique<Handle>();
      handles_[e]->set_headers(cfg_.api_key, true);
      handles_[e]->set_low_speed(cfg_.low_speed_bytes, cfg_.low_speed_time);
    }
    const std::string url = strip_trailing_slash(cfg_.endpoints[e]) + request_path(cfg_.api);
    return classify(
        handles_[e]->perform(url, &request.body, cfg_.timeout, cfg_.connect_timeout, cfg_.max_response_bytes),
        cfg_);
  }

 private:
  const HttpConfig& cfg_;
  std::vector<std::unique_ptr<Handle>> handles_;
};

// Many transfers in flight on one thread: libcurl's multi interface, which also shares one
// connection cache between them (keep-alive).
class HttpAsyncSession : public AsyncSession {
 public:
  explicit HttpAsyncSession(const HttpConfig& cfg) : cfg_(cfg) {
    init_curl();
    multi_ = curl_multi_init();
    if (multi_ == nullptr) fail(ErrorCode::kNetwork, "libcurl: cannot create a multi handle");
    curl_multi_setopt(multi_, CURLMOPT_MAX_HOST_CONNECTIONS, 0L);
    for (const auto& e : cfg_.endpoints) urls_.push_back(strip_trailing_slash(e) + request_path(cfg_.api));
  }
  ~HttpAsyncSession() override {
    for (auto& [h, x] : active_) curl_multi_remove_handle(multi_, h);
    active_.clear();
    idle_.clear();
    curl_multi_cleanup(multi_);
  }
  HttpAsyncSession(const HttpAsyncSession&) = delete;
  HttpAsyncSession& operator=(const HttpAsyncSession&) = delete;

  void start(std::uint64_t tag, const Request& request, std::size_t endpoint) override {
    auto x = std::make_unique<Xfer>();
    if (!idle_.empty()) {
      x->handle = std::move(idle_.back());
      idle_.pop_back();
    } else {
      x->handle = std::make_unique<Handle>();
      x->handle->set_headers(cfg_.api_key, true);
      x->handle->set_low_speed(cfg_.low_speed_bytes, cfg_.low_speed_time);
    }
    x->tag = tag;
    x->body = request.body;
    x->t.limit = cfg_.max_response_bytes;
    x->handle->prepare(urls_[endpoint % urls_.size()], &x->body, cfg_.timeout, cfg_.connect_timeout, &x->t);
    CURL* h = x->handle->get();
    active_.emplace(h, std::move(x));
    curl_multi_add_handle(multi_, h);
  }

  std::vector<std::pair<std::uint64_t, Attempt>> wait(std::chrono::milliseconds timeout) override {
    std::vector<std::pair<std::uint64_t, Attempt>> done;
    int running = 0;
    curl_multi_perform(multi_, &running);
    collect(done);
    if (done.empty() && !active_.empty()) {
      curl_multi_poll(multi_, nullptr, 0, static_cast<int>(std::max<std::int64_t>(0, timeout.count())),
                      nullptr);
      curl_multi_perform(multi_, &running);
      collect(done);
    }
    return done;
  }

  [[nodiscard]] std::size_t in_flight() const override { return active_.size(); }

  void send_started() override {
    int running = 0;
    curl_multi_perform(multi_, &running);  // transfers that finish here wait in curl's queue
  }

 private:
  struct Xfer {
    std::uint64_t tag = 0;
    std::unique_ptr<Handle> handle;
    std::string body;
    Transfer t;
  };

  void collect(std::vector<std::pair<std::uint64_t, Attempt>>& done) {
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL* h = msg->easy_handle;
      const CURLcode code = msg->data.result;
      curl_multi_remove_handle(multi_, h);
      auto it = active_.find(h);
      if (it == active_.end()) continue;
      std::unique_ptr<Xfer> x = std::move(it->second);
      active_.erase(it);
      done.emplace_back(x->tag, classify(x->handle->finish(code, x->t), cfg_));
      idle_.push_back(std::move(x->handle));
    }
  }

  const HttpConfig& cfg_;
  CURLM* multi_ = nullptr;
  std::vector<std::string> urls_;
  std::unordered_map<CURL*, std::unique_ptr<Xfer>> active_;
  std::vector<std::unique_ptr<Handle>> idle_;
};

io::Json parse_or_null(const std::string& body) {
  io::Json j = io::Json::parse(body, nullptr, false);
  return j.is_discarded() ? io::Json() : j;
}

class HttpBackend : public Backend {
 public:
  explicit HttpBackend(HttpConfig cfg) : cfg_(std::move(cfg)) {}
  [[nodiscard]] std::string kind() const override { return "openai"; }
  [[nodiscard]] bool simulated() const override { return false; }
  [[nodiscard]] Api api() const override { return cfg_.api; }
  [[nodiscard]] std::vector<std::string> endpoints() const override {
    std::vector<std::string> out;
    for (const auto& e : cfg_.endpoints) out.push_back(strip_credentials(e));
    return out;
  }
  [[nodiscard]] std::unique_ptr<Session> open_session() override {
    return std::make_unique<HttpSession>(cfg_);
  }
  [[nodiscard]] std::unique_ptr<AsyncSession> open_async_session() override {
    return std::make_unique<HttpAsyncSession>(cfg_);
  }

  [[nodiscard]] ServerInfo probe() override {
    ServerInfo s;
    s.info = io::OrderedJson::object();
    io::OrderedJson per = io::OrderedJson::array();
    std::optional<io::Json> first_identity;
    std::string first_endpoint;
    const auto probe_timeout = std::min(cfg_.timeout, std::chrono::milliseconds(30000));
    for (const auto& ep : cfg_.endpoints) {
      const std::string shown = strip_credentials(ep);
      const std::string base = strip_trailing_slash(ep);
      Handle h;
      h.set_headers(cfg_.api_key, false);
      io::OrderedJson info = io::OrderedJson::object();
      info["endpoint"] = shown;
      // GET /models: the one probe that must work at the connection level.
      Response models = probe_get(h, base + "/models", probe_timeout);
      if (models.code != CURLE_OK) {
        fail(ErrorCode::kNetwork, "cannot reach endpoint {}: {}", shown,
             redact(one_line(models.curl_error), cfg_.api_key));
      }
      io::Json model_entry;
      std::vector<std::string> ids;
      if (models.status >= 200 && models.status < 300) {
        io::Json j = parse_or_null(models.body);
        if (j.is_object() && j.contains("data") && j["data"].is_array()) {
          for (const auto& m : j["data"]) {
            if (!m.is_object() || !m.contains("id") || !m["id"].is_string()) continue;
            ids.push_back(m["id"].get<std::string>());
            if (ids.back() == cfg_.model) model_entry = m;
          }
        }
        io::Json shown_models = j;
        info["models"] = shown_models.is_null() ? io::Json(one_line(models.body)) : shown_models;
      } else if (models.status == 401 || models.status == 403) {
        fail(ErrorCode::kNetwork, "endpoint {} refused the credentials (HTTP {}): {}", shown, models.status,
             redact(error_message_from_body(models.body), cfg_.api_key));
      } else {
        const std::string msg = redact(error_message_from_body(models.body), cfg_.api_key);
        info["models"] = fmt::format("HTTP {}{}{}", models.status, msg.empty() ? "" : ": ", msg);
      }
      if (model_entry.is_null() && ids.size() == 1) {
        // llama-server serves one model whatever name a request gives; its id is the file/alias.
        io::Json j = parse_or_null(models.body);
        model_entry = j["data"][0];
      }
      std::string reported = model_entry.is_object() ? model_entry["id"].get<std::string>() : cfg_.model;
      info["model_listed"] = std::find(ids.begin(), ids.end(), cfg_.model) != ids.end();
      // llama-server: GET /props (build_info, model_path); vLLM: GET /version.
      const std::string root = root_of(base);
      io::Json build;
      io::Json model_path;
      Response props = probe_get(h, root + "/props", probe_timeout);
      if (props.code == CURLE_OK && props.status >= 200 && props.status < 300) {
        io::Json p = parse_or_null(props.body);
        if (p.is_object()) {
          info["props"] = p;
          if (p.contains("build_info")) build = p["build_info"];
          if (p.contains("model_path")) model_path = p["model_path"];
        }
      }
      if (build.is_null()) {
        Response ver = probe_get(h, root + "/version", probe_timeout);
        if (ver.code == CURLE_OK && ver.status >= 200 && ver.status < 300) {
          io::Json v = parse_or_null(ver.body);
          if (v.is_object()) {
            info["version"] = v;
            if (v.contains("version")) build = v["version"];
          }
        }
      }
      io::Json entry = model_entry;
      if (entry.is_object()) entry.erase("created");  // a timestamp some servers set per call
      io::Json identity = {
          {"model", reported}, {"model_entry", entry}, {"build", build}, {"model_path", model_path}};
      info["identity"] = identity;
      per.push_back(info);
      if (!first_identity) {
        first_identity = identity;
        first_endpoint = shown;
        s.model = reported;
      } else if (*first_identity != identity) {
        fail(ErrorCode::kUsage,
             "endpoints {} and {} serve different models or builds ({} vs {}); run them separately",
             first_endpoint, shown, io::to_line(*first_identity), io::to_line(identity));
      }
    }
    s.identity = *first_identity;
    s.info["endpoints"] = per;
    s.info["http_client"] = "libcurl";
    return s;
  }

 private:
 private:
  // A GET of one endpoint's probe route (bodies up to 4 MiB); the handle keeps its connection.
  Response probe_get(Handle& h, const std::string& url, std::chrono::milliseconds timeout) const {
    return h.perform(url, nullptr, timeout, cfg_.connect_timeout, std::size_t{4} << 20);
  }

  HttpConfig cfg_;
};

}  // namespace

std::string strip_credentials(std::string_view url) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  const std::size_t host_start = scheme + 3;
  const std::size_t path = url.find('/', host_start);
  const std::size_t at = url.rfind('@', path == std::string_view::npos ? url.size() : path);
  if (at == std::string_view::npos || at < host_start) return std::string(url);
  return std::string(url.substr(0, host_start)) + std::string(url.substr(at + 1));
}

std::optional<std::string> base_of_route_url(std::string_view url) {
  std::string u(url);
  if (const std::size_t q = u.find_first_of("?#"); q != std::string::npos) u.resize(q);
  u = strip_trailing_slash(std::move(u));
  for (const std::string_view route : {"/chat/completions", "/completions", "/embeddings", "/models"}) {
    if (u.size() > route.size() && u.compare(u.size() - route.size(), route.size(), route) == 0) {
      const std::string base = u.substr(0, u.size() - route.size());
      if (base.find("://") != std::string::npos && base.find("://") + 3 < base.size()) return base;
    }
  }
  return std::nullopt;
}

HttpReply post_json(const std::string& url, const std::string& body, const std::string& api_key,
                    std::chrono::milliseconds timeout, std::size_t max_response_bytes) {
  Handle h;
  h.set_headers(api_key, true);
  Response r = h.perform(url, &body, timeout, std::chrono::milliseconds(10000), max_response_bytes);
  HttpReply out;
  out.status = r.status;
  if (r.code != CURLE_OK) {
    out.retryable = !r.too_large && (r.code == CURLE_OPERATION_TIMEDOUT || retryable_curl(r.code));
    out.error = redact(r.too_large ? fmt::format("response body larger than {} bytes", max_response_bytes)
                                   : fmt::format("connection error: {}", one_line(r.curl_error)),
                       api_key);
    return out;
  }
  if (r.retry_after) out.retry_after_s = parse_retry_after(*r.retry_after);
  if (r.status >= 200 && r.status < 300) {
    out.ok = true;
    out.body = std::move(r.body);
    return out;
  }
  const std::string msg = error_message_from_body(r.body);
  out.error = redact(fmt::format("HTTP {}{}{}", r.status, msg.empty() ? "" : ": ", msg), api_key);
  out.retryable = r.status == 429 || r.status >= 500;
  return out;
}

std::unique_ptr<Backend> make_http_backend(HttpConfig config) {
  if (config.endpoints.empty()) fail(ErrorCode::kUsage, "give --endpoint URL (or --system reference)");
  if (config.model.empty()) fail(ErrorCode::kUsage, "--endpoint needs --model NAME");
  for (const auto& e : config.endpoints) {
    if (!(e.rfind("http://", 0) == 0 || e.rfind("https://", 0) == 0) || e.size() <= 8) {
      fail(ErrorCode::kUsage, "--endpoint '{}' is not an http:// or https:// URL", strip_credentials(e));
    }
    if (const std::optional<std::string> base = base_of_route_url(e)) {
      fail(ErrorCode::kUsage,
           "--endpoint '{}' is the URL of one route; give the base URL the routes hang off: --endpoint {}",
           strip_credentials(e), strip_credentials(*base));
    }
  }
  return std::make_unique<HttpBackend>(std::move(config));
}

namespace detail {

// The fast path of parse_completion_body for a chat or completions body: simdjson's walk
// (io::FastLineParser: the values nlohmann would parse, or a refusal) and the fields read from the
// flat values. It gives only successes: a body it does not accept (pretty-printed or with control
// bytes, \uD8xx escapes, duplicate keys, invalid JSON) or that is not a completion is left to the
// DOM path, which decides and words the error. So both paths give the same result for every body.
bool parse_completion_fast(std::string_view body, Api api, Completion& out) {
  // simdjson's parser keeps room for the largest document it has parsed (about 14 bytes per byte)
  // for as long as its thread lives: larger bodies, rare, take the DOM path, whose memory goes
  // with the body.
  constexpr std::size_t kMaxFastBody = std::size_t{1} << 20;
  if (api == Api::kEmbeddings || body.size() > kMaxFastBody) return false;
  // Whitespace around the value (servers often end the body with a newline) means nothing in JSON;
  // the walk takes no control byte, so it goes before.
  const std::size_t from = body.find_first_not_of(" \t\r\n");
  if (from == std::string_view::npos) return false;
  body = body.substr(from, body.find_last_not_of(" \t\r\n") - from + 1);
  thread_local io::FastLineParser parser;
  thread_local std::vector<io::FlatValue> v;
  if (!parser.walk(body, v)) return false;
  const io::LineRecord root(v, 0, "");
  if (root.contains("error")) return false;
  const io::FlatValue* choices = root.find("choices");
  if (choices == nullptr || !choices->is_array()) return false;
  const auto first = static_cast<std::size_t>(choices - v.data()) + 1;
  if (first >= choices->end || !v[first].is_object()) return false;
  const io::LineRecord c(v, first, "");
  if (api == Api::kChat) {
    const io::FlatValue* msg = c.find("message");
    if (msg == nullptr || !msg->is_object()) return false;
    const io::LineRecord m(v, static_cast<std::size_t>(msg - v.data()), "");
    const io::FlatValue* content = m.find("content");
    if (content != nullptr && content->is_string()) {
      out.content.assign(content->text);
    } else if (content != nullptr && !content->is_null()) {
      return false;
    }
    for (const char* key : {"reasoning_content", "reasoning"}) {
      if (const io::FlatValue* r = m.find(key); r != nullptr && r->is_string()) {
        out.reasoning.emplace(r->text);
        break;
      }
    }
  } else {
    const io::FlatValue* text = c.find("text");
    if (text == nullptr || !text->is_string()) return false;
    out.content.assign(text->text);
  }
  const auto text_of = [](const io::FlatValue* f, std::string& to) {
    if (f != nullptr && f->is_string()) to.assign(f->text);
  };
  const auto object_of = [&](const io::FlatValue* f, io::Json& to) {
    if (f != nullptr && f->is_object()) to = io::unflatten(v, static_cast<std::size_t>(f - v.data()));
  };
  text_of(c.find("finish_reason"), out.finish_reason);
  object_of(root.find("usage"), out.usage);
  object_of(root.find("timings"), out.timings);
  text_of(root.find("model"), out.model);
  text_of(root.find("system_fingerprint"), out.system_fingerprint);
  return true;
}

}  // namespace detail

ParsedBody parse_completion_body(std::string_view body, Api api) {
  ParsedBody p;
  if (detail::parse_completion_fast(body, api, p.completion)) {
    p.ok = true;
    return p;
  }
  return detail::parse_completion_dom(body, api);
}

namespace {

// An embeddings body: {"data": [{"index": k, "embedding": [numbers...]}...], "model": ...}. One
// entry (one input text): content is its vector. Several (a batch, "input" an array): content is
// the array of their vectors in "index" order (array order when no entry has one).
ParsedBody parse_embeddings_dom(const io::Json& j) {
  ParsedBody p;
  auto data = j.find("data");
  if (data == j.end() || !data->is_array() || data->empty()) {
    p.error = "no data[0].embedding array";
    return p;
  }
  const std::size_t n = data->size();
  std::vector<const io::Json*> by_index(n, nullptr);
  for (std::size_t k = 0; k < n; ++k) {
    const io::Json& d = (*data)[k];
    if (!d.is_object() || !d.contains("embedding") || !d["embedding"].is_array() || d["embedding"].empty()) {
      p.error = fmt::format("no data[{}].embedding array", k);
      return p;
    }
    for (const auto& x : d["embedding"]) {
      if (!x.is_number() || !std::isfinite(x.get<double>())) {
        p.error = fmt::format("data[{}].embedding holds a value that is not a finite number", k);
        return p;
      }
    }
    std::size_t at = k;
    if (n > 1 && d.contains("index")) {
      const io::Json& ix = d["index"];
      if (!ix.is_number_unsigned() || ix.get<std::uint64_t>() >= n ||
          by_index[ix.get<std::size_t>()] != nullptr) {
        p.error = fmt::format("data[{}].index is not a distinct index below {}", k, n);
        return p;
      }
      at = ix.get<std::size_t>();
    } else if (by_index[at] != nullptr) {
      p.error = fmt::format("data[{}].index is not a distinct index below {}", k, n);
      return p;
    }
    by_index[at] = &d["embedding"];
  }
  if (n == 1) {
    p.completion.content = by_index[0]->dump();
  } else {
    std::string& c = p.completion.content;
    c = "[";
    for (std::size_t k = 0; k < n; ++k) {
      if (k > 0) c += ',';
      c += by_index[k]->dump();
    }
    c += ']';
  }
  p.completion.finish_reason = "stop";
  if (auto u = j.find("usage"); u != j.end() && u->is_object()) p.completion.usage = *u;
  if (auto m = j.find("model"); m != j.end() && m->is_string()) p.completion.model = m->get<std::string>();
  p.ok = true;
  return p;
}

// A chat or completions body: the first choice's text, with finish reason, usage, timings, model.
ParsedBody parse_choices_dom(const io::Json& j, Api api) {
  ParsedBody p;
  auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array() || choices->empty() || !(*choices)[0].is_object()) {
    p.error = "no choices";
    return p;
  }
  const io::Json& c = (*choices)[0];
  Completion& out = p.completion;
  if (api == Api::kChat) {
    auto msg = c.find("message");
    if (msg == c.end() || !msg->is_object()) {
      p.error = "choices[0] has no message";
      return p;
    }
    auto content = msg->find("content");
    if (content != msg->end() && content->is_string()) {
      out.content = content->get<std::string>();
    } else if (content != msg->end() && !content->is_null()) {
      p.error = "choices[0].message.content is not a string";
      return p;
    }
    for (const char* key : {"reasoning_content", "reasoning"}) {
      auto r = msg->find(key);
      if (r != msg->end() && r->is_string()) {
        out.reasoning = r->get<std::string>();
        break;
      }
    }
  } else {
    auto text = c.find("text");
    if (text == c.end() || !text->is_string()) {
      p.error = "choices[0] has no text";
      return p;
    }
    out.content = text->get<std::string>();
  }
  if (auto fr = c.find("finish_reason"); fr != c.end() && fr->is_string())
    out.finish_reason = fr->get<std::string>();
  if (auto u = j.find("usage"); u != j.end() && u->is_object()) out.usage = *u;
  if (auto t = j.find("timings"); t != j.end() && t->is_object()) out.timings = *t;
  if (auto m = j.find("model"); m != j.end() && m->is_string()) out.model = m->get<std::string>();
  if (auto f = j.find("system_fingerprint"); f != j.end() && f->is_string())
    out.system_fingerprint = f->get<std::string>();
  p.ok = true;
  return p;
}

}  // namespace

ParsedBody detail::parse_completion_dom(std::string_view body, Api api) {
  ParsedBody p;
  io::Json j = io::Json::parse(body, nullptr, false);
  if (j.is_discarded()) {
    p.error = "not JSON (" + one_line(body.substr(0, 80)) + ")";
    return p;
  }
  if (!j.is_object()) {
    p.error = "not a JSON object";
    return p;
  }
  if (j.contains("error")) {
    p.error = "error object: " + error_message_from_body(body);
    return p;
  }
  return api == Api::kEmbeddings ? parse_embeddings_dom(j) : parse_choices_dom(j, api);
}

std::string error_message_from_body(std::string_view body) {
  io::Json j = io::Json::parse(body, nullptr, false);
  if (!j.is_discarded() && j.is_object()) {
    auto e = j.find("error");
    if (e != j.end()) {
      if (e->is_string()) return one_line(e->get<std::string>());
      if (e->is_object()) {
        auto m = e->find("message");
        if (m != e->end() && m->is_string()) return one_line(m->get<std::string>());
      }
      return one_line(e->dump());
    }
    auto m = j.find("message");
    if (m != j.end() && m->is_string()) return one_line(m->get<std::string>());
    auto d = j.find("detail");
    if (d != j.end()) return one_line(d->is_string() ? d->get<std::string>() : d->dump());
  }
  return one_line(body.substr(0, 200));
}

std::optional<double> parse_retry_after(std::string_view value) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  if (value.empty()) return std::nullopt;
  bool numeric = true;
  int dots = 0;
  for (char c : value) {
    if (c == '.') {
      ++dots;
    } else if (c < '0' || c > '9') {
      numeric = false;
    }
  }
  if (numeric && dots <= 1 && value.size() < 20) {
    const double v = std::strtod(std::string(value).c_str(), nullptr);
    return v >= 0 ? std::optional<double>(v) : std::nullopt;
  }
  // An HTTP-date (RFC 9110's three forms) through libcurl's date parser.
  const time_t when = curl_getdate(std::string(value).c_str(), nullptr);
  if (when == -1) return std::nullopt;
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  return std::max(0.0, static_cast<double>(static_cast<std::int64_t>(when) - static_cast<std::int64_t>(now)));
}

}  // namespace numcheck::llm
