#include "verify/model.hpp"

#include <linear.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <mutex>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>

#include "claims/normalize.hpp"
#include "core/error.hpp"
#include "core/ordered_parallel.hpp"
#include "core/prng.hpp"
#include "core/version.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"
#include "stats/classification.hpp"

namespace numcheck::verify {

namespace {

constexpr std::string_view kFormat = "numcheck-verifier-model";
constexpr int kFormatVersion = 1;

bool ngram_group(std::size_t g) {
  return g == static_cast<std::size_t>(Group::kClaimNgrams) ||
         g == static_cast<std::size_t>(Group::kEvidenceNgrams) ||
         g == static_cast<std::size_t>(Group::kClaimChars);
}

void silent(const char*) {}

}  // namespace

void TrainedModel::build_index() { index_.build(names); }

int TrainedModel::find(std::string_view name) const { return static_cast<int>(index_.find(names, name)); }

SparseVector TrainedModel::vectorize(const NamedFeatures& f) const {
  SparseVector x;
  for (std::size_t g = 0; g < kGroupCount; ++g) {
    const auto& gs = settings.groups[g];
    if (!gs.enabled) continue;
    const std::size_t start = x.size();
    for (const auto& [name, v] : f.groups[g])
      if (const int i = find(name); i != 0) x.emplace_back(i, v);
    const std::size_t k = x.size() - start;
    if (k == 0) continue;
    const double scale = ngram_group(g) ? gs.weight / std::sqrt(static_cast<double>(k)) : gs.weight;
    for (std::size_t i = start; i < x.size(); ++i) x[i].second *= scale;
  }
  std::sort(x.begin(), x.end());
  return x;
}

Scores TrainedModel::scores(const SparseVector& x) const {
  const std::size_t k = classes.size();
  std::array<double, claims::kVerdictCount> dec{};
  for (std::size_t c = 0; c < k; ++c) dec[c] = bias[c];
  for (const auto& [i, v] : x) {
    const double* w = &weights[static_cast<std::size_t>(i - 1) * k];
    for (std::size_t c = 0; c < k; ++c) dec[c] += w[c] * v;
  }
  Scores s{};
  double sum = 0;
  for (std::size_t c = 0; c < k; ++c) {
    const double p = 1.0 / (1.0 + std::exp(-dec[c]));
    s[static_cast<std::size_t>(classes[c])] = p;
    sum += p;
  }
  if (sum > 0)
    for (auto& p : s) p /= sum;
  return s;
}

void TrainedModel::dense_row(const NamedFeatures& f, std::vector<float>& out) const {
  if (settings.learner.kind == "stacked") {
    const Scores lin = scores(vectorize(f));
    for (double p : lin) out.push_back(static_cast<float>(p));
  }
  const std::size_t start = out.size();
  out.resize(start + dense_names.size(), 0.0F);
  for (std::size_t g = 0; g < kGroupCount; ++g) {
    if (ngram_group(g) || !settings.groups[g].enabled) continue;
    for (const auto& [name, v] : f.groups[g]) {
      const auto it = std::lower_bound(dense_names.begin(), dense_names.end(), name);
      if (it != dense_names.end() && *it == name)
        out[start + static_cast<std::size_t>(it - dense_names.begin())] = static_cast<float>(v);
    }
  }
}

std::vector<Scores> TrainedModel::scores_batch(const std::vector<const NamedFeatures*>& f) const {
  std::vector<Scores> out(f.size());
  if (!uses_trees()) {
    for (std::size_t i = 0; i < f.size(); ++i) out[i] = scores(vectorize(*f[i]));
    return out;
  }
  std::vector<float> x;
  x.reserve(f.size() * booster.features());
  for (const auto* r : f) dense_row(*r, x);
  const auto p = booster.predict(x, f.size());
  const std::size_t k = booster.classes();
  for (std::size_t i = 0; i < f.size(); ++i)
    for (std::size_t c = 0; c < k && c < claims::kVerdictCount; ++c) out[i][c] = p[i * k + c];
  return out;
}

Scores TrainedModel::scores(const NamedFeatures& f) const {
  if (!uses_trees()) return scores(vectorize(f));
  return scores_batch({&f})[0];
}

claims::Verdict TrainedModel::argmax(const Scores& s) {
  claims::Verdict best = claims::kVerdicts[0];
  for (auto v : claims::kVerdicts)
    if (s[static_cast<std::size_t>(v)] > s[static_cast<std::size_t>(best)]) best = v;
  return best;
}

io::OrderedJson TrainedModel::to_json() const {
  io::OrderedJson j;
  j["format"] = kFormat;
  j["format_version"] = kFormatVersion;
  j["numcheck_version"] = kVersion;
  // The linear learner never asks for XGBoost's version: that would load libxgboost (dlopen on
  // first use), and a machine without it could not write a linear model.
  const std::string lin = "liblinear " + std::to_string(LIBLINEAR_VERSION);
  if (settings.learner.kind == "linear") {
    j["learner"] = lin;
  } else {
    const std::string xgb = "xgboost " + xgboost_version();
    j["learner"] = settings.learner.kind == "xgboost" ? xgb : xgb + " stacked on " + lin;
  }
  j["settings"] = settings.to_json();
  j["training"] = {{"data_sha256", data_sha256}, {"records", train_records}, {"labels", train_labels}};
  if (left_out) j["training"]["near_duplicates_left_out"] = *left_out;
  io::OrderedJson cls = io::OrderedJson::array();
  for (auto c : classes) cls.push_back(std::string(claims::verdict_name(c)));
  j["classes"] = std::move(cls);
  j["bias"] = bias;
  j["features"] = names;
  j["weights"] = weights;
  if (uses_trees()) {
    j["dense_features"] = dense_names;
    j["booster"] = booster.json();  // XGBoost's JSON model, as text
  }
  return j;
}

TrainedModel TrainedModel::from_json(const io::Json& j, std::string_view where) {
  if (!j.is_object() || j.value("format", "") != kFormat) fail("{}: not a numcheck verifier model", where);
  if (j.value("format_version", 0) != kFormatVersion)
    fail("{}: model format_version {} is not {}", where, j.value("format_version", 0), kFormatVersion);
  TrainedModel m;
  m.settings = FeatureSettings::parse(io::require(j, "settings", where), where);
  try {
    const auto& t = io::require(j, "training", where);
    m.data_sha256 = t.at("data_sha256").get<std::string>();
    m.train_records = t.at("records").get<std::size_t>();
    m.train_labels = t.at("labels").get<std::map<std::string, std::size_t>>();
    if (t.contains("near_duplicates_left_out"))
      m.left_out = t["near_duplicates_left_out"].get<std::vector<std::string>>();
    for (const auto& c : io::require(j, "classes", where)) {
      const auto v = claims::LabelMap::builtin().map(c.get<std::string>());
      if (!v) fail("{}: field 'classes': unknown class {}", where, c.dump());
      m.classes.push_back(*v);
    }
    m.bias = io::require(j, "bias", where).get<std::vector<double>>();
    m.names = io::require(j, "features", where).get<std::vector<std::string>>();
    m.weights = io::require(j, "weights", where).get<std::vector<double>>();
    if (m.uses_trees()) {
      m.dense_names = io::require(j, "dense_features", where).get<std::vector<std::string>>();
      if (!std::is_sorted(m.dense_names.begin(), m.dense_names.end()))
        fail("{}: field 'dense_features' is not sorted", where);
      const std::size_t extra = m.settings.learner.kind == "stacked" ? claims::kVerdictCount : 0;
      m.booster = Booster(io::require(j, "booster", where).get<std::string>(), m.dense_names.size() + extra,
                          claims::kVerdictCount);
    }
  } catch (const io::Json::exception& e) {
    fail("{}: malformed model: {}", where, e.what());
  }
  if (m.classes.empty() || m.bias.size() != m.classes.size() ||
      m.weights.size() != m.names.size() * m.classes.size())
    fail("{}: model sizes do not agree (classes {}, bias {}, features {}, weights {})", where,
         m.classes.size(), m.bias.size(), m.names.size(), m.weights.size());
  m.build_index();
  return m;
}

void TrainedModel::save(const std::filesystem::path& path) const {
  io::write_file_atomic(path, io::to_line(to_json()) + "\n");
}

TrainedModel TrainedModel::load(const std::filesystem::path& path) {
  return from_json(io::read_json_file(path), path.filename().string());
}

std::string training_hash(const std::vector<claims::EvidenceRecord>& records) {
  io::Sha256 h;
  for (const auto& r : records) {
    h.update(io::to_line(claims::evidence_json(r)));
    h.update("\n");
  }
  return h.hex_digest();
}

namespace {

TrainedModel train_linear(const std::vector<const NamedFeatures*>& features,
                          const std::vector<claims::Verdict>& labels, FeatureSettings settings) {
  settings.learner.kind = "linear";
  TrainedModel m;
  m.settings = settings;
  // Vocabulary: n-grams in at least min_df records, every other feature seen; sorted by name.
  std::unordered_map<std::string, std::size_t> df;
  for (const auto* f : features)
    for (std::size_t g = 0; g < kGroupCount; ++g)
      if (settings.groups[g].enabled)
        for (const auto& kv : f->groups[g]) ++df[kv.first];
  for (const auto& [name, n] : df) {
    const bool ngram = name.size() > 1 && (name[0] == 'c' || name[0] == 'e') && name[1] == ':';
    if (!ngram || n >= std::max<std::size_t>(settings.min_df, 1)) m.names.push_back(name);
  }
  std::sort(m.names.begin(), m.names.end());
  m.build_index();

  std::array<std::size_t, claims::kVerdictCount> counts{};
  for (auto v : labels) ++counts[static_cast<std::size_t>(v)];
  std::size_t present = 0;
  for (auto c : counts) present += c > 0 ? 1 : 0;
  if (present < 2) fail("train: the training records hold fewer than two classes");

  // liblinear problem
  std::vector<SparseVector> rows;
  rows.reserve(features.size());
  std::size_t nnz = 0;
  for (const auto* f : features) {
    rows.push_back(m.vectorize(*f));
    nnz += rows.back().size() + 2;
  }
  std::vector<feature_node> nodes;
  nodes.reserve(nnz);
  std::vector<feature_node*> x(rows.size());
  std::vector<double> y(rows.size());
  const int n_features = static_cast<int>(m.names.size());
  const bool use_bias = settings.learner.bias > 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    x[i] = nodes.data() + nodes.size();
    for (const auto& [idx, v] : rows[i]) nodes.push_back({idx, v});
    if (use_bias) nodes.push_back({n_features + 1, settings.learner.bias});
    nodes.push_back({-1, 0.0});
    y[i] = static_cast<double>(static_cast<int>(labels[i]));
  }
  problem prob{};
  prob.l = static_cast<int>(rows.size());
  prob.n = n_features + (use_bias ? 1 : 0);
  prob.y = y.data();
  prob.x = x.data();
  prob.bias = use_bias ? settings.learner.bias : -1;
  parameter param{};
  param.solver_type = settings.learner.solver == "l2r_lr" ? L2R_LR : L2R_L2LOSS_SVC;
  param.eps = settings.learner.eps;
  param.C = settings.learner.C;
  std::vector<int> wl;
  std::vector<double> wv;
  if (settings.learner.balanced) {
    for (std::size_t c = 0; c < counts.size(); ++c) {
      if (counts[c] == 0) continue;
      wl.push_back(static_cast<int>(c));
      wv.push_back(static_cast<double>(labels.size()) /
                   (static_cast<double>(present) * static_cast<double>(counts[c])));
    }
  }
  param.nr_weight = static_cast<int>(wl.size());
  param.weight_label = wl.empty() ? nullptr : wl.data();
  param.weight = wv.empty() ? nullptr : wv.data();
  param.p = 0.1;
  param.init_sol = nullptr;
  if (const char* err = ::check_parameter(&prob, &param)) fail("liblinear: {}", err);
  static std::mutex print_mu;
  model* lm = nullptr;
  {
    std::lock_guard<std::mutex> lock(print_mu);
    ::set_print_string_function(&silent);
  }
  lm = ::train(&prob, &param);
  if (lm == nullptr) fail("liblinear: training failed");
  const int k = ::get_nr_class(lm);
  std::vector<int> lab(static_cast<std::size_t>(k));
  ::get_labels(lm, lab.data());
  // A binary liblinear model has one weight vector (for lab[0]); expose it as two opposite ones.
  for (int c = 0; c < k; ++c)
    m.classes.push_back(static_cast<claims::Verdict>(lab[static_cast<std::size_t>(c)]));
  m.weights.assign(m.names.size() * static_cast<std::size_t>(k), 0.0);
  m.bias.assign(static_cast<std::size_t>(k), 0.0);
  for (int c = 0; c < k; ++c) {
    for (int i = 1; i <= n_features; ++i)
      m.weights[static_cast<std::size_t>(i - 1) * static_cast<std::size_t>(k) + static_cast<std::size_t>(c)] =
          ::get_decfun_coef(lm, i, c);
    m.bias[static_cast<std::size_t>(c)] = use_bias ? ::get_decfun_bias(lm, c) : 0.0;
  }
  ::free_and_destroy_model(&lm);
  return m;
}

std::vector<float> class_weights(const std::vector<claims::Verdict>& labels, bool balanced) {
  std::array<std::size_t, claims::kVerdictCount> counts{};
  for (auto v : labels) ++counts[static_cast<std::size_t>(v)];
  std::size_t present = 0;
  for (auto c : counts) present += c > 0 ? 1 : 0;
  std::vector<float> w(labels.size(), 1.0F);
  if (!balanced) return w;
  for (std::size_t i = 0; i < labels.size(); ++i)
    w[i] = static_cast<float>(
        static_cast<double>(labels.size()) /
        (static_cast<double>(present) * static_cast<double>(counts[static_cast<std::size_t>(labels[i])])));
  return w;
}

// Inner fold of each record: groups dealt round robin in a fixed seeded order.
std::vector<int> inner_folds(const std::vector<std::size_t>& groups, std::size_t n, int k) {
  std::vector<std::size_t> gid = groups;
  if (gid.empty()) {
    gid.resize(n);
    std::iota(gid.begin(), gid.end(), std::size_t{0});
  }
  const std::size_t ng = gid.empty() ? 0 : *std::max_element(gid.begin(), gid.end()) + 1;
  std::vector<std::size_t> order(ng);
  std::iota(order.begin(), order.end(), std::size_t{0});
  Rng rng(20260725, "stacked-inner-folds");
  rng.shuffle(order);
  std::vector<int> gfold(ng);
  for (std::size_t i = 0; i < ng; ++i) gfold[order[i]] = static_cast<int>(i % static_cast<std::size_t>(k));
  std::vector<int> fold(n);
  for (std::size_t i = 0; i < n; ++i) fold[i] = gfold[gid[i]];
  return fold;
}

// Trains the linear learner on the training records of each inner fold (records with fold[i] != f)
// and hands the model and that fold's held-out record indexes to `use`. An inner fold whose
// training records hold fewer than two classes is an error.
template <class Use>
void for_each_inner_fold(const std::vector<const NamedFeatures*>& features,
                         const std::vector<claims::Verdict>& labels, const FeatureSettings& settings,
                         const std::vector<int>& fold, int k, Use&& use) {
  const std::size_t n = labels.size();
  for (int f = 0; f < k; ++f) {
    std::vector<const NamedFeatures*> tx;
    std::vector<claims::Verdict> ty;
    std::vector<std::size_t> te;
    for (std::size_t i = 0; i < n; ++i) {
      if (fold[i] == f) {
        te.push_back(i);
      } else {
        tx.push_back(features[i]);
        ty.push_back(labels[i]);
      }
    }
    if (te.empty()) continue;
    std::array<std::size_t, claims::kVerdictCount> c{};
    for (auto v : ty) ++c[static_cast<std::size_t>(v)];
    if (std::count_if(c.begin(), c.end(), [](std::size_t v) { return v > 0; }) < 2)
      fail("train: an inner fold holds fewer than two classes");
    use(train_linear(tx, ty, settings), te);
  }
}

// Out-of-fold linear probabilities of every record (inner folds `fold`, k of them).
std::vector<Scores> out_of_fold(const std::vector<const NamedFeatures*>& features,
                                const std::vector<claims::Verdict>& labels, const FeatureSettings& settings,
                                const std::vector<int>& fold, int k) {
  std::vector<Scores> oof(labels.size());
  for_each_inner_fold(features, labels, settings, fold, k, [&](const TrainedModel& inner, const auto& te) {
    for (auto i : te) oof[i] = inner.scores(inner.vectorize(*features[i]));
  });
  return oof;
}

// Decision offsets (per verdict) with the best macro-F1 of the out-of-fold decision values of the
// linear learner (see LearnerSettings::tune_offsets).
OffsetTuning tune_offsets(const std::vector<const NamedFeatures*>& features,
                          const std::vector<claims::Verdict>& labels, const FeatureSettings& settings,
                          const std::vector<int>& fold) {
  const std::size_t n = labels.size();
  const int k = settings.learner.inner_folds;
  constexpr double kMissing = -1e300;  // a class absent from an inner fold's training records
  std::vector<std::array<double, claims::kVerdictCount>> dec(n);
  for (auto& d : dec) d.fill(kMissing);
  for_each_inner_fold(features, labels, settings, fold, k, [&](const TrainedModel& inner, const auto& te) {
    const std::size_t kc = inner.classes.size();
    for (auto i : te) {
      const auto x = inner.vectorize(*features[i]);
      for (std::size_t cl = 0; cl < kc; ++cl) {
        double d = inner.bias[cl];
        for (const auto& [j, v] : x) d += inner.weights[static_cast<std::size_t>(j - 1) * kc + cl] * v;
        dec[i][static_cast<std::size_t>(inner.classes[cl])] = d;
      }
    }
  });
  std::vector<int> gold(n);
  for (std::size_t i = 0; i < n; ++i) gold[i] = static_cast<int>(labels[i]);
  const auto t = static_cast<std::size_t>(claims::Verdict::kTrue);
  const auto c = static_cast<std::size_t>(claims::Verdict::kConflicting);
  const int steps = static_cast<int>(std::lround(settings.learner.offset_range / 0.05));
  OffsetTuning best;
  double best_f1 = -1, best_norm = 0;
  std::vector<int> pred(n);
  for (int a = -steps; a <= steps; ++a) {
    for (int b = -steps; b <= steps; ++b) {
      std::array<double, claims::kVerdictCount> off{};
      off[t] = 0.05 * a;
      off[c] = 0.05 * b;
      for (std::size_t i = 0; i < n; ++i) {
        std::size_t arg = 0;
        for (std::size_t v = 1; v < claims::kVerdictCount; ++v)
          if (dec[i][v] + off[v] > dec[i][arg] + off[arg]) arg = v;
        pred[i] = static_cast<int>(arg);
      }
      const double f1 =
          stats::macro_f1(stats::ConfusionMatrix::from_labels(gold, pred, claims::kVerdictCount));
      const double norm = std::abs(a) + std::abs(b);
      if (a == 0 && b == 0) best.macro_f1_zero = f1;
      if (f1 > best_f1 + 1e-12 || (std::abs(f1 - best_f1) <= 1e-12 && norm < best_norm)) {
        best_f1 = f1;
        best_norm = norm;
        best.offsets = off;
        best.macro_f1 = f1;
      }
    }
  }
  return best;
}

// The linear settings with the best inner-CV macro-F1 among learner.select_C x select_class_weight.
FeatureSettings select_linear(const std::vector<const NamedFeatures*>& features,
                              const std::vector<claims::Verdict>& labels, const FeatureSettings& settings,
                              const std::vector<int>& fold) {
  const auto& l = settings.learner;
  if (l.select_C.empty() && l.select_class_weight.empty()) return settings;
  const std::vector<double> cs = l.select_C.empty() ? std::vector<double>{l.C} : l.select_C;
  const std::vector<bool> ws = [&] {
    std::vector<bool> v;
    for (const auto& w : l.select_class_weight) v.push_back(w == "balanced");
    if (v.empty()) v.push_back(l.balanced);
    return v;
  }();
  std::vector<int> gold(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) gold[i] = static_cast<int>(labels[i]);
  FeatureSettings best = settings;
  double best_f1 = -1;
  for (bool w : ws) {
    for (double c : cs) {
      FeatureSettings s = settings;
      s.learner.C = c;
      s.learner.balanced = w;
      const auto oof = out_of_fold(features, labels, s, fold, l.inner_folds);
      std::vector<int> pred(labels.size());
      for (std::size_t i = 0; i < labels.size(); ++i)
        pred[i] = static_cast<int>(TrainedModel::argmax(oof[i]));
      const double f1 =
          stats::macro_f1(stats::ConfusionMatrix::from_labels(gold, pred, claims::kVerdictCount));
      if (f1 > best_f1) {
        best_f1 = f1;
        best = s;
      }
    }
  }
  return best;
}

}  // namespace

