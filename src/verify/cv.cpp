#include "verify/cv.hpp"

#include <linear.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/prng.hpp"
#include "doc/document.hpp"
#include "stats/bootstrap.hpp"
#include "stats/tests.hpp"
#include "verify/model.hpp"

namespace numcheck::verify {

namespace {
constexpr std::size_t kK = claims::kVerdictCount;
std::size_t vi(claims::Verdict v) { return static_cast<std::size_t>(v); }
}  // namespace

std::vector<int> grouped_stratified_folds(const std::vector<claims::EvidenceRecord>& records, int k,
                                          std::uint64_t seed) {
  if (k < 2) fail(ErrorCode::kUsage, "folds: {} is fewer than 2", k);
  // Near-duplicate groups (claim_groups), in first-occurrence order.
  std::vector<const claims::EvidenceRecord*> ptrs;
  ptrs.reserve(records.size());
  for (const auto& r : records) ptrs.push_back(&r);
  std::vector<std::vector<std::size_t>> groups;
  const std::vector<std::size_t> gid = claim_groups(ptrs);
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (gid[i] == groups.size()) groups.emplace_back();
    groups[gid[i]].push_back(i);
  }
  if (groups.size() < static_cast<std::size_t>(k))
    fail("cross-validation: {} distinct claims for {} folds", groups.size(), k);
  std::array<std::vector<std::size_t>, kK + 1> strata;  // last: unlabelled
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto& lab = records[groups[g].front()].label;
    strata[lab ? vi(*lab) : kK].push_back(g);
  }
  std::vector<std::array<std::size_t, kK + 1>> per_label(static_cast<std::size_t>(k));
  for (auto& a : per_label) a.fill(0);
  std::vector<std::size_t> total(static_cast<std::size_t>(k), 0);
  std::vector<int> fold(records.size(), 0);
  for (std::size_t s = 0; s < strata.size(); ++s) {
    Rng rng(seed, fmt::format("cv-folds-{}", s));
    auto order = strata[s];
    rng.shuffle(order);
    for (std::size_t g : order) {
      std::size_t best = 0;
      for (std::size_t f = 1; f < static_cast<std::size_t>(k); ++f) {
        if (per_label[f][s] < per_label[best][s] ||
            (per_label[f][s] == per_label[best][s] && total[f] < total[best]))
          best = f;
      }
      per_label[best][s] += groups[g].size();
      total[best] += groups[g].size();
      for (std::size_t i : groups[g]) fold[i] = static_cast<int>(best);
    }
  }
  return fold;
}

// ---------------------------------------------------------------------------------------------

std::vector<std::string> ClaimOnlyNaiveBayes::grams(const claims::EvidenceRecord& r) const {
  const auto toks = tokenize(r.claim, NumberMode::kSurface);
  std::vector<std::string> out;
  for (int n = 1; n <= max_n_; ++n)
    for (std::size_t i = 0; i + static_cast<std::size_t>(n) <= toks.size(); ++i) {
      std::string g = toks[i];
      for (int j = 1; j < n; ++j) g += " " + toks[i + static_cast<std::size_t>(j)];
      out.push_back(std::move(g));
    }
  return out;
}

void ClaimOnlyNaiveBayes::fit(const std::vector<const claims::EvidenceRecord*>& records) {
  std::map<std::string, std::array<double, kK>> counts;
  std::array<double, kK> docs{}, tokens{};
  for (const auto* r : records) {
    const std::size_t c = vi(*r->label);
    docs[c] += 1;
    for (auto& g : grams(*r)) {
      counts[g][c] += 1;
      tokens[c] += 1;
    }
  }
  const double v = static_cast<double>(counts.size());
  const double n = std::accumulate(docs.begin(), docs.end(), 0.0);
  for (std::size_t c = 0; c < kK; ++c) {
    present_[c] = docs[c] > 0;
    log_prior_[c] = present_[c] ? std::log(docs[c] / n) : 0;
    log_unseen_[c] = -std::log(tokens[c] + v);
  }
  table_.clear();
  table_.reserve(counts.size());
  for (const auto& [g, cnt] : counts) {
    std::array<double, kK> lp{};
    for (std::size_t c = 0; c < kK; ++c) lp[c] = std::log(cnt[c] + 1.0) + log_unseen_[c];
    table_.emplace_back(g, lp);
  }
}

