#include "llm/curl_api.hpp"

#include <mutex>

#include "core/dynlib.hpp"
#include "core/error.hpp"

#ifndef NUMCHECK_LIBCURL_SONAME
#define NUMCHECK_LIBCURL_SONAME "libcurl.so.4"
#endif

namespace numcheck::llm::detail {
namespace {

CurlApi load() {
  return core::load_library<CurlApi>("libcurl", NUMCHECK_LIBCURL_SONAME, "HTTP",
                                     [](const core::SharedLibrary& lib, CurlApi& api) {
                                       NUMCHECK_CURL_FUNCTIONS(NUMCHECK_DYNLIB_BIND)
                                       decltype(&::curl_global_init) global_init = nullptr;
                                       lib.bind(global_init, "curl_global_init");
                                       global_init(CURL_GLOBAL_DEFAULT);
                                     });
}

}  // namespace

const CurlApi& curl() {
  static const CurlApi api = load();  // thread-safe; a failed load throws and is retried next time
  return api;
}

}  // namespace numcheck::llm::detail
