// Fuzz target for the retrieval tokenizer (src/retrieval/tokenize.hpp): any bytes, including
// invalid UTF-8. Checks: word ranges are in bounds, ordered and non-overlapping; every term is
// non-empty and at most kMaxTokenBytes; on ASCII input the hand-written path equals ICU's UAX #29
// segmentation; analyze's length counts the words; the indexer's cache of number-likeness per term
// is exact (an ASCII word and its lower-cased term are equally number-like); the index built from
// the input's lines has the same bytes with one and with three threads.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "retrieval/index.hpp"
#include "retrieval/tokenize.hpp"

namespace {

[[noreturn]] void violated(const char* what) {
  std::fprintf(stderr, "fuzz_retrieval_tokenize: invariant violated: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 4096) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace numcheck::retrieval;
  const auto ws = words(text);
  std::size_t prev_end = 0;
  for (const auto& t : ws) {
    if (t.begin < prev_end || t.end <= t.begin || t.end > text.size()) violated("word range");
    if (t.term.empty() || t.term.size() > kMaxTokenBytes) violated("term size");
    prev_end = t.end;
  }
  bool ascii = true;
  for (char c : text) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii && ascii_word_ranges(text) != icu_word_ranges(text)) violated("ASCII path differs from ICU");
  const Analyzed a = analyze(text, {.stem = (size % 2) == 1, .number_terms = true});
  if (a.length != words(text, {.stem = (size % 2) == 1}).size()) violated("length is not the word count");
  if (a.terms.size() < a.length) violated("fewer terms than words");
  for (const auto& t : words(text)) {
    const std::string_view w = text.substr(t.begin, t.end - t.begin);
    bool ascii_word = true;
    for (char c : w) ascii_word = ascii_word && static_cast<unsigned char>(c) < 0x80;
    if (ascii_word && number_like_word(w) != number_like_word(t.term))
      violated("number-likeness of the term");
  }
  std::string bytes[2];
  for (int k = 0; k < 2; ++k) {
    IndexBuilder b;
    std::size_t start = 0, line = 0;
    while (start <= text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      b.add({std::to_string(line++), std::string(text.substr(start, end - start)), ""});
      start = end + 1;
    }
    bytes[k] = b.build(k == 0 ? 1 : 3).serialize();
  }
  if (bytes[0] != bytes[1]) violated("index bytes depend on the thread count");
  return 0;
}
