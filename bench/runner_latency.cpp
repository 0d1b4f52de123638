// bench_runner_latency: the runner against a server with a model's latency. The OpenAI-compatible
// test server (tests/support, a separate process) answers every request after a fixed delay (200 ms
// and 50 ms); the runner sends the prompts at --concurrency 64 (as `orbit run --concurrency 64`
// does: one endpoint, no cache). With c requests always in flight the rate is c / latency; the
// program prints the rate it measured and its ratio to that ideal (the target is 0.95 or more).
//
//   build/release/bench/bench_runner_latency
//
// Environment: NUMCHECK_TEST_SERVER (server binary; default: the build tree's),
// NUMCHECK_BENCH_CONCURRENCY (default 64), NUMCHECK_BENCH_ROUNDS (prompts = rounds x concurrency per
// delay, default 20), NUMCHECK_BENCH_DELAYS (comma-separated milliseconds, default "200,50").
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "llm/http_backend.hpp"
#include "llm/runner.hpp"
#include "test_server_process.hpp"

namespace {

namespace fs = std::filesystem;
using namespace numcheck;

using bench::env_or;
using Server = bench::ServerProcess;

// The test server with `delay_ms` added to every answer, threads for `connections` at once.
std::unique_ptr<Server> start_server(int delay_ms, std::size_t connections) {
  return bench::start_test_server(
      {"--threads", std::to_string(connections + 32), "--delay-ms", std::to_string(delay_ms)},
      "bench_runner_latency");
}

std::vector<llm::WorkItem> make_items(std::size_t n) {
  std::vector<llm::WorkItem> items;
  items.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    llm::WorkItem it;
    it.item_id = fmt::format("LAT-{:06}:canonical", i);
    it.prompt = fmt::format(
        "A jug holds {}.4 liters of water and a bottle holds 4.4 liters of water. Both are emptied into a "
        "large bucket that was empty before. How many liters of water are in the bucket?\nReturn exactly "
        "one final line in this form: FINAL: <number> <unit>",
        i);
    items.push_back(std::move(it));
  }
  return items;
}

}  // namespace

int main() {
  const std::size_t concurrency = std::stoul(env_or("NUMCHECK_BENCH_CONCURRENCY", "64"));
  const std::size_t rounds = std::stoul(env_or("NUMCHECK_BENCH_ROUNDS", "20"));
  std::vector<int> delays;
  {
    const std::string list = env_or("NUMCHECK_BENCH_DELAYS", "200,50");
    std::size_t from = 0;
    while (from < list.size()) {
      const std::size_t comma = list.find(',', from);
      delays.push_back(std::stoi(list.substr(from, comma - from)));
      from = comma == std::string::npos ? list.size() : comma + 1;
    }
  }
  const std::size_t n = rounds * concurrency;
  const auto items = make_items(n);
  fmt::print("delay_ms  concurrency  prompts  seconds  req/s  ideal req/s  ratio\n");
  int rc = 0;
  for (const int delay : delays) {
    auto server = start_server(delay, concurrency);
    if (!server) return 1;
    llm::RunSettings s;
    s.model = "test-model";
    s.progress = llm::ProgressMode::kNone;
    s.use_cache = false;  // every prompt goes to the server
    s.concurrency = concurrency;
    llm::HttpConfig cfg;
    cfg.endpoints = {server->url};
    cfg.model = "test-model";
    const fs::path dir = fs::temp_directory_path() / fmt::format("numcheck_bench_latency_{}", ::getpid());
    fs::remove_all(dir);
    auto backend = llm::make_http_backend(cfg);
    const auto start = std::chrono::steady_clock::now();
    const llm::RunSummary sum = llm::run_items(items, s, *backend, dir);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fs::remove_all(dir);
    const double rate = static_cast<double>(sum.answered) / seconds;
    const double ideal = static_cast<double>(concurrency) * 1000.0 / delay;
    fmt::print("{:>8}  {:>11}  {:>7}  {:>7.2f}  {:>5.0f}  {:>11.0f}  {:>5.3f}\n", delay, concurrency, n,
               seconds, rate, ideal, rate / ideal);
    std::fflush(stdout);
    if (sum.answered != n) {
      fmt::print(stderr, "bench_runner_latency: {} of {} prompts answered\n", sum.answered, n);
      rc = 1;
    }
  }
  return rc;
}
