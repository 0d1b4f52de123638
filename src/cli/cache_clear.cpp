// numcheck cache clear: removes entries from the response cache of model runs.
#include <memory>
#include <string>

#include <fmt/core.h>

#include "cli/command.hpp"
#include "llm/cache.hpp"

namespace numcheck::cli {
namespace {

struct ClearArgs {
  std::string dir;
  std::string model;
};

void setup(CLI::App& app) {
  auto args = std::make_shared<ClearArgs>();
  app.add_option("--cache-dir", args->dir,
                 "Cache folder (default: $NUMCHECK_CACHE_DIR, $XDG_CACHE_HOME/numcheck, ~/.cache/numcheck)");
  app.add_option("--model", args->model, "Remove only this model's entries (as `cache stats` lists them)");
  app.callback([args] {
    const auto path = llm::default_cache_path(args->dir);
    llm::ResponseCache cache(path);
    const auto n = cache.clear(args->model);
    fmt::print("removed {} entr{} from {}{}\n", n, n == 1 ? "y" : "ies", path.string(),
               args->model.empty() ? "" : fmt::format(" (model {})", args->model));
  });
}

const CommandRegistration reg{{"cache",
                               "clear",
                               "Remove all (or one model's) cached responses",
                               setup,
                               "numcheck cache clear --model qwen3.5-4b",
                               {"entries removed (the count is printed)"}}};

}  // namespace
}  // namespace numcheck::cli
