#include "retrieval/tokenize.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <unicode/uvernum.h>

#include "claims/icu.hpp"
#include "claims/segment.hpp"
#include "core/ascii.hpp"
#include "core/error.hpp"
#include "num/read.hpp"
#include "num/units.hpp"
#include "retrieval/text_libs.hpp"

namespace numcheck::retrieval {
namespace {

// UAX #29 Word_Break classes of the ASCII characters that matter for words.
enum class Wb : std::uint8_t { kOther, kALetter, kNumeric, kMidLetter, kMidNumLetQ, kMidNum, kExtendNumLet };

constexpr Wb ascii_class(unsigned char c) {
  // '@' is ALetter in ICU's root rules since ICU 72 (CLDR 42 keeps e-mail addresses and handles
  // together: "x@y.com" is one word), not in UAX #29's property table.
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '@') return Wb::kALetter;
  if (c >= '0' && c <= '9') return Wb::kNumeric;
  if (c == '.' || c == '\'') return Wb::kMidNumLetQ;  // MidNumLet '.', Single_Quote '\''
  if (c == ',' || c == ';') return Wb::kMidNum;
  if (c == '_') return Wb::kExtendNumLet;
  // ':' is MidLetter in UAX #29 but ICU's default rules leave it out (a Swedish/Finnish tailoring).
  return Wb::kOther;
}

bool is_word_class(Wb w) { return w == Wb::kALetter || w == Wb::kNumeric || w == Wb::kExtendNumLet; }

// ascii_class of every byte, one load per byte on the hot path (bytes >= 0x80 never reach it).
constexpr std::array<Wb, 256> kAsciiClass = [] {
  std::array<Wb, 256> t{};
  for (int c = 0; c < 256; ++c) t[static_cast<std::size_t>(c)] = ascii_class(static_cast<unsigned char>(c));
  return t;
}();

bool all_ascii(std::string_view s) {
  for (unsigned char c : s)
    if (c >= 0x80) return false;
  return true;
}

// ICU's word break iterator (root locale) and the UText it reads, one per thread.
struct IcuState {
  const detail::IcuApi& api = detail::icu();
  UBreakIterator* it = nullptr;
  UText* ut = nullptr;
  IcuState() {
    UErrorCode st = U_ZERO_ERROR;
    it = api.brk_open(UBRK_WORD, "", nullptr, 0, &st);  // "": the root locale
    if (U_FAILURE(st) || it == nullptr) fail("ICU word break iterator unavailable: {}", api.error_name(st));
  }
  ~IcuState() {
    if (ut != nullptr) api.text_close(ut);
    if (it != nullptr) api.brk_close(it);
  }
  IcuState(const IcuState&) = delete;
  IcuState& operator=(const IcuState&) = delete;
};

IcuState& icu_state() {
  thread_local IcuState s;
  return s;
}

struct Stemmer {
  const detail::StemmerApi& api = detail::stemmer();
  sb_stemmer* s = nullptr;
  Stemmer() : s(api.create("english", "UTF_8")) {
    if (!s) fail("Snowball English stemmer unavailable");
  }
  ~Stemmer() { api.destroy(s); }
  Stemmer(const Stemmer&) = delete;
  Stemmer& operator=(const Stemmer&) = delete;
};

void stem_in_place(std::string& term) {
  thread_local Stemmer st;
  const sb_symbol* out =
      st.api.stem(st.s, reinterpret_cast<const sb_symbol*>(term.data()), static_cast<int>(term.size()));
  if (!out) return;  // out of memory in the stemmer: keep the word
  term.assign(reinterpret_cast<const char*>(out), static_cast<std::size_t>(st.api.length(st.s)));
}

using claims::icu_into;

// Lower case of a word: ASCII letters directly; anything else folded by ICU (full case folding,
// the default options), ill-formed UTF-8 read as U+FFFD, as icu::UnicodeString::fromUTF8 does.
void normalize_into(std::string_view word, bool ascii, std::string& t) {
  if (ascii) {
    t.resize(word.size());
    for (std::size_t i = 0; i < word.size(); ++i) {
      const char c = word[i];
      t[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + ('a' - 'A')) : c;
    }
    return;
  }
  const detail::IcuApi& api = detail::icu();
  thread_local std::u16string u;
  thread_local std::u16string folded;
  // UTF-16 never needs more units than UTF-8 has bytes (a U+FFFD per ill-formed byte at most).
  icu_into(u, word.size(), "read UTF-8", [&](UChar* d, int32_t cap, int32_t* len, UErrorCode* st) {
    api.str_from_utf8(d, cap, len, word.data(), static_cast<int32_t>(word.size()), 0xFFFD, nullptr, st);
  });
  icu_into(folded, u.size() + 8, "fold case", [&](UChar* d, int32_t cap, int32_t* len, UErrorCode* st) {
    *len = api.str_fold_case(d, cap, u.data(), static_cast<int32_t>(u.size()), U_FOLD_CASE_DEFAULT, st);
  });
  icu_into(t, 3 * folded.size(), "write UTF-8", [&](char* d, int32_t cap, int32_t* len, UErrorCode* st) {
    api.str_to_utf8(d, cap, len, folded.data(), static_cast<int32_t>(folded.size()), 0xFFFD, nullptr, st);
  });
}

}  // namespace

