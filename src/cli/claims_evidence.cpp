// numcheck claims evidence: writes an evidence file (the contract in src/claims/evidence.hpp) from
// claim files the loaders read: the QuanTemp val mapping (its top-3 snippets, "val-top3"), the
// labelled test CSV (the fact-checker justification, "gold"), or any claim file (no evidence).
#include <fmt/core.h>

#include "claims/evidence.hpp"
#include "claims/load.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"

namespace numcheck::cli {
namespace {

struct Args {
  std::vector<std::string> from;
  std::string out;
  std::string fallback = "lexical";
  bool strict = false;
};

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--from", a->from,
                 "Claim files (any format the loaders read); repeat to concatenate several")
      ->required();
  app.add_option("--out", a->out, "Evidence file to write (JSONL); its manifest goes to FILE.manifest.json")
      ->required();
  app.add_option("--selection", a->fallback,
                 "Selection recorded for claims that carry no evidence of their own")
      ->capture_default_str();
  app.add_flag("--strict", a->strict, "Fail (exit 1) when any record of an input is malformed");
  app.footer(
      "Claims with retrieved snippets (CheckThat/QuanTemp val mapping) become selection val-top3; claims "
      "with "
      "a fact-checker justification (doc, or the test CSV's [Evidences] part) become selection gold. See "
      "docs/claims-reference.md.");
  app.callback([a] {
    if (!claims::valid_selection(a->fallback))
      fail(ErrorCode::kUsage, "--selection: '{}' is not valid", a->fallback);
    claims::EvidenceWriter w(a->out);
    std::size_t issues = 0;
    for (const auto& f : a->from) {
      const auto r = claims::load_claims(f);
      for (std::size_t i = 0; i < r.issues.size() && i < 20; ++i)
        fmt::print(stderr, "numcheck: warning: {}\n", r.issues[i].str());
      if (r.issues.size() > 20)
        fmt::print(stderr, "numcheck: warning: ... and {} more malformed records\n", r.issues.size() - 20);
      issues += r.issues.size();
      if (a->strict && !r.issues.empty()) fail("{}: {} malformed records (--strict)", f, r.issues.size());
      w.add_input(f);
      for (const auto& c : r.claims) w.write(claims::evidence_from_claim(c, a->fallback));
    }
    const auto n = w.finish();
    std::string sel;
    for (const auto& [k, v] : n.by_selection) sel += fmt::format("{}{} {}", sel.empty() ? "" : ", ", v, k);
    fmt::print(
        "{}: {} claims ({}), {} labelled, {} evidence documents, {} claims without evidence, {} malformed "
        "records skipped\n",
        a->out, n.records, sel, n.labelled, n.documents, n.without_evidence, issues);
  });
}

const CommandRegistration reg(
    {"claims",
     "evidence",
     "Write an evidence file (JSONL + manifest) from claim files",
     setup,
     "numcheck claims evidence --from val_claimonly_evidence_question_mapping.json --out val.jsonl",
     {"written"}});

}  // namespace
}  // namespace numcheck::cli
