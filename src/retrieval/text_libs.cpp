#include "retrieval/text_libs.hpp"

namespace numcheck::retrieval::detail {

// A table's entry: the linked function (ICU's headers rename ubrk_open to ubrk_open_72 and so on).
#define NUMCHECK_TEXT_LIBS_ENTRY(member, function) &::function,

const IcuApi& icu() {
  static constexpr IcuApi kApi{NUMCHECK_ICU_FUNCTIONS(NUMCHECK_TEXT_LIBS_ENTRY)};
  return kApi;
}

const StemmerApi& stemmer() {
  static constexpr StemmerApi kApi{NUMCHECK_STEMMER_FUNCTIONS(NUMCHECK_TEXT_LIBS_ENTRY)};
  return kApi;
}

}  // namespace numcheck::retrieval::detail
