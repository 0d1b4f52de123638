#pragma once
// A deterministic synthetic snippet collection shaped like QuanTemp's evidence corpus (423,320
// snippets of 50-100 words): words drawn from a Zipfian vocabulary (exponent 1) of pseudo-words,
// about one word in twenty a number in a written form the quantity layer reads ("1,250", "3.5",
// "42%", "$86k", "1.5 million"); queries of 8-15 words drawn from the same distribution. Used by
// the speed benchmark and the pruning tests. Same seed, same collection, on every machine.
#include <cstdint>
#include <string>
#include <vector>

namespace numcheck::retrieval {

struct SyntheticSpec {
  std::uint64_t seed = 20260725;
  std::size_t vocabulary = 200000;
  std::size_t min_words = 50, max_words = 100;
  std::size_t min_query_words = 8, max_query_words = 15;
};

class SyntheticCollection {
 public:
  explicit SyntheticCollection(SyntheticSpec spec = {});
  // Snippet number i (any i; independent of the others). Id is "syn-<i>".
  [[nodiscard]] std::string document(std::size_t i) const;
  [[nodiscard]] static std::string document_id(std::size_t i);
  // Query number i.
  [[nodiscard]] std::string query(std::size_t i) const;
  [[nodiscard]] const SyntheticSpec& spec() const { return spec_; }

 private:
  SyntheticSpec spec_;
  std::vector<std::string> words_;
  std::vector<double> cdf_;
  [[nodiscard]] const std::string& draw(double u) const;
};

}  // namespace numcheck::retrieval
