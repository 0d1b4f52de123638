#include "verify/boost.hpp"

#include <xgboost/c_api.h>

#include <cmath>
#include <limits>
#include <mutex>

#include <fmt/format.h>

#include "core/dynlib.hpp"
#include "core/error.hpp"

#ifndef NUMCHECK_LIBXGBOOST_SONAME
#define NUMCHECK_LIBXGBOOST_SONAME "libxgboost.so.0"
#endif

namespace numcheck::verify {

namespace {

// XGBoost, loaded the first time a booster is trained, loaded or asked its version. Only the tree
// learners need it (--learner xgboost and stacked; the default learner is liblinear's), so it is
// optional at run time: every other command runs without it and the libraries it pulls in
// (libdmlc, libgomp), on a machine that lacks them too. Only its headers are used at build time.
#define NUMCHECK_XGBOOST_FUNCTIONS(X)                             \
  X(last_error, XGBGetLastError)                                  \
  X(version, XGBoostVersion)                                      \
  X(set_global_config, XGBSetGlobalConfig)                        \
  X(dmatrix_create_from_mat, XGDMatrixCreateFromMat)              \
  X(dmatrix_set_float_info, XGDMatrixSetFloatInfo)                \
  X(dmatrix_free, XGDMatrixFree)                                  \
  X(booster_create, XGBoosterCreate)                              \
  X(booster_free, XGBoosterFree)                                  \
  X(booster_set_param, XGBoosterSetParam)                         \
  X(booster_update_one_iter, XGBoosterUpdateOneIter)              \
  X(booster_predict, XGBoosterPredict)                            \
  X(booster_load_model_from_buffer, XGBoosterLoadModelFromBuffer) \
  X(booster_save_model_to_buffer, XGBoosterSaveModelToBuffer)

struct XgbApi {
  NUMCHECK_XGBOOST_FUNCTIONS(NUMCHECK_DYNLIB_MEMBER)
};

// Loads libxgboost once, thread-safely; a failed load throws Error and is retried next time.
const XgbApi& xgb() {
  static const XgbApi api = core::load_library<XgbApi>(
      "libxgboost", NUMCHECK_LIBXGBOOST_SONAME, "the XGBoost learners (xgboost, stacked)",
      [](const core::SharedLibrary& lib, XgbApi& api) { NUMCHECK_XGBOOST_FUNCTIONS(NUMCHECK_DYNLIB_BIND) });
  return api;
}

std::mutex& mu() {
  static std::mutex m;
  return m;
}

void check(int rc, const char* what) {
  if (rc != 0) fail("xgboost: {}: {}", what, xgb().last_error());
}

struct Matrix {
  DMatrixHandle h = nullptr;
  Matrix(const std::vector<float>& x, std::size_t rows, std::size_t cols) {
    if (x.size() != rows * cols) fail("xgboost: {} values for {} x {} rows", x.size(), rows, cols);
    check(xgb().dmatrix_create_from_mat(x.data(), rows, cols, std::numeric_limits<float>::quiet_NaN(), &h),
          "matrix");
  }
  ~Matrix() {
    if (h != nullptr) xgb().dmatrix_free(h);
  }
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
};

std::shared_ptr<void> make_booster(DMatrixHandle* dm, bst_ulong n) {
  BoosterHandle b = nullptr;
  check(xgb().booster_create(dm, n, &b), "create");
  return {b, [](void* p) { xgb().booster_free(p); }};
}

std::string num(double v) { return fmt::format("{}", v); }

}  // namespace

std::string xgboost_version() {
  int a = 0, b = 0, c = 0;
  xgb().version(&a, &b, &c);
  return fmt::format("{}.{}.{}", a, b, c);
}

Booster::Booster(std::string json_text, std::size_t features, std::size_t classes)
    : json_(std::move(json_text)), features_(features), classes_(classes) {
  std::lock_guard<std::mutex> lock(mu());
  handle_ = make_booster(nullptr, 0);
  check(xgb().booster_load_model_from_buffer(handle_.get(), json_.data(), json_.size()), "load model");
  check(xgb().booster_set_param(handle_.get(), "nthread", "1"), "nthread");
}

std::vector<float> Booster::predict(const std::vector<float>& x, std::size_t rows) const {
  if (!handle_) fail("xgboost: predict on an empty booster");
  std::vector<float> out;
  if (rows == 0) return out;
  std::lock_guard<std::mutex> lock(mu());
  Matrix m(x, rows, features_);
  bst_ulong len = 0;
  const float* res = nullptr;
  check(xgb().booster_predict(handle_.get(), m.h, 0, 0, 0, &len, &res), "predict");
  if (len != rows * classes_) fail("xgboost: {} outputs for {} rows of {} classes", len, rows, classes_);
  out.assign(res, res + len);
  return out;
}

Booster train_booster(const std::vector<float>& x, std::size_t rows, std::size_t features,
                      const std::vector<float>& labels, const std::vector<float>& weights,
                      std::size_t classes, const BoostSettings& s) {
  if (rows == 0 || labels.size() != rows || (!weights.empty() && weights.size() != rows))
    fail("xgboost: {} rows, {} labels, {} weights", rows, labels.size(), weights.size());
  std::string text;
  {
    std::lock_guard<std::mutex> lock(mu());
    check(xgb().set_global_config(R"({"verbosity":0})"), "global config");
    Matrix m(x, rows, features);
    check(xgb().dmatrix_set_float_info(m.h, "label", labels.data(), rows), "labels");
    if (!weights.empty()) check(xgb().dmatrix_set_float_info(m.h, "weight", weights.data(), rows), "weights");
    auto b = make_booster(&m.h, 1);
    const std::pair<const char*, std::string> params[] = {
        {"objective", "multi:softprob"},
        {"num_class", std::to_string(classes)},
        {"nthread", "1"},
        {"seed", "0"},
        {"tree_method", "hist"},
        {"subsample", "1"},
        {"colsample_bytree", "1"},
        {"max_depth", std::to_string(s.max_depth)},
        {"eta", num(s.eta)},
        {"min_child_weight", num(s.min_child_weight)},
        {"lambda", num(s.lambda)},
        {"base_score", "0.5"},
    };
    for (const auto& [k, v] : params) check(xgb().booster_set_param(b.get(), k, v.c_str()), k);
    for (int i = 0; i < s.rounds; ++i) check(xgb().booster_update_one_iter(b.get(), i, m.h), "train");
    bst_ulong len = 0;
    const char* buf = nullptr;
    check(xgb().booster_save_model_to_buffer(b.get(), R"({"format":"json"})", &len, &buf), "save model");
    text.assign(buf, len);
  }
  return Booster(std::move(text), features, classes);
}

}  // namespace numcheck::verify
