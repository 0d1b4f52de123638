#include "doc/html.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace numcheck::doc::html {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of a valid UTF-8 sequence starting at s[i], or 0 if the bytes there are not one
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  auto cont = [&](std::size_t k) {
    return i + k < s.size() && (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
  };
  if (b0 < 0x80) return 1;
  if (b0 >= 0xC2 && b0 <= 0xDF) return cont(1) ? 2 : 0;
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    const auto b1 = static_cast<unsigned char>(s[i + 1]);
    if (b0 == 0xE0 && b1 < 0xA0) return 0;   // overlong
    if (b0 == 0xED && b1 >= 0xA0) return 0;  // surrogates
    return 3;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    const auto b1 = static_cast<unsigned char>(s[i + 1]);
    if (b0 == 0xF0 && b1 < 0x90) return 0;   // overlong
    if (b0 == 0xF4 && b1 >= 0x90) return 0;  // > U+10FFFF
    return 4;
  }
  return 0;
}

std::string attr(std::string_view s) { return html_escape(s); }

// Tick positions for an axis over [lo, hi]: about `target` "nice" steps (1, 2, 5 x 10^k).
std::vector<double> nice_ticks(double lo, double hi, int target = 5) {
  std::vector<double> ticks;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) {
    ticks.push_back(lo);
    return ticks;
  }
  const double raw = (hi - lo) / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (raw <= m * mag * 1.0000001) {
      step = m * mag;
      break;
    }
  }
  const double first = std::ceil(lo / step - 1e-9) * step;
  for (int i = 0; i < 100; ++i) {
    const double v = first + i * step;
    if (v > hi + step * 1e-9) break;
    ticks.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  }
  return ticks;
}

std::string tick_label(double v, bool percent, double span) {
  if (percent) {
    const double pts = v * 100.0;
    const int dec = span * 100.0 < 5.0 ? 1 : 0;
    return fmt::format("{:.{}f}", pts, dec);
  }
  const int dec = span < 0.05 ? 3 : span < 0.5 ? 2 : span < 5 ? 1 : 0;
  return fmt::format("{:.{}f}", v, dec);
}

std::string color_or_palette(const std::string& c, std::size_t i) {
  return c.empty() ? std::string(palette(i)) : c;
}

std::string svg_open(double w, double h, std::string_view title, std::string_view id) {
  std::string s = fmt::format(
      "<figure class=\"chart\"{}><svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {:.0f} "
      "{:.0f}\" width=\"{:.0f}\" role=\"img\" aria-label=\"{}\">",
      id.empty() ? std::string() : fmt::format(" id=\"{}\"", attr(id)), w, h, w, attr(title));
  s += fmt::format("<title>{}</title>", html_escape(title));
  return s;
}

std::string svg_close(std::string_view title) {
  return fmt::format("</svg><figcaption>{}</figcaption></figure>\n", html_escape(title));
}

double approx_text_width(std::string_view s, double px = 6.6) {
  std::size_t chars = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++chars;
  }
  return static_cast<double>(chars) * px;
}

