#include "view/server.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>

#include "core/error.hpp"

namespace numcheck::view {
namespace {

void answer(Api& api, const httplib::Request& req, httplib::Response& res) {
  Params params(req.params.begin(), req.params.end());
  Reply r = api.get(req.path, params);
  res.status = r.status;
  res.set_header("Content-Security-Policy", r.csp.empty() ? kPageCsp : r.csp);
  res.set_content(r.body, r.content_type);
}

}  // namespace

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

void serve(Api& api, const ServeOptions& options,
           const std::function<void(const std::string& url)>& on_ready) {
  // Signals go to the waiting thread only (the server's threads inherit the mask).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);  // a browser that goes away mid-answer is not a reason to stop

  httplib::Server server;
  server.set_default_headers({{"X-Content-Type-Options", "nosniff"},
                              {"Referrer-Policy", "no-referrer"},
                              {"Cache-Control", "no-store"},
                              {"Cross-Origin-Resource-Policy", "same-origin"}});
  server.set_payload_max_length(1 << 16);
  // SO_REUSEADDR only: cpp-httplib's default also sets SO_REUSEPORT, with which a second viewer
  // on a port in use would share it instead of being refused.
  server.set_socket_options([](int sock) {
    int yes = 1;
    (void)::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    if (req.method == "GET" || req.method == "HEAD") return httplib::Server::HandlerResponse::Unhandled;
    res.status = 405;
    res.set_header("Allow", "GET, HEAD");
    res.set_content(R"({"error":"only GET"})", "application/json; charset=utf-8");
    return httplib::Server::HandlerResponse::Handled;
  });
  server.Get(".*", [&api](const httplib::Request& req, httplib::Response& res) { answer(api, req, res); });
  server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    res.status = 500;
    res.set_content(R"({"error":"internal error"})", "application/json; charset=utf-8");
  });

  const int port = options.port == 0 ? server.bind_to_any_port(options.host)
                                     : (server.bind_to_port(options.host, options.port) ? options.port : -1);
  if (port <= 0)
    fail(ErrorCode::kIo, "cannot listen on {}:{} (in use? try --port 0 for a free port)", options.host,
         options.port);
  const std::string shown =
      options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
  on_ready(fmt::format("http://{}:{}/", shown, port));

  // The waiter stops the server on SIGINT or SIGTERM (again until listening has ended, in case the
  // signal came before it began) and ends by itself when listening ends for another reason.
  std::atomic<bool> done{false};
  std::atomic<bool> signalled{false};
  std::thread waiter([&server, &done, &signalled, stop_signals] {
    const timespec tick{0, 100000000L};  // 0.1 s
    while (!done) {
      if (!signalled && sigtimedwait(&stop_signals, nullptr, &tick) > 0) signalled = true;
      if (signalled) {
        server.stop();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  });
  const bool ok = server.listen_after_bind();
  done = true;
  waiter.join();
  if (!ok && !signalled) fail(ErrorCode::kIo, "the server stopped: its socket failed");
}

}  // namespace numcheck::view
