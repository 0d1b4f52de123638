#pragma once
// A report as a list of blocks (headings, paragraphs, tables, figures, verbatim text) rendered
// three ways from the same content: Markdown, self-contained HTML, and LaTeX tables. Text in every
// block is untrusted and escaped by each renderer for its format.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "doc/html.hpp"

namespace numcheck::doc {

struct Block {
  enum class Kind { kHeading, kParagraph, kWarning, kTable, kFigure, kVerbatim };
  Kind kind = Kind::kParagraph;
  int level = 2;            // headings: 1..3
  std::string id;           // headings: anchor id
  std::string text;         // heading, paragraph, warning or verbatim text
  html::Table table;        // tables
  std::string figure_html;  // figures: toolkit chart markup (<figure><svg>...)
  std::string figure_file;  // figures: file name under figures/ (set by Document::figure)
  bool in_latex = true;     // tables: exported to report.tex
};

class Document {
 public:
  void heading(int level, std::string id, std::string text);
  void paragraph(std::string text);
  void warning(std::string text);
  void table(html::Table t, bool in_latex = true);
  // A toolkit chart. Markdown links it as figures/<file> (see figure_files); the file name is
  // "NN-<chart id>.svg" (NN = 1-based figure number, id reduced to [A-Za-z0-9_-]).
  void figure(std::string html);
  void verbatim(std::string text);

  [[nodiscard]] const std::vector<Block>& blocks() const noexcept { return blocks_; }

  // Inserts other's blocks before the first heading whose id is `heading_id` (appends when there
  // is none); figure file names are renumbered.
  void insert_before(std::string_view heading_id, const Document& other);

  // Every figure as (file name, standalone SVG), the files report.md links as figures/<name>.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> figure_files() const;

  [[nodiscard]] std::string to_markdown() const;
  // A full HTML page; level-2 headings get a table of contents.
  [[nodiscard]] std::string to_html(std::string_view title) const;
  // The tables, each a `table` float with booktabs rules, and the figures, each a `figure` float
  // holding a TikZ picture translated from the chart's SVG (doc/tikz.hpp), in document order
  // (needs \usepackage{booktabs}, \usepackage{graphicx} and \usepackage{tikz}).
  [[nodiscard]] std::string to_latex(std::string_view preamble_comment) const;

 private:
  void number_figures();
  std::vector<Block> blocks_;
};

// The directory (relative to the report) that figure_files() are written to and linked from.
inline constexpr std::string_view kFigureDir = "figures";

// Escapers for the two text formats (HTML is html::html_escape).
[[nodiscard]] std::string markdown_escape(std::string_view text);
[[nodiscard]] std::string latex_escape(std::string_view text);

}  // namespace numcheck::doc
