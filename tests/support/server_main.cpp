// numcheck_test_server: the OpenAI-compatible test server as a program, for benchmarks (wrk and
// bench_runner against the same server) and for tests that need it in another process. Prints its
// base URL ("http://127.0.0.1:PORT/v1") on the first line of stdout, then serves until SIGINT or
// SIGTERM.
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "core/error.hpp"
#include "llm/reference.hpp"
#include "orbit/benchmark.hpp"
#include "test_server.hpp"

int main(int argc, char** argv) {
  using namespace numcheck;
  CLI::App app{"OpenAI-compatible test server on 127.0.0.1 (numcheck tests and benchmarks)"};
  int port = 0;
  std::string bench_dir;
  std::vector<std::string> faults;
  testing::ServerOptions opts;
  opts.record = false;
  app.add_option("--port", port, "Port (0: an ephemeral port)")->capture_default_str();
  app.add_option("--bench", bench_dir,
                 "Answer from this benchmark's reference solver (default: echo answers)");
  app.add_option("--model", opts.model, "Model id the server reports")->capture_default_str();
  app.add_option("--build", opts.build, "Build id the server reports in /props")->capture_default_str();
  app.add_option("--threads", opts.threads, "Connections served at once")->capture_default_str();
  app.add_option("--api-key", opts.api_key, "Require this API key (Authorization: Bearer KEY), else 401");
  app.add_flag("--strict-model", opts.strict_model,
               "Answer 404 to requests naming another model than --model");
  app.add_flag("--foreign", opts.foreign, "Not an OpenAI server: every route answers a 404 HTML page");
  app.add_flag("--nondeterministic", opts.nondeterministic,
               "Repeated prompts get changed answers (other words, or another FINAL value), by prompt");
  app.add_option("--delay-ms", opts.delay_ms, "Added to every answer")->capture_default_str();
  app.add_flag("--openai-fields", opts.openai_fields,
               "Refuse body fields OpenAI's API does not know (top_k among them) with its 400, and "
               "require no top_k");
  app.add_flag("--claims", opts.claims,
               "Canned claim-pipeline answers (decompositions, verdicts) instead of solver/echo answers");
  std::string inject;
  app.add_option("--inject", inject,
                 "Answer faults of the simulated reference system, drawn per prompt from the request's seed: "
                 "times_ten=R,markdown=R,unit_slip=R,truncation=R (needs --bench)");
  app.add_flag("--reasoning", opts.reasoning,
               "Thinking-model answers: each message also has a reasoning_content (about 500 bytes)");
  app.add_option("--fault", faults,
                 "KIND:RATE[:MATCH] with KIND one of 429, 500, 400, slow, drop, malformed, huge, length "
                 "(repeatable; first matching rule wins)");
  CLI11_PARSE(app, argc, argv);

  try {
    opts.inject = llm::parse_fault_rates(inject);
  } catch (const std::exception& e) {
    fmt::print(stderr, "numcheck_test_server: --inject: {}\n", e.what());
    return 2;
  }
  std::vector<testing::FaultRule> rules;
  for (const auto& f : faults) {
    const auto c1 = f.find(':');
    testing::FaultRule r;
    auto kind = testing::fault_kind_from_name(f.substr(0, c1));
    if (!kind) {
      fmt::print(stderr, "numcheck_test_server: unknown fault '{}'\n", f);
      return 2;
    }
    r.kind = *kind;
    if (c1 != std::string::npos) {
      const auto c2 = f.find(':', c1 + 1);
      r.rate = std::stod(f.substr(c1 + 1, c2 == std::string::npos ? std::string::npos : c2 - c1 - 1));
      if (c2 != std::string::npos) r.match = f.substr(c2 + 1);
    }
    rules.push_back(r);
  }

  // Block the signals before any thread starts, then wait for them here.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  try {
    llm::SolveFn solver;
    if (!bench_dir.empty()) {
      solver =
          llm::benchmark_solver(std::make_shared<const orbit::Benchmark>(orbit::load_benchmark(bench_dir)));
    }
    testing::TestServer server(opts, solver);
    server.set_faults(rules);
    server.start(port);
    fmt::print("{}\n", server.base_url());
    std::fflush(stdout);
    int sig = 0;
    sigwait(&set, &sig);
    server.stop();
  } catch (const std::exception& e) {
    fmt::print(stderr, "numcheck_test_server: {}\n", e.what());
    return 1;
  }
  return 0;
}
