// The HTML/SVG toolkit and the three renderers: hostile text is escaped in every format.
#include "doc/html.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "doc/document.hpp"

namespace numcheck::doc {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kHostile = "<script>alert('x')</script>\"&'\x01\xff\xc3\x28 | * _ ` \\ $ % { } ~ ^ #";

TEST(HtmlEscape, EntitiesInvalidUtf8AndControls) {
  EXPECT_EQ(html::html_escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
  EXPECT_EQ(html::html_escape("tab\tnl\n"), "tab\tnl\n");
  EXPECT_EQ(html::html_escape("\x01"), "\xEF\xBF\xBD");
  EXPECT_EQ(html::html_escape("\xff"), "\xEF\xBF\xBD");
  EXPECT_EQ(html::html_escape("\xc3\x28"), "\xEF\xBF\xBD(");                             // truncated sequence
  EXPECT_EQ(html::html_escape("\xe0\x80\xaf"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong
  EXPECT_EQ(html::html_escape("\xed\xa0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(html::html_escape("\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");  // é € 😀 kept
  EXPECT_EQ(html::html_escape(""), "");
}

TEST(HtmlToolkit, TablesAndChartsEscapeEverything) {
  html::Table t;
  t.caption = kHostile;
  t.header = {kHostile};
  t.rows = {{html::Cell::txt(kHostile)}, {html::Cell::num("1.0", true)}};
  t.note = kHostile;
  const std::string table = html::render_table(t);
  EXPECT_THAT(table, Not(HasSubstr("<script")));
  EXPECT_THAT(table, HasSubstr("&lt;script&gt;"));
  EXPECT_THAT(table, HasSubstr("<td class=\"n em\">1.0</td>"));

  html::StackedBarChart s;
  s.title = kHostile;
  s.segments = {{kHostile, ""}, {"b", "#000"}};
  s.row_labels = {kHostile};
  s.values = {{3, 1}};
  html::IntervalChart ic;
  ic.title = kHostile;
  ic.rows = {{kHostile, 0.05, 0.01, 0.09, true}};
  ic.thresholds = {0.03};
  html::LineChart lc;
  lc.title = kHostile;
  lc.series = {{kHostile, "", {{0, 0}, {0.5, 0.1}, {1, 0.2}}, false, true}};
  lc.x_label = kHostile;
  html::BarChart bc;
  bc.title = kHostile;
  bc.groups = {kHostile};
  bc.series = {kHostile};
  bc.values = {{0.5}};
  for (const std::string& svg :
       {html::stacked_bar_chart(s), html::interval_chart(ic), html::line_chart(lc), html::bar_chart(bc)}) {
    EXPECT_THAT(svg, Not(HasSubstr("<script")));
    EXPECT_THAT(svg, HasSubstr("<svg"));
    EXPECT_THAT(svg, HasSubstr("</svg>"));
    EXPECT_THAT(svg, Not(HasSubstr("nan")));
    EXPECT_THAT(svg, Not(HasSubstr("inf")));
  }
  // Stacked bars are shares of each row: 3 of 4 is 75%.
  EXPECT_THAT(html::stacked_bar_chart(s), HasSubstr("(75.0%)"));
}

TEST(HtmlToolkit, ChartsSurviveDegenerateData) {
  html::LineChart empty;
  EXPECT_THAT(html::line_chart(empty), HasSubstr("</svg>"));
  html::IntervalChart nan_rows;
  nan_rows.rows = {{"x", std::nan(""), std::nan(""), std::nan(""), false}};
  EXPECT_THAT(html::interval_chart(nan_rows), Not(HasSubstr("nan")));
  html::StackedBarChart zero;
  zero.segments = {{"a", ""}};
  zero.row_labels = {"r"};
  zero.values = {{0}};
  EXPECT_THAT(html::stacked_bar_chart(zero), HasSubstr("</svg>"));
}

TEST(HtmlToolkit, PageIsSelfContainedAndLocksDownScripts) {
  const std::string p = html::page(kHostile, "<p>body</p>");
  EXPECT_THAT(p, HasSubstr("Content-Security-Policy"));
  EXPECT_THAT(p, HasSubstr("default-src 'none'"));
  EXPECT_THAT(p, Not(HasSubstr("<script")));
  EXPECT_THAT(p, Not(HasSubstr("http://")));  // only the SVG namespace may appear, and not here
  EXPECT_THAT(p, Not(HasSubstr("https://")));
}

TEST(HtmlToolkit, NumberFormats) {
  EXPECT_EQ(html::fixed(0.97055, 3), "0.971");
  EXPECT_EQ(html::fixed(-0.0001, 3), "0.000");
  EXPECT_EQ(html::fixed(std::nan(""), 3), "n/a");
  EXPECT_EQ(html::signed_points(0.031), "+3.1");
  EXPECT_EQ(html::signed_points(-0.0004), "0.0");
  EXPECT_EQ(html::signed_points(-0.02), "-2.0");
  EXPECT_EQ(html::interval_text(0.1, 0.25), "[0.100, 0.250]");
}

TEST(Document, EveryFormatEscapesHostileText) {
  Document d;
  d.heading(2, "sec", kHostile);
  d.paragraph(kHostile);
  d.warning(kHostile);
  html::Table t;
  t.caption = kHostile;
  t.header = {"a", "b"};
  t.rows = {{html::Cell::txt(kHostile), html::Cell::num("0.5", true)}};
  d.table(t);
  d.verbatim("```\n<script>document.title='pwned'</script>\n````");

  const std::string h = d.to_html(kHostile);
  EXPECT_THAT(h, Not(HasSubstr("<script")));
  EXPECT_THAT(h, HasSubstr("&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;"));

  const std::string md = d.to_markdown();
  EXPECT_THAT(md, Not(HasSubstr("<script>alert")));
  EXPECT_THAT(md, HasSubstr("\\|"));
  EXPECT_THAT(md, HasSubstr("| **0.5** |"));
  // The verbatim fence is longer than any backtick run inside it.
  EXPECT_THAT(md, HasSubstr("`````text\n"));

  const std::string tex = d.to_latex("comment\nsecond line\rnot a command");
  EXPECT_THAT(tex, HasSubstr("\\textbackslash{}"));
  EXPECT_THAT(tex, HasSubstr("\\$ \\% \\{ \\} \\textasciitilde{} \\textasciicircum{} \\#"));
  EXPECT_THAT(tex, HasSubstr("\\textless{}script\\textgreater{}"));
  EXPECT_THAT(tex, HasSubstr("\\textbf{0.5}"));
  EXPECT_THAT(tex, HasSubstr("% comment\n% second line not a command\n"));
  EXPECT_THAT(tex, Not(HasSubstr("\x01")));
}

TEST(Document, MarkdownAndLatexEscapers) {
  EXPECT_EQ(markdown_escape("a|b_c*d"), "a\\|b\\_c\\*d");
  EXPECT_EQ(markdown_escape("<b>"), "&lt;b&gt;");
  EXPECT_EQ(latex_escape("50% of $x_1$ & more"), "50\\% of \\$x\\_1\\$ \\& more");
}

// pdflatex stops on a character its UTF-8 input does not map ("Unicode character Δ (U+0394) not
// set up for use with LaTeX"): Greek and symbols go to math mode, dashes and quotes to TeX
// ligatures, Latin letters stay, anything else is spelled as its code point. The output is ASCII
// apart from the Latin letters.
TEST(Document, LatexEscapeLeavesNoCharacterPdflatexCannotTypeset) {
  EXPECT_EQ(latex_escape("\xCE\x94 M-F1"), "\\ensuremath{\\mathrm{\\Delta}} M-F1");
  EXPECT_EQ(latex_escape("\xCE\xB1 = 0.05"), "\\ensuremath{\\alpha} = 0.05");
  EXPECT_EQ(latex_escape("5\xE2\x80\x93"
                         "11 \xE2\x80\x94 \xE2\x80\x9Cq\xE2\x80\x9D"),
            "5--11 --- ``q''");
  EXPECT_EQ(
      latex_escape("\xC2\xB1 \xC3\x97 \xE2\x89\xA4 \xE2\x86\x92 \xE2\x80\xA6"),
      "\\ensuremath{\\pm} \\ensuremath{\\times} \\ensuremath{\\leq} \\ensuremath{\\rightarrow} \\ldots{}");
  EXPECT_EQ(latex_escape("caf\xC3\xA9 \xC5\x82\xC3\xB3"
                         "d\xC5\xBA"),
            "caf\xC3\xA9 \xC5\x82\xC3\xB3"
            "d\xC5\xBA");
  EXPECT_EQ(latex_escape("\xE4\xB8\xAD \xF0\x9F\x98\x80"), "[U+4E2D] [U+1F600]");
  EXPECT_EQ(latex_escape("bad \xFF byte"), "bad ? byte");
  // A whole table: the header's Δ and the cells' en dashes come out as commands, never raw.
  Document d;
  html::Table t;
  t.caption = "\xCE\x94 M-F1 per seed";
  t.header = {"system", "\xCE\x94 M-F1 [95% CI]"};
  t.rows = {{html::Cell::txt("trained"), html::Cell::num("\xE2\x80\x93")}};
  d.table(t);
  const std::string tex = d.to_latex("\xCE\x94 in a comment");
  const std::string body = tex.substr(tex.find('\n'));
  for (const char c : body) EXPECT_EQ(static_cast<unsigned char>(c) & 0x80, 0) << tex;
  EXPECT_THAT(tex, HasSubstr("\\ensuremath{\\mathrm{\\Delta}} M-F1 [95\\% CI]"));
}

}  // namespace
}  // namespace numcheck::doc
