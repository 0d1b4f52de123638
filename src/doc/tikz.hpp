#pragma once
// The report's figures for LaTeX: a translator from the SVG subset the chart toolkit
// (report/html.hpp) draws to a TikZ picture, so report.tex shows the same charts as report.html and
// figures/*.svg, made from the same markup, with no converter program and no new dependency (the
// document needs \usepackage{tikz} and \usepackage{graphicx}).
//
// Supported (everything the toolkit emits): <rect x y width height fill>, <line x1 y1 x2 y2> with a
// toolkit class (ax, tk, gr, ref, th) or stroke / stroke-width / stroke-dasharray, <polyline
// points stroke stroke-width stroke-dasharray>, <circle cx cy r fill>, <text x y class
// text-anchor [transform="rotate(-90 X Y)"]>; <title>, <style>, <figcaption> and the
// percentage-sized background rect are skipped. Coordinates stay in SVG pixels (1 px = 0.5 pt, y
// pointing down) and the picture is scaled to \linewidth. Text is HTML-unescaped, then escaped for
// LaTeX. Colours are hex (#RGB or #RRGGBB); any other colour value becomes black.
#include <string>
#include <string_view>

namespace numcheck::doc {

struct TikzFigure {
  std::string title;    // the chart's <title> (unescaped text), for the caption
  std::string colors;   // "\definecolor{nc0}{HTML}{0072B2}" lines the picture uses
  std::string picture;  // "\begin{tikzpicture}...\end{tikzpicture}"
};

// Throws numcheck::Error when the markup holds no <svg> element or an element is malformed
// (an unterminated tag or attribute).
[[nodiscard]] TikzFigure svg_to_tikz(std::string_view figure_html);

}  // namespace numcheck::doc