// Legend entries laid out left to right, wrapping at width; returns markup and the height used.
std::pair<std::string, double> legend(const std::vector<std::pair<std::string, std::string>>& items,
                                      double x0, double y0, double width, bool lines = false) {
  std::string s;
  double x = x0;
  double y = y0;
  for (const auto& [name, color] : items) {
    const double w = 18 + approx_text_width(name) + 16;
    if (x + w > x0 + width && x > x0) {
      x = x0;
      y += 18;
    }
    if (lines) {
      s += fmt::format(
          "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
          "stroke-width=\"3\"/>",
          x, y + 6, x + 12, y + 6, attr(color));
    } else {
      s += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"12\" height=\"12\" fill=\"{}\"/>", x, y,
                       attr(color));
    }
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"lg\">{}</text>", x + 16, y + 10,
                     html_escape(name));
    x += w;
  }
  return {s, y - y0 + 22};
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t len = utf8_sequence(text, i);
    if (len == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    if (len > 1) {
      out.append(text.substr(i, len));
      i += len;
      continue;
    }
    const char c = text[i++];
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '\t':
      case '\n':
      case '\r':
        out += c;
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
          out += kReplacement;
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string_view palette(std::size_t i) {
  // Okabe & Ito, "Color Universal Design" (2008), without black and yellow (low contrast).
  static constexpr std::string_view kColors[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                                 "#CC79A7", "#56B4E9", "#999999", "#F0E442"};
  return kColors[i % (sizeof(kColors) / sizeof(kColors[0]))];
}

std::string render_table(const Table& t) {
  std::string s = "<div class=\"tw\"><table";
  if (!t.id.empty()) s += fmt::format(" id=\"{}\"", attr(t.id));
  s += ">";
  if (!t.caption.empty()) s += fmt::format("<caption>{}</caption>", html_escape(t.caption));
  if (!t.header.empty()) {
    s += "<thead><tr>";
    for (const auto& h : t.header) s += fmt::format("<th scope=\"col\">{}</th>", html_escape(h));
    s += "</tr></thead>";
  }
  s += "<tbody>";
  for (const auto& row : t.rows) {
    s += "<tr>";
    for (const auto& cell : row) {
      std::string cls;
      if (cell.numeric) cls += "n";
      if (cell.emphasis) cls += cls.empty() ? "em" : " em";
      s += "<td";
      if (!cls.empty()) s += fmt::format(" class=\"{}\"", cls);
      if (!cell.title.empty()) s += fmt::format(" title=\"{}\"", attr(cell.title));
      s += ">";
      s += cell.html.empty() ? html_escape(cell.text) : cell.html;
      s += "</td>";
    }
    s += "</tr>";
  }
  s += "</tbody></table></div>\n";
  if (!t.note.empty()) s += fmt::format("<p class=\"note\">{}</p>\n", html_escape(t.note));
  return s;
}

std::string stacked_bar_chart(const StackedBarChart& c) {
  const double width = 760;
  double label_w = 60;
  for (const auto& l : c.row_labels) label_w = std::max(label_w, approx_text_width(l) + 12);
  label_w = std::min(label_w, 280.0);
  const double right = 20;
  const double plot_w = width - label_w - right;
  std::vector<std::pair<std::string, std::string>> items;
  for (std::size_t k = 0; k < c.segments.size(); ++k) {
    items.emplace_back(c.segments[k].label, color_or_palette(c.segments[k].color, k));
  }
  auto [legend_svg, legend_h] = legend(items, label_w, 8, plot_w);
  const double top = 8 + legend_h + 4;
  const double bar_h = 18;
  const double gap = 6;
  const double rows = static_cast<double>(c.row_labels.size());
  const double axis_y = top + rows * (bar_h + gap);
  const double height = axis_y + 40;

  double max_total = 0;
  for (const auto& v : c.values) {
    double tot = 0;
    for (double x : v) tot += std::max(0.0, x);
    max_total = std::max(max_total, tot);
  }
  const double axis_max = c.normalise ? 1.0 : (max_total > 0 ? max_total : 1.0);

  std::string s = svg_open(width, height, c.title, c.id);
  s += legend_svg;
  for (std::size_t r = 0; r < c.row_labels.size(); ++r) {
    const double y = top + static_cast<double>(r) * (bar_h + gap);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"rl\" text-anchor=\"end\">{}</text>",
                     label_w - 6, y + bar_h * 0.72, html_escape(c.row_labels[r]));
    const std::vector<double> empty;
    const auto& v = r < c.values.size() ? c.values[r] : empty;
    double total = 0;
    for (double x : v) total += std::max(0.0, x);
    double x = label_w;
    for (std::size_t k = 0; k < v.size() && k < c.segments.size(); ++k) {
      const double val = std::max(0.0, v[k]);
      if (val <= 0) continue;
      const double share = total > 0 ? val / total : 0;
      const double w = plot_w * (c.normalise ? share : val / axis_max);
      s += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" fill=\"{}\"><title>{}: "
          "{}: {} ({:.1f}%)</title></rect>",
          x, y, w, bar_h, attr(color_or_palette(c.segments[k].color, k)), html_escape(c.row_labels[r]),
          html_escape(c.segments[k].label), fmt::format("{:g}", val), share * 100.0);
      x += w;
    }
  }
  // Axis.
  s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" class=\"ax\"/>", label_w,
                   axis_y, label_w + plot_w, axis_y);
  for (double tv : nice_ticks(0, axis_max)) {
    const double tx = label_w + plot_w * tv / axis_max;
    s += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" class=\"tk\"/><text "
        "x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\" class=\"tl\">{4}</text>",
        tx, axis_y, axis_y + 4, axis_y + 16, tick_label(tv, c.normalise, axis_max));
  }
  s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" class=\"al\">{}</text>",
                   label_w + plot_w / 2, axis_y + 32,
                   html_escape(c.normalise ? c.axis_label + " (%)" : c.axis_label));
  s += svg_close(c.title);
  return s;
}

