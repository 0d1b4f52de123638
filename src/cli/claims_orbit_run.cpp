// numcheck claims orbit run: one verifier's verdict on every original claim and variant of a set of
// claim orbits, with the same evidence for all variants of a claim (the evidence retrieved once, for
// the original claim; only the claim text changes). Writes <out>/predictions.csv (variant_id,verdict;
// the original keyed by its claim id) for `claims orbit report`, and <out>/run.json.
#include <filesystem>
#include <map>

#include <fmt/core.h>

#include "claimorbit/analyze.hpp"
#include "claimorbit/orbit.hpp"
#include "claims/evidence.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"
#include "verify/model.hpp"

namespace numcheck::cli {
namespace {

struct Args {
  std::string orbits, evidence, method = "trained", model, predictions, out;
  unsigned threads = 2;
};

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

void run(const Args& a) {
  std::filesystem::path orbits_path = a.orbits;
  if (std::filesystem::is_directory(orbits_path)) orbits_path /= "claims.jsonl";
  const auto orbits = claimorbit::read_orbits(orbits_path);
  claimorbit::Verdicts verdicts;
  io::OrderedJson m;
  m["orbits"] = {{"path", orbits_path.string()}, {"sha256", io::sha256_file(orbits_path)}};
  m["method"] = a.method;
  std::size_t without_evidence = 0;
  if (a.method == "external") {
    if (a.predictions.empty()) fail(ErrorCode::kUsage, "--method external needs --predictions FILE.csv");
    verdicts = claimorbit::read_verdicts_csv(a.predictions);
    m["predictions"] = {{"path", a.predictions}, {"sha256", io::sha256_file(a.predictions)}};
  } else if (a.method == "trained") {
    if (a.model.empty() || a.evidence.empty())
      fail(ErrorCode::kUsage,
           "--method trained needs --model FILE (from `claims train`) and --evidence FILE");
    const auto model = verify::TrainedModel::load(a.model);
    std::map<std::string, claims::EvidenceRecord> ev;
    claims::for_each_evidence(a.evidence,
                              [&](claims::EvidenceRecord&& r) { ev.emplace(r.id, std::move(r)); });
    std::vector<claims::EvidenceRecord> records;
    for (const auto& o : orbits) {
      const auto it = ev.find(o.id);
      if (it == ev.end()) {
        ++without_evidence;
        continue;
      }
      claims::EvidenceRecord r = it->second;  // the same evidence for the original and every variant
      r.claim = o.claim;
      records.push_back(r);
      for (const auto& v : o.variants) {
        r.id = v.id;
        r.claim = v.text;
        records.push_back(r);
      }
    }
    const auto feats = verify::extract_all(records, model.settings, a.threads);
    for (std::size_t i = 0; i < records.size(); ++i)
      verdicts[records[i].id] = verify::TrainedModel::argmax(model.scores(feats[i]));
    m["evidence"] = {{"path", a.evidence}, {"sha256", io::sha256_file(a.evidence)}};
    m["model"] = {{"path", a.model}, {"sha256", io::sha256_file(a.model)}};
  } else {
    fail(ErrorCode::kUsage, "--method must be trained or external");
  }
  std::string csv = "variant_id,verdict\n";
  std::size_t missing = 0, written = 0;
  auto put = [&](const std::string& id) {
    const auto it = verdicts.find(id);
    if (it == verdicts.end()) {
      ++missing;
      return;
    }
    csv += csv_field(id) + "," + std::string(claims::verdict_name(it->second)) + "\n";
    ++written;
  };
  for (const auto& o : orbits) {
    put(o.id);
    for (const auto& v : o.variants) put(v.id);
  }
  const std::filesystem::path out = a.out;
  std::filesystem::create_directories(out);
  io::write_file_atomic(out / "predictions.csv", csv);
  m["verdicts"] = written;
  m["missing"] = missing;
  m["claims_without_evidence"] = without_evidence;
  io::write_file_atomic(out / "run.json", io::to_pretty(m) + "\n");
  fmt::print("{}: {} verdicts ({} originals and variants without one; {} claims without evidence)\n",
             (out / "predictions.csv").string(), written, missing, without_evidence);
  if (missing > 0)
    throw Error(ErrorCode::kIncomplete, fmt::format("{} originals/variants have no verdict (see {})", missing,
                                                    (out / "run.json").string()));
}

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--orbits", a->orbits, "claims.jsonl written by `claims orbit generate` (or its directory)")
      ->required();
  app.add_option("--method", a->method,
                 "trained (the model of `claims train`) or external (a predictions CSV)")
      ->capture_default_str();
  app.add_option("--evidence", a->evidence,
                 "trained: evidence file (claims/evidence.hpp), one record per claim id");
  app.add_option("--model", a->model, "trained: model file from `claims train`");
  app.add_option("--threads", a->threads, "trained: feature extraction threads")->capture_default_str();
  app.add_option("--predictions", a->predictions, "external: CSV variant_id,verdict");
  app.add_option("--out", a->out, "Directory for predictions.csv and run.json")->required();
  app.footer("Exit 3 when some original or variant has no verdict. See docs/claim-orbits.md.");
  app.callback([a] { run(*a); });
}

const CommandRegistration reg(
    {"claims orbit", "run", "Run a verifier on every claim-orbit variant with the original claim's evidence",
     setup});

}  // namespace
}  // namespace numcheck::cli