namespace {

void ascii_ranges_into(std::string_view text, std::vector<std::pair<std::size_t, std::size_t>>& out) {
  out.clear();
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    Wb c = kAsciiClass[static_cast<unsigned char>(text[i])];
    if (!is_word_class(c)) {
      ++i;
      continue;
    }
    const std::size_t start = i;
    Wb prev = c;
    ++i;
    while (i < n) {
      const Wb nc = kAsciiClass[static_cast<unsigned char>(text[i])];
      if (is_word_class(nc)) {  // WB5, WB8, WB9, WB10, WB13a, WB13b
        prev = nc;
        ++i;
        continue;
      }
      if (i + 1 < n) {
        const Wb after = kAsciiClass[static_cast<unsigned char>(text[i + 1])];
        // WB6/WB7: ALetter (MidLetter | MidNumLetQ) ALetter
        if (prev == Wb::kALetter && (nc == Wb::kMidLetter || nc == Wb::kMidNumLetQ) &&
            after == Wb::kALetter) {
          i += 2;
          continue;
        }
        // WB11/WB12: Numeric (MidNum | MidNumLetQ) Numeric
        if (prev == Wb::kNumeric && (nc == Wb::kMidNum || nc == Wb::kMidNumLetQ) && after == Wb::kNumeric) {
          i += 2;
          continue;
        }
      }
      break;
    }
    // ICU gives every segment a word status except a lone ExtendNumLet ("_").
    if (c != Wb::kExtendNumLet || i - start >= 2) out.emplace_back(start, i);
  }
}

}  // namespace

std::vector<std::pair<std::size_t, std::size_t>> ascii_word_ranges(std::string_view text) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  ascii_ranges_into(text, out);
  return out;
}

std::vector<std::pair<std::size_t, std::size_t>> icu_word_ranges(std::string_view text) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  IcuState& s = icu_state();
  UErrorCode st = U_ZERO_ERROR;
  s.ut = s.api.text_open_utf8(s.ut, text.data(), static_cast<int64_t>(text.size()), &st);
  if (U_FAILURE(st)) fail("ICU cannot open text: {}", s.api.error_name(st));
  s.api.brk_set_utext(s.it, s.ut, &st);
  if (U_FAILURE(st)) fail("ICU cannot segment text: {}", s.api.error_name(st));
  std::int32_t prev = s.api.brk_first(s.it);
  for (std::int32_t pos = s.api.brk_next(s.it); pos != UBRK_DONE; prev = pos, pos = s.api.brk_next(s.it)) {
    if (s.api.brk_rule_status(s.it) == UBRK_WORD_NONE) continue;
    out.emplace_back(static_cast<std::size_t>(prev), static_cast<std::size_t>(pos));
  }
  return out;
}

