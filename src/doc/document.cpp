#include "doc/document.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

#include <fmt/format.h>

#include "core/ascii.hpp"
#include "doc/tikz.hpp"

namespace numcheck::doc {

namespace {

// Replaces invalid UTF-8 and control characters (except \n and \t) by U+FFFD, via html_escape's
// validator: unescape its five entities afterwards. Keeps the other escapers simple and safe.
std::string clean_utf8(std::string_view text) {
  std::string e = html::html_escape(text);
  std::string out;
  out.reserve(e.size());
  for (std::size_t i = 0; i < e.size();) {
    if (e[i] == '&') {
      static constexpr std::pair<std::string_view, char> kEnt[] = {
          {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&#39;", '\''}};
      bool done = false;
      for (const auto& [ent, ch] : kEnt) {
        if (std::string_view(e).substr(i, ent.size()) == ent) {
          out += ch;
          i += ent.size();
          done = true;
          break;
        }
      }
      if (done) continue;
    }
    out += e[i++];
  }
  return out;
}

std::string cell_text(const html::Cell& c) { return c.text; }

// The value of the first id="..." attribute before the chart's <svg>, reduced to [A-Za-z0-9_-].
std::string figure_slug(std::string_view fig) {
  const auto svg = fig.find("<svg");
  const auto head = fig.substr(0, svg == std::string_view::npos ? fig.size() : svg);
  std::string slug;
  const auto p = head.find(" id=\"");
  if (p != std::string_view::npos) {
    for (std::size_t i = p + 5; i < head.size() && head[i] != '"' && slug.size() < 60; ++i) {
      const char c = head[i];
      const bool ok = ascii::is_word(c) || c == '-';
      slug += ok ? c : '_';
    }
  }
  return slug.empty() ? std::string("figure") : slug;
}

// The chart's <title> text (toolkit markup, so HTML-escaped), unescaped; empty when absent.
std::string figure_title(std::string_view fig) {
  const auto b = fig.find("<title>");
  const auto e = fig.find("</title>");
  if (b == std::string_view::npos || e == std::string_view::npos || e < b) return {};
  const std::string_view t = fig.substr(b + 7, e - b - 7);
  std::string out;
  for (std::size_t i = 0; i < t.size();) {
    static constexpr std::pair<std::string_view, char> kEnt[] = {
        {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&#39;", '\''}};
    bool done = false;
    for (const auto& [ent, ch] : kEnt) {
      if (t.substr(i, ent.size()) == ent) {
        out += ch;
        i += ent.size();
        done = true;
        break;
      }
    }
    if (!done) out += t[i++];
  }
  return out;
}

}  // namespace

std::string markdown_escape(std::string_view text) {
  const std::string clean = clean_utf8(text);
  std::string out;
  out.reserve(clean.size());
  for (char c : clean) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '\n':
      case '\r':
        out += ' ';
        break;
      case '|':
      case '\\':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
      case '#':
        out += '\\';
        out += c;
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

// A non-ASCII character in LaTeX that pdflatex compiles without extra packages (the kernel's UTF-8
// input covers the Latin-1 and Latin Extended-A letters): Greek letters and symbols in math mode,
// dashes and quotes as their TeX ligatures, anything else as its code point, "[U+4E2D]", since an
// unmapped character stops pdflatex ("Unicode character ... not set up for use with LaTeX").
std::string latex_non_ascii(char32_t cp, std::string_view bytes) {
  static constexpr std::array<std::string_view, 25> kGreekUpper = {
      "A",       "B",        "\\Gamma",   "\\Delta", "E",    "Z",     "H",      "\\Theta", "I",
      "K",       "\\Lambda", "M",         "N",       "\\Xi", "O",     "\\Pi",   "P",       "",
      "\\Sigma", "T",        "\\Upsilon", "\\Phi",   "X",    "\\Psi", "\\Omega"};
  static constexpr std::array<std::string_view, 25> kGreekLower = {
      "\\alpha", "\\beta",   "\\gamma",   "\\delta", "\\epsilon", "\\zeta", "\\eta",  "\\theta", "\\iota",
      "\\kappa", "\\lambda", "\\mu",      "\\nu",    "\\xi",      "o",      "\\pi",   "\\rho",   "\\varsigma",
      "\\sigma", "\\tau",    "\\upsilon", "\\phi",   "\\chi",     "\\psi",  "\\omega"};
  if (cp >= 0x391 && cp <= 0x3A9 && !kGreekUpper[cp - 0x391].empty())
    return fmt::format("\\ensuremath{{\\mathrm{{{}}}}}", kGreekUpper[cp - 0x391]);
  if (cp >= 0x3B1 && cp <= 0x3C9) return fmt::format("\\ensuremath{{{}}}", kGreekLower[cp - 0x3B1]);
  switch (cp) {
    case 0xA0:
      return "~";
    case 0xB0:
      return "\\ensuremath{^\\circ}";
    case 0xB1:
      return "\\ensuremath{\\pm}";
    case 0xB5:
      return "\\ensuremath{\\mu}";
    case 0xB7:
      return "\\ensuremath{\\cdot}";
    case 0xD7:
      return "\\ensuremath{\\times}";
    case 0xF7:
      return "\\ensuremath{\\div}";
    case 0x2013:
      return "--";
    case 0x2014:
      return "---";
    case 0x2018:
      return "`";
    case 0x2019:
      return "'";
    case 0x201C:
      return "``";
    case 0x201D:
      return "''";
    case 0x2022:
      return "\\textbullet{}";
    case 0x2026:
      return "\\ldots{}";
    case 0x20AC:
      return "\\texteuro{}";
    case 0x2190:
      return "\\ensuremath{\\leftarrow}";
    case 0x2192:
      return "\\ensuremath{\\rightarrow}";
    case 0x2212:
      return "\\ensuremath{-}";
    case 0x2248:
      return "\\ensuremath{\\approx}";
    case 0x2260:
      return "\\ensuremath{\\neq}";
    case 0x2264:
      return "\\ensuremath{\\leq}";
    case 0x2265:
      return "\\ensuremath{\\geq}";
    case 0xFFFD:
      return "?";
    default:
      break;
  }
  // Latin-1 and Latin Extended-A letters and signs: the kernel's UTF-8 input maps them.
  if (cp >= 0xA1 && cp <= 0x17F) return std::string(bytes);
  return fmt::format("[U+{:04X}]", static_cast<std::uint32_t>(cp));
}

}  // namespace

std::string latex_escape(std::string_view text) {
  const std::string clean = clean_utf8(text);
  std::string out;
  out.reserve(clean.size());
  for (std::size_t i = 0; i < clean.size(); ++i) {
    const char c = clean[i];
    if ((static_cast<unsigned char>(c) & 0x80) != 0) {
      // clean_utf8 left only valid UTF-8: decode one character.
      const auto lead = static_cast<unsigned char>(c);
      const std::size_t len = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
      char32_t cp = lead & (len == 4 ? 0x07 : len == 3 ? 0x0F : 0x1F);
      for (std::size_t k = 1; k < len && i + k < clean.size(); ++k)
        cp = (cp << 6) | (static_cast<unsigned char>(clean[i + k]) & 0x3F);
      out += latex_non_ascii(cp, std::string_view(clean).substr(i, len));
      i += len - 1;
      continue;
    }
    switch (c) {
      case '\\':
        out += "\\textbackslash{}";
        break;
      case '{':
      case '}':
      case '$':
      case '&':
      case '#':
      case '_':
      case '%':
        out += '\\';
        out += c;
        break;
      case '^':
        out += "\\textasciicircum{}";
        break;
      case '~':
        out += "\\textasciitilde{}";
        break;
      case '<':
        out += "\\textless{}";
        break;
      case '>':
        out += "\\textgreater{}";
        break;
      case '\n':
      case '\r':
      case '\t':
        out += ' ';
        break;
      default:
        out += c;
    }
  }
  return out;
}

void Document::heading(int level, std::string id, std::string text) {
  Block b;
  b.kind = Block::Kind::kHeading;
  b.level = level;
  b.id = std::move(id);
  b.text = std::move(text);
  blocks_.push_back(std::move(b));
}

void Document::paragraph(std::string text) {
  Block b;
  b.kind = Block::Kind::kParagraph;
  b.text = std::move(text);
  blocks_.push_back(std::move(b));
}

void Document::warning(std::string text) {
  Block b;
  b.kind = Block::Kind::kWarning;
  b.text = std::move(text);
  blocks_.push_back(std::move(b));
}

void Document::table(html::Table t, bool in_latex) {
  Block b;
  b.kind = Block::Kind::kTable;
  b.table = std::move(t);
  b.in_latex = in_latex;
  blocks_.push_back(std::move(b));
}

void Document::figure(std::string html) {
  Block b;
  b.kind = Block::Kind::kFigure;
  b.figure_html = std::move(html);
  blocks_.push_back(std::move(b));
  number_figures();
}

void Document::number_figures() {
  std::size_t n = 0;
  for (auto& b : blocks_) {
    if (b.kind != Block::Kind::kFigure) continue;
    b.figure_file = fmt::format("{:02}-{}.svg", ++n, figure_slug(b.figure_html));
  }
}

void Document::insert_before(std::string_view heading_id, const Document& other) {
  auto it = std::find_if(blocks_.begin(), blocks_.end(), [&](const Block& b) {
    return b.kind == Block::Kind::kHeading && !b.id.empty() && b.id == heading_id;
  });
  blocks_.insert(it, other.blocks_.begin(), other.blocks_.end());
  number_figures();
}

std::vector<std::pair<std::string, std::string>> Document::figure_files() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& b : blocks_) {
    if (b.kind == Block::Kind::kFigure) out.emplace_back(b.figure_file, html::standalone_svg(b.figure_html));
  }
  return out;
}

void Document::verbatim(std::string text) {
  Block b;
  b.kind = Block::Kind::kVerbatim;
  b.text = std::move(text);
  blocks_.push_back(std::move(b));
}

std::string Document::to_markdown() const {
  std::string s;
  for (const auto& b : blocks_) {
    switch (b.kind) {
      case Block::Kind::kHeading:
        s += fmt::format("{} {}\n\n", std::string(static_cast<std::size_t>(b.level), '#'),
                         markdown_escape(b.text));
        break;
      case Block::Kind::kParagraph:
        s += markdown_escape(b.text) + "\n\n";
        break;
      case Block::Kind::kWarning:
        s += "> **Note:** " + markdown_escape(b.text) + "\n\n";
        break;
      case Block::Kind::kTable: {
        const auto& t = b.table;
        if (!t.caption.empty()) s += "**" + markdown_escape(t.caption) + "**\n\n";
        if (t.header.empty()) break;
        s += "|";
        for (const auto& h : t.header) s += " " + markdown_escape(h) + " |";
        s += "\n|";
        for (std::size_t i = 0; i < t.header.size(); ++i) {
          const bool numeric = !t.rows.empty() && i < t.rows[0].size() && t.rows[0][i].numeric;
          s += numeric ? "---:|" : "---|";
        }
        s += "\n";
        for (const auto& row : t.rows) {
          s += "|";
          for (std::size_t i = 0; i < t.header.size(); ++i) {
            const std::string txt = i < row.size() ? markdown_escape(cell_text(row[i])) : "";
            const bool emph = i < row.size() && row[i].emphasis && !txt.empty();
            s += " " + (emph ? "**" + txt + "**" : txt) + " |";
          }
          s += "\n";
        }
        s += "\n";
        if (!t.note.empty()) s += "_" + markdown_escape(t.note) + "_\n\n";
        break;
      }
      case Block::Kind::kFigure: {
        const std::string title = figure_title(b.figure_html);
        s += fmt::format("![{}]({}/{})\n\n", markdown_escape(title.empty() ? "figure" : title), kFigureDir,
                         b.figure_file);
        if (!title.empty()) s += "_" + markdown_escape(title) + "_\n\n";
        break;
      }
      case Block::Kind::kVerbatim: {
        const std::string clean = clean_utf8(b.text);
        // A fence longer than any backtick run inside, so the text cannot close it.
        std::size_t longest = 0, run = 0;
        for (char c : clean) {
          run = c == '`' ? run + 1 : 0;
          longest = std::max(longest, run);
        }
        const std::string fence(std::max<std::size_t>(3, longest + 1), '`');
        s += fmt::format("{}text\n{}{}{}\n\n", fence, clean,
                         clean.empty() || clean.back() != '\n' ? "\n" : "", fence);
        break;
      }
    }
  }
  return s;
}

std::string Document::to_html(std::string_view title) const {
  std::string toc = "<nav><ul>";
  bool any = false;
  for (const auto& b : blocks_) {
    if (b.kind == Block::Kind::kHeading && b.level == 2 && !b.id.empty()) {
      toc +=
          fmt::format("<li><a href=\"#{}\">{}</a></li>", html::html_escape(b.id), html::html_escape(b.text));
      any = true;
    }
  }
  toc += "</ul></nav>\n";
  std::string body;
  bool toc_done = !any;
  for (const auto& b : blocks_) {
    switch (b.kind) {
      case Block::Kind::kHeading: {
        if (!toc_done && b.level == 2) {
          body += toc;
          toc_done = true;
        }
        const int lvl = std::clamp(b.level, 1, 4);
        if (b.id.empty()) {
          body += fmt::format("<h{0}>{1}</h{0}>\n", lvl, html::html_escape(b.text));
        } else {
          body += fmt::format("<h{0} id=\"{1}\">{2}</h{0}>\n", lvl, html::html_escape(b.id),
                              html::html_escape(b.text));
        }
        break;
      }
      case Block::Kind::kParagraph:
        body += html::paragraph(b.text);
        break;
      case Block::Kind::kWarning:
        body += fmt::format("<p class=\"warn\"><span class=\"badge\">Note</span> {}</p>\n",
                            html::html_escape(b.text));
        break;
      case Block::Kind::kTable:
        body += html::render_table(b.table);
        break;
      case Block::Kind::kFigure:
        body += b.figure_html;
        break;
      case Block::Kind::kVerbatim:
        body += fmt::format("<pre class=\"resp\">{}</pre>\n", html::html_escape(b.text));
        break;
    }
  }
  return html::page(title, body);
}

std::string Document::to_latex(std::string_view preamble_comment) const {
  std::string s;
  for (std::size_t i = 0; i < preamble_comment.size();) {
    const auto nl = preamble_comment.find('\n', i);
    const auto line = preamble_comment.substr(i, nl == std::string_view::npos ? nl : nl - i);
    std::string clean = clean_utf8(line);
    std::replace_if(
        clean.begin(), clean.end(), [](char ch) { return ch == '\r' || ch == '\t'; }, ' ');
    s += "% " + clean + "\n";
    if (nl == std::string_view::npos) break;
    i = nl + 1;
  }
  s += "\n";
  std::size_t n = 0;
  for (const auto& b : blocks_) {
    if (b.kind == Block::Kind::kFigure && !b.figure_html.empty()) {
      // The chart itself, translated from the same SVG markup (doc/tikz.hpp).
      const TikzFigure fig = svg_to_tikz(b.figure_html);
      std::string label = b.figure_file.substr(0, b.figure_file.rfind('.'));
      std::replace(label.begin(), label.end(), '_', '-');
      s += "\\begin{figure}[htbp]\n\\centering\n" + fig.colors;
      s += "\\resizebox{\\linewidth}{!}{%\n" + fig.picture + "}\n";
      if (!fig.title.empty()) s += "\\caption{" + latex_escape(fig.title) + "}\n";
      if (!label.empty()) s += "\\label{fig:" + label + "}\n";
      s += "\\end{figure}\n\n";
      ++n;
      continue;
    }
    if (b.kind != Block::Kind::kTable || !b.in_latex) continue;
    const auto& t = b.table;
    if (t.header.empty()) continue;
    ++n;
    // Numbers right-aligned on one line; a text column with a cell longer than kWrapChars wraps in a
    // paragraph column about that wide (10em), so long names and notes never widen the table.
    constexpr std::size_t kWrapChars = 20;
    std::string spec;
    for (std::size_t c = 0; c < t.header.size(); ++c) {
      const bool numeric = !t.rows.empty() && c < t.rows[0].size() && t.rows[0][c].numeric;
      std::size_t longest = 0;
      for (const auto& row : t.rows)
        if (c < row.size() && !row[c].numeric) longest = std::max(longest, row[c].text.size());
      spec += numeric ? "r" : longest > kWrapChars ? "p{10em}" : "l";
    }
    s += "\\begin{table}[htbp]\n\\centering\n\\small\n";
    if (!t.caption.empty()) s += "\\caption{" + latex_escape(t.caption) + "}\n";
    if (!t.id.empty()) s += "\\label{tab:" + latex_escape(t.id) + "}\n";
    s += "\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%\n";
    s += "\\begin{tabular}{" + spec + "}\n\\toprule\n";
    for (std::size_t c = 0; c < t.header.size(); ++c) {
      s += (c ? " & " : "") + latex_escape(t.header[c]);
    }
    s += " \\\\\n\\midrule\n";
    for (const auto& row : t.rows) {
      for (std::size_t c = 0; c < t.header.size(); ++c) {
        std::string txt = c < row.size() ? latex_escape(row[c].text) : "";
        if (c < row.size() && row[c].emphasis && !txt.empty()) txt = fmt::format("\\textbf{{{}}}", txt);
        if (c) s += " & ";
        s += txt;
      }
      s += " \\\\\n";
    }
    s += "\\bottomrule\n\\end{tabular}}\n";
    if (!t.note.empty()) {
      s += "\\par\\smallskip{\\footnotesize " + latex_escape(t.note) + "}\n";
    }
    s += "\\end{table}\n\n";
  }
  if (n == 0) s += "% (no tables or figures)\n";
  return s;
}

}  // namespace numcheck::doc
