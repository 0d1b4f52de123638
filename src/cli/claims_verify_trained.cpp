// claims verify --method trained: the embedded verifier trained by `numcheck claims train`.
#include <fmt/core.h>

#include "claims/evidence.hpp"
#include "cli/claims_verify.hpp"
#include "core/error.hpp"
#include "io/sha256.hpp"
#include "verify/model.hpp"
#include "verify/predictions.hpp"

namespace numcheck::cli {
namespace {

struct TrainedOpts {
  unsigned threads = 2;
};
TrainedOpts opts;

const VerifyMethodRegistration reg({
    "trained",
    "the liblinear model from `claims train`, given with --model",
    [](CLI::App& app) {
      app.add_option("--threads", opts.threads, "trained: feature extraction threads")->capture_default_str();
    },
    [](const VerifyArgs& a) {
      if (a.model.empty())
        fail(ErrorCode::kUsage, "--method trained needs --model FILE (from `claims train`)");
      const auto model = verify::TrainedModel::load(a.model);
      auto records = claims::read_evidence(a.evidence);
      if (a.limit > 0 && records.size() > a.limit) records.resize(a.limit);
      const auto scores = verify::predict_all(records, model, opts.threads);
      std::vector<verify::Prediction> preds(records.size());
      for (std::size_t i = 0; i < records.size(); ++i) {
        auto& p = preds[i];
        p.id = records[i].id;
        p.claim = records[i].claim;
        p.scores = scores[i];
        p.label = verify::TrainedModel::argmax(*p.scores);
        p.gold = records[i].label;
      }
      io::OrderedJson m;
      m["method"] = "trained";
      m["evidence"] = {{"path", a.evidence}, {"sha256", io::sha256_file(a.evidence)}};
      m["model"] = {
          {"path", a.model}, {"sha256", io::sha256_file(a.model)}, {"data_sha256", model.data_sha256}};
      verify::write_predictions(a.out, preds, m);
      std::size_t with_gold = 0, correct = 0;
      for (const auto& p : preds) {
        with_gold += p.gold ? 1 : 0;
        correct += p.gold && p.gold == p.label ? 1 : 0;
      }
      fmt::print("{}: {} claims verified{}\n", a.out, preds.size(),
                 with_gold > 0 ? fmt::format(" ({} of {} labelled claims correct)", correct, with_gold) : "");
    },
});

}  // namespace
}  // namespace numcheck::cli