std::string interval_chart(const IntervalChart& c) {
  const double width = 760;
  double label_w = 60;
  for (const auto& r : c.rows) label_w = std::max(label_w, approx_text_width(r.label) + 12);
  label_w = std::min(label_w, 280.0);
  const double value_w = 170;
  const double plot_w = width - label_w - value_w - 10;
  const double row_h = 22;
  const double top = 10;
  const double axis_y = top + static_cast<double>(c.rows.size()) * row_h + 4;
  const double height = axis_y + 40;

  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (const auto& r : c.rows) {
    for (double v : {r.estimate, r.lo, r.hi}) {
      if (std::isfinite(v)) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
    }
  }
  if (c.reference) {
    lo = std::min(lo, *c.reference);
    hi = std::max(hi, *c.reference);
  }
  for (double t : c.thresholds) {
    lo = std::min(lo, t);
    hi = std::max(hi, t);
  }
  if (!std::isfinite(lo) || !std::isfinite(hi)) {
    lo = -0.05;
    hi = 0.05;
  }
  if (hi - lo < 1e-9) {
    lo -= 0.01;
    hi += 0.01;
  }
  const double pad = (hi - lo) * 0.05;
  lo -= pad;
  hi += pad;
  auto x_px = [&](double v) { return label_w + plot_w * (v - lo) / (hi - lo); };

  std::string s = svg_open(width, height, c.title, c.id);
  for (double t : c.thresholds) {
    s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" class=\"th\"/>",
                     x_px(t), top - 4, axis_y);
  }
  if (c.reference) {
    s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" class=\"ref\"/>",
                     x_px(*c.reference), top - 4, axis_y);
  }
  for (std::size_t i = 0; i < c.rows.size(); ++i) {
    const auto& r = c.rows[i];
    const double y = top + static_cast<double>(i) * row_h + row_h / 2;
    const std::string col = r.highlight ? "#D55E00" : "#0072B2";
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"rl\" text-anchor=\"end\">{}</text>",
                     label_w - 6, y + 4, html_escape(r.label));
    const std::string value_text =
        c.percent_axis
            ? fmt::format("{} [{}, {}]", signed_points(r.estimate), signed_points(r.lo), signed_points(r.hi))
            : fmt::format("{} {}", fixed(r.estimate), interval_text(r.lo, r.hi));
    if (std::isfinite(r.lo) && std::isfinite(r.hi)) {
      s += fmt::format(
          "<line x1=\"{:.2f}\" y1=\"{:.1f}\" x2=\"{:.2f}\" y2=\"{:.1f}\" stroke=\"{}\" "
          "stroke-width=\"2\"/>",
          x_px(r.lo), y, x_px(r.hi), y, col);
    }
    if (std::isfinite(r.estimate)) {
      s += fmt::format(
          "<circle cx=\"{:.2f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"><title>{}: {}</title></circle>",
          x_px(r.estimate), y, col, html_escape(r.label), html_escape(value_text));
    }
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"vl\">{}</text>", label_w + plot_w + 10, y + 4,
                     html_escape(value_text));
  }
  s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" class=\"ax\"/>", label_w,
                   axis_y, label_w + plot_w, axis_y);
  for (double tv : nice_ticks(lo, hi)) {
    s += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" class=\"tk\"/><text "
        "x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\" class=\"tl\">{4}</text>",
        x_px(tv), axis_y, axis_y + 4, axis_y + 16, tick_label(tv, c.percent_axis, hi - lo));
  }
  s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" class=\"al\">{}</text>",
                   label_w + plot_w / 2, axis_y + 32, html_escape(c.axis_label));
  s += svg_close(c.title);
  return s;
}

