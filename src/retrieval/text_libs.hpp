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

namespace numcheck::retrieval::detail {

struct IcuApi {
  decltype(&::ubrk_open) brk_open;
  decltype(&::ubrk_close) brk_close;
  decltype(&::ubrk_setUText) brk_set_utext;
  decltype(&::ubrk_first) brk_first;
  decltype(&::ubrk_next) brk_next;
  decltype(&::ubrk_getRuleStatus) brk_rule_status;
  decltype(&::utext_openUTF8) text_open_utf8;
  decltype(&::utext_close) text_close;
  decltype(&::u_strFromUTF8WithSub) str_from_utf8;
  decltype(&::u_strToUTF8WithSub) str_to_utf8;
  decltype(&::u_strFoldCase) str_fold_case;
  decltype(&::u_errorName) error_name;
};

struct StemmerApi {
  decltype(&::sb_stemmer_new) create;
  decltype(&::sb_stemmer_delete) destroy;
  decltype(&::sb_stemmer_stem) stem;
  decltype(&::sb_stemmer_length) length;
};

// Load libicuuc ("libicuuc.so.<major version of the headers>", e.g. libicuuc.so.72) and
// libstemmer (NUMCHECK_LIBSTEMMER_SONAME, default "libstemmer.so.0d", Debian's soname), once and
// thread-safely; throw Error naming the library when it cannot be loaded or lacks a function.
[[nodiscard]] const IcuApi& icu();
[[nodiscard]] const StemmerApi& stemmer();

}  // namespace numcheck::retrieval::detail