OffsetTuning tune_decision_offsets(const std::vector<const NamedFeatures*>& features,
                                   const std::vector<claims::Verdict>& labels,
                                   const FeatureSettings& settings, const std::vector<std::size_t>& groups) {
  if (features.size() != labels.size())
    fail("train: {} feature rows for {} labels", features.size(), labels.size());
  if (!groups.empty() && groups.size() != labels.size())
    fail("train: {} group ids for {} labels", groups.size(), labels.size());
  FeatureSettings lin = settings;
  lin.learner.kind = "linear";
  return tune_offsets(features, labels, lin,
                      inner_folds(groups, labels.size(), settings.learner.inner_folds));
}

std::vector<std::size_t> claim_groups(const std::vector<const claims::EvidenceRecord*>& records) {
  std::vector<std::string> texts;
  texts.reserve(records.size());
  for (const auto* r : records) texts.push_back(r->claim);
  return claims::near_duplicate_groups(texts);
}

TrainedModel train_model(const std::vector<const NamedFeatures*>& features,
                         const std::vector<claims::Verdict>& labels, const FeatureSettings& settings,
                         const std::vector<std::size_t>& groups) {
  if (features.size() != labels.size())
    fail("train: {} feature rows for {} labels", features.size(), labels.size());
  if (!groups.empty() && groups.size() != labels.size())
    fail("train: {} group ids for {} labels", groups.size(), labels.size());
  const std::string& kind = settings.learner.kind;
  const std::vector<int> fold = inner_folds(groups, labels.size(), settings.learner.inner_folds);
  // Linear settings chosen by inner CV when asked (the chosen C and class weight are recorded).
  const FeatureSettings lin = kind == "xgboost" ? settings : select_linear(features, labels, settings, fold);
  TrainedModel m;
  if (kind != "xgboost") m = train_linear(features, labels, lin);
  m.settings = lin;
  m.settings.learner.kind = kind;
  m.settings.learner.offsets = {0.0, 0.0, 0.0};
  if (kind == "linear" && lin.learner.tune_offsets) {
    const auto off = tune_offsets(features, labels, lin, fold).offsets;
    for (std::size_t cl = 0; cl < m.classes.size(); ++cl)
      m.bias[cl] += off[static_cast<std::size_t>(m.classes[cl])];
    for (std::size_t v = 0; v < off.size(); ++v) m.settings.learner.offsets[v] = off[v];
  }
  if (kind == "xgboost") {
    // No linear part: every class, zero bias, no weights.
    m.classes.assign(claims::kVerdicts.begin(), claims::kVerdicts.end());
    m.bias.assign(m.classes.size(), 0.0);
    std::array<std::size_t, claims::kVerdictCount> counts{};
    for (auto v : labels) ++counts[static_cast<std::size_t>(v)];
    if (std::count_if(counts.begin(), counts.end(), [](std::size_t c) { return c > 0; }) < 2)
      fail("train: the training records hold fewer than two classes");
  }
  if (kind != "linear") {
    // Dense vocabulary: every feature of the dense groups seen in training, sorted.
    std::vector<std::string> dn;
    for (const auto* f : features)
      for (std::size_t g = 0; g < kGroupCount; ++g)
        if (!ngram_group(g) && settings.groups[g].enabled)
          for (const auto& kv : f->groups[g]) dn.push_back(kv.first);
    std::sort(dn.begin(), dn.end());
    dn.erase(std::unique(dn.begin(), dn.end()), dn.end());
    m.dense_names = std::move(dn);
    const std::size_t n = labels.size();
    const std::size_t extra = kind == "stacked" ? claims::kVerdictCount : 0;
    const std::size_t width = m.dense_names.size() + extra;
    std::vector<float> x;
    x.reserve(n * width);
    if (kind == "stacked") {
      // Out-of-fold linear probabilities (inner folds dealt by group, in a seeded order).
      const auto oof = out_of_fold(features, labels, lin, fold, settings.learner.inner_folds);
      TrainedModel dense_only = m;
      dense_only.settings.learner.kind = "xgboost";
      for (std::size_t i = 0; i < n; ++i) {
        for (double p : oof[i]) x.push_back(static_cast<float>(p));
        dense_only.dense_row(*features[i], x);
      }
    } else {
      for (const auto* f : features) m.dense_row(*f, x);
    }
    std::vector<float> y(n);
    for (std::size_t i = 0; i < n; ++i) y[i] = static_cast<float>(static_cast<int>(labels[i]));
    m.booster = train_booster(x, n, width, y, class_weights(labels, settings.learner.balanced),
                              claims::kVerdictCount, settings.learner.boost);
  }
  m.train_records = labels.size();
  for (auto v : labels) ++m.train_labels[std::string(claims::verdict_name(v))];
  return m;
}

