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
  const core::SharedLibrary lib("libcurl", NUMCHECK_LIBCURL_SONAME, "HTTP");
  CurlApi api{};
  lib.bind(api.easy_init, "curl_easy_init");
  lib.bind(api.easy_cleanup, "curl_easy_cleanup");
  lib.bind(api.easy_setopt, "curl_easy_setopt");
  lib.bind(api.easy_getinfo, "curl_easy_getinfo");
  lib.bind(api.easy_perform, "curl_easy_perform");
  lib.bind(api.easy_strerror, "curl_easy_strerror");
  lib.bind(api.slist_append, "curl_slist_append");
  lib.bind(api.slist_free_all, "curl_slist_free_all");
  lib.bind(api.multi_init, "curl_multi_init");
  lib.bind(api.multi_setopt, "curl_multi_setopt");
  lib.bind(api.multi_add_handle, "curl_multi_add_handle");
  lib.bind(api.multi_remove_handle, "curl_multi_remove_handle");
  lib.bind(api.multi_cleanup, "curl_multi_cleanup");
  lib.bind(api.multi_perform, "curl_multi_perform");
  lib.bind(api.multi_poll, "curl_multi_poll");
  lib.bind(api.multi_info_read, "curl_multi_info_read");
  lib.bind(api.getdate, "curl_getdate");
  decltype(&::curl_global_init) global_init = nullptr;
  lib.bind(global_init, "curl_global_init");
  global_init(CURL_GLOBAL_DEFAULT);
  return api;  // the library stays loaded for the life of the process
}

}  // namespace

const CurlApi& curl() {
  static const CurlApi api = load();  // thread-safe; a failed load throws and is retried next time
  return api;
}

}  // namespace numcheck::llm::detail
