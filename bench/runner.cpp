// bench_runner: requests per second the runner sustains against the OpenAI-compatible test
// server (tests/support, started as a separate process) at concurrency 1, 16 and 64, side by side
// with wrk against the same server, route and request body (bench/wrk_post.lua).
//
//   build/release/bench/bench_runner                      # both, then a comparison table
//   build/release/bench/bench_runner --benchmark_filter=x # runner only through Google Benchmark flags
//
// Environment: NUMCHECK_TEST_SERVER (server binary; default: the build tree's), NUMCHECK_WRK
// (default /usr/bin/wrk), NUMCHECK_BENCH_SECONDS (wrk duration, default 5), NUMCHECK_BENCH_ITEMS
// (prompts per runner iteration, default 4000).
#include <benchmark/benchmark.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "io/files.hpp"
#include "llm/http_backend.hpp"
#include "llm/runner.hpp"
#include "test_server_process.hpp"

namespace {

namespace fs = std::filesystem;
using namespace numcheck;

using bench::env_or;
using Server = bench::ServerProcess;

std::unique_ptr<Server> start_server() {
  return bench::start_test_server({"--threads", "96"}, "bench_runner");
}

Server* g_server = nullptr;

// Prompts of the benchmark's typical length (about 250 bytes).
std::vector<llm::WorkItem> make_items(std::size_t n) {
  std::vector<llm::WorkItem> items;
  items.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    llm::WorkItem it;
    it.item_id = fmt::format("BENCH-{:06}:canonical", i);
    it.prompt = fmt::format(
        "A jug holds {}.4 liters of water and a bottle holds 4.4 liters of water. Both are emptied into a "
        "large "
        "bucket that was empty before. How many liters of water are in the bucket?\nReturn exactly one final "
        "line "
        "in this form: FINAL: <number> <unit>",
        i);
    items.push_back(std::move(it));
  }
  return items;
}

llm::RunSettings bench_settings() {
  llm::RunSettings s;
  s.model = "test-model";
  s.progress = llm::ProgressMode::kNone;
  s.use_cache = false;  // every prompt goes to the server
  return s;
}

std::map<int, double> g_runner_rate;

void BM_Runner(benchmark::State& state) {
  if (g_server == nullptr) {
    state.SkipWithError("no test server");
    return;
  }
  const auto concurrency = static_cast<std::size_t>(state.range(0));
  const std::size_t n = static_cast<std::size_t>(std::stoul(env_or("NUMCHECK_BENCH_ITEMS", "4000")));
  const auto items = make_items(n);
  llm::RunSettings s = bench_settings();
  s.concurrency = concurrency;
  llm::HttpConfig cfg;
  cfg.endpoints = {g_server->url};
  cfg.model = "test-model";
  const fs::path dir = fs::temp_directory_path() / fmt::format("numcheck_bench_runner_{}", ::getpid());
  std::size_t done = 0;
  for (auto _ : state) {
    state.PauseTiming();
    fs::remove_all(dir);
    auto backend = llm::make_http_backend(cfg);
    state.ResumeTiming();
    const llm::RunSummary sum = llm::run_items(items, s, *backend, dir);
    done += sum.answered;
    if (sum.answered != n) state.SkipWithError("not every prompt was answered");
  }
  fs::remove_all(dir);
  state.counters["req/s"] = benchmark::Counter(static_cast<double>(done), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Runner)->Arg(1)->Arg(16)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);

// Collects the runner's rates from the Google Benchmark run for the comparison table.
class Reporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs) {
      auto it = r.counters.find("req/s");
      if (it != r.counters.end() && !r.error_occurred) {
        const std::string name = r.benchmark_name();
        const auto slash = name.rfind('/');
        // "BM_Runner/16/min_time:2.000/real_time": the argument follows the first slash.
        const auto first = name.find('/');
        const auto second = name.find('/', first + 1);
        (void)slash;
        g_runner_rate[std::stoi(name.substr(first + 1, second - first - 1))] = it->second.value;
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

double wrk_rate(const std::string& url, int connections, const std::string& script, int seconds) {
  const std::string wrk = env_or("NUMCHECK_WRK", "/usr/bin/wrk");
  const int threads = std::min(2, connections);
  const std::string cmd = fmt::format("'{}' -t{} -c{} -d{}s -s '{}' '{}/chat/completions' 2>&1", wrk, threads,
                                      connections, seconds, script, url);
  std::FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return -1;
  std::string out;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  std::smatch m;
  static const std::regex re(R"(Requests/sec:\s*([0-9.]+))");
  if (!std::regex_search(out, m, re)) {
    fmt::print(stderr, "wrk output without a rate:\n{}\n", out);
    return -1;
  }
  if (out.find("Non-2xx") != std::string::npos)
    fmt::print(stderr, "warning: wrk saw non-2xx responses:\n{}\n", out);
  return std::stod(m[1].str());
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  auto server = start_server();
  g_server = server.get();
  Reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  if (g_server == nullptr || g_runner_rate.empty()) return g_server == nullptr ? 1 : 0;

  // wrk against the same server and route, POSTing the body the runner sends for the first item.
  const auto items = make_items(1);
  const io::Json body = llm::build_request_body(items[0], bench_settings(), "test-model", llm::Api::kChat);
  const fs::path lua_template = fs::path(NUMCHECK_SOURCE_DIR) / "bench" / "wrk_post.lua";
  const fs::path script = fs::temp_directory_path() / fmt::format("numcheck_wrk_{}.lua", ::getpid());
  std::string lua = io::read_file(lua_template);
  const std::string marker = "__BODY__";
  std::string escaped;
  for (char c : io::to_line(body)) {
    if (c == '\\' || c == '"') escaped += '\\';
    if (c == '\n') {
      escaped += "\\n";
      continue;
    }
    escaped += c;
  }
  lua.replace(lua.rfind(marker), marker.size(), escaped);  // the last one: the comment names it too
  io::write_file_atomic(script, lua);
  const int seconds = std::stoi(env_or("NUMCHECK_BENCH_SECONDS", "5"));
  fmt::print("\nconcurrency  runner req/s  wrk req/s  runner/wrk\n");
  for (const auto& [c, rate] : g_runner_rate) {
    const double w = wrk_rate(g_server->url, c, script.string(), seconds);
    fmt::print("{:>11}  {:>12.0f}  {:>9.0f}  {:>10.2f}\n", c, rate, w, w > 0 ? rate / w : 0.0);
    std::fflush(stdout);
  }
  fs::remove(script);
  return 0;
}