claims::Verdict ClaimOnlyNaiveBayes::predict(const claims::EvidenceRecord& r) const {
  std::array<double, kK> s = log_prior_;
  for (const auto& g : grams(r)) {
    const auto it = std::lower_bound(table_.begin(), table_.end(), g,
                                     [](const auto& e, const std::string& key) { return e.first < key; });
    if (it == table_.end() || it->first != g) continue;  // unseen in training: ignored (as scikit-learn)
    for (std::size_t c = 0; c < kK; ++c) s[c] += it->second[c];
  }
  std::size_t best = kK;
  for (std::size_t c = 0; c < kK; ++c)
    if (present_[c] && (best == kK || s[c] > s[best])) best = c;
  return static_cast<claims::Verdict>(best == kK ? 0 : best);
}

// ---------------------------------------------------------------------------------------------

namespace {

std::vector<std::string> claim_grams(const claims::EvidenceRecord& r, int max_n) {
  const auto toks = tokenize(r.claim, NumberMode::kSurface);
  std::vector<std::string> out;
  for (int n = 1; n <= max_n; ++n)
    for (std::size_t i = 0; i + static_cast<std::size_t>(n) <= toks.size(); ++i) {
      std::string g = toks[i];
      for (int j = 1; j < n; ++j) g += " " + toks[i + static_cast<std::size_t>(j)];
      out.push_back(std::move(g));
    }
  return out;
}

void quiet_liblinear(const char*) {}

}  // namespace

std::vector<std::pair<std::size_t, double>> ClaimOnlyTfidfLogReg::row(const claims::EvidenceRecord& r) const {
  std::map<std::size_t, double> tf;
  for (const auto& g : claim_grams(r, max_n_)) {
    const auto it = std::lower_bound(vocab_.begin(), vocab_.end(), g);
    if (it != vocab_.end() && *it == g) tf[static_cast<std::size_t>(it - vocab_.begin())] += 1;
  }
  std::vector<std::pair<std::size_t, double>> x;
  double norm = 0;
  for (const auto& [i, c] : tf) {
    x.emplace_back(i, c * idf_[i]);
    norm += x.back().second * x.back().second;
  }
  if (norm > 0)
    for (auto& e : x) e.second /= std::sqrt(norm);
  return x;
}

void ClaimOnlyTfidfLogReg::fit(const std::vector<const claims::EvidenceRecord*>& records) {
  if (select_C_.size() > 1) {
    std::vector<claims::EvidenceRecord> copy;
    copy.reserve(records.size());
    for (const auto* r : records) {
      claims::EvidenceRecord c;
      c.claim = r->claim;
      c.label = r->label;
      copy.push_back(std::move(c));
    }
    const int k = 5;
    const auto fold = grouped_stratified_folds(copy, k, 20260725);
    double best = -1;
    for (const double candidate : select_C_) {
      std::vector<int> gold, pred;
      for (int f = 0; f < k; ++f) {
        std::vector<const claims::EvidenceRecord*> tr;
        for (std::size_t i = 0; i < records.size(); ++i)
          if (fold[i] != f) tr.push_back(records[i]);
        ClaimOnlyTfidfLogReg inner(max_n_, {candidate});
        inner.fit(tr);
        for (std::size_t i = 0; i < records.size(); ++i)
          if (fold[i] == f) {
            gold.push_back(static_cast<int>(*records[i]->label));
            pred.push_back(static_cast<int>(inner.predict(*records[i])));
          }
      }
      const double m =
          stats::classification_report(stats::ConfusionMatrix::from_labels(gold, pred, kK)).macro_f1;
      if (m > best) {
        best = m;
        C_ = candidate;
      }
    }
  } else if (!select_C_.empty()) {
    C_ = select_C_.front();
  }
  fit_with(records, C_);
}

