// numcheck claims stats: what a claim file holds: records, malformed records, label and category
// distributions, duplicate texts (under claims::normalize_claim), the numerical-claim filter's pass
// counts, and (when the file has taxonomy labels) the rule-based categorizer measured against
// them; with several files, the near-duplicates across them (claims::near_duplicates), also as
// JSON with --near-duplicates.
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/core.h>

#include "claims/category.hpp"
#include "claims/evidence.hpp"
#include "claims/load.hpp"
#include "claims/normalize.hpp"
#include "claims/segment.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"
#include "doc/document.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "stats/classification.hpp"

namespace numcheck::cli {
namespace {

struct Args {
  std::vector<std::string> files;
  bool labels = false;
  std::string near_duplicates;  // JSON output ("" = none)
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

claims::LoadResult stats_for(const std::string& path) {
  auto r = claims::load_claims(path);
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
    ++texts[claims::normalize_claim(c.text)];
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
  d.paragraph(
      fmt::format("duplicate claim texts: {} (distinct texts {}; texts compared in Unicode NFKC, "
                  "any case, quote style, dash and spacing)",
                  dups, texts.size()));
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
  return r;
}

std::string label_of(const claims::Claim& c) {
  return c.label ? std::string(claims::verdict_name(*c.label)) : std::string();
}

// Near-duplicates between every two files (earlier file first), printed and returned as JSON.
io::OrderedJson cross_file_duplicates(const std::vector<std::string>& paths,
                                      const std::vector<claims::LoadResult>& files) {
  io::OrderedJson out = io::OrderedJson::object();
  out["rule"] = {{"normalization",
                  "Unicode NFKC_Casefold; quotes, dashes, white space runs as one form; "
                  "surrounding quotes and spaces removed"},
                 {"jaccard_at_least",
                  fmt::format("{}/{}", claims::kNearDuplicateJaccardNum, claims::kNearDuplicateJaccardDen)}};
  io::OrderedJson pairs = io::OrderedJson::array();
  doc::Document d;
  d.heading(2, "near-duplicates", "Near-duplicates across files");
  d.paragraph(
      fmt::format("Two claims are near-duplicates when their texts are equal in Unicode NFKC, any "
                  "case, quote style, dash and spacing (same text), or when at least {}/{} of "
                  "their words are shared (Jaccard of word sets; reworded).",
                  claims::kNearDuplicateJaccardNum, claims::kNearDuplicateJaccardDen));
  doc::html::Table t;
  t.header = {"file A", "file B", "same text", "reworded", "claims of B with a twin in A"};
  std::vector<std::string> lines;
  for (std::size_t a = 0; a < files.size(); ++a) {
    for (std::size_t b = a + 1; b < files.size(); ++b) {
      std::vector<std::string> ta, tb;
      for (const auto& c : files[a].claims) ta.push_back(c.text);
      for (const auto& c : files[b].claims) tb.push_back(c.text);
      const auto found = claims::near_duplicates(ta, tb);
      std::size_t same = 0;
      std::set<std::size_t> twinned;
      io::OrderedJson items = io::OrderedJson::array();
      for (const auto& x : found) {
        same += x.same_text ? 1 : 0;
        twinned.insert(x.right);
        const auto& ca = files[a].claims[x.left];
        const auto& cb = files[b].claims[x.right];
        io::OrderedJson it = io::OrderedJson::object();
        it["a_id"] = claims::claim_id(ca);
        it["b_id"] = claims::claim_id(cb);
        it["same_text"] = x.same_text;
        it["common_words"] = x.common;
        it["words"] = x.words;
        it["a_label"] = label_of(ca);
        it["b_label"] = label_of(cb);
        it["a_claim"] = ca.text;
        it["b_claim"] = cb.text;
        items.push_back(std::move(it));
        lines.push_back(fmt::format("{} ~ {} ({}, words {}/{}; labels {} / {})", claims::claim_id(cb),
                                    claims::claim_id(ca), x.same_text ? "same text" : "reworded", x.common,
                                    x.words, label_of(cb).empty() ? "-" : label_of(cb),
                                    label_of(ca).empty() ? "-" : label_of(ca)));
      }
      t.rows.push_back({doc::html::Cell::txt(paths[a]), doc::html::Cell::txt(paths[b]),
                        doc::html::Cell::num(fmt::format("{}", same)),
                        doc::html::Cell::num(fmt::format("{}", found.size() - same)),
                        doc::html::Cell::num(fmt::format("{} of {}", twinned.size(), tb.size()))});
      io::OrderedJson p = io::OrderedJson::object();
      p["a"] = paths[a];
      p["b"] = paths[b];
      p["a_claims"] = ta.size();
      p["b_claims"] = tb.size();
      p["same_text"] = same;
      p["reworded"] = found.size() - same;
      p["b_with_twin"] = twinned.size();
      p["items"] = std::move(items);
      pairs.push_back(std::move(p));
    }
  }
  d.table(std::move(t));
  for (std::size_t i = 0; i < lines.size() && i < 50; ++i) d.paragraph(lines[i]);
  if (lines.size() > 50)
    d.paragraph(fmt::format("... and {} more (all in --near-duplicates)", lines.size() - 50));
  fmt::print("{}", d.to_markdown());
  out["pairs"] = std::move(pairs);
  return out;
}

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("files", a->files, "Claim files (any format the loaders read)");
  app.add_flag("--labels", a->labels,
               "Also print the label map's double-listed labels and how they are resolved");
  app.add_option("--near-duplicates", a->near_duplicates,
                 "Write the near-duplicates across the files (two or more, e.g. train val test) as JSON");
  app.callback([a] {
    if (a->files.empty() && !a->labels) throw Error(ErrorCode::kUsage, "give claim files and/or --labels");
    if (!a->near_duplicates.empty() && a->files.size() < 2)
      throw Error(ErrorCode::kUsage, "--near-duplicates needs two or more claim files");
    if (a->labels) print_labels();
    std::vector<claims::LoadResult> loaded;
    for (const auto& f : a->files) loaded.push_back(stats_for(f));
    if (loaded.size() >= 2) {
      const io::OrderedJson j = cross_file_duplicates(a->files, loaded);
      if (!a->near_duplicates.empty()) io::write_file_atomic(a->near_duplicates, io::to_pretty(j));
    }
  });
}

const CommandRegistration reg(
    {"claims",
     "stats",
     "Counts, label/category distributions, filter pass counts, categorizer accuracy",
     setup,
     "numcheck claims stats train.json val.json test.csv --near-duplicates near-duplicates.json",
     {"printed"}});

}  // namespace
}  // namespace numcheck::cli