namespace {

// The ASCII path encodes the Word_Break classes of ICU 72's root rules. Another ICU may tailor
// ASCII differently (ICU 72 made '@' a letter), so once per process every ASCII byte is checked in
// the contexts that reveal its class ("aXb", "1X2", "X", "XX", "aX", "X1") against the ICU linked
// in; on any difference all text goes through ICU (same words, slower).
bool ascii_path_matches_icu() {
  static const bool ok = [] {
    for (int c = 0; c < 128; ++c) {
      const char x = static_cast<char>(c);
      for (const std::string& s : {std::string{'a', x, 'b'}, std::string{'1', x, '2'}, std::string(1, x),
                                   std::string(2, x), std::string{'a', x}, std::string{x, '1'}})
        if (ascii_word_ranges(s) != icu_word_ranges(s)) return false;
    }
    return true;
  }();
  return ok;
}

// Word ranges of any text: the ASCII path when it is exact for the text, else ICU.
std::vector<std::pair<std::size_t, std::size_t>> word_ranges(std::string_view text, bool ascii) {
  return ascii && ascii_path_matches_icu() ? ascii_word_ranges(text) : icu_word_ranges(text);
}
void word_ranges_into(std::string_view text, bool ascii,
                      std::vector<std::pair<std::size_t, std::size_t>>& out) {
  if (ascii && ascii_path_matches_icu()) {
    ascii_ranges_into(text, out);
  } else {
    out = icu_word_ranges(text);
  }
}

}  // namespace

bool ascii_fast_path_enabled() { return ascii_path_matches_icu(); }

std::string fold_word(std::string_view word) {
  std::string t;
  normalize_into(word, all_ascii(word), t);
  return t;
}

std::vector<Token> words(std::string_view text, const TokenizerOptions& opt) {
  const bool ascii = all_ascii(text);
  const auto ranges = word_ranges(text, ascii);
  std::vector<Token> out;
  out.reserve(ranges.size());
  std::string t;
  for (auto [b, e] : ranges) {
    if (e - b > kMaxTokenBytes) continue;
    const std::string_view w = text.substr(b, e - b);
    normalize_into(w, ascii || all_ascii(w), t);
    if (opt.stem) stem_in_place(t);
    if (t.empty() || t.size() > kMaxTokenBytes) continue;
    out.push_back({b, e, t});
  }
  return out;
}

namespace {

std::string number_term(const num::Rational& v) {
  auto dec = v.to_decimal();
  return "#" + (dec ? *dec : v.str());
}

// A currency symbol written just before byte `at` ("$", "€", "£", ...: prefix units of the
// registry), skipping one space.
bool currency_before(std::string_view text, std::size_t at) {
  if (at > 0 && text[at - 1] == ' ') --at;
  const auto& units = num::UnitRegistry::builtin();
  for (std::size_t len = 1; len <= 3 && len <= at; ++len) {
    const num::Unit* u = units.lookup(text.substr(at - len, len));
    if (u != nullptr && u->prefix) return true;
  }
  return false;
}

// "86k", "5bn", "$3m": digits with a scale attached (the claims lexicon's attached_scales; "m"
// and "b" only after a currency symbol, as there).
std::optional<num::Rational> attached_scale_value(std::string_view text, std::size_t b, std::size_t e) {
  std::size_t d = b;
  while (d < e && ((text[d] >= '0' && text[d] <= '9') || text[d] == '.' || text[d] == ',')) ++d;
  if (d == b || d == e) return std::nullopt;
  const claims::Lexicon& lex = claims::Lexicon::builtin();
  const auto sc = lex.attached_scales.find(std::string(text.substr(d, e - d)));
  if (sc == lex.attached_scales.end()) return std::nullopt;
  const auto& need = lex.attached_need_currency;
  if (std::find(need.begin(), need.end(), sc->first) != need.end() && !currency_before(text, b))
    return std::nullopt;
  const num::ReadResult r =
      num::read_number(text.substr(b, d - b), {num::NumberForm::kInteger, num::NumberForm::kDecimal});
  if (!r) return std::nullopt;
  return r.match->value * sc->second;
}

}  // namespace

