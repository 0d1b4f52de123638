#pragma once
// ICU's string functions fill a caller's buffer and report the size they need when it is short
// ("preflighting"). icu_into runs one such call into a std::string or std::u16string, growing it
// once when the first guess was short. Used by the claim normalisation and the retrieval tokenizer
// (both link libicuuc).
#include <unicode/utypes.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/error.hpp"

namespace numcheck::claims {

// Runs `f(dest, capacity, &length, &status)` into `out` (resized to the result); an ICU error is
// an Error "ICU cannot WHAT: NAME".
template <typename Out, typename F>
void icu_into(Out& out, std::size_t guess, const char* what, F&& f) {
  out.resize(std::max<std::size_t>(guess, 1));
  for (int attempt = 0;; ++attempt) {
    UErrorCode st = U_ZERO_ERROR;
    int32_t len = 0;
    f(out.data(), static_cast<int32_t>(out.size()), &len, &st);
    if (st == U_BUFFER_OVERFLOW_ERROR && attempt == 0) {
      out.resize(static_cast<std::size_t>(len));
      continue;
    }
    if (U_FAILURE(st)) fail("ICU cannot {}: {}", what, u_errorName(st));
    out.resize(static_cast<std::size_t>(len));
    return;
  }
}

}  // namespace numcheck::claims
