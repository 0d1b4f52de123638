#pragma once
// The viewer's HTTP server (cpp-httplib): GET only, every answer with nosniff and a strict
// Content-Security-Policy, each request handed to Api. Serves until SIGINT or SIGTERM.
#include <functional>
#include <string>

#include "view/api.hpp"

namespace numcheck::view {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: a free port
};

// Binds, calls `on_ready` with the URL, and serves until SIGINT or SIGTERM (blocked in every
// thread from the start and waited for by one thread, which stops the server). Throws Error
// (kIo) when it cannot bind.
void serve(Api& api, const ServeOptions& options,
           const std::function<void(const std::string& url)>& on_ready);

// Whether `host` is a loopback address (127.0.0.0/8, ::1, localhost).
[[nodiscard]] bool is_loopback(const std::string& host);

}  // namespace numcheck::view