// A word is number-like when the reader could start a number at one of its digits: the first
// byte, or a digit after a byte that is not a word character ('@', '.', a UTF-8 byte). A digit
// glued to a letter, digit or '_' before it ("b737", "covid19", the "eta123" of the synthetic
// vocabulary) is never a number start for the reader (it skips the rest of the word), so such a
// word is number-like only when it is a number word; the cheap byte test comes first.
bool number_like_word(std::string_view w) {
  for (std::size_t k = 0; k < w.size(); ++k) {
    if (w[k] < '0' || w[k] > '9') continue;
    if (k == 0 || !ascii::is_word(w[k - 1])) return true;
  }
  return num::is_number_word(w);
}

namespace {

// number_like: per range, 0 / 1 when known, 2 when not yet (computed here).
void add_number_terms(std::string_view text, const std::vector<std::pair<std::size_t, std::size_t>>& ranges,
                      std::vector<std::uint8_t>& number_like, std::vector<std::string>& out) {
  // Numbers the reader finds in running text (every written form, number words included) and
  // digits with an attached scale, which the reader leaves alone as part of a word; in text order.
  std::vector<std::pair<std::size_t, std::string>> found;
  std::vector<std::pair<std::size_t, std::size_t>> scaled;
  for (auto [b, e] : ranges) {
    if (text[b] < '0' || text[b] > '9') continue;
    if (auto v = attached_scale_value(text, b, e)) {
      found.emplace_back(b, number_term(*v));
      scaled.emplace_back(b, e);
    }
  }
  // The reader runs only on windows around words that can be part of a number (a digit or a number
  // word), two words before and three after, merged when they touch, each from the end of the word
  // before to the start of the word after (so "$", "-", "%" and "per cent" are inside). A number
  // never straddles two windows, so this finds what one pass over the whole text finds.
  //
  auto numberish = [&](std::size_t i) {
    if (number_like[i] == 2) {
      const auto [b, e] = ranges[i];
      number_like[i] = number_like_word(text.substr(b, e - b)) ? 1 : 0;
    }
    return number_like[i] == 1;
  };
  const std::size_t nr = ranges.size();
  std::size_t i = 0;
  while (i < nr) {
    if (!numberish(i)) {
      ++i;
      continue;
    }
    const std::size_t lo = i >= 2 ? i - 2 : 0;
    std::size_t hi = std::min(nr - 1, i + 3);
    for (std::size_t j = i + 1; j <= hi + 3 && j < nr; ++j)
      if (numberish(j)) hi = std::min(nr - 1, std::max(hi, j + 3));
    const std::size_t wb = lo > 0 ? ranges[lo - 1].second : 0;
    const std::size_t we = hi + 1 < nr ? ranges[hi + 1].first : text.size();
    for (const num::NumberMatch& m : num::find_numbers(text.substr(wb, we - wb))) {
      const std::size_t at = wb + m.begin;
      const bool inside = std::any_of(scaled.begin(), scaled.end(),
                                      [&](const auto& r) { return at >= r.first && at < r.second; });
      if (!inside) found.emplace_back(at, number_term(m.value));
    }
    i = hi + 1;
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  for (auto& f : found) out.push_back(std::move(f.second));
}

}  // namespace

std::vector<std::string> number_terms(std::string_view text) {
  std::vector<std::string> out;
  const auto ranges = word_ranges(text, all_ascii(text));
  std::vector<std::uint8_t> number_like(ranges.size(), 2);
  add_number_terms(text, ranges, number_like, out);
  return out;
}

void analyze_words(std::string_view text, const TokenizerOptions& opt, TermBuffer& out) {
  const bool ascii = all_ascii(text);
  word_ranges_into(text, ascii, out.ranges);
  out.words.clear();
  out.word_end.clear();
  out.word_range.clear();
  out.term_keyed.clear();
  out.number_like.assign(out.ranges.size(), 2);
  out.numbers.clear();
  out.number_end.clear();
  out.word_end.reserve(out.ranges.size());
  out.word_range.reserve(out.ranges.size());
  out.term_keyed.reserve(out.ranges.size());
  if (ascii && !opt.stem) {
    // The common case: every term is its word lower cased, written straight into the buffer
    // (terms never take more bytes than the text).
    out.words.resize(text.size());
    char* dst = out.words.data();
    std::uint32_t at = 0;
    for (std::size_t r = 0; r < out.ranges.size(); ++r) {
      const auto [b, e] = out.ranges[r];
      if (e - b > kMaxTokenBytes) continue;
      for (std::size_t i = b; i < e; ++i) {
        const char c = text[i];
        dst[at++] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + ('a' - 'A')) : c;
      }
      out.word_end.push_back(at);
      out.word_range.push_back(static_cast<std::uint32_t>(r));
      out.term_keyed.push_back(1);
    }
    out.words.resize(at);
    out.length = static_cast<std::uint32_t>(out.word_end.size());
    return;
  }
  thread_local std::string t;
  std::uint32_t length = 0;
  for (std::size_t r = 0; r < out.ranges.size(); ++r) {
    const auto [b, e] = out.ranges[r];
    if (e - b > kMaxTokenBytes) continue;
    const std::string_view w = text.substr(b, e - b);
    const bool ascii_word = ascii || all_ascii(w);
    if (ascii_word && !opt.stem) {  // the common case: lower case straight into the buffer
      const std::size_t at = out.words.size();
      out.words.resize(at + w.size());
      char* dst = out.words.data() + at;
      for (std::size_t i = 0; i < w.size(); ++i) {
        const char c = w[i];
        dst[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + ('a' - 'A')) : c;
      }
    } else {
      normalize_into(w, ascii_word, t);
      if (opt.stem) stem_in_place(t);
      if (t.empty() || t.size() > kMaxTokenBytes) continue;
      out.words += t;
    }
    ++length;
    out.word_end.push_back(static_cast<std::uint32_t>(out.words.size()));
    out.word_range.push_back(static_cast<std::uint32_t>(r));
    // ASCII lower casing keeps digits, word characters and number words (the reader ignores
    // case), so the term decides number-likeness; stemming or Unicode folding may not.
    out.term_keyed.push_back(ascii_word && !opt.stem ? 1 : 0);
  }
  out.length = length;
}