namespace {

// Runs fn(i) for i in [0, n) on up to `threads` threads (interleaved), rethrowing the first error.
void parallel_for(std::size_t n, unsigned threads, const std::function<void(std::size_t)>& fn) {
  threads = static_cast<unsigned>(core::thread_count(threads));
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, std::max<std::size_t>(1, n / 64)));
  core::parallel_for(n, threads, fn);
}

}  // namespace

std::vector<Scores> predict_all(const std::vector<claims::EvidenceRecord>& records, const TrainedModel& model,
                                unsigned threads) {
  std::vector<Scores> out(records.size());
  if (model.uses_trees()) {
    // Dense rows on the threads, then one tree call for all of them.
    const std::size_t w = model.booster.features();
    std::vector<float> x(records.size() * w);
    parallel_for(records.size(), threads, [&](std::size_t i) {
      std::vector<float> row;
      row.reserve(w);
      model.dense_row(extract(records[i], model.settings), row);
      std::copy(row.begin(), row.end(), x.begin() + static_cast<std::ptrdiff_t>(i * w));
    });
    const auto p = model.booster.predict(x, records.size());
    const std::size_t k = model.booster.classes();
    for (std::size_t i = 0; i < records.size(); ++i)
      for (std::size_t c = 0; c < k && c < claims::kVerdictCount; ++c) out[i][c] = p[i * k + c];
    return out;
  }
  parallel_for(records.size(), threads,
               [&](std::size_t i) { out[i] = model.scores(extract(records[i], model.settings)); });
  return out;
}

std::vector<NamedFeatures> extract_all(const std::vector<claims::EvidenceRecord>& records,
                                       const FeatureSettings& settings, unsigned threads) {
  std::vector<NamedFeatures> out(records.size());
  parallel_for(records.size(), threads, [&](std::size_t i) { out[i] = extract(records[i], settings); });
  return out;
}

}  // namespace numcheck::verify
