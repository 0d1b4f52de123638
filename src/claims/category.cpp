#include "claims/category.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/ascii.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "io/json.hpp"

namespace numcheck::claims {

namespace {

std::vector<std::string> list(const io::Record& j, std::string_view key) {
  std::vector<std::string> out = j.strings(key);
  for (auto& s : out) s = normalize_label(s);
  return out;
}

constexpr auto wordish = ascii::is_wordish;
using ascii::lower;

bool inside(const std::vector<Segment>& segs, std::size_t b, std::size_t e) {
  return std::any_of(segs.begin(), segs.end(), [&](const Segment& s) { return b < s.end && e > s.begin; });
}

// Finds `phrase` as a whole phrase outside every segment.
bool cue_outside(const std::string& low, const std::vector<Segment>& segs, const std::string& phrase) {
  for (std::size_t p = low.find(phrase); p != std::string::npos; p = low.find(phrase, p + 1)) {
    const std::size_t e = p + phrase.size();
    if ((p > 0 && wordish(low[p - 1])) || (e < low.size() && wordish(low[e]))) continue;
    if (!inside(segs, p, e)) return true;
  }
  return false;
}

}  // namespace

CategoryRules CategoryRules::parse(std::string_view json_text, std::string_view where) {
  const io::Json json = io::parse_json(json_text, where);
  const io::Record j = io::Record::of(json, where);
  CategoryRules r;
  r.comparison_cues = list(j, "comparison_cues");
  r.comparison_units = list(j, "comparison_units");
  r.interval_context = list(j, "interval_context");
  r.interval_connectors = list(j, "interval_connectors");
  r.temporal_dimensions = list(j, "temporal_dimensions");
  const auto fb = category_from_name(j.string("fallback"));
  if (!fb) fail("{}: 'fallback' must be a category name", where);
  r.fallback = *fb;
  return r;
}

const CategoryRules& CategoryRules::builtin() {
  static const CategoryRules r = [] {
    const auto p = io::data_path("claims/categories.json");
    return parse(io::read_file(p), p.string());
  }();
  return r;
}

Categorization categorize(std::string_view text, const std::vector<Segment>& segs, const CategoryRules& R) {
  const std::string low = lower(text);
  // 1. comparison
  for (const auto& s : segs)
    if (s.kind == SegmentKind::kQuantity &&
        std::find(R.comparison_units.begin(), R.comparison_units.end(), s.unit) != R.comparison_units.end())
      return {Category::kComparison, fmt::format("comparison:unit '{}'", s.unit)};
  for (const auto& cue : R.comparison_cues)
    if (cue_outside(low, segs, cue)) return {Category::kComparison, fmt::format("comparison:cue '{}'", cue)};
  // 2. interval
  for (const auto& s : segs) {
    if (s.kind == SegmentKind::kQuantity && s.is_range()) return {Category::kInterval, "interval:range"};
    if (s.kind == SegmentKind::kTemporal && s.granularity == "years")
      return {Category::kInterval, "interval:year range"};
    if (s.kind == SegmentKind::kQuantity && (s.lo || s.hi)) {
      for (const auto& ctx : R.interval_context) {
        const std::size_t q = s.begin;
        const std::string before = low.substr(q >= 12 ? q - 12 : 0, q >= 12 ? 12 : q);
        const std::size_t at = before.rfind(ctx);
        if (at != std::string::npos && (at == 0 || !wordish(before[at - 1])) &&
            before.find_first_not_of(' ', at + ctx.size()) == std::string::npos)
          return {Category::kInterval, fmt::format("interval:bound after '{}'", ctx)};
      }
    }
  }
  for (std::size_t i = 0; i + 1 < segs.size(); ++i) {
    const Segment &a = segs[i], &b = segs[i + 1];
    if (a.kind != SegmentKind::kTemporal || b.kind != SegmentKind::kTemporal || a.period_start.empty() ||
        b.period_start.empty() || b.begin < a.end)
      continue;
    std::string mid = low.substr(a.end, b.begin - a.end);
    mid.erase(std::remove(mid.begin(), mid.end(), ' '), mid.end());
    if (std::find(R.interval_connectors.begin(), R.interval_connectors.end(), mid) !=
        R.interval_connectors.end())
      return {Category::kInterval, "interval:date range"};
  }
  // 3. temporal
  for (const auto& s : segs) {
    if (s.kind == SegmentKind::kTemporal && s.granularity != "relative")
      return {Category::kTemporal, fmt::format("temporal:{}", s.granularity)};
    if (s.kind == SegmentKind::kQuantity &&
        std::find(R.temporal_dimensions.begin(), R.temporal_dimensions.end(), s.dimension) !=
            R.temporal_dimensions.end())
      return {Category::kTemporal, fmt::format("temporal:duration in {}", s.dimension)};
  }
  // 4. statistical
  for (const auto& s : segs)
    if (s.kind == SegmentKind::kQuantity) return {Category::kStatistical, "statistical:quantity"};
  return {R.fallback, "fallback:no segment"};
}

Categorization categorize(std::string_view text) { return categorize(text, find_segments(text)); }

}  // namespace numcheck::claims
