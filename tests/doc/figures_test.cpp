// Document figures: every chart becomes a standalone SVG file (figures/NN-<id>.svg) that report.md
// links with an image link; inserted sections renumber the files; hostile chart ids and titles
// cannot escape the file name or the Markdown link.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "doc/document.hpp"
#include "doc/html.hpp"

namespace numcheck::doc {
namespace {

std::string chart(std::string title, std::string id) {
  html::BarChart c;
  c.title = std::move(title);
  c.id = std::move(id);
  c.groups = {"a", "b"};
  c.series = {"s"};
  c.values = {{0.5}, {0.25}};
  return html::bar_chart(c);
}

TEST(ReportFigures, StandaloneSvgFromToolkitMarkup) {
  const std::string svg = html::standalone_svg(chart("T <x>", "fig-1"));
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find("<style>"), std::string::npos);
  EXPECT_EQ(svg.find("<figure"), std::string::npos);
  EXPECT_EQ(svg.find("figcaption"), std::string::npos);
  EXPECT_NE(svg.find("<title>T &lt;x&gt;</title>"), std::string::npos);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_THROW((void)html::standalone_svg("<p>no chart</p>"), Error);
}

TEST(ReportFigures, MarkdownLinksEveryFigureFile) {
  Document d;
  d.heading(2, "a", "A");
  d.figure(chart("First [chart] *x*", "fig-first"));
  d.heading(2, "methods", "Methods");
  d.figure(chart("Second", "../../etc/passwd\" onload=\"x"));
  const auto files = d.figure_files();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].first, "01-fig-first.svg");
  // Only [A-Za-z0-9_-] survive from the id (quotes are escaped to &quot; by the toolkit first).
  for (char c : files[1].first) {
    EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')
        << files[1].first;
  }
  EXPECT_EQ(files[1].first.rfind("02-", 0), 0u);
  EXPECT_EQ(files[1].first.find(".."), std::string::npos);
  const std::string md = d.to_markdown();
  EXPECT_NE(md.find("![First \\[chart\\] \\*x\\*](figures/01-fig-first.svg)"), std::string::npos) << md;
  EXPECT_NE(md.find("](figures/" + files[1].first + ")"), std::string::npos) << md;
  for (const auto& [name, svg] : files) EXPECT_EQ(svg.rfind("<svg", 0), 0u) << name;

  // A section inserted before "methods" renumbers: its figure becomes 02, the later one 03.
  Document extra;
  extra.heading(2, "extra", "Extra");
  extra.figure(chart("Inserted", "fig-extra"));
  d.insert_before("methods", extra);
  const auto after = d.figure_files();
  ASSERT_EQ(after.size(), 3u);
  EXPECT_EQ(after[0].first, "01-fig-first.svg");
  EXPECT_EQ(after[1].first, "02-fig-extra.svg");
  EXPECT_EQ(after[2].first.rfind("03-", 0), 0u);
  const std::string md2 = d.to_markdown();
  EXPECT_LT(md2.find("# Extra"), md2.find("# Methods"));
  EXPECT_NE(md2.find("](figures/02-fig-extra.svg)"), std::string::npos);
  // No such heading: appended at the end.
  Document tail;
  tail.paragraph("tail text");
  d.insert_before("nope", tail);
  EXPECT_EQ(d.blocks().back().text, "tail text");
}

}  // namespace
}  // namespace numcheck::doc
