// The report's LaTeX figures: every chart kind of the toolkit translates to a TikZ picture that
// draws the same elements (rects, lines, polylines, circles, text) with text escaped for LaTeX;
// malformed markup is an error; report.tex holds one figure float per chart, and compiles with
// pdflatex when a TeX installation is present.
#include "doc/tikz.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "core/error.hpp"
#include "doc/document.hpp"
#include "doc/html.hpp"
#include "fixture.hpp"
#include "io/files.hpp"

namespace numcheck::report {
using doc::Document;
using doc::svg_to_tikz;
using doc::TikzFigure;
namespace html = doc::html;
namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

std::string bars() {
  html::BarChart c;
  c.title = "Bars: 50% & $x_1$ {#}";
  c.id = "fig-bars";
  c.groups = {"a<b", "c"};
  c.series = {"s1", "s2"};
  c.values = {{0.5, 0.25}, {0.75, 1.0}};
  c.y_label = "rate";
  return html::bar_chart(c);
}
std::string forest() {
  html::IntervalChart c;
  c.title = "Forest";
  c.id = "fig-forest";
  c.thresholds = {0.03};
  c.rows = {{"orbit", 0.05, 0.01, 0.09, true}, {"fraction", -0.01, -0.03, 0.02, false}};
  return html::interval_chart(c);
}
std::string lines() {
  html::LineChart c;
  c.title = "Lines";
  c.id = "fig-lines";
  c.series = {{"a", "", {{0, 0}, {0.5, 0.1}, {1, 0.2}}, true, false},
              {"b", "#abc", {{0, 0.1}, {1, 0.1}}, false, true}};
  c.y_label = "risk";
  return html::line_chart(c);
}
std::string stacked() {
  html::StackedBarChart c;
  c.title = "Stacked";
  c.id = "fig-stacked";
  c.segments = {{"ok", "#0072B2"}, {"bad", ""}};
  c.row_labels = {"r1", "r2"};
  c.values = {{3, 1}, {1, 1}};
  return html::stacked_bar_chart(c);
}

TEST(ReportTikz, EveryChartKindDrawsItsElements) {
  for (const std::string& markup : {bars(), forest(), lines(), stacked()}) {
    const TikzFigure f = svg_to_tikz(markup);
    EXPECT_EQ(f.picture.rfind("\\begin{tikzpicture}[x=0.5pt, y=-0.5pt]\n", 0), 0u);
    EXPECT_EQ(f.picture.substr(f.picture.size() - 17), "\\end{tikzpicture}");
    // One \fill per sized rect and per circle, one \path per line and polyline, one \node per text.
    EXPECT_EQ(count(f.picture, "\\fill["), count(markup, "<rect x=") + count(markup, "<circle "));
    EXPECT_EQ(count(f.picture, "\\path["), count(markup, "<line ") + count(markup, "<polyline "));
    EXPECT_EQ(count(f.picture, "\\node["), count(markup, "<text "));
    EXPECT_GT(count(f.colors, "\\definecolor{nc"), 0u);
  }
}

TEST(ReportTikz, TextColoursAndStylesAreTranslated) {
  const TikzFigure b = svg_to_tikz(bars());
  EXPECT_EQ(b.title, "Bars: 50% & $x_1$ {#}");
  EXPECT_NE(b.picture.find("{a\\textless{}b}"), std::string::npos);  // HTML-unescaped, LaTeX-escaped
  EXPECT_NE(b.picture.find("rotate=90"), std::string::npos);         // the y-axis label
  EXPECT_NE(b.colors.find("{HTML}{0072B2}"), std::string::npos);
  const TikzFigure f = svg_to_tikz(forest());
  EXPECT_NE(f.picture.find("dash pattern=on 2.00pt off 1.50pt"), std::string::npos);  // threshold line
  EXPECT_NE(f.picture.find("circle (2.00pt)"), std::string::npos);
  EXPECT_NE(f.colors.find("{HTML}{D55E00}"), std::string::npos);
  const TikzFigure l = svg_to_tikz(lines());
  EXPECT_NE(l.colors.find("{HTML}{AABBCC}"), std::string::npos);  // #abc expanded
  EXPECT_NE(l.picture.find("dash pattern=on 3.00pt off 2.00pt"), std::string::npos);
}

TEST(ReportTikz, MalformedMarkupIsAnError) {
  EXPECT_THROW((void)svg_to_tikz("<p>no chart</p>"), Error);
  EXPECT_THROW((void)svg_to_tikz("<svg><rect x=\"1></svg>"), Error);
  EXPECT_THROW((void)svg_to_tikz("<svg><rect x=1 y=2/></svg>"), Error);
  EXPECT_THROW((void)svg_to_tikz("<svg><text x=\"1\" y=\"2\">open</svg>"), Error);
  // Unknown colours and non-numeric coordinates do not crash: black, or the element is skipped.
  const TikzFigure f = svg_to_tikz(
      "<svg><rect x=\"1\" y=\"2\" width=\"3\" height=\"4\" fill=\"url(#x)\"/><line x1=\"a\" y1=\"0\" "
      "x2=\"1\" "
      "y2=\"1\"/></svg>");
  EXPECT_NE(f.colors.find("{HTML}{000000}"), std::string::npos);
  EXPECT_EQ(count(f.picture, "\\path["), 0u);
}

TEST(ReportTikz, LatexHasOneFigureFloatPerChartInDocumentOrder) {
  Document d;
  d.heading(2, "a", "A");
  d.figure(bars());
  html::Table t;
  t.caption = "T";
  t.header = {"x"};
  t.rows = {{html::Cell::txt("1")}};
  d.table(t);
  d.figure(forest());
  const std::string tex = d.to_latex("c");
  EXPECT_EQ(count(tex, "\\begin{figure}[htbp]"), 2u);
  EXPECT_EQ(count(tex, "\\begin{table}[htbp]"), 1u);
  EXPECT_LT(tex.find("\\label{fig:01-fig-bars}"), tex.find("\\begin{table}"));
  EXPECT_LT(tex.find("\\begin{table}"), tex.find("\\label{fig:02-fig-forest}"));
  EXPECT_NE(tex.find("\\caption{Bars: 50\\% \\& \\$x\\_1\\$ \\{\\#\\}}"), std::string::npos);

  // Compiles when pdflatex is installed (skipped otherwise: the translation is pinned above).
  if (std::system("command -v pdflatex >/dev/null 2>&1") != 0) GTEST_SKIP() << "no pdflatex";
  const auto dir = testing::fresh_dir("tikz");
  io::write_file_atomic(dir / "report.tex", tex);
  io::write_file_atomic(dir / "main.tex",
                        "\\documentclass{article}\\usepackage{booktabs}\\usepackage{graphicx}"
                        "\\usepackage{tikz}\\begin{document}\\input{report.tex}\\end{document}\n");
  const std::string cmd = "cd '" + dir.string() +
                          "' && pdflatex -interaction=nonstopmode -halt-on-error main.tex >/dev/null 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << "see " << (dir / "main.log");
  EXPECT_TRUE(std::filesystem::exists(dir / "main.pdf"));
}

}  // namespace
}  // namespace numcheck::report
