// numcheck claims train: trains the embedded claim verifier (liblinear over the features of
// verify/features.hpp) on labelled claims with their evidence, and writes one model file. With
// --exclude, training claims that are near-duplicates of the claims to be scored are left out.
#include <optional>
#include <unordered_map>

#include <fmt/core.h>

#include "claims/evidence.hpp"
#include "claims/load.hpp"
#include "claims/normalize.hpp"
#include "cli/command.hpp"
#include "cli/verifier_flags.hpp"
#include "core/error.hpp"
#include "verify/model.hpp"

namespace numcheck::cli {
namespace {

struct Args {
  std::string train, evidence, out;
  std::vector<std::string> exclude;
  VerifierFlags verifier;
  unsigned threads = 2;
};

// The training records that are not near-duplicates (claims/normalize.hpp) of any claim in the
// files of the claims to be scored; prints how many were left out and which.
std::vector<claims::EvidenceRecord> drop_near_duplicates(std::vector<claims::EvidenceRecord> records,
                                                         const std::vector<std::string>& files,
                                                         std::vector<std::string>& left_out) {
  std::vector<std::string> scored;
  for (const auto& f : files)
    for (const auto& c : claims::load_claims(f).claims) scored.push_back(c.text);
  std::vector<std::string> texts;
  texts.reserve(records.size());
  for (const auto& r : records) texts.push_back(r.claim);
  const auto drop = claims::near_duplicates_of(texts, scored);
  std::string ids;
  for (std::size_t k = 0; k < drop.size(); ++k) {
    ids += (k == 0 ? "" : ", ") + records[drop[k]].id;
    left_out.push_back(records[drop[k]].id);
  }
  fmt::print("left out {} training claims that are near-duplicates of the {} claims to be scored{}{}\n",
             drop.size(), scored.size(), drop.empty() ? "" : ": ", ids);
  std::vector<claims::EvidenceRecord> kept;
  kept.reserve(records.size() - drop.size());
  std::size_t k = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (k < drop.size() && drop[k] == i) {
      ++k;
      continue;
    }
    kept.push_back(std::move(records[i]));
  }
  return kept;
}

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--evidence", a->evidence, "Evidence file of the training claims (from `claims evidence`)")
      ->required();
  app.add_option("--train", a->train,
                 "Labelled claim file (any loader format); its labels win, and only its claims are used "
                 "(joined by claim id, else by text compared as claims::normalize_claim does). Default: the "
                 "evidence file's own labels");
  app.add_option("--out", a->out, "Model file to write (JSON)")->required();
  app.add_option(
      "--exclude", a->exclude,
      "Claims the model will be scored on (any loader format or an evidence file): training claims "
      "that are near-duplicates of them are left out (counted and named); repeatable");
  add_verifier_flags(app, a->verifier);
  app.add_option("--threads", a->threads, "Feature extraction threads")->capture_default_str();
  app.footer("Deterministic: the same inputs give the same model bytes. See docs/claims-reference.md.");
  app.callback([a] {
    const auto settings = verifier_settings(a->verifier);
    auto records = claims::read_evidence(a->evidence);
    if (!a->train.empty()) {
      claims::LoadOptions opt;
      opt.labels = claims::LabelPolicy::kRequired;
      const auto t = claims::load_claims(a->train, opt);
      for (std::size_t i = 0; i < t.issues.size() && i < 20; ++i)
        fmt::print(stderr, "numcheck: warning: {}\n", t.issues[i].str());
      std::unordered_map<std::string, const claims::Claim*> by_id, by_text;
      for (const auto& c : t.claims) {
        by_id.emplace(claims::claim_id(c), &c);
        by_text.emplace(claims::normalize_claim(c.text), &c);
      }
      std::vector<claims::EvidenceRecord> kept;
      for (auto& r : records) {
        auto it = by_id.find(r.id);
        if (it == by_id.end()) {
          it = by_text.find(claims::normalize_claim(r.claim));
          if (it == by_text.end()) continue;
        }
        r.label = it->second->label;
        if (it->second->category) r.category = it->second->category;
        kept.push_back(std::move(r));
      }
      records = std::move(kept);
    }
    std::vector<claims::EvidenceRecord> labelled;
    for (auto& r : records)
      if (r.label) labelled.push_back(std::move(r));
    std::optional<std::vector<std::string>> left_out;
    if (!a->exclude.empty())
      labelled = drop_near_duplicates(std::move(labelled), a->exclude, left_out.emplace());
    if (labelled.empty()) fail("{}: no labelled training claims", a->train.empty() ? a->evidence : a->train);
    const auto feats = verify::extract_all(labelled, settings, a->threads);
    std::vector<const verify::NamedFeatures*> fp;
    std::vector<claims::Verdict> y;
    for (std::size_t i = 0; i < labelled.size(); ++i) {
      fp.push_back(&feats[i]);
      y.push_back(*labelled[i].label);
    }
    std::vector<const claims::EvidenceRecord*> rp;
    rp.reserve(labelled.size());
    for (const auto& r : labelled) rp.push_back(&r);
    auto model = verify::train_model(fp, y, settings, verify::claim_groups(rp));
    model.data_sha256 = verify::training_hash(labelled);
    model.left_out = std::move(left_out);
    model.save(a->out);
    fmt::print("{}: trained on {} claims, {} features, numbers {}\n", a->out, labelled.size(),
               model.names.size() + model.dense_names.size(), verify::number_mode_name(settings.numbers));
  });
}

const CommandRegistration reg({"claims",
                               "train",
                               "Train the embedded claim verifier (liblinear)",
                               setup,
                               "numcheck claims train --evidence val.jsonl --out model.json",
                               {"model written"}});

}  // namespace
}  // namespace numcheck::cli
