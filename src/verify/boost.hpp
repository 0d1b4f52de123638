#pragma once
// Gradient-boosted trees for the trained verifier's dense features, through XGBoost's C API
// (Debian libxgboost-dev). Training is deterministic: one thread, a fixed seed, no row or column
// sampling, the histogram tree method (deterministic on one thread); the model travels as XGBoost's own JSON
// text, so a model file round-trips byte for byte and prediction needs nothing but that text.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace numcheck::verify {

struct BoostSettings {
  int rounds = 150;   // boosting rounds
  int max_depth = 3;  // tree depth
  double eta = 0.05;  // learning rate
  double min_child_weight = 1.0;
  double lambda = 1.0;  // L2 regularization of leaf weights
};

// A trained multi-class booster (objective multi:softprob), ready to predict.
class Booster {
 public:
  Booster() = default;
  // Loads XGBoost JSON model text (from json()); throws Error when XGBoost rejects it.
  explicit Booster(std::string json_text, std::size_t features, std::size_t classes);
  [[nodiscard]] bool empty() const noexcept { return !handle_; }
  [[nodiscard]] const std::string& json() const noexcept { return json_; }
  [[nodiscard]] std::size_t features() const noexcept { return features_; }
  [[nodiscard]] std::size_t classes() const noexcept { return classes_; }
  // Class probabilities of `rows` dense rows (row-major, rows x features()); rows x classes().
  // Safe to call from several threads (calls are serialized).
  [[nodiscard]] std::vector<float> predict(const std::vector<float>& x, std::size_t rows) const;

 private:
  std::shared_ptr<void> handle_;
  std::string json_;
  std::size_t features_ = 0, classes_ = 0;
};

// Trains on dense rows x (row-major), labels in [0, classes) and per-row weights (empty: 1).
[[nodiscard]] Booster train_booster(const std::vector<float>& x, std::size_t rows, std::size_t features,
                                    const std::vector<float>& labels, const std::vector<float>& weights,
                                    std::size_t classes, const BoostSettings& s);

[[nodiscard]] std::string xgboost_version();  // "1.7.4"

}  // namespace numcheck::verify
