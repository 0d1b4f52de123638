#include "verify/boost.hpp"

#include <xgboost/c_api.h>

#include <cmath>
#include <limits>
#include <mutex>

#include <fmt/format.h>

#include "core/error.hpp"

namespace numcheck::verify {

namespace {

std::mutex& mu() {
  static std::mutex m;
  return m;
}

void check(int rc, const char* what) {
  if (rc != 0) fail("xgboost: {}: {}", what, XGBGetLastError());
}

struct Matrix {
  DMatrixHandle h = nullptr;
  Matrix(const std::vector<float>& x, std::size_t rows, std::size_t cols) {
    if (x.size() != rows * cols) fail("xgboost: {} values for {} x {} rows", x.size(), rows, cols);
    check(XGDMatrixCreateFromMat(x.data(), rows, cols, std::numeric_limits<float>::quiet_NaN(), &h),
          "matrix");
  }
  ~Matrix() {
    if (h != nullptr) XGDMatrixFree(h);
  }
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
};

std::shared_ptr<void> make_booster(DMatrixHandle* dm, bst_ulong n) {
  BoosterHandle b = nullptr;
  check(XGBoosterCreate(dm, n, &b), "create");
  return {b, [](void* p) { XGBoosterFree(p); }};
}

std::string num(double v) { return fmt::format("{}", v); }

}  // namespace

std::string xgboost_version() {
  int a = 0, b = 0, c = 0;
  XGBoostVersion(&a, &b, &c);
  return fmt::format("{}.{}.{}", a, b, c);
}

Booster::Booster(std::string json_text, std::size_t features, std::size_t classes)
    : json_(std::move(json_text)), features_(features), classes_(classes) {
  std::lock_guard<std::mutex> lock(mu());
  handle_ = make_booster(nullptr, 0);
  check(XGBoosterLoadModelFromBuffer(handle_.get(), json_.data(), json_.size()), "load model");
  check(XGBoosterSetParam(handle_.get(), "nthread", "1"), "nthread");
}

std::vector<float> Booster::predict(const std::vector<float>& x, std::size_t rows) const {
  if (!handle_) fail("xgboost: predict on an empty booster");
  std::vector<float> out;
  if (rows == 0) return out;
  std::lock_guard<std::mutex> lock(mu());
  Matrix m(x, rows, features_);
  bst_ulong len = 0;
  const float* res = nullptr;
  check(XGBoosterPredict(handle_.get(), m.h, 0, 0, 0, &len, &res), "predict");
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
    check(XGBSetGlobalConfig(R"({"verbosity":0})"), "global config");
    Matrix m(x, rows, features);
    check(XGDMatrixSetFloatInfo(m.h, "label", labels.data(), rows), "labels");
    if (!weights.empty()) check(XGDMatrixSetFloatInfo(m.h, "weight", weights.data(), rows), "weights");
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
    for (const auto& [k, v] : params) check(XGBoosterSetParam(b.get(), k, v.c_str()), k);
    for (int i = 0; i < s.rounds; ++i) check(XGBoosterUpdateOneIter(b.get(), i, m.h), "train");
    bst_ulong len = 0;
    const char* buf = nullptr;
    check(XGBoosterSaveModelToBuffer(b.get(), R"({"format":"json"})", &len, &buf), "save model");
    text.assign(buf, len);
  }
  return Booster(std::move(text), features, classes);
}

}  // namespace numcheck::verify
