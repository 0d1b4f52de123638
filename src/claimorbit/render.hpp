#pragma once
// The claim-orbit section of a report (Markdown/HTML through doc::Document): one table per
// figure, systems side by side, example flips with the rewritten span highlighted (HTML-escaped;
// <mark> in HTML, [[...]] in Markdown).
#include <vector>

#include "claimorbit/analyze.hpp"
#include "doc/document.hpp"

namespace numcheck::claimorbit {

// Appends the section (a level-2 heading with id "claim-orbits" and its tables) to `doc`.
void add_section(doc::Document& doc, const std::vector<OrbitAnalysis>& systems);

// The variant text with its spans marked: Markdown-safe text with [[...]] around each span, and
// HTML with each span in <mark> (everything escaped).
[[nodiscard]] std::string marked_text(const std::string& text, const std::vector<Span>& spans);
[[nodiscard]] std::string marked_html(const std::string& text, const std::vector<Span>& spans);

}  // namespace numcheck::claimorbit
