// numcheck claims orbit evidence: the evidence file of a set of claim orbits, so that any verifier
// that reads evidence files (`claims verify --method llm|trained`, or an external one) can verdict
// every original claim and variant: one record per original (its claim id) and per variant (its
// variant id), each with the original claim's evidence, label and questions; only the claim text
// changes. `claims orbit run --method external --predictions DIR/predictions.jsonl` then reads the
// verifier's output. docs/claim-orbits.md.
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include <fmt/core.h>

#include "claimorbit/analyze.hpp"
#include "claimorbit/orbit.hpp"
#include "claims/evidence.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"
#include "io/files.hpp"

namespace numcheck::cli {
namespace {

struct Args {
  std::string orbits, evidence, out;
};

void run(const Args& a) {
  std::filesystem::path orbits_path = a.orbits;
  if (std::filesystem::is_directory(orbits_path)) orbits_path /= "claims.jsonl";
  const auto orbits = claimorbit::read_orbits(orbits_path);
  std::map<std::string, claims::EvidenceRecord> ev;
  claims::for_each_evidence(a.evidence, [&](claims::EvidenceRecord&& r) {
    const std::string id = r.id;
    ev.emplace(id, std::move(r));
  });
  std::size_t without = 0;
  const auto records = claimorbit::orbit_evidence(orbits, ev, &without);
  std::string text;
  for (const auto& r : records) text += io::to_line(claims::evidence_json(r)) + "\n";
  const std::filesystem::path out = a.out;
  if (out.has_parent_path()) std::filesystem::create_directories(out.parent_path());
  io::write_file_atomic(out, text);
  fmt::print("{}: {} records (originals and variants of {} claims; {} claims without evidence left out)\n",
             a.out, records.size(), orbits.size() - without, without);
}

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--orbits", a->orbits, "claims.jsonl written by `claims orbit generate` (or its directory)")
      ->required();
  app.add_option(
         "--evidence", a->evidence,
         "Evidence file of the original claims (from `claims evidence` or `claims retrieve`), keyed by "
         "claim id")
      ->required();
  app.add_option("--out", a->out, "Evidence file to write (JSONL), one record per original and variant")
      ->required();
  app.footer(
      "Then: numcheck claims verify --method llm --evidence OUT --out DIR ...; numcheck claims orbit run "
      "--method external --predictions DIR/predictions.jsonl. See docs/claim-orbits.md.");
  app.callback([a] { run(*a); });
}

const CommandRegistration reg(
    {"claims orbit",
     "evidence",
     "The evidence file of claim orbits (every variant with its original's evidence), "
     "for any verifier",
     setup,
     "numcheck claims orbit evidence --orbits orbits --evidence test_ev.jsonl --out orbit_ev.jsonl",
     {"written"}});

}  // namespace
}  // namespace numcheck::cli