std::string line_chart(const LineChart& c) {
  const double width = 760;
  const double left = 64;
  const double right = 20;
  const double plot_w = width - left - right;
  std::vector<std::pair<std::string, std::string>> items;
  for (std::size_t k = 0; k < c.series.size(); ++k) {
    items.emplace_back(c.series[k].name, color_or_palette(c.series[k].color, k));
  }
  auto [legend_svg, legend_h] = legend(items, left, 8, plot_w, true);
  const double top = 8 + legend_h + 6;
  const double plot_h = 300;
  const double bottom = top + plot_h;
  const double height = bottom + 44;

  double xmin = std::numeric_limits<double>::infinity(), xmax = -xmin;
  double ymin = xmin, ymax = -xmin;
  for (const auto& ser : c.series) {
    for (const auto& [x, y] : ser.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      xmin = std::min(xmin, x);
      xmax = std::max(xmax, x);
      ymin = std::min(ymin, y);
      ymax = std::max(ymax, y);
    }
  }
  if (!std::isfinite(xmin)) xmin = 0, xmax = 1, ymin = 0, ymax = 1;
  if (c.x_min) xmin = *c.x_min;
  if (c.x_max) xmax = *c.x_max;
  if (c.y_min) ymin = *c.y_min;
  if (c.y_max) ymax = *c.y_max;
  if (xmax - xmin < 1e-12) xmax = xmin + 1;
  if (ymax - ymin < 1e-12) ymax = ymin + (ymin == 0 ? 1 : std::abs(ymin) * 0.1);
  auto x_px = [&](double v) { return left + plot_w * (v - xmin) / (xmax - xmin); };
  auto y_px = [&](double v) { return bottom - plot_h * (v - ymin) / (ymax - ymin); };

  std::string s = svg_open(width, height, c.title, c.id);
  s += legend_svg;
  for (double tv : nice_ticks(ymin, ymax)) {
    s += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" class=\"gr\"/><text "
        "x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" class=\"tl\">{}</text>",
        left, y_px(tv), left + plot_w, y_px(tv), left - 6, y_px(tv) + 4,
        tick_label(tv, c.y_percent, ymax - ymin));
  }
  for (double tv : nice_ticks(xmin, xmax)) {
    s += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" class=\"tk\"/><text "
        "x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\" class=\"tl\">{4}</text>",
        x_px(tv), bottom, bottom + 4, bottom + 16, tick_label(tv, c.x_percent, xmax - xmin));
  }
  s += fmt::format(
      "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" class=\"ax\"/><line "
      "x1=\"{0:.1f}\" y1=\"{2:.1f}\" x2=\"{3:.1f}\" y2=\"{2:.1f}\" class=\"ax\"/>",
      left, top, bottom, left + plot_w);
  for (std::size_t k = 0; k < c.series.size(); ++k) {
    const auto& ser = c.series[k];
    std::string pts;
    bool have_prev = false;
    double prev_y = 0;
    for (const auto& [x, y] : ser.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      const double cx = std::clamp(x_px(x), left - 2, left + plot_w + 2);
      const double cy = std::clamp(y_px(y), top - 2, bottom + 2);
      if (ser.step && have_prev) pts += fmt::format("{:.2f},{:.2f} ", cx, prev_y);
      pts += fmt::format("{:.2f},{:.2f} ", cx, cy);
      prev_y = cy;
      have_prev = true;
    }
    s += fmt::format(
        "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}><title>{}</title>"
        "</polyline>",
        pts, attr(color_or_palette(ser.color, k)), ser.dashed ? " stroke-dasharray=\"6 4\"" : "",
        html_escape(ser.name));
  }
  s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" class=\"al\">{}</text>",
                   left + plot_w / 2, bottom + 34, html_escape(c.x_label));
  s += fmt::format(
      "<text x=\"14\" y=\"{0:.1f}\" text-anchor=\"middle\" class=\"al\" transform=\"rotate(-90 14 "
      "{0:.1f})\">{1}</text>",
      top + plot_h / 2, html_escape(c.y_label));
  s += svg_close(c.title);
  return s;
}

