// numcheck cache stats: size and contents of the response cache of model runs.
#include <memory>
#include <string>

#include <fmt/core.h>

#include "cli/command.hpp"
#include "llm/cache.hpp"

namespace numcheck::cli {
namespace {

struct StatsArgs {
  std::string dir;
  bool json = false;
};

void setup(CLI::App& app) {
  auto args = std::make_shared<StatsArgs>();
  app.add_option("--cache-dir", args->dir,
                 "Cache folder (default: $NUMCHECK_CACHE_DIR, $XDG_CACHE_HOME/numcheck, ~/.cache/numcheck)");
  app.add_flag("--json", args->json, "Print the statistics as one JSON object");
  app.callback([args] {
    const auto path = llm::default_cache_path(args->dir);
    llm::ResponseCache cache(path);
    const llm::CacheStats st = cache.stats();
    if (args->json) {
      io::OrderedJson j = io::OrderedJson::object();
      j["path"] = path.string();
      j["entries"] = st.entries;
      j["bytes"] = st.bytes;
      j["hits"] = st.hits;
      io::OrderedJson models = io::OrderedJson::object();
      for (const auto& [m, n] : st.per_model) models[m] = n;
      j["models"] = models;
      j["oldest"] = st.oldest;
      j["newest"] = st.newest;
      fmt::print("{}\n", io::to_line(j));
      return;
    }
    fmt::print("cache: {}\nentries: {}\nsize: {:.1f} MiB\nhits served: {}\n", path.string(), st.entries,
               static_cast<double>(st.bytes) / (1024.0 * 1024.0), st.hits);
    if (st.entries > 0) fmt::print("oldest: {}\nnewest: {}\n", st.oldest, st.newest);
    for (const auto& [m, n] : st.per_model) fmt::print("  {}: {}\n", m, n);
  });
}

const CommandRegistration reg{{"cache",
                               "stats",
                               "Show the response cache's size and models",
                               setup,
                               "numcheck cache stats --json",
                               {"printed"}}};

}  // namespace
}  // namespace numcheck::cli
