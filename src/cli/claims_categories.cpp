// numcheck claims categories: the rule-based categorizer on claim files: its accuracy and macro-F1
// (with 95% intervals) on records that carry a taxonomy label, the held-out split it is measured
// on, and the category shares over all records beside the paper's Table 10.
#include <map>

#include <fmt/core.h>

#include "claims/category.hpp"
#include "claims/load.hpp"
#include "claims/segment.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"
#include "doc/document.hpp"
#include "io/files.hpp"
#include "io/json.hpp"

namespace numcheck::cli {
namespace {

struct Args {
  std::vector<std::string> files;
  std::string part = "all";
  std::uint64_t split_seed = claims::kCategorySplitSeed;
  std::size_t draws = 10000;
  std::uint64_t seed = 20240714;
  bool list = false;
  std::string json;
};

std::string pct(double x) { return fmt::format("{:.1f}%", 100.0 * x); }

void run(const Args& a) {
  if (a.part != "all" && a.part != "dev" && a.part != "heldout")
    throw Error(ErrorCode::kUsage, "--part must be all, dev or heldout");
  std::vector<std::string> texts;
  std::vector<claims::Category> gold;
  std::map<claims::Category, std::size_t> shares;
  std::size_t total = 0;
  for (const auto& f : a.files) {
    const auto r = claims::load_claims(f);
    for (const auto& is : r.issues) fmt::print(stderr, "numcheck: warning: {}\n", is.str());
    for (const auto& c : r.claims) {
      if (a.part != "all" && claims::category_heldout(c.text, a.split_seed) != (a.part == "heldout"))
        continue;
      const auto segs = claims::find_segments(c.text);
      const auto cat = claims::categorize(c.text, segs);
      ++shares[cat.category];
      ++total;
      if (c.category) {
        texts.push_back(c.text);
        gold.push_back(*c.category);
      }
      if (a.list)
        fmt::print("{}\t{}\t{}\t{}\n", c.category ? claims::category_name(*c.category) : "-",
                   claims::category_name(cat.category), cat.rule, c.text);
    }
  }
  io::OrderedJson j;
  j["files"] = a.files;
  j["part"] = a.part;
  j["split_seed"] = a.split_seed;
  doc::Document d;
  d.heading(2, "claim-categories",
            fmt::format("Claim categories ({} claims, part {}, split seed {})", total, a.part, a.split_seed));
  if (!gold.empty()) {
    const auto ev = claims::evaluate_categorizer(texts, gold, a.draws, a.seed);
    const auto& rep = ev.report;
    d.paragraph(fmt::format("Categorizer vs taxonomy labels: {} labelled records ({} distinct texts)", rep.n,
                            ev.distinct_texts));
    d.paragraph(fmt::format(
        "accuracy {:.4f} (95% Wilson [{:.4f}, {:.4f}]), macro-F1 {:.4f} (95% bootstrap over distinct texts "
        "[{:.4f}, {:.4f}], {} draws, seed {}), weighted-F1 {:.4f}",
        rep.accuracy, ev.accuracy_ci.lo, ev.accuracy_ci.hi, rep.macro_f1, ev.macro_f1_ci.lo,
        ev.macro_f1_ci.hi, ev.draws, ev.seed, rep.weighted_f1));
    claims::add_category_tables(d, rep, ev.confusion);
    io::OrderedJson e;
    e["n"] = rep.n;
    e["distinct_texts"] = ev.distinct_texts;
    e["accuracy"] = rep.accuracy;
    e["accuracy_wilson95"] = {ev.accuracy_ci.lo, ev.accuracy_ci.hi};
    e["macro_f1"] = rep.macro_f1;
    e["macro_f1_bootstrap95"] = {ev.macro_f1_ci.lo, ev.macro_f1_ci.hi};
    e["weighted_f1"] = rep.weighted_f1;
    e["draws"] = ev.draws;
    e["seed"] = ev.seed;
    for (auto c : claims::kCategories) {
      const auto& s = rep.per_class[static_cast<std::size_t>(c)];
      e["per_class"][std::string(claims::category_name(c))] = {
          {"precision", s.precision}, {"recall", s.recall}, {"f1", s.f1}, {"support", s.support}};
    }
    for (auto g : claims::kCategories)
      for (auto p : claims::kCategories)
        e["confusion"][std::string(claims::category_name(g))][std::string(claims::category_name(p))] =
            ev.confusion.at(static_cast<std::size_t>(g), static_cast<std::size_t>(p));
    j["evaluation"] = e;
  } else {
    j["evaluation"] = nullptr;
  }
  std::size_t paper_total = 0;
  for (const auto& [c, k] : claims::CategoryRules::builtin().paper_counts) paper_total += k;
  doc::html::Table t;
  t.header = {"category", "claims", "share", "paper (Table 10)"};
  for (auto c : claims::kCategories) {
    const std::size_t k = shares[c];
    std::string paper = "-";
    for (const auto& [pc, pk] : claims::CategoryRules::builtin().paper_counts)
      if (pc == c && paper_total > 0) {
        paper = pct(double(pk) / double(paper_total));
        j["paper_shares"][std::string(claims::category_name(c))] = double(pk) / double(paper_total);
      }
    const double share = total > 0 ? double(k) / double(total) : 0.0;
    t.rows.push_back({doc::html::Cell::txt(std::string(claims::category_name(c))),
                      doc::html::Cell::num(fmt::format("{}", k)), doc::html::Cell::num(pct(share)),
                      doc::html::Cell::num(paper)});
    j["shares"][std::string(claims::category_name(c))] = {{"count", k}, {"share", share}};
  }
  d.table(std::move(t));
  fmt::print("{}", d.to_markdown());
  if (!a.json.empty()) io::write_file_atomic(a.json, io::to_pretty(j) + "\n");
}

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("files", a->files, "Claim files (any format the loaders read)")->required();
  app.add_option("--part", a->part,
                 "Which claims: all, dev (rules written from these) or heldout (never looked at)")
      ->capture_default_str();
  app.add_option("--split-seed", a->split_seed, "Seed of the dev/held-out split")->capture_default_str();
  app.add_option("--draws", a->draws, "Bootstrap draws for the macro-F1 interval")->capture_default_str();
  app.add_option("--seed", a->seed, "Bootstrap seed")->capture_default_str();
  app.add_flag("--list", a->list, "Print each claim: gold, predicted, rule, text (tab-separated)");
  app.add_option("--json", a->json, "Also write the figures as JSON");
  app.callback([a] { run(*a); });
}

const CommandRegistration reg(
    {"claims",
     "categories",
     "Categorizer accuracy with intervals on a held-out split, category shares vs the paper",
     setup,
     "numcheck claims categories val_claimonly_evidence_question_mapping.json --part heldout",
     {"printed"}});

}  // namespace
}  // namespace numcheck::cli
