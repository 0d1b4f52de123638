// numcheck claims stats: what a claim file holds: records, malformed records, label and category
// distributions, duplicate texts, the numerical-claim filter's pass counts, and (when the file has
// taxonomy labels) the rule-based categorizer measured against them.
#include <map>
#include <unordered_map>

#include <fmt/core.h>

#include "claims/category.hpp"
#include "claims/load.hpp"
#include "claims/segment.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"
#include "doc/document.hpp"
#include "stats/classification.hpp"

namespace numcheck::cli {
namespace {

struct Args {
  std::vector<std::string> files;
  bool labels = false;
};

void print_labels() {
  const auto& m = claims::LabelMap::builtin();
  fmt::print(
      "## Label map\n\n{} labels map to True / False / Conflicting.\n\nListed under two classes in Table 9 "
      "(resolved by rule):\n\n",
      m.size());
  for (const auto& d : m.double_listed()) {
    std::string under;
    for (auto v : d.listed_under)
      under += (under.empty() ? "" : " and ") + std::string(claims::verdict_name(v));
    fmt::print("- `{}`: listed under {} -> {}\n", d.label, under, claims::verdict_name(d.resolved));
  }
  fmt::print("\nRule: {}\n\nRepeated within one class: ", m.rule());
  for (const auto& r : m.repeated()) fmt::print("`{}` ", r);
  fmt::print("\n\n");
}

void stats_for(const std::string& path) {
  const auto r = claims::load_claims(path);
  for (std::size_t i = 0; i < r.issues.size() && i < 20; ++i)
    fmt::print(stderr, "numcheck: warning: {}\n", r.issues[i].str());
  if (r.issues.size() > 20) fmt::print(stderr, "numcheck: warning: ... and {} more\n", r.issues.size() - 20);
  fmt::print("## {}\n\nformat {}, {} claims, {} malformed records\n\n", path, r.format, r.claims.size(),
             r.issues.size());
  std::map<std::string, std::size_t> labels, cats;
  std::unordered_map<std::string, std::size_t> texts;
  std::size_t pass1 = 0, pass2 = 0, with_doc = 0, with_evidence = 0, empty_evidence = 0, snippets = 0;
  std::vector<int> gold_cat, pred_cat;
  for (const auto& c : r.claims) {
    ++labels[c.label ? std::string(claims::verdict_name(*c.label)) : "(none)"];
    ++cats[c.category ? std::string(claims::category_name(*c.category)) : "(none)"];
    ++texts[c.text];
    const auto segs = claims::find_segments(c.text);
    pass1 += claims::passes_numerical_filter(segs, 1) ? 1 : 0;
    pass2 += claims::passes_numerical_filter(segs, 2) ? 1 : 0;
    with_doc += c.doc.empty() ? 0 : 1;
    if (!c.evidences.empty()) {
      ++with_evidence;
      std::size_t k = 0;
      for (const auto& e : c.evidences) k += e.top_k_doc.size();
      snippets += k;
      empty_evidence += k == 0 ? 1 : 0;
    }
    if (c.category) {
      gold_cat.push_back(static_cast<int>(*c.category));
      pred_cat.push_back(static_cast<int>(claims::categorize(c.text, segs).category));
    }
  }
  std::size_t dups = 0;
  for (const auto& [t, k] : texts) dups += k - 1;
  doc::Document d;
  doc::html::Table lt;
  lt.header = {"labels", "claims"};
  for (const auto& [k, v] : labels)
    lt.rows.push_back({doc::html::Cell::txt(k), doc::html::Cell::num(fmt::format("{}", v))});
  d.table(std::move(lt));
  doc::html::Table ct;
  ct.header = {"taxonomy", "claims"};
  for (const auto& [k, v] : cats)
    ct.rows.push_back({doc::html::Cell::txt(k), doc::html::Cell::num(fmt::format("{}", v))});
  d.table(std::move(ct));
  d.paragraph(fmt::format("duplicate claim texts: {} (distinct texts {})", dups, texts.size()));
  d.paragraph(fmt::format(
      "with gold evidence (doc): {}; with retrieved evidence: {} ({} snippets, {} claims with none)",
      with_doc, with_evidence, snippets, empty_evidence));
  d.paragraph(fmt::format("numerical-claim filter: {} of {} pass with >= 1 segment, {} with >= 2", pass1,
                          r.claims.size(), pass2));
  if (!gold_cat.empty()) {
    const auto m = stats::ConfusionMatrix::from_labels(gold_cat, pred_cat, 4);
    const auto rep = stats::classification_report(m);
    d.heading(3, "categorizer", fmt::format("Rule-based categorizer vs taxonomy labels ({} claims)", rep.n));
    d.paragraph(fmt::format("accuracy {:.4f}, macro-F1 {:.4f}, weighted-F1 {:.4f}", rep.accuracy,
                            rep.macro_f1, rep.weighted_f1));
    claims::add_category_tables(d, rep, m);
  }
  fmt::print("{}", d.to_markdown());
}

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("files", a->files, "Claim files (any format the loaders read)");
  app.add_flag("--labels", a->labels,
               "Also print the label map's double-listed labels and how they are resolved");
  app.callback([a] {
    if (a->files.empty() && !a->labels) throw Error(ErrorCode::kUsage, "give claim files and/or --labels");
    if (a->labels) print_labels();
    for (const auto& f : a->files) stats_for(f);
  });
}

const CommandRegistration reg(
    {"claims",
     "stats",
     "Counts, label/category distributions, filter pass counts, categorizer accuracy",
     setup,
     "numcheck claims stats --labels",
     {"printed"}});

}  // namespace
}  // namespace numcheck::cli
