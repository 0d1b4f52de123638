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
#include "cli/verifier_flags.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"
#include "verify/cv.hpp"
#include "verify/model.hpp"

namespace numcheck::cli {
namespace {

struct Args {
  std::string orbits, evidence, method = "trained", model, predictions, out;
  unsigned threads = 2;
  // trained with --folds: cross-validated verdicts (train on the other folds, never on the claim)
  int folds = 0;
  std::uint64_t fold_seed = 20260725;
  VerifierFlags verifier;
};

// Verdicts of every original and variant of the orbits, from
// models trained on the other folds of the labelled evidence (grouped by claim text, stratified
// by label: verify::grouped_stratified_folds, the folds `claims cv` uses). Every orbit claim must
// be labelled in the evidence file.
void cross_validated(const Args& a, const std::vector<claimorbit::ClaimOrbit>& orbits,
                     const std::vector<claims::EvidenceRecord>& evidence, claimorbit::Verdicts& verdicts,
                     io::OrderedJson& m) {
  const auto settings = verifier_settings(a.verifier);
  std::vector<claims::EvidenceRecord> labelled;
  for (const auto& r : evidence)
    if (r.label) labelled.push_back(r);
  const auto fold = verify::grouped_stratified_folds(labelled, a.folds, a.fold_seed);
  std::map<std::string, std::size_t> index;  // claim id -> labelled record
  std::map<std::string, claims::EvidenceRecord> by_id;
  for (std::size_t i = 0; i < labelled.size(); ++i) {
    index.emplace(labelled[i].id, i);
    by_id.emplace(labelled[i].id, labelled[i]);
  }
  const auto feats = verify::extract_all(labelled, settings, a.threads);
  for (const auto& o : orbits)
    if (!index.count(o.id))
      fail(ErrorCode::kUsage,
           "--folds: orbit claim '{}' has no labelled record in {} (every claim needs one)", o.id,
           a.evidence);
  for (int f = 0; f < a.folds; ++f) {
    std::vector<const verify::NamedFeatures*> fp;
    std::vector<claims::Verdict> y;
    for (std::size_t i = 0; i < labelled.size(); ++i)
      if (fold[i] != f) {
        fp.push_back(&feats[i]);
        y.push_back(*labelled[i].label);
      }
    std::vector<const claims::EvidenceRecord*> rp;
    for (std::size_t i = 0; i < labelled.size(); ++i)
      if (fold[i] != f) rp.push_back(&labelled[i]);
    const auto model = verify::train_model(fp, y, settings, verify::claim_groups(rp));
    std::vector<claimorbit::ClaimOrbit> in_fold;
    for (const auto& o : orbits)
      if (fold[index.at(o.id)] == f) in_fold.push_back(o);
    const auto held = claimorbit::orbit_evidence(in_fold, by_id);
    const auto hf = verify::extract_all(held, settings, a.threads);
    for (std::size_t i = 0; i < held.size(); ++i)
      verdicts[held[i].id] = verify::TrainedModel::argmax(model.scores(hf[i]));
  }
  m["cross_validation"] = {
      {"folds", a.folds},
      {"fold_seed", a.fold_seed},
      {"grouping", "near-duplicate claims, stratified by label (as `claims cv`)"},
      {"labelled_claims", labelled.size()},
      {"numbers", verify::number_mode_name(settings.numbers)},
      {"learner", settings.learner.kind},
      {"features", a.verifier.features.empty() ? io::OrderedJson("builtin")
                                               : io::OrderedJson(io::sha256_file(a.verifier.features))}};
}

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
  if (a.folds != 0 && a.method != "trained") fail(ErrorCode::kUsage, "--folds works with --method trained");
  if (a.method == "external") {
    if (a.predictions.empty()) fail(ErrorCode::kUsage, "--method external needs --predictions FILE.csv");
    std::size_t unparseable = 0;
    verdicts = claimorbit::read_verdicts(a.predictions, &unparseable);
    m["predictions"] = {{"path", a.predictions}, {"sha256", io::sha256_file(a.predictions)}};
    m["unparseable"] = unparseable;
  } else if (a.method == "trained" && a.folds > 0) {
    if (a.folds < 2) fail(ErrorCode::kUsage, "--folds must be at least 2");
    if (!a.model.empty()) fail(ErrorCode::kUsage, "--folds trains its own models: leave out --model");
    if (a.evidence.empty()) fail(ErrorCode::kUsage, "--folds needs --evidence FILE (labelled)");
    cross_validated(a, orbits, claims::read_evidence(a.evidence), verdicts, m);
    m["evidence"] = {{"path", a.evidence}, {"sha256", io::sha256_file(a.evidence)}};
  } else if (a.method == "trained") {
    if (any_verifier_flag(a.verifier))
      fail(ErrorCode::kUsage, "--features, --learner and --numbers train models: give them with --folds K");
    if (a.model.empty() || a.evidence.empty())
      fail(ErrorCode::kUsage,
           "--method trained needs --model FILE (from `claims train`) and --evidence FILE");
    const auto model = verify::TrainedModel::load(a.model);
    std::map<std::string, claims::EvidenceRecord> ev;
    claims::for_each_evidence(a.evidence,
                              [&](claims::EvidenceRecord&& r) { ev.emplace(r.id, std::move(r)); });
    const auto records = claimorbit::orbit_evidence(orbits, ev, &without_evidence);
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
  app.add_option(
      "--folds", a->folds,
      "trained: k-fold cross-validated verdicts on the labelled --evidence claims (train a model on "
      "the other folds for each fold; no --model)");
  app.add_option("--fold-seed", a->fold_seed, "trained --folds: seed of the grouped, stratified folds")
      ->capture_default_str();
  add_verifier_flags(app, a->verifier, "trained --folds: ");
  app.add_option("--predictions", a->predictions,
                 "external: CSV variant_id,verdict, or the predictions.jsonl of `claims verify` run on the "
                 "file of `claims orbit evidence` (any verifier, e.g. --method llm)");
  app.add_option("--out", a->out, "Directory for predictions.csv and run.json")->required();
  app.footer("Exit 3 when some original or variant has no verdict. See docs/claim-orbits.md.");
  app.callback([a] { run(*a); });
}

const CommandRegistration reg(
    {"claims orbit",
     "run",
     "Run a verifier on every claim-orbit variant with the original claim's evidence",
     setup,
     "numcheck claims orbit run --orbits orbits --evidence test_ev.jsonl --method trained --model "
     "canonical.json --out run_c",
     {"every original and variant has a verdict",
      "some originals or variants have no verdict (predictions.csv and run.json are still written)"}});

}  // namespace
}  // namespace numcheck::cli
