#pragma once
// The viewer's HTTP API as plain functions of a GET path and its query parameters, so that the
// tests call it without a socket; server.cpp only carries requests to it. Every answer is JSON
// (an error too: {"error": "..."}) except the front end's three files and a report's HTML.
// Nothing here takes a path from a request: runs, claim files and reports are named by the ids
// of the catalog, and the front end's files by a fixed list.
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "view/catalog.hpp"
#include "view/claims.hpp"
#include "view/runs.hpp"

namespace numcheck::view {

struct Reply {
  int status = 200;
  std::string content_type;
  std::string body;
  std::string csp;  // Content-Security-Policy ("" for the default, kPageCsp)
};

// The policy of every answer: scripts, styles and data only from the viewer itself.
inline constexpr const char* kPageCsp =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

using Params = std::multimap<std::string, std::string>;

class Api {
 public:
  // `static_dir`: the folder of index.html, view.js and view.css (data/view).
  Api(Catalog catalog, std::filesystem::path static_dir);
  // Answers GET `path` with `params`; never throws (a failure is a JSON error with its status).
  [[nodiscard]] Reply get(const std::string& path, const Params& params);
  [[nodiscard]] const Catalog& catalog() const noexcept { return catalog_; }

 private:
  Reply route(const std::string& path, const Params& params);
  Reply rows(const Params& params);
  Reply orbit(const Params& params);
  Reply report(const Params& params);
  Catalog catalog_;
  std::filesystem::path static_dir_;
  ClaimsView claims_;
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<OrbitIndex>, std::less<>> orbits_;  // by run id, on first use
};

// The front end's folder: data/view, found as numcheck finds its data files.
[[nodiscard]] std::filesystem::path static_dir();

}  // namespace numcheck::view
