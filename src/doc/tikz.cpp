#include "doc/tikz.hpp"

#include <charconv>
#include <cstdio>
#include <map>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "core/ascii.hpp"
#include "core/error.hpp"
#include "doc/document.hpp"

namespace numcheck::doc {

namespace {

struct Element {
  std::string name;  // "rect", "/text", ...
  std::map<std::string, std::string> attrs;
  bool self_closing = false;
};

// Reads one tag starting at s[i] == '<'; advances i past '>'.
Element read_tag(std::string_view s, std::size_t& i) {
  Element e;
  std::size_t j = i + 1;
  while (j < s.size() && s[j] != '>' && s[j] != '/' && !ascii::is_space(s[j])) ++j;
  if (j < s.size() && s[j] == '/' && j == i + 1) {  // a closing tag
    const auto end = s.find('>', j);
    if (end == std::string_view::npos) fail("figure markup: unterminated tag at byte {}", i);
    e.name = "/" + std::string(s.substr(j + 1, end - j - 1));
    i = end + 1;
    return e;
  }
  e.name = std::string(s.substr(i + 1, j - i - 1));
  while (true) {
    while (j < s.size() && ascii::is_space(s[j])) ++j;
    if (j >= s.size()) fail("figure markup: unterminated <{}> tag", e.name);
    if (s[j] == '>') {
      i = j + 1;
      return e;
    }
    if (s[j] == '/') {
      if (j + 1 >= s.size() || s[j + 1] != '>') fail("figure markup: stray '/' in <{}>", e.name);
      e.self_closing = true;
      i = j + 2;
      return e;
    }
    std::size_t k = j;
    while (k < s.size() && s[k] != '=' && s[k] != '>' && !ascii::is_space(s[k])) ++k;
    const std::string key(s.substr(j, k - j));
    if (k >= s.size() || s[k] != '=' || k + 1 >= s.size() || s[k + 1] != '"') {
      fail("figure markup: attribute '{}' of <{}> is not name=\"value\"", key, e.name);
    }
    const auto close = s.find('"', k + 2);
    if (close == std::string_view::npos)
      fail("figure markup: unterminated attribute '{}' of <{}>", key, e.name);
    e.attrs[key] = std::string(s.substr(k + 2, close - k - 2));
    j = close + 1;
  }
}

std::string html_unescape(std::string_view s) {
  static constexpr std::pair<std::string_view, std::string_view> kEntities[] = {
      {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&#x27;", "'"}};
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    bool done = false;
    if (s[i] == '&') {
      for (const auto& [ent, ch] : kEntities) {
        if (s.substr(i, ent.size()) == ent) {
          out += ch;
          i += ent.size();
          done = true;
          break;
        }
      }
    }
    if (!done) out += s[i++];
  }
  return out;
}

std::optional<double> number(const std::map<std::string, std::string>& a, const std::string& key) {
  auto it = a.find(key);
  if (it == a.end()) return std::nullopt;
  const std::string& v = it->second;
  double d = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
  if (ec != std::errc() || p != v.data() + v.size()) return std::nullopt;
  return d;
}

std::string attr(const std::map<std::string, std::string>& a, const std::string& key) {
  auto it = a.find(key);
  return it == a.end() ? std::string() : it->second;
}

// Hex colour as "RRGGBB" (upper case) or nullopt.
std::optional<std::string> hex_color(std::string c) {
  if (c.empty() || c[0] != '#') return std::nullopt;
  c.erase(0, 1);
  if (c.size() == 3) c = {c[0], c[0], c[1], c[1], c[2], c[2]};
  if (c.size() != 6) return std::nullopt;
  for (char& ch : c) {
    const char up = ascii::to_upper(ch);
    if (!ascii::is_digit(up) && (up < 'A' || up > 'F')) return std::nullopt;
    ch = up;
  }
  return c;
}

// Line styles of the toolkit's stylesheet classes (html.cpp standalone_svg).
struct Stroke {
  std::string color = "1B1F24";
  double width = 1;
  std::string dash;  // "" or "on A off B" in px
};
std::optional<Stroke> class_stroke(const std::string& cls) {
  if (cls == "ax" || cls == "tk") return Stroke{"57606A", 1, ""};
  if (cls == "gr") return Stroke{"EAEEF2", 1, ""};
  if (cls == "ref") return Stroke{"1B1F24", 1, ""};
  if (cls == "th") return Stroke{"D55E00", 1, "on 4 off 3"};
  return std::nullopt;
}

constexpr double kPt = 0.5;  // pt per SVG px

std::string f2(double v) {
  std::string s = fmt::format("{:.2f}", v);
  if (s == "-0.00") s = "0.00";
  return s;
}

class Emitter {
 public:
  std::string color(const std::string& raw) {
    const std::string hex = hex_color(raw).value_or("000000");
    auto it = colors_.find(hex);
    if (it != colors_.end()) return it->second;
    std::string name = fmt::format("nc{}", colors_.size());
    colors_[hex] = name;
    defs_ += fmt::format("\\definecolor{{{}}}{{HTML}}{{{}}}\n", name, hex);
    return name;
  }
  std::string stroke_opts(const Stroke& st) {
    std::string o = fmt::format("draw={}, line width={}pt", color(st.color.empty() ? "#000" : "#" + st.color),
                                f2(st.width * kPt));
    if (!st.dash.empty()) {
      double on = 0, off = 0;
      if (std::sscanf(st.dash.c_str(), "on %lf off %lf", &on, &off) == 2) {
        o += fmt::format(", dash pattern=on {}pt off {}pt", f2(on * kPt), f2(off * kPt));
      }
    }
    return o;
  }
  std::string body;
  [[nodiscard]] const std::string& defs() const { return defs_; }

 private:
  std::map<std::string, std::string> colors_;
  std::string defs_;
};

Stroke stroke_of(const std::map<std::string, std::string>& a) {
  Stroke st;
  if (auto cls = class_stroke(attr(a, "class"))) st = *cls;
  if (auto c = hex_color(attr(a, "stroke"))) st.color = *c;
  if (auto w = number(a, "stroke-width")) st.width = *w;
  const std::string dash = attr(a, "stroke-dasharray");
  if (!dash.empty()) {
    double on = 0, off = 0;
    if (std::sscanf(dash.c_str(), "%lf %lf", &on, &off) == 2) st.dash = fmt::format("on {} off {}", on, off);
  }
  return st;
}

}  // namespace

TikzFigure svg_to_tikz(std::string_view html) {
  const auto b = html.find("<svg");
  const auto e = html.rfind("</svg>");
  if (b == std::string_view::npos || e == std::string_view::npos || e < b) {
    fail("figure markup holds no <svg> element");
  }
  const std::string_view s = html.substr(b, e + 6 - b);
  TikzFigure out;
  Emitter em;
  std::size_t i = 0;
  bool first_title = true;
  while (i < s.size()) {
    if (s[i] != '<') {
      const auto next = s.find('<', i);
      i = next == std::string_view::npos ? s.size() : next;
      continue;
    }
    Element el = read_tag(s, i);
    const auto& a = el.attrs;
    if (el.name == "title" || el.name == "style") {
      const std::string close = "</" + el.name + ">";
      const auto end = s.find(close, i);
      if (end == std::string_view::npos) fail("figure markup: unterminated <{}>", el.name);
      if (el.name == "title" && first_title) {
        out.title = html_unescape(s.substr(i, end - i));
        first_title = false;
      }
      i = end + close.size();
      continue;
    }
    if (el.name == "rect") {
      auto x = number(a, "x"), y = number(a, "y"), w = number(a, "width"), h = number(a, "height");
      if (!x || !y || !w || !h) continue;  // the 100% background rect
      em.body += fmt::format("\\fill[{}] ({},{}) rectangle ({},{});\n", em.color(attr(a, "fill")), f2(*x),
                             f2(*y), f2(*x + *w), f2(*y + *h));
    } else if (el.name == "line") {
      auto x1 = number(a, "x1"), y1 = number(a, "y1"), x2 = number(a, "x2"), y2 = number(a, "y2");
      if (!x1 || !y1 || !x2 || !y2) continue;
      em.body += fmt::format("\\path[{}] ({},{}) -- ({},{});\n", em.stroke_opts(stroke_of(a)), f2(*x1),
                             f2(*y1), f2(*x2), f2(*y2));
    } else if (el.name == "polyline") {
      const std::string pts = attr(a, "points");
      std::string path;
      std::size_t p = 0;
      while (p < pts.size()) {
        while (p < pts.size() && pts[p] == ' ') ++p;
        if (p >= pts.size()) break;
        auto sp = pts.find(' ', p);
        if (sp == std::string::npos) sp = pts.size();
        const std::string pair = pts.substr(p, sp - p);
        const auto comma = pair.find(',');
        if (comma != std::string::npos) {
          double px = 0, py = 0;
          const auto r1 = std::from_chars(pair.data(), pair.data() + comma, px);
          const auto r2 = std::from_chars(pair.data() + comma + 1, pair.data() + pair.size(), py);
          if (r1.ec == std::errc() && r2.ec == std::errc()) {
            path += fmt::format("{}({},{})", path.empty() ? "" : " -- ", f2(px), f2(py));
          }
        }
        p = sp;
      }
      if (!path.empty()) em.body += fmt::format("\\path[{}] {};\n", em.stroke_opts(stroke_of(a)), path);
    } else if (el.name == "circle") {
      auto cx = number(a, "cx"), cy = number(a, "cy"), r = number(a, "r");
      if (!cx || !cy || !r) continue;
      em.body += fmt::format("\\fill[{}] ({},{}) circle ({}pt);\n", em.color(attr(a, "fill")), f2(*cx),
                             f2(*cy), f2(*r * kPt));
    } else if (el.name == "text") {
      const auto end = s.find("</text>", i);
      if (end == std::string_view::npos) fail("figure markup: unterminated <text>");
      const std::string text = html_unescape(s.substr(i, end - i));
      i = end + 7;
      auto x = number(a, "x"), y = number(a, "y");
      if (!x || !y) continue;
      const std::string anchor = attr(a, "text-anchor");
      const std::string cls = attr(a, "class");
      std::string opts =
          anchor == "middle" ? "anchor=base" : (anchor == "end" ? "anchor=base east" : "anchor=base west");
      opts += ", inner sep=0pt, font=\\scriptsize";
      if (cls == "al") opts += ", text=" + em.color("#57606a");
      if (attr(a, "transform").rfind("rotate(-90", 0) == 0) opts += ", rotate=90";
      em.body += fmt::format("\\node[{}] at ({},{}) {{{}}};\n", opts, f2(*x), f2(*y), latex_escape(text));
    }
    // Everything else (<svg>, <g>, closing tags, <figure>) carries no drawing of its own.
  }
  out.colors = em.defs();
  out.picture = "\\begin{tikzpicture}[x=0.5pt, y=-0.5pt]\n" + em.body + "\\end{tikzpicture}";
  return out;
}

}  // namespace numcheck::doc
