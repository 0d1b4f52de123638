// numcheck orbit validate: checks a generated benchmark (hashes, counts, strict-parser round trip,
// reference solver on every prompt). Exit 3 when any check fails.
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include <fmt/core.h>

#include "cli/command.hpp"
#include "core/error.hpp"
#include "orbit/benchmark.hpp"
#include "orbit/validate.hpp"

namespace numcheck::cli {
namespace {

struct ValidateArgs {
  std::string dir;
  std::size_t max_listed = 50;
  bool quiet = false;
};

void setup(CLI::App& app) {
  auto args = std::make_shared<ValidateArgs>();
  app.add_option("dir", args->dir, "Benchmark directory written by `numcheck orbit generate`")->required();
  app.add_option("--max-listed", args->max_listed, "List at most this many failing checks (0: all)")
      ->capture_default_str();
  app.add_flag("--quiet,-q", args->quiet, "No progress display");
  app.callback([args] {
    const auto b = orbit::load_benchmark(args->dir);
    const bool tty = !args->quiet && isatty(fileno(stderr));
    auto last = std::chrono::steady_clock::now();
    std::function<void(std::size_t, std::size_t)> progress;
    if (tty) {
      progress = [&last](std::size_t done, std::size_t total) {
        const auto now = std::chrono::steady_clock::now();
        if (done != total && now - last < std::chrono::milliseconds(100)) return;
        last = now;
        fmt::print(stderr, "\rvalidate: {}/{} prompts", done, total);
        if (done == total) fmt::print(stderr, "\n");
        std::fflush(stderr);
      };
    }
    const auto r = orbit::validate_benchmark(b, progress);
    std::size_t listed = 0;
    for (const auto& issue : r.issues) {
      if (args->max_listed != 0 && listed >= args->max_listed) break;
      fmt::print("FAIL {} [{}]: {}\n", issue.where, issue.check, issue.message);
      ++listed;
    }
    if (listed < r.issues.size()) fmt::print("... and {} more failing checks\n", r.issues.size() - listed);
    fmt::print("{}: {} bases, {} prompts; strict round trip {}/{}; reference solver {}/{}; {}\n", args->dir,
               r.bases, r.prompts, r.round_trips, r.prompts, r.solved, r.prompts,
               r.ok() ? "all checks passed" : fmt::format("{} failing checks", r.issues.size()));
    if (!r.ok()) throw ExitCode{3};
  });
}

const CommandRegistration reg{
    {"orbit",
     "validate",
     "Check a generated benchmark: hashes, counts, answer round trip, reference solver",
     setup,
     "numcheck orbit validate out/bench",
     {"every check passed", "some check failed (each is listed)", "the benchmark cannot be read"}}};

}  // namespace
}  // namespace numcheck::cli
