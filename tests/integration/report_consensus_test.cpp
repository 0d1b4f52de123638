// `orbit report --consensus DIR` end to end through the real CLI: a paraphrase benchmark, a
// simulated system's responses scored for the report, the consensus study planned, run with the
// reference system (injected faults) and analyzed under a hostile system name; then the report
// must carry the consensus section (both tiers, every arm, AURC with intervals, sensitivity,
// risk-coverage figures) in report.md, report.html and report.tex, write every figure as a
// standalone SVG under figures/, link each from report.md, and escape the hostile name.
#include <set>

#include <gtest/gtest.h>

#include "cli_support.hpp"
#include "core/prng.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "orbit/benchmark.hpp"

namespace numcheck::testing {
namespace {

namespace fs = std::filesystem;

const std::string kHostile = "<script>alert(1)</script>|sys";

class ReportConsensus : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fresh_dir("report_consensus"));
    const fs::path& d = *dir_;
    auto r = run_cli(fmt::format("orbit generate --out '{}' --paraphrases", (d / "bench").string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // The system for the main report: responses written directly (mostly right, some x10).
    const orbit::Benchmark bench = orbit::load_benchmark(d / "bench");
    fs::create_directories(d / "sys");
    Rng rng(7, "report-consensus-test");
    std::string lines;
    for (const auto& v : bench.views) {
      const bool wrong = rng.unit() < 0.05;
      io::OrderedJson rec = io::OrderedJson::object();
      rec["prompt_id"] = v.prompt_id;
      rec["response"] =
          fmt::format("FINAL: {} {}", (wrong ? v.expected * 10 : v.expected).str(), v.answer_unit);
      rec["finish_reason"] = "stop";
      lines += io::to_line(rec) + "\n";
    }
    io::write_file_atomic(d / "sys" / "responses.jsonl", lines);
    r = run_cli(fmt::format("orbit score --bench '{}' --responses '{}' --out '{}'", (d / "bench").string(),
                            (d / "sys" / "responses.jsonl").string(), (d / "sys" / "scores.jsonl").string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // The consensus study on 5 bases per template.
    r = run_cli(fmt::format("orbit consensus plan --bench '{}' --out '{}' --per-template 5",
                            (d / "bench").string(), (d / "plan.json").string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_cli(fmt::format(
        "orbit consensus run --plan '{}' --out '{}' --system reference "
        "--inject times_ten=0.15,unit_slip=0.15,markdown=0.1 --progress none --no-cache --no-fsync",
        (d / "plan.json").string(), (d / "crun").string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_cli(
        fmt::format("orbit consensus analyze --plan '{}' --run '{}' --name '{}' --out '{}' --bootstrap 200",
                    (d / "plan.json").string(), (d / "crun").string(), kHostile, (d / "analysis").string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_cli(
        fmt::format("orbit report --bench '{}' --scores '{}' --out '{}' --bootstrap 200 --consensus '{}'",
                    (d / "bench").string(), (d / "sys" / "scores.jsonl").string(), (d / "report").string(),
                    (d / "analysis").string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    out_ = new std::string(r.out);
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
    delete out_;
  }
  static fs::path* dir_;
  static std::string* out_;
};
fs::path* ReportConsensus::dir_ = nullptr;
std::string* ReportConsensus::out_ = nullptr;

TEST_F(ReportConsensus, MarkdownHasTheSectionTablesAndFigureLinks) {
  const fs::path& d = *dir_;
  const std::string md = io::read_file(d / "report" / "report.md");
  const auto sec = md.find("## Consensus study (H3)");
  ASSERT_NE(sec, std::string::npos);
  EXPECT_LT(sec, md.find("## Definitions and methods"));  // before the methods section
  for (const char* s : {"### Consensus: stochastic tier", "### Consensus: deterministic (greedy) tier",
                        "**Arms, stochastic tier**", "**Arms, deterministic tier**", "AURC 95% CI",
                        "self-consistency", "| paraphrase |", "| representation |",
                        "**Fallback-order sensitivity (cyclic call-priority orders)**",
                        "**AURC differences between arms (paired base bootstrap)**", "](figures/",
                        "consensus-rc-1-stochastic.svg)", "consensus-rc-1-deterministic.svg)"}) {
    EXPECT_NE(md.find(s, sec), std::string::npos) << s;
  }
  // Every arm's AURC and interval from consensus.json is in the Markdown section (brackets escaped).
  const auto j = io::parse_json(io::read_file(d / "analysis" / "consensus.json"), "consensus.json");
  const auto& sys = j.at("systems").at(kHostile);
  std::size_t arms = 0;
  for (const auto& [tier, tj] : sys.items()) {
    for (const auto& [arm, aj] : tj.items()) {
      ++arms;
      EXPECT_NE(md.find(fmt::format("| {:.6f} |", aj.at("aurc").get<double>()), sec), std::string::npos)
          << tier << " " << arm;
      ASSERT_TRUE(aj.at("aurc_ci").is_array()) << tier << " " << arm;
      EXPECT_NE(md.find(fmt::format("\\[{:.6f}, {:.6f}\\]", aj.at("aurc_ci")[0].get<double>(),
                                    aj.at("aurc_ci")[1].get<double>()),
                        sec),
                std::string::npos)
          << tier << " " << arm;
    }
  }
  EXPECT_EQ(arms, 5u);
  // The hostile system name: escaped, never raw markup.
  EXPECT_EQ(md.find("<script>"), std::string::npos);
  EXPECT_NE(md.find("&lt;script&gt;alert(1)&lt;/script&gt;\\|sys"), std::string::npos);
}

TEST_F(ReportConsensus, EveryFigureIsAStandaloneSvgLinkedFromMarkdown) {
  const fs::path& d = *dir_;
  const std::string md = io::read_file(d / "report" / "report.md");
  std::set<std::string> linked;
  // Image links "![...](figures/NAME.svg)"; parsed by hand (std::regex warns under g++ 12 -O2).
  for (auto p = md.find("](figures/"); p != std::string::npos; p = md.find("](figures/", p + 1)) {
    const auto end = md.find(')', p);
    ASSERT_NE(end, std::string::npos);
    const std::string target = md.substr(p + 2, end - p - 2);
    EXPECT_EQ(target.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/"),
              std::string::npos)
        << target;
    ASSERT_GT(target.size(), 12u) << target;
    EXPECT_EQ(target.substr(target.size() - 4), ".svg") << target;
    const auto line = md.rfind('\n', p);
    EXPECT_EQ(md.compare(line == std::string::npos ? 0 : line + 1, 2, "!["), 0) << target;  // an image link
    linked.insert(target);
  }
  std::set<std::string> files;
  for (const auto& e : fs::directory_iterator(d / "report" / "figures")) {
    files.insert("figures/" + e.path().filename().string());
  }
  EXPECT_EQ(linked, files);
  EXPECT_GE(files.size(), 7u);  // 5 report figures for one system + 2 risk-coverage figures
  for (const auto& f : files) {
    const std::string svg = io::read_file(d / "report" / f);
    EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u) << f;
    EXPECT_NE(svg.find("</svg>"), std::string::npos) << f;
    EXPECT_EQ(svg.find("</svg>"), svg.rfind("</svg>")) << f;  // exactly one root element
    EXPECT_EQ(svg.find("<script"), std::string::npos) << f;
    EXPECT_EQ(svg.find("<figure"), std::string::npos) << f;
    EXPECT_NE(svg.find("<style>"), std::string::npos) << f;
  }
  // The risk-coverage figure carries the escaped hostile name in its title, not markup.
  const std::string rc = io::read_file(d / "report" / "figures" / "06-consensus-rc-1-stochastic.svg");
  EXPECT_NE(rc.find("&lt;script&gt;"), std::string::npos);
  EXPECT_GE(occurrences(rc, "<polyline") + occurrences(rc, "<path"), 3u);  // one curve per arm
}

TEST_F(ReportConsensus, HtmlAndLatexHaveTheSectionEscaped) {
  const fs::path& d = *dir_;
  const std::string html = io::read_file(d / "report" / "report.html");
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;|sys"), std::string::npos);
  for (const char* s :
       {"<h2 id=\"consensus\">", "id=\"consensus-rc-1-stochastic\"", "id=\"consensus-rc-1-deterministic\"",
        "id=\"consensus-arms-stochastic\"", "id=\"consensus-arms-deterministic\"",
        "id=\"consensus-sensitivity\"", "id=\"consensus-differences\"", "href=\"#consensus\""}) {
    EXPECT_NE(html.find(s), std::string::npos) << s;
  }
  const auto fig = html.find("id=\"consensus-rc-1-stochastic\"");
  ASSERT_NE(fig, std::string::npos);
  EXPECT_LT(html.find("<svg", fig), html.find("</figure>", fig));
  const std::string tex = io::read_file(d / "report" / "report.tex");
  EXPECT_NE(tex.find("\\caption{Arms, stochastic tier}"), std::string::npos);
  EXPECT_NE(tex.find("\\caption{Fallback-order sensitivity (cyclic call-priority orders)}"),
            std::string::npos);
  EXPECT_NE(tex.find("\\textless{}script\\textgreater{}"), std::string::npos);
  const auto m = io::parse_json(io::read_file(d / "report" / "metrics.json"), "metrics.json");
  ASSERT_EQ(m.at("extra_sections").size(), 1u);
  EXPECT_EQ(m.at("extra_sections")[0].at("sha256").get<std::string>().size(), 64u);
  EXPECT_NE(out_->find("figures"), std::string::npos);
}

TEST_F(ReportConsensus, BadConsensusFolderIsAReadableError) {
  const fs::path& d = *dir_;
  auto r = run_cli(fmt::format("orbit report --bench '{}' --scores '{}' --out '{}' --consensus '{}'",
                               (d / "bench").string(), (d / "sys" / "scores.jsonl").string(),
                               (d / "report2").string(), (d / "sys").string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("no consensus.json"), std::string::npos) << r.err;
  fs::create_directories(d / "fake");
  io::write_file_atomic(d / "fake" / "consensus.json",
                        R"({"kind": "numcheck.consensus_analysis", "version": 1})");
  r = run_cli(fmt::format("orbit report --bench '{}' --scores '{}' --out '{}' --consensus '{}'",
                          (d / "bench").string(), (d / "sys" / "scores.jsonl").string(),
                          (d / "report2").string(), (d / "fake").string()));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("consensus.json: missing field 'plan'"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;  // one line
}

}  // namespace
}  // namespace numcheck::testing