std::string bar_chart(const BarChart& c) {
  const double width = 760;
  const double left = 64;
  const double right = 20;
  const double plot_w = width - left - right;
  std::vector<std::pair<std::string, std::string>> items;
  for (std::size_t k = 0; k < c.series.size(); ++k) {
    items.emplace_back(c.series[k], std::string(palette(k)));
  }
  auto [legend_svg, legend_h] = legend(items, left, 8, plot_w);
  const double top = 8 + legend_h + 6;
  const double plot_h = 240;
  const double bottom = top + plot_h;
  const double height = bottom + 48;
  double ymax = 0;
  for (const auto& g : c.values) {
    for (double v : g) {
      if (std::isfinite(v)) ymax = std::max(ymax, v);
    }
  }
  if (c.y_max) ymax = *c.y_max;
  if (ymax <= 0) ymax = 1;
  auto y_px = [&](double v) { return bottom - plot_h * std::clamp(v, 0.0, ymax) / ymax; };
  std::string s = svg_open(width, height, c.title, c.id);
  s += legend_svg;
  for (double tv : nice_ticks(0, ymax)) {
    s += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" class=\"gr\"/><text "
        "x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" class=\"tl\">{}</text>",
        left, y_px(tv), left + plot_w, y_px(tv), left - 6, y_px(tv) + 4, tick_label(tv, c.y_percent, ymax));
  }
  const double ng = std::max<double>(1, static_cast<double>(c.groups.size()));
  const double group_w = plot_w / ng;
  const double ns = std::max<double>(1, static_cast<double>(c.series.size()));
  const double bar_w = group_w * 0.8 / ns;
  for (std::size_t g = 0; g < c.groups.size(); ++g) {
    const double gx = left + group_w * static_cast<double>(g);
    for (std::size_t k = 0; k < c.series.size(); ++k) {
      const double v = g < c.values.size() && k < c.values[g].size() ? c.values[g][k] : 0.0;
      if (!std::isfinite(v)) continue;
      const double x = gx + group_w * 0.1 + bar_w * static_cast<double>(k);
      s += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"{}\"><title>{}: "
          "{}: {}</title></rect>",
          x, y_px(v), bar_w, bottom - y_px(v), palette(k), html_escape(c.groups[g]), html_escape(c.series[k]),
          c.y_percent ? fmt::format("{:.1f}%", v * 100) : fmt::format("{:g}", v));
    }
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" class=\"tl\">{}</text>",
                     gx + group_w / 2, bottom + 16, html_escape(c.groups[g]));
  }
  s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" class=\"ax\"/>", left,
                   bottom, left + plot_w, bottom);
  s += fmt::format(
      "<text x=\"14\" y=\"{0:.1f}\" text-anchor=\"middle\" class=\"al\" transform=\"rotate(-90 14 "
      "{0:.1f})\">{1}</text>",
      top + plot_h / 2, html_escape(c.y_label));
  s += svg_close(c.title);
  return s;
}

