#include "retrieval/text_libs.hpp"

#include <unicode/uvernum.h>

#ifndef NUMCHECK_LIBSTEMMER_SONAME
#define NUMCHECK_LIBSTEMMER_SONAME "libstemmer.so.0d"
#endif
// ICU's soname follows the major version of the headers, as its function names do.
#define NUMCHECK_LIBICUUC_SONAME "libicuuc.so." U_ICU_VERSION_SHORT

namespace numcheck::retrieval::detail {
const IcuApi& icu() {
  // Thread-safe; a failed load throws and is retried next time. The functions' exported names
  // carry ICU's major version (NUMCHECK_DYNLIB_NAME expands the headers' renaming macros).
  static const IcuApi api = core::load_library<IcuApi>(
      "ICU (libicuuc)", NUMCHECK_LIBICUUC_SONAME, "word segmentation",
      [](const core::SharedLibrary& lib, IcuApi& api) { NUMCHECK_ICU_FUNCTIONS(NUMCHECK_DYNLIB_BIND) });
  return api;
}

const StemmerApi& stemmer() {
  static const StemmerApi api =
      core::load_library<StemmerApi>("libstemmer", NUMCHECK_LIBSTEMMER_SONAME, "stemming (Snowball)",
                                     [](const core::SharedLibrary& lib, StemmerApi& api) {
                                       NUMCHECK_STEMMER_FUNCTIONS(NUMCHECK_DYNLIB_BIND)
                                     });
  return api;
}

}  // namespace numcheck::retrieval::detail
