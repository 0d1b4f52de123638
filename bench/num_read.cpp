// Reading numbers: find_numbers over mixed numeric text (MB/s and numbers/s), and read_number on
// one short answer per form. The text is generated with numcheck::Rng (fixed seed): prose words,
// words with digits that are not numbers (Covid-19, G7), and numbers in every written form.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "core/prng.hpp"
#include "num/read.hpp"
#include "num/write.hpp"

namespace {

using numcheck::Rng;
using numcheck::num::FormSet;
using numcheck::num::NumberForm;
using numcheck::num::Rational;

Rational random_value(Rng& rng, NumberForm form) {
  const long whole = static_cast<long>(rng.between(0, 2000000));
  switch (form) {
    case NumberForm::kInteger:
      return Rational(whole);
    case NumberForm::kDecimal:
    case NumberForm::kENotation:
    case NumberForm::kTimesTen:
    case NumberForm::kPercent:
      return Rational(mpz_class(whole * 10 + 1), mpz_class(static_cast<long>(rng.below(2) ? 100 : 8)));
    case NumberForm::kFraction:
    case NumberForm::kMixed:
      return Rational(mpz_class(whole % 500 + 1), mpz_class(static_cast<long>(rng.between(2, 97))));
    case NumberForm::kWords:
      return rng.below(3) == 0 ? Rational(mpz_class(static_cast<long>(rng.between(1, 40))), mpz_class(4))
                               : Rational(whole % 100000);
  }
  return Rational(0);
}

// About `bytes` of text; `numbers` receives how many numbers were written into it.
std::string mixed_text(std::size_t bytes, std::size_t* numbers) {
  static const char* const kWords[] = {"the",     "tank", "holds",    "of",    "water", "and", "loses",
                                       "per",     "hour", "Covid-19", "cases", "rose",  "G7",  "B737",
                                       "flights", "in",   "total",    "about", "km",    "L",   "people",
                                       "said",    "that", "was",      "2nd"};
  Rng rng(20261130, "bench-text");
  std::string s;
  *numbers = 0;
  while (s.size() < bytes) {
    if (rng.below(4) == 0) {
      const auto form = static_cast<NumberForm>(rng.below(numcheck::num::kNumberFormCount));
      if (auto t = numcheck::num::write_number(random_value(rng, form), form)) {
        s += *t;
        ++*numbers;
      } else {
        s += "none";
      }
    } else {
      s += kWords[rng.below(std::size(kWords))];
    }
    s += rng.below(12) == 0 ? ". " : " ";
  }
  return s;
}

void BM_FindNumbers(benchmark::State& state) {
  std::size_t written = 0;
  const std::string text = mixed_text(static_cast<std::size_t>(state.range(0)), &written);
  std::size_t found = 0;
  for (auto _ : state) {
    auto m = numcheck::num::find_numbers(text);
    found = m.size();
    benchmark::DoNotOptimize(m);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
  state.counters["numbers/s"] = benchmark::Counter(
      static_cast<double>(found) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["found"] = static_cast<double>(found);
  state.counters["written"] = static_cast<double>(written);
}
BENCHMARK(BM_FindNumbers)->Arg(64 << 10)->Arg(1 << 20);

// Plain prose with few numbers: the cost of scanning words.
void BM_FindNumbersProse(benchmark::State& state) {
  std::string text;
  while (text.size() < (1u << 20))
    text += "The quick brown fox jumps over the lazy dog while it rains in Spain. ";
  for (auto _ : state) benchmark::DoNotOptimize(numcheck::num::find_numbers(text));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_FindNumbersProse);

void BM_ReadNumber(benchmark::State& state) {
  const auto form = static_cast<NumberForm>(state.range(0));
  Rng rng(7, "bench-read");
  std::vector<std::string> texts;
  while (texts.size() < 1000) {
    if (auto t = numcheck::num::write_number(random_value(rng, form), form)) texts.push_back(*t);
  }
  std::size_t bytes = 0;
  for (const auto& t : texts) bytes += t.size();
  for (auto _ : state) {
    for (const auto& t : texts) benchmark::DoNotOptimize(numcheck::num::read_number(t));
  }
  state.SetLabel(std::string(numcheck::num::form_name(form)));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
  state.counters["numbers/s"] =
      benchmark::Counter(static_cast<double>(texts.size()) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ReadNumber)->DenseRange(0, numcheck::num::kNumberFormCount - 1);

}  // namespace

BENCHMARK_MAIN();
