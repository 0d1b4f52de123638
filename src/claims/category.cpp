#include "claims/category.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/ascii.hpp"
#include "core/error.hpp"
#include "core/prng.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "stats/bootstrap.hpp"
#include "stats/tests.hpp"

namespace numcheck::claims {

namespace {

std::vector<std::string> list(const io::Record& j, std::string_view key) {
  std::vector<std::string> out = j.strings(key);
  for (auto& s : out) s = normalize_label(s);
  return out;
}

using ascii::is_wordish;
using ascii::lower;

bool inside(const std::vector<Segment>& segs, std::size_t b, std::size_t e) {
  return std::any_of(segs.begin(), segs.end(), [&](const Segment& s) { return b < s.end && e > s.begin; });
}

// Finds `phrase` as a whole phrase outside every segment.
bool cue_outside(const std::string& low, const std::vector<Segment>& segs, const std::string& phrase) {
  for (std::size_t p = low.find(phrase); p != std::string::npos; p = low.find(phrase, p + 1)) {
    const std::size_t e = p + phrase.size();
    if ((p > 0 && is_wordish(low[p - 1])) || (e < low.size() && is_wordish(low[e]))) continue;
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
  if (j.has("age_nouns")) r.age_nouns = list(j, "age_nouns");
  const auto fb = category_from_name(j.string("fallback"));
  if (!fb) fail("{}: 'fallback' must be a category name", where);
  r.fallback = *fb;
  if (const auto pc = j.opt_object("paper_counts")) {
    for (const auto& [k, v] : pc->json().items()) {
      const auto c = category_from_name(k);
      if (!c) fail("{}: paper_counts.{}: not a category", where, k);
      r.paper_counts.emplace_back(*c, static_cast<std::size_t>(pc->unsigned_integer(k)));
    }
  }
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
  auto listed = [](const std::vector<std::string>& v, const std::string& w) {
    return std::find(v.begin(), v.end(), w) != v.end();
  };
  auto is_duration = [&](const Segment& s) {
    return s.kind == SegmentKind::kQuantity && listed(R.temporal_dimensions, s.dimension);
  };
  // 1. comparison: a multiplier ("three times higher", "doubled"; not "voted 10 times") or a cue.
  for (const auto& s : segs)
    if (s.kind == SegmentKind::kQuantity && listed(R.comparison_units, s.unit) && s.dimension != "count")
      return {Category::kComparison, fmt::format("comparison:unit '{}'", s.unit)};
  for (const auto& cue : R.comparison_cues)
    if (cue_outside(low, segs, cue)) return {Category::kComparison, fmt::format("comparison:cue '{}'", cue)};
  // 2. interval: a stated range of values (vague quantities like "thousands of" are not ranges the
  // claim states), a period between two years or dates, or a bound on an age.
  for (const auto& s : segs) {
    if (s.kind == SegmentKind::kQuantity && s.is_range() && s.form != "vague")
      return {Category::kInterval, "interval:range"};
    if (s.kind == SegmentKind::kTemporal && s.granularity == "years")
      return {Category::kInterval, "interval:year range"};
    if (s.kind == SegmentKind::kQuantity && (s.lo || s.hi) && s.form != "vague") {
      const std::size_t q = s.begin;
      const std::string before = low.substr(q >= 24 ? q - 24 : 0, q >= 24 ? 24 : q);
      for (const auto& ctx : R.interval_context) {
        const std::size_t at = before.rfind(ctx);
        if (at != std::string::npos && (at == 0 || !is_wordish(before[at - 1])) &&
            before.find_first_not_of(' ', at + ctx.size()) == std::string::npos)
          return {Category::kInterval, fmt::format("interval:bound after '{}'", ctx)};
      }
      // "seniors over 85", "children under 18": a bound on a plain count right after a noun for people.
      std::size_t e = before.find_last_not_of(' ');
      if (e != std::string::npos && s.dimension == "count") {
        std::size_t b = e + 1;
        while (b > 0 && is_wordish(before[b - 1])) --b;
        const std::string noun = before.substr(b, e + 1 - b);
        if (listed(R.age_nouns, noun) && s.value && *s.value <= num::Rational(130))
          return {Category::kInterval, fmt::format("interval:age bound after '{}'", noun)};
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
    if (listed(R.interval_connectors, mid)) return {Category::kInterval, "interval:date range"};
  }
  // 3. temporal: time is what the claim quantifies: a date, year, period or duration, and no other
  // stated quantity (a vague one like "thousands of" aside). "100,000 vaccines in 2019" states a
  // statistic at a time: statistical.
  const Segment* time = nullptr;
  bool other_quantity = false;
  for (const auto& s : segs) {
    if ((s.kind == SegmentKind::kTemporal && s.granularity != "relative") || is_duration(s)) {
      if (time == nullptr) time = &s;
    } else if (s.kind == SegmentKind::kQuantity && s.form != "vague") {
      other_quantity = true;
    }
  }
  if (time != nullptr && !other_quantity)
    return {Category::kTemporal, time->kind == SegmentKind::kTemporal
                                     ? fmt::format("temporal:{}", time->granularity)
                                     : fmt::format("temporal:duration in {}", time->dimension)};
  // 4. statistical
  for (const auto& s : segs)
    if (s.kind == SegmentKind::kQuantity)
      return {Category::kStatistical,
              time != nullptr ? "statistical:quantity at a time" : "statistical:quantity"};
  if (time != nullptr) return {Category::kStatistical, "statistical:quantity at a time"};
  return {R.fallback, "fallback:no segment"};
}

Categorization categorize(std::string_view text) { return categorize(text, find_segments(text)); }

bool category_heldout(std::string_view text, std::uint64_t seed) {
  return (Rng(seed, text).next() & 1U) == 1U;
}

CategoryEvaluation evaluate_categorizer(const std::vector<std::string>& texts,
                                        const std::vector<Category>& gold, std::size_t draws,
                                        std::uint64_t seed, const CategoryRules& rules) {
  if (texts.size() != gold.size())
    fail("evaluate_categorizer: {} texts but {} labels", texts.size(), gold.size());
  CategoryEvaluation ev;
  ev.draws = draws;
  ev.seed = seed;
  ev.confusion = stats::ConfusionMatrix(kCategories.size());
  // Clusters: distinct texts, in first-seen order; each holds its records' (gold, predicted) pairs.
  std::vector<std::string> order;
  std::map<std::string, std::size_t> index;
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> clusters;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const auto pred = categorize(texts[i], find_segments(texts[i]), rules).category;
    const auto g = static_cast<std::size_t>(gold[i]), p = static_cast<std::size_t>(pred);
    ev.confusion.add(g, p);
    auto [it, fresh] = index.emplace(texts[i], clusters.size());
    if (fresh) clusters.emplace_back();
    clusters[it->second].emplace_back(g, p);
  }
  ev.distinct_texts = clusters.size();
  ev.report = stats::classification_report(ev.confusion);
  ev.accuracy_ci = stats::wilson(ev.report.correct, ev.report.n);
  if (draws > 0 && !clusters.empty()) {
    const auto reps =
        stats::bootstrap_counts(clusters.size(), draws, seed, [&](const stats::ClusterCounts& k) {
          stats::ConfusionMatrix m(kCategories.size());
          for (std::size_t c = 0; c < clusters.size(); ++c)
            for (const auto& [g, p] : clusters[c]) m.add(g, p, k[c]);
          return stats::macro_f1(m);
        });
    ev.macro_f1_ci = stats::percentile_interval(reps);
  }
  return ev;
}

void add_category_tables(doc::Document& d, const stats::ClassificationReport& report,
                         const stats::ConfusionMatrix& confusion) {
  using doc::html::Cell;
  doc::html::Table per;
  per.header = {"category", "precision", "recall", "F1", "support"};
  for (auto c : kCategories) {
    const auto& s = report.per_class[static_cast<std::size_t>(c)];
    per.rows.push_back({Cell::txt(std::string(category_name(c))),
                        Cell::num(fmt::format("{:.4f}", s.precision)),
                        Cell::num(fmt::format("{:.4f}", s.recall)), Cell::num(fmt::format("{:.4f}", s.f1)),
                        Cell::num(fmt::format("{}", s.support))});
  }
  d.table(std::move(per));
  doc::html::Table cm;
  cm.header = {"gold \\ predicted"};
  for (auto p : kCategories) cm.header.emplace_back(category_name(p));
  for (auto g : kCategories) {
    std::vector<Cell> row{Cell::txt(std::string(category_name(g)))};
    for (auto p : kCategories)
      row.push_back(Cell::num(
          fmt::format("{}", confusion.at(static_cast<std::size_t>(g), static_cast<std::size_t>(p)))));
    cm.rows.push_back(std::move(row));
  }
  d.table(std::move(cm));
}

}  // namespace numcheck::claims
