#include "retrieval/synthetic.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/prng.hpp"

namespace numcheck::retrieval {
namespace {

std::string number_word(Rng& r) {
  switch (r.below(6)) {
    case 0:
      return fmt::format("{},{:03}", r.between(1, 999), r.below(1000));
    case 1:
      return fmt::format("{}.{}", r.between(0, 99), r.between(1, 9));
    case 2:
      return fmt::format("{}%", r.between(1, 100));
    case 3:
      return fmt::format("${}k", r.between(1, 999));
    case 4:
      return fmt::format("{}.5 million", r.between(1, 20));
    default:
      return fmt::format("{}", r.between(1900, 2030));
  }
}

}  // namespace

SyntheticCollection::SyntheticCollection(SyntheticSpec spec) : spec_(spec) {
  if (spec_.vocabulary == 0 || spec_.min_words > spec_.max_words ||
      spec_.min_query_words > spec_.max_query_words)
    fail(ErrorCode::kUsage, "bad synthetic collection spec");
  Rng r(spec_.seed, "synthetic-vocabulary");
  static constexpr std::string_view kLetters = "etaoinshrdlcumwfgypbvkjxqz";
  words_.reserve(spec_.vocabulary);
  cdf_.reserve(spec_.vocabulary);
  double total = 0;
  for (std::size_t i = 0; i < spec_.vocabulary; ++i) {
    // Frequent words are short, like natural language; the rank suffix keeps words distinct.
    std::string w;
    const std::size_t len = 2 + std::min<std::size_t>(8, i < 100 ? r.below(3) : r.below(7));
    for (std::size_t k = 0; k < len; ++k) w += kLetters[r.below(std::min<std::size_t>(26, 8 + i / 50))];
    w += fmt::format("{}", i);
    words_.push_back(std::move(w));
    total += 1.0 / static_cast<double>(i + 1);
    cdf_.push_back(total);
  }
  for (auto& c : cdf_) c /= total;
}

const std::string& SyntheticCollection::draw(double u) const {
  auto it = std::upper_bound(cdf_.begin(), cdf_.end(), u);
  if (it == cdf_.end()) --it;
  return words_[static_cast<std::size_t>(it - cdf_.begin())];
}

std::string SyntheticCollection::document_id(std::size_t i) { return fmt::format("syn-{}", i); }

std::string SyntheticCollection::document(std::size_t i) const {
  Rng r = Rng(spec_.seed, "synthetic-documents").split(i);
  const auto n = static_cast<std::size_t>(
      r.between(static_cast<std::int64_t>(spec_.min_words), static_cast<std::int64_t>(spec_.max_words)));
  std::string s;
  s.reserve(n * 8);
  for (std::size_t k = 0; k < n; ++k) {
    if (k) s += ' ';
    if (r.below(20) == 0) {
      s += number_word(r);
    } else {
      s += draw(r.unit());
    }
    if (r.below(12) == 0) s += (r.below(2) == 0) ? "," : ".";
  }
  return s;
}

std::string SyntheticCollection::query(std::size_t i) const {
  Rng r = Rng(spec_.seed, "synthetic-queries").split(i);
  const auto n = static_cast<std::size_t>(r.between(static_cast<std::int64_t>(spec_.min_query_words),
                                                    static_cast<std::int64_t>(spec_.max_query_words)));
  std::string s;
  for (std::size_t k = 0; k < n; ++k) {
    if (k) s += ' ';
    s += r.below(15) == 0 ? number_word(r) : draw(r.unit());
  }
  return s;
}

}  // namespace numcheck::retrieval
