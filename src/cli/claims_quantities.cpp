// numcheck claims quantities: prints each claim of a file with its quantity segments and temporal
// expressions, for inspection (Markdown-ish text, or JSONL with --json).
#include <fmt/core.h>

#include "claims/load.hpp"
#include "claims/segment.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"
#include "io/json.hpp"

namespace numcheck::cli {
namespace {

struct Args {
  std::string file;
  std::string text;
  bool json = false;
  std::size_t limit = 0;
  bool only_failing = false;
};

void print_claim(const std::string& where, const std::string& text, const Args& a) {
  const auto segs = claims::find_segments(text);
  if (a.only_failing && claims::passes_numerical_filter(segs)) return;
  if (a.json) {
    io::OrderedJson j;
    j["where"] = where;
    j["claim"] = text;
    j["numerical"] = claims::passes_numerical_filter(segs);
    j["segments"] = io::OrderedJson::array();
    for (const auto& s : segs) j["segments"].push_back(claims::segment_json(s));
    fmt::print("{}\n", io::to_line(j));
    return;
  }
  fmt::print("{}: {}\n", where, text);
  if (segs.empty()) fmt::print("  (no segments)\n");
  for (const auto& s : segs) fmt::print("  - {}\n", claims::segment_summary(s));
}

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("file", a->file, "Claim file (any format `claims evaluate` reads); omit with --text");
  app.add_option("--text", a->text, "Segment this one claim text instead of a file");
  app.add_flag("--json", a->json, "One JSON object per claim (JSONL) with exact values as \"p/q\" strings");
  app.add_option("--limit", a->limit, "Print at most this many claims (0: all)")->capture_default_str();
  app.add_flag("--only-failing", a->only_failing, "Print only claims that fail the numerical-claim filter");
  app.footer(
      "Segments: quantities (value as written, interval, unit, dimension, approximator, trend) and temporal "
      "expressions (granularity, ISO period). See docs/claims-reference.md.");
  app.callback([a] {
    if (a->file.empty() == a->text.empty())
      throw Error(ErrorCode::kUsage, "give a claim file or --text, not both");
    if (!a->text.empty()) {
      print_claim("text", a->text, *a);
      return;
    }
    const auto r = claims::load_claims(a->file);
    for (const auto& is : r.issues) fmt::print(stderr, "numcheck: warning: {}\n", is.str());
    std::size_t shown = 0;
    for (const auto& c : r.claims) {
      if (a->limit != 0 && shown >= a->limit) break;
      print_claim(fmt::format("{}:{}", c.source, c.record), c.text, *a);
      ++shown;
    }
  });
}

const CommandRegistration reg(
    {"claims",
     "quantities",
     "Print each claim with its quantity segments",
     setup,
     "numcheck claims quantities --text \"Unemployment fell by 2.5% to 4.1 million in 2019\"",
     {"printed"}});

}  // namespace
}  // namespace numcheck::cli
