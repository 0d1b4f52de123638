// Segment extraction measured against tests/claims/fixtures/annotated_segments.jsonl: 104 real
// test-split claims whose quantity segments and temporal expressions were annotated by hand (span
// text and a normalized key: "<value> <unit>", "[lo,hi] <unit>", "<start>/<end>" or "relative").
// A predicted segment matches a gold one when their byte spans overlap and (strict) their keys are
// equal. The measured precision and recall are printed and must not fall below the floors here.
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "claims/segment.hpp"
#include "io/json.hpp"

namespace numcheck::claims {
namespace {

std::string key(const Segment& s) {
  if (s.kind == SegmentKind::kTemporal) {
    if (!s.period_start.empty()) return s.period_start + "/" + s.period_end;
    return s.granularity;
  }
  const std::string unit = s.unit.empty() ? "-" : s.unit;
  if (s.value) return s.value->str() + " " + unit;
  if (s.lo && s.hi) return fmt::format("[{},{}] {}", s.lo->value.str(), s.hi->value.str(), unit);
  return "? " + unit;
}

struct Counts {
  std::size_t pred = 0, gold = 0, pred_strict = 0, gold_strict = 0, pred_loose = 0, gold_loose = 0;
};

TEST(AnnotatedSegments, PrecisionAndRecallOnHandAnnotatedClaims) {
  std::ifstream in(std::string(NUMCHECK_SOURCE_DIR) + "/tests/claims/fixtures/annotated_segments.jsonl");
  ASSERT_TRUE(in) << "fixture missing";
  std::string line;
  Counts c;
  std::size_t claims = 0;
  std::string misses;
  while (std::getline(in, line)) {
    const auto j = io::parse_json(line, "annotated_segments.jsonl");
    ++claims;
    const std::string text = j["claim"].get<std::string>();
    const auto pred = find_segments(text);
    const auto& gold = j["segments"];
    c.pred += pred.size();
    c.gold += gold.size();
    auto overlap = [](std::size_t a, std::size_t b, std::size_t c2, std::size_t d) {
      return a < d && c2 < b;
    };
    for (const auto& p : pred) {
      bool loose = false, strict = false;
      for (const auto& g : gold) {
        if (!overlap(p.begin, p.end, g["begin"].get<std::size_t>(), g["end"].get<std::size_t>())) continue;
        loose = true;
        strict = strict || key(p) == g["key"].get<std::string>();
      }
      c.pred_loose += loose;
      c.pred_strict += strict;
      if (!strict)
        misses += fmt::format("  extra/wrong: {} `{}` {}\n", j["record"].get<int>(), p.text, key(p));
    }
    for (const auto& g : gold) {
      bool loose = false, strict = false;
      for (const auto& p : pred) {
        if (!overlap(p.begin, p.end, g["begin"].get<std::size_t>(), g["end"].get<std::size_t>())) continue;
        loose = true;
        strict = strict || key(p) == g["key"].get<std::string>();
      }
      c.gold_loose += loose;
      c.gold_strict += strict;
      if (!strict)
        misses += fmt::format("  missed: {} `{}` {}\n", j["record"].get<int>(), g["text"].get<std::string>(),
                              g["key"].get<std::string>());
    }
  }
  ASSERT_GE(claims, 100u);
  const double ps = double(c.pred_strict) / double(c.pred), rs = double(c.gold_strict) / double(c.gold);
  const double pl = double(c.pred_loose) / double(c.pred), rl = double(c.gold_loose) / double(c.gold);
  fmt::print("annotated claims {}, gold segments {}, predicted {}\n", claims, c.gold, c.pred);
  fmt::print("strict (span overlap + equal value/period): precision {:.4f} recall {:.4f}\n", ps, rs);
  fmt::print("loose  (span overlap only):                 precision {:.4f} recall {:.4f}\n", pl, rl);
  fmt::print("disagreements:\n{}", misses);
  EXPECT_GE(ps, 0.80);
  EXPECT_GE(rs, 0.75);
  EXPECT_GE(pl, 0.90);
  EXPECT_GE(rl, 0.85);
}

}  // namespace
}  // namespace numcheck::claims