void ClaimOnlyTfidfLogReg::fit_with(const std::vector<const claims::EvidenceRecord*>& records, double C) {
  std::map<std::string, std::size_t> df;
  std::array<std::size_t, kK> counts{};
  for (const auto* r : records) {
    ++counts[vi(*r->label)];
    auto g = claim_grams(*r, max_n_);
    std::sort(g.begin(), g.end());
    g.erase(std::unique(g.begin(), g.end()), g.end());
    for (auto& x : g) ++df[std::move(x)];
  }
  std::size_t present = 0;
  for (auto c : counts) present += c > 0 ? 1 : 0;
  if (present < 2) fail("claim-only TF-IDF: the training records hold fewer than two classes");
  vocab_.clear();
  idf_.clear();
  const double n = static_cast<double>(records.size());
  for (const auto& [g, d] : df) {
    vocab_.push_back(g);
    idf_.push_back(std::log((1.0 + n) / (1.0 + static_cast<double>(d))) + 1.0);
  }
  const int nf = static_cast<int>(vocab_.size());
  std::vector<feature_node> nodes;
  std::vector<std::size_t> starts;
  std::vector<double> y;
  for (const auto* r : records) {
    starts.push_back(nodes.size());
    for (const auto& [i, v] : row(*r)) nodes.push_back({static_cast<int>(i) + 1, v});
    nodes.push_back({nf + 1, 1.0});  // bias
    nodes.push_back({-1, 0.0});
    y.push_back(static_cast<double>(static_cast<int>(*r->label)));
  }
  std::vector<feature_node*> x;
  x.reserve(starts.size());
  for (auto st : starts) x.push_back(nodes.data() + st);
  problem prob{};
  prob.l = static_cast<int>(records.size());
  prob.n = nf + 1;
  prob.y = y.data();
  prob.x = x.data();
  prob.bias = 1.0;
  std::vector<int> wl;
  std::vector<double> wv;
  for (std::size_t c = 0; c < kK; ++c) {
    if (counts[c] == 0) continue;
    wl.push_back(static_cast<int>(c));
    wv.push_back(n / (static_cast<double>(present) * static_cast<double>(counts[c])));
  }
  parameter param{};
  param.solver_type = L2R_LR;
  param.eps = 0.01;
  param.C = C;
  param.nr_weight = static_cast<int>(wl.size());
  param.weight_label = wl.data();
  param.weight = wv.data();
  param.p = 0.1;
  param.init_sol = nullptr;
  if (const char* err = ::check_parameter(&prob, &param)) fail("liblinear: {}", err);
  ::set_print_string_function(&quiet_liblinear);
  model* lm = ::train(&prob, &param);
  if (lm == nullptr) fail("liblinear: training failed");
  const int k = ::get_nr_class(lm);
  std::vector<int> lab(static_cast<std::size_t>(k));
  ::get_labels(lm, lab.data());
  classes_.clear();
  for (int c = 0; c < k; ++c)
    classes_.push_back(static_cast<claims::Verdict>(lab[static_cast<std::size_t>(c)]));
  const auto ku = static_cast<std::size_t>(k);
  weights_.assign(vocab_.size() * ku, 0.0);
  bias_.assign(ku, 0.0);
  for (int c = 0; c < k; ++c) {
    for (int i = 1; i <= nf; ++i)
      weights_[static_cast<std::size_t>(i - 1) * ku + static_cast<std::size_t>(c)] =
          ::get_decfun_coef(lm, i, c);
    bias_[static_cast<std::size_t>(c)] = ::get_decfun_bias(lm, c);
  }
  ::free_and_destroy_model(&lm);
}

claims::Verdict ClaimOnlyTfidfLogReg::predict(const claims::EvidenceRecord& r) const {
  const std::size_t k = classes_.size();
  std::vector<double> dec(bias_);
  for (const auto& [i, v] : row(r))
    for (std::size_t c = 0; c < k; ++c) dec[c] += weights_[i * k + c] * v;
  // Highest decision value; ties: the verdict order True, False, Conflicting.
  std::size_t best = 0;
  for (std::size_t c = 1; c < k; ++c)
    if (dec[c] > dec[best] || (dec[c] == dec[best] && classes_[c] < classes_[best])) best = c;
  return classes_.empty() ? claims::Verdict::kTrue : classes_[best];
}

// ---------------------------------------------------------------------------------------------

