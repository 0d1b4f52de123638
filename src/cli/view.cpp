// numcheck view DIR: a local web viewer for run folders, reports and claims files (src/view; the
// front end is data/view). Prints its URL as the first line of stdout and serves until SIGINT or
// SIGTERM.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/core.h>

#include "cli/command.hpp"
#include "view/api.hpp"
#include "view/catalog.hpp"
#include "view/server.hpp"

namespace numcheck::cli {
namespace {

struct ViewArgs {
  std::string dir;
  view::ServeOptions serve;
};

void run_view(const ViewArgs& args) {
  view::Api api(view::discover(args.dir), view::static_dir());
  if (!view::is_loopback(args.serve.host))
    fmt::print(stderr,
               "numcheck view: warning: listening on {}, not a loopback address: anyone who can reach this "
               "machine can read these files\n",
               args.serve.host);
  const auto& c = api.catalog();
  view::serve(api, args.serve, [&](const std::string& url) {
    fmt::print("numcheck view: {}\n", url);
    std::fflush(stdout);
    fmt::print(stderr, "numcheck view: {} run(s), {} report(s), {} claims file(s) in {}; Ctrl-C stops\n",
               c.runs.size(), c.reports.size(), c.claims.size(), args.dir);
  });
}

void setup(CLI::App& app) {
  auto args = std::make_shared<ViewArgs>();
  app.add_option(
         "DIR", args->dir,
         "A run folder, a folder of run folders (every system), a report folder or a claims output folder")
      ->required();
  app.add_option("--port", args->serve.port, "Port to listen on (0, the default: a free port, printed)")
      ->check(CLI::Range(0, 65535));
  app.add_option(
      "--host", args->serve.host,
      "Address to listen on (default 127.0.0.1; another address is warned about: the viewer has no "
      "login)");
  app.footer(
      "Prints 'numcheck view: http://127.0.0.1:PORT/' as the first line and serves until Ctrl-C (SIGINT) "
      "or SIGTERM, then exits 0. Open the URL in a browser: runs with template, view, outcome and text "
      "filters; one orbit at a time with its grades and flips; claims with evidence, verdicts and "
      "claim-orbit variants. Pages are read from the files on disk (no file is loaded whole). Nothing "
      "is fetched from the internet. See docs/view.md.");
  app.callback([args] { run_view(*args); });
}

const CommandRegistration reg{{"",
                               "view",
                               "Browse runs, orbits and claims in a local web viewer",
                               setup,
                               "numcheck view out/runs --port 8765",
                               {"stopped by Ctrl-C or SIGTERM"}}};

}  // namespace
}  // namespace numcheck::cli
