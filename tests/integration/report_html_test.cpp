// The HTML report in a real browser: headless Chromium loads report.html from disk, renders its
// tables and inline SVG figures, and never runs script injected through model text (responses,
// the model name) or a system name. Skipped when Chromium is not installed.
#include <unistd.h>

#include <cstdlib>
#include <regex>

#include <gtest/gtest.h>

#include "cli_support.hpp"
#include "core/prng.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "orbit/benchmark.hpp"

namespace numcheck::testing {
namespace {

namespace fs = std::filesystem;

// A simulated system: mostly correct answers, some wrong, some with the payload as the response.
void write_system(const orbit::Benchmark& bench, const fs::path& run, const std::string& model,
                  std::uint64_t seed) {
  fs::create_directories(run);
  Rng rng(seed, "report-html-test");
  std::string lines;
  for (const auto& v : bench.views) {
    const double u = rng.unit();
    std::string text = fmt::format("FINAL: {} {}", v.expected.str(), v.answer_unit);
    if (u < 0.01) {
      text = kHtmlPayload + "\nFINAL: " + (v.expected * 100).str() + " " + v.answer_unit;
    } else if (u < 0.05) {
      text = fmt::format("FINAL: {} {}", (v.expected + 1).str(), v.answer_unit);
    } else if (u < 0.08 && v.view == "scientific") {
      text = "**FINAL: " + v.expected.str() + " " + v.answer_unit + "**";
    }
    io::OrderedJson r = io::OrderedJson::object();
    r["prompt_id"] = v.prompt_id;
    r["response"] = text;
    r["finish_reason"] = "stop";
    r["usage"] = {{"completion_tokens", 20 + static_cast<int>(rng.below(50))}};
    lines += io::to_line(r) + "\n";
  }
  io::write_file_atomic(run / "responses.jsonl", lines);
  io::OrderedJson m = io::OrderedJson::object();
  m["model"] = model;
  m["simulated"] = true;
  io::write_file_atomic(run / "run.json", io::to_line(m));
}

TEST(ReportHtml, RendersInChromiumAndNeverRunsInjectedScript) {
  if (!fs::exists(kChromiumPath)) {
    GTEST_SKIP() << "chromium is not installed at " << kChromiumPath
                 << " (scripts/setup.sh --with-test-tools installs it); HTML rendering not checked";
  }
  const fs::path dir = fresh_dir("report_html");
  auto g = run_cli(fmt::format("orbit generate --out '{}'", (dir / "bench").string()));
  ASSERT_EQ(g.exit_code, 0) << g.err;
  const orbit::Benchmark bench = orbit::load_benchmark(dir / "bench");
  write_system(bench, dir / "a", "model-a" + kHtmlPayload, 1);
  write_system(bench, dir / "b", "model-b", 2);
  for (const char* s : {"a", "b"}) {
    auto r =
        run_cli(fmt::format("orbit score --bench '{}' --responses '{}' --out '{}'", (dir / "bench").string(),
                            (dir / s / "responses.jsonl").string(), (dir / s / "scores.jsonl").string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  auto rep =
      run_cli(fmt::format("orbit report --bench '{}' --scores '{}' --scores '{}' --out '{}' "
                          "--bootstrap 300",
                          (dir / "bench").string(), (dir / "a" / "scores.jsonl").string(),
                          (dir / "b" / "scores.jsonl").string(), (dir / "report").string()));
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  const fs::path html = dir / "report" / "report.html";
  const std::string raw = io::read_file(html);
  // The file itself: no script element, no external resource, the payload only escaped.
  EXPECT_EQ(raw.find("<script"), std::string::npos);
  EXPECT_EQ(raw.find("<img"), std::string::npos);
  // Attribute values are quoted with every inner quote escaped, so dropping "..." spans leaves
  // only markup the page itself wrote.
  const std::string unquoted = std::regex_replace(raw, std::regex("\"[^\"]*\""), "\"\"");
  EXPECT_FALSE(std::regex_search(unquoted, std::regex("<[a-zA-Z][^<>]*\\s(src|on[a-z]+)=")))
      << "an element with a resource or an event handler";
  EXPECT_NE(raw.find("&lt;script&gt;document.title=&#39;PWNED&#39;"), std::string::npos);

  const std::string url = "file://" + fs::absolute(html).string();
  const std::string dom = run_chromium(dir, "--dump-dom '" + url + "'");
  ASSERT_FALSE(dom.empty()) << "chromium produced no DOM";
  // The title is the report's, not the payload's; no injected element exists.
  std::smatch title;
  ASSERT_TRUE(std::regex_search(dom, title, std::regex("<title>([^<]*)</title>")));
  EXPECT_EQ(title[1].str().rfind("Orbit benchmark report", 0), 0u) << title[1];
  EXPECT_EQ(dom.find("PWNED</title>"), std::string::npos);
  EXPECT_EQ(dom.find("<div id=\"injected\""), std::string::npos);
  EXPECT_EQ(dom.find("<script"), std::string::npos);
  // The payload is present as text (escaped in the serialized DOM), in examples and the name.
  EXPECT_GE(occurrences(dom, "&lt;script&gt;document.title='PWNED'"), 2u);
  // Tables and figures rendered: every section's table and SVG chart are in the DOM.
  EXPECT_GE(occurrences(dom, "<table"), 15u);
  EXPECT_GE(occurrences(dom, "<svg"), 6u);  // 2 view bars, 2 outcome charts, 2 gap charts
  EXPECT_GE(occurrences(dom, "<rect"), 50u);
  EXPECT_NE(dom.find("id=\"comparisons\""), std::string::npos) << "two systems: comparisons";

  // Kept for a person when asked (NUMCHECK_KEEP_SCREENSHOT=path).
  expect_screenshot(dir, dir / "report.png", "--window-size=1366,900", url, "NUMCHECK_KEEP_SCREENSHOT");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace numcheck::testing