std::string page(std::string_view title, std::string_view body_html) {
  static constexpr std::string_view kStyle = R"css(
:root{color-scheme:light}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
 margin:0 auto;max-width:1180px;padding:16px 24px 48px;color:#1b1f24;background:#fff;line-height:1.45;font-size:15px}
h1{font-size:1.6em;margin:.4em 0 .2em}h2{font-size:1.25em;margin:1.6em 0 .4em;border-bottom:1px solid #d0d7de;padding-bottom:.2em}
h3{font-size:1.05em;margin:1.2em 0 .3em}
.tw{overflow-x:auto;margin:.4em 0 .8em}
table{border-collapse:collapse;font-size:13.5px}
caption{text-align:left;font-weight:600;padding:.3em 0}
th,td{border:1px solid #d0d7de;padding:3px 8px;vertical-align:top}
th{background:#f3f5f7;text-align:left;position:sticky;top:0}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.em,td .em{font-weight:700}
tbody tr:nth-child(even){background:#fafbfc}
p.note{font-size:12.5px;color:#57606a;margin:.2em 0 1em}
figure.chart{margin:.6em 0 1.2em;max-width:100%}
figure.chart svg{max-width:100%;height:auto;display:block}
figcaption{font-size:12.5px;color:#57606a}
svg text{font-family:inherit;fill:#1b1f24}
svg .lg,svg .tl,svg .vl{font-size:11px}
svg .rl{font-size:11.5px}
svg .al{font-size:11.5px;fill:#57606a}
svg .ax{stroke:#57606a;stroke-width:1}
svg .tk{stroke:#57606a}
svg .gr{stroke:#eaeef2}
svg .ref{stroke:#1b1f24;stroke-width:1}
svg .th{stroke:#D55E00;stroke-dasharray:4 3;stroke-width:1}
.badge{display:inline-block;background:#fff1e5;color:#9a4400;border:1px solid #f0b27a;border-radius:4px;padding:0 6px;font-size:12px;font-weight:600}
nav ul{columns:3;font-size:13.5px}
.warn{background:#fff8e5;border-left:4px solid #E69F00;padding:6px 10px}
pre.resp{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;border:1px solid #d0d7de;padding:8px;font-size:12.5px;max-height:18em;overflow:auto}
.sim{color:#9a4400;font-weight:600}
code{font-size:90%}
@media print{nav{display:none}}
)css";
  std::string s =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
      "'unsafe-inline'; img-src data:\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>";
  s += html_escape(title);
  s += "</title>\n<style>";
  s += kStyle;
  s += "</style>\n</head>\n<body>\n";
  s += body_html;
  s += "\n</body>\n</html>\n";
  return s;
}

std::string section(std::string_view id, std::string_view heading, std::string_view body_html) {
  return fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n{}</section>\n", attr(id), html_escape(heading),
                     body_html);
}

std::string paragraph(std::string_view text) { return fmt::format("<p>{}</p>\n", html_escape(text)); }

std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "n/a";
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (s.find_first_not_of("-0.") == std::string::npos && s[0] == '-') s.erase(0, 1);  // "-0.000"
  return s;
}

std::string signed_points(double v, int decimals) {
  if (!std::isfinite(v)) return "n/a";
  std::string s = fmt::format("{:+.{}f}", v * 100.0, decimals);
  if (s.find_first_not_of("+-0.") == std::string::npos) s = fmt::format("{:.{}f}", 0.0, decimals);
  return s;
}

std::string interval_text(double lo, double hi, int decimals) {
  return fmt::format("[{}, {}]", fixed(lo, decimals), fixed(hi, decimals));
}

std::string standalone_svg(std::string_view figure_html) {
  const auto b = figure_html.find("<svg");
  const auto e = figure_html.rfind("</svg>");
  if (b == std::string_view::npos || e == std::string_view::npos || e < b) {
    fail("figure markup holds no <svg> element");
  }
  std::string svg(figure_html.substr(b, e + 6 - b));
  const auto open_end = svg.find('>');
  // The page stylesheet's chart rules, scoped to this file.
  static constexpr std::string_view kStyle =
      "<style>text{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;fill:#1b1f24}"
      ".lg,.tl,.vl{font-size:11px}.rl{font-size:11.5px}.al{font-size:11.5px;fill:#57606a}"
      ".ax{stroke:#57606a;stroke-width:1}.tk{stroke:#57606a}.gr{stroke:#eaeef2}"
      ".ref{stroke:#1b1f24;stroke-width:1}.th{stroke:#D55E00;stroke-dasharray:4 3;stroke-width:1}</style>"
      "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>";
  svg.insert(open_end + 1, kStyle);
  return svg + "\n";
}

}  // namespace numcheck::doc::html