void analyze_numbers(std::string_view text, const TokenizerOptions& opt, TermBuffer& out) {
  if (!opt.number_terms) return;
  thread_local std::vector<std::string> nums;
  nums.clear();
  add_number_terms(text, out.ranges, out.number_like, nums);
  for (const auto& x : nums) {
    out.numbers += x;
    out.number_end.push_back(static_cast<std::uint32_t>(out.numbers.size()));
  }
}

std::uint32_t analyze_each(std::string_view text, const TokenizerOptions& opt,
                           const std::function<void(std::string_view)>& emit) {
  thread_local TermBuffer buf;  // reused: no allocation per text
  analyze_words(text, opt, buf);
  for (std::size_t i = 0; i < buf.word_end.size(); ++i) emit(buf.word(i));
  analyze_numbers(text, opt, buf);
  for (std::size_t i = 0; i < buf.number_end.size(); ++i) emit(buf.number(i));
  return buf.length;
}

Analyzed analyze(std::string_view text, const TokenizerOptions& opt) {
  Analyzed a;
  a.length = analyze_each(text, opt, [&](std::string_view t) { a.terms.emplace_back(t); });
  return a;
}

std::string tokenizer_name(const TokenizerOptions& opt) {
  std::string s = fmt::format("uax29-icu{}+lower", U_ICU_VERSION);
  if (opt.stem) s += "+snowball-english";
  if (opt.number_terms) s += "+numbers";
  return s;
}

}  // namespace numcheck::retrieval
