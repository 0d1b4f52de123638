#pragma once
// Text -> index terms. Words are found with Unicode word boundaries (UAX #29, ICU's word break
// iterator, the rule set behind Lucene's StandardTokenizer): a segment ICU gives a word status
// (letters, digits, ideographs, '_' runs) is a word ("don't", "U.S.", "1,000", "covid-19" gives "covid" and
// "19"). Words are lower cased (full Unicode case folding), optionally stemmed (Snowball English,
// libstemmer). Pure ASCII text takes a hand-written path that implements the same boundary rules for ASCII
// as ICU 72's root rules ('@' is a letter there; tested equal to ICU on every string of up to two
// bytes, random ASCII and under the fuzzer); any other text goes through ICU. Words longer than
// kMaxTokenBytes are dropped (Lucene drops or splits them at 255 too). Invalid UTF-8 never throws: bad bytes
// are boundaries.
//
// Numbers: every number the quantity layer reads in the text (num::find_numbers, every written
// form: "1,000", "1000", "one thousand", "1.5 million", "3/4", "75%" as 3/4) and digits with an
// attached scale ("$86k", "5bn": the scale words of data/claims/segments.json) also gives a
// canonical number term "#<exact value>" ("#1000", "#86000", "#0.75") beside its surface words.
// '#' never occurs in a word, so the two kinds of term cannot collide. Number terms are like
// Lucene synonyms at the position of the number: they do not count toward document length.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace numcheck::retrieval {

inline constexpr std::size_t kMaxTokenBytes = 255;

struct TokenizerOptions {
  bool stem = false;         // Snowball English stemmer on words (not on number terms)
  bool number_terms = true;  // add "#value" terms for quantities
  friend bool operator==(const TokenizerOptions&, const TokenizerOptions&) = default;
};

// A word as it appears in the text: byte range and the normalized term.
struct Token {
  std::size_t begin = 0, end = 0;
  std::string term;
};

// The words of `text` (UAX #29 word segments with a letter or digit), normalized.
[[nodiscard]] std::vector<Token> words(std::string_view text, const TokenizerOptions& opt = {});

// The canonical number terms of `text` ("#1000" for "one thousand"), in text order.
[[nodiscard]] std::vector<std::string> number_terms(std::string_view text);

// What the index stores for one text: every term occurrence (words then number terms) and the
// document length (words only).
struct Analyzed {
  std::vector<std::string> terms;
  std::uint32_t length = 0;
};
[[nodiscard]] Analyzed analyze(std::string_view text, const TokenizerOptions& opt = {});
// The same terms, handed to `emit` one by one without allocating a string per term (the indexer's
// path; a term view is valid only during the call). Returns the document length.
std::uint32_t analyze_each(std::string_view text, const TokenizerOptions& opt,
                           const std::function<void(std::string_view)>& emit);

// The indexer's path, in two steps over one reusable buffer (no allocation per text once warm):
// analyze_words finds the words and their terms; the caller then may fill `number_like` for the
// words whose term it has seen before (number_like_word is a function of the term when
// `term_keyed` is true: ASCII words without stemming), and analyze_numbers adds the number terms.
// The terms and the length are exactly analyze()'s.
struct TermBuffer {
  std::vector<std::pair<std::size_t, std::size_t>> ranges;  // every word segment of the text
  std::string words;                                        // the word terms, concatenated
  std::vector<std::uint32_t> word_end;                      // per word term: end in `words`
  std::vector<std::uint32_t> word_range;                    // per word term: its index in `ranges`
  std::vector<std::uint8_t> term_keyed;                     // per word term: see above
  std::vector<std::uint8_t> number_like;                    // per range: 0 no, 1 yes, 2 not known
  std::string numbers;                                      // the number terms, concatenated
  std::vector<std::uint32_t> number_end;                    // per number term: end in `numbers`
  std::uint32_t length = 0;                                 // word terms (the document length)
  [[nodiscard]] std::string_view word(std::size_t i) const {
    const std::uint32_t b = i ? word_end[i - 1] : 0;
    return std::string_view(words).substr(b, word_end[i] - b);
  }
  [[nodiscard]] std::string_view number(std::size_t i) const {
    const std::uint32_t b = i ? number_end[i - 1] : 0;
    return std::string_view(numbers).substr(b, number_end[i] - b);
  }
};
void analyze_words(std::string_view text, const TokenizerOptions& opt, TermBuffer& out);
// Number terms of `text` into out.numbers (nothing unless opt.number_terms), using and completing
// out.number_like.
void analyze_numbers(std::string_view text, const TokenizerOptions& opt, TermBuffer& out);
// Whether the number reader can start a number in this word segment or the segment is a number
// word (the reader then runs on a window around it).
[[nodiscard]] bool number_like_word(std::string_view word);

// The raw UAX #29 segments with a letter or digit through ICU only (for tests comparing the ASCII
// path with ICU): byte ranges, no normalization.
[[nodiscard]] std::vector<std::pair<std::size_t, std::size_t>> icu_word_ranges(std::string_view text);
// The same through the ASCII path (text must be ASCII).
[[nodiscard]] std::vector<std::pair<std::size_t, std::size_t>> ascii_word_ranges(std::string_view text);
// A word lower-cased as the tokenizer does it (ASCII letters directly, anything else by ICU's full
// case folding, ill-formed UTF-8 read as U+FFFD); for tests.
[[nodiscard]] std::string fold_word(std::string_view word);
// Whether ASCII text takes the ASCII path: true when the path agrees with the linked ICU on every
// ASCII byte in the contexts that reveal its word-break class (checked once per process); false
// sends all text through ICU.
[[nodiscard]] bool ascii_fast_path_enabled();

// "uax29-icu<version>+lower[+snowball-english]+numbers" (recorded in manifests).
[[nodiscard]] std::string tokenizer_name(const TokenizerOptions& opt);

}  // namespace numcheck::retrieval
