#include "claims/text_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <unordered_set>

namespace numcheck::claims {

namespace {

bool word_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

bool is_word(const std::string& t) { return !t.empty() && word_byte(static_cast<unsigned char>(t[0])); }

using NgramCounts = std::map<std::vector<std::string>, std::size_t>;

NgramCounts ngrams(const std::vector<std::string>& toks, std::size_t n) {
  NgramCounts out;
  if (toks.size() < n) return out;
  for (std::size_t i = 0; i + n <= toks.size(); ++i)
    ++out[std::vector<std::string>(toks.begin() + static_cast<std::ptrdiff_t>(i),
                                   toks.begin() + static_cast<std::ptrdiff_t>(i + n))];
  return out;
}

}  // namespace

std::vector<std::string> text_tokens(std::string_view text) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
      continue;
    }
    if (word_byte(c)) {
      std::string w;
      while (i < text.size() && word_byte(static_cast<unsigned char>(text[i]))) {
        char ch = text[i++];
        if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
        w += ch;
      }
      out.push_back(std::move(w));
    } else {
      out.emplace_back(1, text[i++]);
    }
  }
  return out;
}

double bleu(const std::vector<std::string>& candidate,
            const std::vector<std::vector<std::string>>& references, int order) {
  if (candidate.empty() || references.empty() || order < 1) return 0.0;
  double log_sum = 0.0;
  for (int n = 1; n <= order; ++n) {
    const auto cand = ngrams(candidate, static_cast<std::size_t>(n));
    std::size_t total = 0, clipped = 0;
    std::vector<NgramCounts> refs;
    refs.reserve(references.size());
    for (const auto& r : references) refs.push_back(ngrams(r, static_cast<std::size_t>(n)));
    for (const auto& [g, count] : cand) {
      total += count;
      std::size_t max_ref = 0;
      for (const auto& r : refs) {
        auto it = r.find(g);
        if (it != r.end()) max_ref = std::max(max_ref, it->second);
      }
      clipped += std::min(count, max_ref);
    }
    if (total == 0 || clipped == 0) return 0.0;
    log_sum += std::log(static_cast<double>(clipped) / static_cast<double>(total)) / order;
  }
  // Brevity penalty with the reference length closest to the candidate's (shorter on a tie).
  const auto c = static_cast<double>(candidate.size());
  double r = static_cast<double>(references.front().size());
  for (const auto& ref : references) {
    const auto len = static_cast<double>(ref.size());
    const double d = std::abs(len - c), best = std::abs(r - c);
    if (d < best || (d == best && len < r)) r = len;
  }
  const double bp = c > r ? 1.0 : std::exp(1.0 - r / c);
  return bp * std::exp(log_sum);
}

double self_bleu(const std::vector<std::vector<std::string>>& questions, bool* defined) {
  if (defined != nullptr) *defined = questions.size() >= 2;
  if (questions.size() < 2) return 0.0;
  double sum = 0.0;
  for (std::size_t i = 0; i < questions.size(); ++i) {
    std::vector<std::vector<std::string>> refs;
    for (std::size_t j = 0; j < questions.size(); ++j)
      if (j != i) refs.push_back(questions[j]);
    sum += bleu(questions[i], refs);
  }
  return sum / static_cast<double>(questions.size());
}

double word_position_deviation(const std::vector<std::string>& s, const std::vector<std::string>& t) {
  if (s.size() < 2 || t.size() < 2) return 0.0;
  // Token -> normalized positions, types in first-occurrence order of s.
  auto positions = [](const std::vector<std::string>& toks) {
    std::map<std::string, std::vector<double>> m;
    const auto len = static_cast<double>(toks.size() - 1);
    for (std::size_t i = 0; i < toks.size(); ++i) m[toks[i]].push_back(static_cast<double>(i) / len);
    return m;
  };
  const auto ps = positions(s), pt = positions(t);
  double sum = 0.0;
  std::size_t shared = 0;
  for (const auto& [tok, a] : ps) {
    auto it = pt.find(tok);
    if (it == pt.end()) continue;
    const auto& b = it->second;
    ++shared;
    if (a.size() == 1 && b.size() == 1) {
      sum += std::abs(a[0] - b[0]);
      continue;
    }
    const auto& many = a.size() >= b.size() ? a : b;
    const auto& few = a.size() >= b.size() ? b : a;
    double d = 0.0;
    for (double p : many) {
      double best = 2.0;
      for (double q : few) best = std::min(best, std::abs(p - q));
      d += best;
    }
    sum += d / static_cast<double>(many.size());
  }
  return shared == 0 ? 1.0 : sum / static_cast<double>(shared);
}

double set_wpd(const std::vector<std::vector<std::string>>& questions, bool* defined) {
  if (defined != nullptr) *defined = questions.size() >= 2;
  if (questions.size() < 2) return 0.0;
  double sum = 0.0;
  std::size_t pairs = 0;
  for (std::size_t i = 0; i < questions.size(); ++i) {
    for (std::size_t j = 0; j < questions.size(); ++j) {
      if (i == j) continue;
      sum += word_position_deviation(questions[i], questions[j]);
      ++pairs;
    }
  }
  return sum / static_cast<double>(pairs);
}

TfIdf::TfIdf(const std::vector<std::string>& documents) {
  std::unordered_map<std::string, std::size_t> df;
  for (const auto& d : documents) {
    std::unordered_set<std::string> seen;
    for (auto& t : text_tokens(d))
      if (is_word(t) && seen.insert(t).second) ++df[t];
  }
  const auto n = static_cast<double>(documents.size());
  for (const auto& [t, k] : df) idf_[t] = std::log((1.0 + n) / (1.0 + static_cast<double>(k))) + 1.0;
}

std::unordered_map<std::string, double> TfIdf::vector(std::string_view text) const {
  std::unordered_map<std::string, double> v;
  for (auto& t : text_tokens(text)) {
    auto it = idf_.find(t);
    if (it != idf_.end()) v[t] += it->second;
  }
  double norm = 0.0;
  for (const auto& [t, x] : v) norm += x * x;
  norm = std::sqrt(norm);
  if (norm > 0)
    for (auto& [t, x] : v) x /= norm;
  return v;
}

double TfIdf::cosine(const std::unordered_map<std::string, double>& a,
                     const std::unordered_map<std::string, double>& b) {
  const auto& small = a.size() <= b.size() ? a : b;
  const auto& large = a.size() <= b.size() ? b : a;
  double dot = 0.0;
  for (const auto& [t, x] : small) {
    auto it = large.find(t);
    if (it != large.end()) dot += x * it->second;
  }
  return dot;
}

}  // namespace numcheck::claims
