#include "retrieval/text_libs.hpp"

#include <unicode/uvernum.h>

#include "core/dynlib.hpp"

#ifndef NUMCHECK_LIBSTEMMER_SONAME
#define NUMCHECK_LIBSTEMMER_SONAME "libstemmer.so.0d"
#endif
// ICU's soname follows the major version of the headers, as its function names do.
#define NUMCHECK_LIBICUUC_SONAME "libicuuc.so." U_ICU_VERSION_SHORT

// The exported name of an ICU function: the headers rename `ubrk_open` to `ubrk_open_72`
// (U_ICU_ENTRY_POINT_RENAME), so stringifying after expansion gives the versioned symbol.
#define NUMCHECK_ICU_NAME2(f) #f
#define NUMCHECK_ICU_NAME(f) NUMCHECK_ICU_NAME2(f)

namespace numcheck::retrieval::detail {
namespace {

IcuApi load_icu() {
  const core::SharedLibrary lib("ICU (libicuuc)", NUMCHECK_LIBICUUC_SONAME, "word segmentation");
  IcuApi api{};
  lib.bind(api.brk_open, NUMCHECK_ICU_NAME(ubrk_open));
  lib.bind(api.brk_close, NUMCHECK_ICU_NAME(ubrk_close));
  lib.bind(api.brk_set_utext, NUMCHECK_ICU_NAME(ubrk_setUText));
  lib.bind(api.brk_first, NUMCHECK_ICU_NAME(ubrk_first));
  lib.bind(api.brk_next, NUMCHECK_ICU_NAME(ubrk_next));
  lib.bind(api.brk_rule_status, NUMCHECK_ICU_NAME(ubrk_getRuleStatus));
  lib.bind(api.text_open_utf8, NUMCHECK_ICU_NAME(utext_openUTF8));
  lib.bind(api.text_close, NUMCHECK_ICU_NAME(utext_close));
  lib.bind(api.str_from_utf8, NUMCHECK_ICU_NAME(u_strFromUTF8WithSub));
  lib.bind(api.str_to_utf8, NUMCHECK_ICU_NAME(u_strToUTF8WithSub));
  lib.bind(api.str_fold_case, NUMCHECK_ICU_NAME(u_strFoldCase));
  lib.bind(api.error_name, NUMCHECK_ICU_NAME(u_errorName));
  return api;  // the library stays loaded for the life of the process
}

StemmerApi load_stemmer() {
  const core::SharedLibrary lib("libstemmer", NUMCHECK_LIBSTEMMER_SONAME, "stemming (Snowball)");
  StemmerApi api{};
  lib.bind(api.create, "sb_stemmer_new");
  lib.bind(api.destroy, "sb_stemmer_delete");
  lib.bind(api.stem, "sb_stemmer_stem");
  lib.bind(api.length, "sb_stemmer_length");
  return api;
}

}  // namespace

const IcuApi& icu() {
  static const IcuApi api = load_icu();  // thread-safe; a failed load throws and is retried next time
  return api;
}

const StemmerApi& stemmer() {
  static const StemmerApi api = load_stemmer();
  return api;
}

}  // namespace numcheck::retrieval::detail