namespace {

struct Spec {
  std::string name, description, kind;
  enum Type { kModel, kMajority, kNaiveBayes, kTfidf } type = kModel;
  FeatureSettings settings;
  bool surface_features = false;  // uses the surface-number feature extraction
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

namespace {

// The systems of a study: ours, the baselines, the other learners and the ablations.
std::vector<Spec> cv_specs(const FeatureSettings& settings, const CvOptions& opt) {
  std::vector<Spec> specs;
  specs.push_back({"trained", "all feature groups", "model", Spec::kModel, settings, false});
  specs.push_back(
      {"majority", "majority class of the training folds", "baseline", Spec::kMajority, settings, false});
  specs.push_back({std::string(kTfidfBaseline),
                   "TF-IDF of claim word 1-2-grams, logistic regression (balanced classes, C by inner CV), "
                   "no evidence",
                   "baseline", Spec::kTfidf, settings, false});
  specs.push_back({"claim-only NB", "multinomial naive Bayes on claim word 1-2-grams, no evidence",
                   "baseline", Spec::kNaiveBayes, settings, false});
  {
    FeatureSettings s = settings;
    s.group(Group::kEvidenceNgrams).enabled = false;
    s.group(Group::kAlignment).enabled = false;
    s.evidence_cues.clear();
    s.learner.kind = "linear";
    specs.push_back({"claim-only linear",
                     "liblinear over claim n-grams, category and claim cues only (no evidence)", "baseline",
                     Spec::kModel, s, false});
  }
  for (const char* kind : {"linear", "xgboost", "stacked"}) {
    if (settings.learner.kind == kind || !opt.variants) continue;
    FeatureSettings s = settings;
    s.learner.kind = kind;
    const std::string k = kind;
    specs.push_back({"trained, learner " + k,
                     k == "linear"    ? "liblinear over every feature group"
                     : k == "xgboost" ? "XGBoost trees over the dense groups only (alignment, category, cues)"
                                      : "XGBoost trees over the dense groups and the linear model's "
                                        "out-of-fold class probabilities (inner folds on the training folds)",
                     "variant", Spec::kModel, s, false});
  }
  if (opt.ablations) {
    for (std::size_t g = 0; g < kGroupCount; ++g) {
      if (!settings.groups[g].enabled) continue;
      FeatureSettings s = settings;
      s.groups[g].enabled = false;
      specs.push_back({fmt::format("trained -{}", kGroupNames[g]),
                       fmt::format("without the {} group", kGroupNames[g]), "ablation", Spec::kModel, s,
                       false});
    }
    FeatureSettings s = settings;
    const bool canonical = settings.numbers == NumberMode::kCanonical;
    s.numbers = canonical ? NumberMode::kSurface : NumberMode::kCanonical;
    specs.push_back(
        {canonical ? "trained, surface numbers" : "trained, canonical numbers",
         canonical ? "numbers as written in n-grams (plain bag of words)" : "canonical number tokens",
         "variant", Spec::kModel, s, true});
  }

  return specs;
}

// Predicts the records `te` of one fold with a system trained on `tr`.
struct FoldData {
  const std::vector<claims::EvidenceRecord>& recs;
  const std::vector<int>& gold;
  const std::vector<std::size_t>& cluster;
  const std::vector<NamedFeatures>& feats;
  const std::vector<NamedFeatures>& feats_alt;
  const std::vector<std::vector<int>>& folds;  // per fold draw: fold of each record
};

void predict_fold(const Spec& sp, const FoldData& d, const std::vector<std::size_t>& tr,
                  const std::vector<std::size_t>& te, std::vector<int>& pred) {
  const auto& recs = d.recs;
  std::vector<const claims::EvidenceRecord*> trr;
  trr.reserve(tr.size());
  for (auto i : tr) trr.push_back(&recs[i]);
  if (sp.type == Spec::kMajority) {
    std::array<std::size_t, kK> n{};
    for (auto i : tr) ++n[static_cast<std::size_t>(d.gold[i])];
    const int maj = static_cast<int>(std::max_element(n.begin(), n.end()) - n.begin());
    for (auto i : te) pred[i] = maj;
  } else if (sp.type == Spec::kNaiveBayes) {
    ClaimOnlyNaiveBayes nb;
    nb.fit(trr);
    for (auto i : te) pred[i] = static_cast<int>(nb.predict(recs[i]));
  } else if (sp.type == Spec::kTfidf) {
    ClaimOnlyTfidfLogReg lr;
    lr.fit(trr);
    for (auto i : te) pred[i] = static_cast<int>(lr.predict(recs[i]));
  } else {
    const auto& fs = sp.surface_features ? d.feats_alt : d.feats;
    std::vector<const NamedFeatures*> x;
    std::vector<claims::Verdict> y;
    std::vector<std::size_t> g;
    for (auto i : tr) {
      x.push_back(&fs[i]);
      y.push_back(*recs[i].label);
      g.push_back(d.cluster[i]);
    }
    const auto m = train_model(x, y, sp.settings, g);
    std::vector<const NamedFeatures*> tx;
    tx.reserve(te.size());
    for (auto i : te) tx.push_back(&fs[i]);
    const auto sc = m.scores_batch(tx);
    for (std::size_t j = 0; j < te.size(); ++j) pred[te[j]] = static_cast<int>(TrainedModel::argmax(sc[j]));
  }
}

// One system over every fold draw: its pooled out-of-fold predictions and their figures.
CvSystem evaluate_system(const Spec& sp, const FoldData& d, const CvOptions& opt) {
  const auto& recs = d.recs;
  CvSystem sys;
  sys.name = sp.name;
  sys.description = sp.description;
  sys.kind = sp.kind;
  std::array<double, kK> f1sum{};
  for (int seed_i = 0; seed_i < opt.seeds; ++seed_i) {
    const auto& fold = d.folds[static_cast<std::size_t>(seed_i)];
    std::vector<int> pred(recs.size(), 0);
    for (int f = 0; f < opt.folds; ++f) {
      std::vector<std::size_t> tr, te;
      for (std::size_t i = 0; i < recs.size(); ++i) (fold[i] == f ? te : tr).push_back(i);
      if (!te.empty()) predict_fold(sp, d, tr, te, pred);
    }
    const auto cm = stats::ConfusionMatrix::from_labels(d.gold, pred, kK);
    const auto cr = stats::classification_report(cm);
    sys.macro_f1_per_seed.push_back(cr.macro_f1);
    sys.weighted_f1_per_seed.push_back(cr.weighted_f1);
    sys.accuracy_per_seed.push_back(cr.accuracy);
    for (std::size_t c = 0; c < kK; ++c) f1sum[c] += cr.per_class[c].f1;
    if (seed_i == 0) sys.predictions = pred;
    sys.predictions_per_seed.push_back(std::move(pred));
  }
  const double ns = static_cast<double>(opt.seeds);
  auto mean = [&](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / ns; };
  sys.macro_f1 = mean(sys.macro_f1_per_seed);
  sys.weighted_f1 = mean(sys.weighted_f1_per_seed);
  sys.accuracy = mean(sys.accuracy_per_seed);
  for (std::size_t c = 0; c < kK; ++c) sys.class_f1[c] = f1sum[c] / ns;
  return sys;
}

// The cluster bootstrap of every system's figures and of its difference to the trained verifier
// (see cross_validate).
void bootstrap_figures(CvReport& rep, const std::vector<int>& gold, const std::vector<std::size_t>& cluster,
                       const CvOptions& opt) {
  const std::size_t nseeds = static_cast<std::size_t>(opt.seeds);
  const std::size_t n_records = gold.size();
  std::vector<std::vector<std::size_t>> members(rep.groups);
  for (std::size_t i = 0; i < n_records; ++i) members[cluster[i]].push_back(i);
  const std::size_t ns = rep.systems.size();
  const std::size_t per = 3 + nseeds;  // macro, weighted, mean difference, then each seed's difference
  const double inv_seeds = 1.0 / static_cast<double>(nseeds);
  const auto boot = stats::bootstrap_counts_multi(
      rep.groups, opt.draws, opt.seed, ns * per,
      [&](const stats::ClusterCounts& w, std::span<double> out) {
        std::vector<stats::ConfusionMatrix> cms(ns * nseeds, stats::ConfusionMatrix(kK));
        for (std::size_t g = 0; g < w.size(); ++g) {
          if (w[g] == 0) continue;
          for (std::size_t i : members[g])
            for (std::size_t s = 0; s < ns; ++s)
              for (std::size_t k = 0; k < nseeds; ++k)
                cms[s * nseeds + k].add(static_cast<std::size_t>(gold[i]),
                                        static_cast<std::size_t>(rep.systems[s].predictions_per_seed[k][i]),
                                        w[g]);
        }
        double m0 = 0;
        std::vector<double> m0_seed(nseeds, 0.0);
        for (std::size_t s = 0; s < ns; ++s) {
          double m = 0, wf = 0;
          for (std::size_t k = 0; k < nseeds; ++k) {
            const double mk = stats::macro_f1(cms[s * nseeds + k]);
            if (s == 0) m0_seed[k] = mk;
            out[per * s + 3 + k] = m0_seed[k] - mk;
            m += mk;
            wf += stats::weighted_f1(cms[s * nseeds + k]);
          }
          m *= inv_seeds;
          if (s == 0) m0 = m;
          out[per * s] = m;
          out[per * s + 1] = wf * inv_seeds;
          out[per * s + 2] = m0 - m;
        }
      },
      opt.threads);
  auto two_sided = [](const std::vector<double>& v) {
    std::size_t le = 0, ge = 0;
    for (const double x : v) {
      le += x <= 0 ? 1 : 0;
      ge += x >= 0 ? 1 : 0;
    }
    return std::min(1.0, 2.0 * static_cast<double>(std::min(le, ge)) / static_cast<double>(v.size()));
  };
  for (std::size_t s = 0; s < ns; ++s) {
    auto& sys = rep.systems[s];
    const auto a = stats::percentile_interval(boot[per * s]);
    const auto b = stats::percentile_interval(boot[per * s + 1]);
    const auto d = stats::percentile_interval(boot[per * s + 2]);
    sys.macro_lo = a.lo;
    sys.macro_hi = a.hi;
    sys.weighted_lo = b.lo;
    sys.weighted_hi = b.hi;
    sys.diff_lo = d.lo;
    sys.diff_hi = d.hi;
    sys.boot_p = s == 0 ? 1.0 : two_sided(boot[per * s + 2]);
    for (std::size_t k = 0; k < nseeds; ++k)
      sys.boot_p_per_seed.push_back(s == 0 ? 1.0 : two_sided(boot[per * s + 3 + k]));
  }
}

}  // namespace

CvReport cross_validate(const std::vector<claims::EvidenceRecord>& all, const FeatureSettings& settings,
                        const CvOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<claims::EvidenceRecord> recs;
  for (const auto& r : all)
    if (r.label) recs.push_back(r);
  if (recs.size() < static_cast<std::size_t>(opt.folds) * 2)
    fail("cross-validation: {} labelled claims for {} folds", recs.size(), opt.folds);
  if (opt.seeds < 1) fail(ErrorCode::kUsage, "seeds: {} is fewer than 1", opt.seeds);
  CvReport rep;
  rep.options = opt;
  rep.records = recs.size();
  std::vector<int> gold(recs.size());
  for (std::size_t i = 0; i < recs.size(); ++i) {
    gold[i] = static_cast<int>(*recs[i].label);
    ++rep.labels[static_cast<std::size_t>(gold[i])];
  }
  // Clusters for the bootstrap: the near-duplicate groups the folds keep together.
  std::vector<const claims::EvidenceRecord*> ptrs;
  ptrs.reserve(recs.size());
  for (const auto& r : recs) ptrs.push_back(&r);
  const std::vector<std::size_t> cluster = claim_groups(ptrs);
  rep.groups = cluster.empty() ? 0 : *std::max_element(cluster.begin(), cluster.end()) + 1;
  rep.settings_note = fmt::format("learner {}, numbers {}, {} C={} class_weight {}", settings.learner.kind,
                                  number_mode_name(settings.numbers), settings.learner.solver,
                                  settings.learner.C, settings.learner.balanced ? "balanced" : "none");

  const std::vector<Spec> specs = cv_specs(settings, opt);
  const auto tf = std::chrono::steady_clock::now();
  const auto feats = extract_all(recs, settings, opt.threads);
  std::vector<NamedFeatures> feats_alt;
  if (std::any_of(specs.begin(), specs.end(), [](const Spec& s) { return s.surface_features; })) {
    FeatureSettings s = settings;
    s.numbers = settings.numbers == NumberMode::kCanonical ? NumberMode::kSurface : NumberMode::kCanonical;
    feats_alt = extract_all(recs, s, opt.threads);
  }
  rep.seconds_features = seconds_since(tf);

  // The fold draws, the same for every system.
  std::vector<std::vector<int>> folds;
  folds.reserve(static_cast<std::size_t>(opt.seeds));
  for (int seed_i = 0; seed_i < opt.seeds; ++seed_i)
    folds.push_back(grouped_stratified_folds(recs, opt.folds, opt.seed + static_cast<std::uint64_t>(seed_i)));
  const FoldData data{recs, gold, cluster, feats, feats_alt, folds};
  for (const auto& sp : specs) rep.systems.push_back(evaluate_system(sp, data, opt));

  // Every figure of a row comes from one source: the seeds' pooled out-of-fold predictions, each
  // figure the mean over seeds. The bootstrap resamples near-duplicate groups; in each draw every
  // seed's F1 is computed on the resampled claims and averaged over seeds, so the interval belongs to
  // the mean over seeds, as does the paired bootstrap p of the macro-F1 difference (trained minus
  // this). McNemar's test on per-claim correctness (accuracy, not F1) is kept for the first seed
  // only, in the JSON, labelled so.
  const std::size_t nseeds = static_cast<std::size_t>(opt.seeds);
  for (auto& sys : rep.systems) {
    sys.diff = rep.systems[0].macro_f1 - sys.macro_f1;
    for (std::size_t i = 0; i < recs.size(); ++i) {
      const bool r0 = rep.systems[0].predictions[i] == gold[i], r1 = sys.predictions[i] == gold[i];
      sys.trained_only_correct += r0 && !r1 ? 1 : 0;
      sys.this_only_correct += r1 && !r0 ? 1 : 0;
    }
    sys.mcnemar_p = stats::mcnemar_exact_p(sys.trained_only_correct, sys.this_only_correct);
  }
  for (auto& sys : rep.systems)
    for (std::size_t k = 0; k < nseeds; ++k)
      sys.diff_per_seed.push_back(rep.systems[0].macro_f1_per_seed[k] - sys.macro_f1_per_seed[k]);
  if (opt.draws > 0) bootstrap_figures(rep, gold, cluster, opt);
  rep.seconds_total = seconds_since(t0);
  return rep;
}

std::string fold_scheme(const CvOptions& opt) {
  std::string seeds;
  for (int i = 0; i < opt.seeds; ++i)
    seeds += fmt::format("{}{}", i == 0 ? "" : ", ", opt.seed + static_cast<std::uint64_t>(i));
  return fmt::format(
      "grouped stratified {}-fold (groups: near-duplicate claims), fold draw{} seeded {} (numcheck::Rng)",
      opt.folds, opt.seeds == 1 ? "" : "s", seeds);
}

io::OrderedJson cv_json(const CvReport& r) {
  io::OrderedJson j;
  j["records"] = r.records;
  j["claim_groups"] = r.groups;
  io::OrderedJson lab;
  for (auto v : claims::kVerdicts) lab[std::string(claims::verdict_name(v))] = r.labels[vi(v)];
  j["labels"] = std::move(lab);
  j["folds"] = r.options.folds;
  j["seeds"] = r.options.seeds;
  j["seed"] = r.options.seed;
  j["bootstrap_draws"] = r.options.draws;
  j["grouping"] = "near-duplicate claims (same normalised text, or word overlap at least 3/5)";
  j["fold_scheme"] = fold_scheme(r.options);
  j["figures"] =
      "means over seeds of each seed's pooled out-of-fold predictions; intervals and p from a "
      "cluster bootstrap of those means";
  j["trained_settings"] = r.settings_note;
  io::OrderedJson systems = io::OrderedJson::array();
  for (const auto& s : r.systems) {
    io::OrderedJson o;
    o["name"] = s.name;
    o["kind"] = s.kind;
    o["description"] = s.description;
    o["macro_f1"] = s.macro_f1;
    o["macro_f1_ci95"] = {s.macro_lo, s.macro_hi};
    o["weighted_f1"] = s.weighted_f1;
    o["weighted_f1_ci95"] = {s.weighted_lo, s.weighted_hi};
    o["accuracy"] = s.accuracy;
    io::OrderedJson pc;
    for (auto v : claims::kVerdicts) pc[std::string(claims::verdict_name(v))] = s.class_f1[vi(v)];
    o["class_f1"] = std::move(pc);
    o["macro_f1_per_seed"] = s.macro_f1_per_seed;
    o["weighted_f1_per_seed"] = s.weighted_f1_per_seed;
    o["vs_trained"] = {{"macro_f1_diff", s.diff},
                       {"ci95", {s.diff_lo, s.diff_hi}},
                       {"bootstrap_p", s.boot_p},
                       {"source", "mean over seeds; paired cluster bootstrap of the macro-F1 difference"},
                       {"macro_f1_diff_per_seed", s.diff_per_seed},
                       {"bootstrap_p_per_seed", s.boot_p_per_seed},
                       {"trained_only_correct", s.trained_only_correct},
                       {"this_only_correct", s.this_only_correct},
                       {"mcnemar_p", s.mcnemar_p},
                       {"mcnemar_source", "first seed; exact McNemar on per-claim correctness (accuracy)"}};
    systems.push_back(std::move(o));
  }
  j["systems"] = std::move(systems);
  j["seconds"] = {{"features", r.seconds_features}, {"total", r.seconds_total}};
  return j;
}

std::string cv_markdown(const CvReport& r) {
  using doc::html::Cell;
  // A bootstrap p of 0 means no resample crossed 0: below the resolution 1 / draws.
  const auto pv = [&](double p) {
    return p > 0 ? fmt::format("{:.3g}", p)
                 : fmt::format("< {:.3g}", 1.0 / static_cast<double>(r.options.draws));
  };
  auto pct = [](double x) { return fmt::format("{:.2f}", 100 * x); };
  const bool boot = r.options.draws > 0;
  auto with_iv = [&](double v, double lo, double hi) {
    return boot ? fmt::format("{} [{}, {}]", pct(v), pct(lo), pct(hi)) : pct(v);
  };
  doc::Document d;
  d.heading(2, "cv", fmt::format("Grouped {}-fold cross-validation", r.options.folds));
  d.paragraph(fmt::format(
      "{} labelled claims ({} groups of near-duplicate claims; True {}, False {}, Conflicting {}), "
      "stratified folds that keep each group together, {} seed(s) from {}; trained verifier: {}. Every "
      "figure of a row is a mean over the seeds of each seed's pooled out-of-fold predictions, in percent; "
      "[95% interval] and p from one cluster bootstrap over those groups ({} draws) of those means.",
      r.records, r.groups, r.labels[0], r.labels[1], r.labels[2], r.options.seeds, r.options.seed,
      r.settings_note, r.options.draws));
  doc::html::Table t;
  t.caption = "Scores, means over seeds";
  t.header = {"system", "kind", "M-F1 [95% CI]", "W-F1 [95% CI]", "accuracy", "T-F1", "F-F1", "C-F1"};
  for (const auto& s : r.systems)
    t.rows.push_back(
        {Cell::txt(s.name), Cell::txt(s.kind), Cell::num(with_iv(s.macro_f1, s.macro_lo, s.macro_hi)),
         Cell::num(with_iv(s.weighted_f1, s.weighted_lo, s.weighted_hi)), Cell::num(pct(s.accuracy)),
         Cell::num(pct(s.class_f1[0])), Cell::num(pct(s.class_f1[1])), Cell::num(pct(s.class_f1[2]))});
  d.table(std::move(t));
  doc::html::Table v;
  v.caption = "Against the trained verifier, means over seeds";
  v.header = {"system", "M-F1 per seed", "ΔM-F1 [95% CI]", "p (M-F1)", "ΔM-F1 per seed", "p per seed"};
  for (std::size_t i = 1; i < r.systems.size(); ++i) {
    const auto& s = r.systems[i];
    std::string seeds, diffs, ps;
    for (const double x : s.macro_f1_per_seed) seeds += (seeds.empty() ? "" : " ") + pct(x);
    for (const double x : s.diff_per_seed) diffs += (diffs.empty() ? "" : " ") + pct(x);
    for (const double x : s.boot_p_per_seed) ps += (ps.empty() ? "" : " ") + pv(x);
    v.rows.push_back({Cell::txt(s.name), Cell::num(seeds), Cell::num(with_iv(s.diff, s.diff_lo, s.diff_hi)),
                      Cell::num(boot ? pv(s.boot_p) : "–"), Cell::num(diffs), Cell::num(boot ? ps : "–")});
  }
  v.note =
      "ΔM-F1 = trained minus this system; p (M-F1) is the two-sided paired bootstrap p of that "
      "difference; per seed: the same on each seed's fold draw alone (one p per draw, same bootstrap). The "
      "JSON (--json) also keeps an exact McNemar p on per-claim correctness (an accuracy "
      "test) of the first seed.";
  if (!v.rows.empty()) d.table(std::move(v));
  for (const auto& s : r.systems) {
    if (s.name != kTfidfBaseline) continue;
    std::string per;
    for (std::size_t k = 0; k < s.diff_per_seed.size(); ++k)
      per += fmt::format(
          "{}{:+.2f}{}", k == 0 ? "" : ", ", 100 * s.diff_per_seed[k],
          boot && k < s.boot_p_per_seed.size() ? fmt::format(" (p {})", pv(s.boot_p_per_seed[k])) : "");
    d.paragraph(
        fmt::format("Against the claim-only TF-IDF + logistic regression baseline on the same folds ({}): "
                    "trained {:+.2f} "
                    "macro-F1 points on average; per fold draw {}.",
                    fold_scheme(r.options), 100 * s.diff, per));
  }
  d.paragraph(
      fmt::format("Feature extraction {:.2f} s, whole study {:.2f} s.", r.seconds_features, r.seconds_total));
  return d.to_markdown();
}

}  // namespace numcheck::verify
