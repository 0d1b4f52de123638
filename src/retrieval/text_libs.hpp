#pragma once
// ICU (word breaks, case folding) and libstemmer (Snowball): the functions the tokenizer calls, in
// one table per library. numcheck links both libraries; ICU's C API is used (its functions carry
// the major version, e.g. ubrk_open_72, taken from the headers).
#include <libstemmer.h>
#include <unicode/ubrk.h>
#include <unicode/ustring.h>
#include <unicode/utext.h>
#include <unicode/utypes.h>

namespace numcheck::retrieval::detail {

// A table's member: the function's type as the header declares it.
// NOLINTNEXTLINE(bugprone-macro-parentheses): `member` is the name being declared, not an expression
#define NUMCHECK_TEXT_LIBS_MEMBER(member, function) decltype(&::function) member;

#define NUMCHECK_ICU_FUNCTIONS(X)        \
  X(brk_open, ubrk_open)                 \
  X(brk_close, ubrk_close)               \
  X(brk_set_utext, ubrk_setUText)        \
  X(brk_first, ubrk_first)               \
  X(brk_next, ubrk_next)                 \
  X(brk_rule_status, ubrk_getRuleStatus) \
  X(text_open_utf8, utext_openUTF8)      \
  X(text_close, utext_close)             \
  X(str_from_utf8, u_strFromUTF8WithSub) \
  X(str_to_utf8, u_strToUTF8WithSub)     \
  X(str_fold_case, u_strFoldCase)        \
  X(error_name, u_errorName)

struct IcuApi {
  NUMCHECK_ICU_FUNCTIONS(NUMCHECK_TEXT_LIBS_MEMBER)
};

#define NUMCHECK_STEMMER_FUNCTIONS(X) \
  X(create, sb_stemmer_new)           \
  X(destroy, sb_stemmer_delete)       \
  X(stem, sb_stemmer_stem)            \
  X(length, sb_stemmer_length)

struct StemmerApi {
  NUMCHECK_STEMMER_FUNCTIONS(NUMCHECK_TEXT_LIBS_MEMBER)
};

// The tables of libicuuc's and libstemmer's functions.
[[nodiscard]] const IcuApi& icu();
[[nodiscard]] const StemmerApi& stemmer();

}  // namespace numcheck::retrieval::detail
