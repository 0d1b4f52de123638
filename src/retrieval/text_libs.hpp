#pragma once
// ICU (word breaks, case folding) and libstemmer (Snowball), loaded on first use. Only retrieval
// tokenizes text, so every other command starts without them: mapping and relocating libicuuc,
// libicudata and libstemmer (whose tables of 29 stemmers are relocated at load) took about a third
// of numcheck's start-up before (docs/performance.md, "Start-up"). The executable does not link
// them; the tokenizer calls them through these tables, which dlopen() the libraries the first time
// they are needed (core/dynlib.hpp). Only their headers are used at build time. ICU's C API is
// used (its functions carry the major version, e.g. ubrk_open_72, taken from the headers).
#include <libstemmer.h>
#include <unicode/ubrk.h>
#include <unicode/ustring.h>
#include <unicode/utext.h>
#include <unicode/utypes.h>

#include "core/dynlib.hpp"

namespace numcheck::retrieval::detail {

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
  NUMCHECK_ICU_FUNCTIONS(NUMCHECK_DYNLIB_MEMBER)
};

#define NUMCHECK_STEMMER_FUNCTIONS(X) \
  X(create, sb_stemmer_new)           \
  X(destroy, sb_stemmer_delete)       \
  X(stem, sb_stemmer_stem)            \
  X(length, sb_stemmer_length)

struct StemmerApi {
  NUMCHECK_STEMMER_FUNCTIONS(NUMCHECK_DYNLIB_MEMBER)
};

// Load libicuuc ("libicuuc.so.<major version of the headers>", e.g. libicuuc.so.72) and
// libstemmer (NUMCHECK_LIBSTEMMER_SONAME, default "libstemmer.so.0d", Debian's soname), once and
// thread-safely; throw Error naming the library when it cannot be loaded or lacks a function.
[[nodiscard]] const IcuApi& icu();
[[nodiscard]] const StemmerApi& stemmer();

}  // namespace numcheck::retrieval::detail
