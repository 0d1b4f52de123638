#pragma once
// A small toolkit for self-contained HTML reports: escaping, tables, and inline SVG charts
// (stacked bars, interval/forest plots, line charts). No scripts, no external resources: a page
// built with it renders offline and never runs anything. Every string handed to these functions
// is treated as untrusted text and escaped, except the fields named `*_html`, which must already
// be markup produced by this toolkit.
//
// Used by the orbit report (src/report/orbit_report.cpp) and the consensus study's risk-coverage
// section (src/consensus).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace numcheck::doc::html {

// Escapes text for HTML element content and quoted attribute values: & < > " ' become entities;
// invalid UTF-8 bytes and control characters other than \t \n \r become U+FFFD, so the output is
// always valid UTF-8 whatever the input bytes.
[[nodiscard]] std::string html_escape(std::string_view text);

// A CSS colour for series i of a fixed, colour-blind-safe palette (Okabe & Ito, 2008); cycles.
[[nodiscard]] std::string_view palette(std::size_t i);

// ---- tables ------------------------------------------------------------------------------------

struct Cell {
  std::string text;       // escaped on output
  bool numeric = false;   // right-aligned, tabular figures
  bool emphasis = false;  // bold (e.g. a material effect)
  std::string title;      // optional tooltip (escaped)
  std::string html;       // if non-empty, used instead of text (must be toolkit markup)
  static Cell num(std::string t, bool emph = false) { return Cell{std::move(t), true, emph, {}, {}}; }
  static Cell txt(std::string t) { return Cell{std::move(t), false, false, {}, {}}; }
};

struct Table {
  std::string caption;              // escaped
  std::vector<std::string> header;  // escaped
  std::vector<std::vector<Cell>> rows;
  std::string note;  // escaped, printed under the table
  std::string id;    // optional element id (escaped)
};

// <table> with caption, thead and tbody inside a horizontally scrollable wrapper.
[[nodiscard]] std::string render_table(const Table& t);

// ---- charts ------------------------------------------------------------------------------------

struct Segment {
  std::string label;  // legend name (escaped)
  std::string color;  // CSS colour; empty = palette by segment index
};

// Horizontal stacked bars: one bar per row, values are counts (or any non-negative amounts) per
// segment; each bar is normalised to its own total (a 100% bar) unless `normalise` is false, in
// which case the axis runs to the largest total.
struct StackedBarChart {
  std::string title;  // escaped
  std::vector<Segment> segments;
  std::vector<std::string> row_labels;      // escaped
  std::vector<std::vector<double>> values;  // values[row][segment]
  bool normalise = true;
  std::string axis_label = "share of responses";
  std::string id;
};
[[nodiscard]] std::string stacked_bar_chart(const StackedBarChart& c);

// Point estimates with intervals (a forest plot) on a common horizontal axis, with a reference
// line (e.g. 0) and optional threshold lines (e.g. +/- 0.03).
struct IntervalRow {
  std::string label;  // escaped
  double estimate = 0.0;
  double lo = 0.0;
  double hi = 0.0;
  bool highlight = false;  // drawn in the accent colour (e.g. material)
};
struct IntervalChart {
  std::string title;
  std::vector<IntervalRow> rows;
  std::optional<double> reference = 0.0;
  std::vector<double> thresholds;
  std::string axis_label;
  bool percent_axis = true;  // tick labels as percentage points
  std::string id;
};
[[nodiscard]] std::string interval_chart(const IntervalChart& c);

// Line chart (e.g. risk-coverage curves): each series a polyline through (x, y) points in the
// given order. Axis ranges default to the data range (padded) unless set.
struct LineSeries {
  std::string name;   // legend (escaped)
  std::string color;  // empty = palette by series index
  std::vector<std::pair<double, double>> points;
  bool dashed = false;
  bool step = false;  // draw as a step function (horizontal then vertical)
};
struct LineChart {
  std::string title;
  std::vector<LineSeries> series;
  std::string x_label;
  std::string y_label;
  std::optional<double> x_min, x_max, y_min, y_max;
  bool x_percent = false;
  bool y_percent = false;
  std::string id;
};
[[nodiscard]] std::string line_chart(const LineChart& c);

// Simple grouped vertical bars: groups along x, one bar per series within each group.
struct BarChart {
  std::string title;
  std::vector<std::string> groups;          // x labels (escaped)
  std::vector<std::string> series;          // legend names (escaped)
  std::vector<std::vector<double>> values;  // values[group][series]
  std::string y_label;
  bool y_percent = false;
  std::optional<double> y_max;
  std::string id;
};
[[nodiscard]] std::string bar_chart(const BarChart& c);

// A standalone SVG document (starts with <svg; UTF-8; own stylesheet, white background) made from a chart
// this toolkit drew (`<figure><svg>...</svg><figcaption>`), so the figure renders on its own (e.g.
// linked from Markdown). Throws numcheck::Error when the markup holds no <svg> element.
[[nodiscard]] std::string standalone_svg(std::string_view figure_html);

// ---- page --------------------------------------------------------------------------------------

// A complete document: <!DOCTYPE html>, UTF-8, a restrictive Content-Security-Policy
// (default-src 'none'; style-src 'unsafe-inline'; img-src data:) so nothing can load or run even
// if markup were injected, the toolkit's stylesheet, the title (escaped) and `body_html`.
[[nodiscard]] std::string page(std::string_view title, std::string_view body_html);

// <section> with an id and an <h2> heading (escaped), wrapping body_html.
[[nodiscard]] std::string section(std::string_view id, std::string_view heading, std::string_view body_html);
// <p> of escaped text.
[[nodiscard]] std::string paragraph(std::string_view text);

// Number formatting shared by reports: fixed decimals ("0.971"), percentage points with sign
// ("+3.1"), and an interval "[0.962, 0.979]".
[[nodiscard]] std::string fixed(double v, int decimals = 3);
[[nodiscard]] std::string signed_points(double v, int decimals = 1);
[[nodiscard]] std::string interval_text(double lo, double hi, int decimals = 3);

}  // namespace numcheck::doc::html
