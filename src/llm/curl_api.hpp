#pragma once
// libcurl, loaded on first use. Commands that never talk HTTP (generate, score, report, ...) do not
// pay at start for libcurl and the ~30 shared libraries it pulls in (TLS, Kerberos, LDAP, SSH,
// ...): the executable does not link libcurl; the HTTP backend calls it through this table, which
// dlopen()s it the first time it is needed. Only libcurl's headers are used at build time.
#ifndef CURL_DISABLE_TYPECHECK
#define CURL_DISABLE_TYPECHECK  // the type-checking macros would hide the function names
#endif
#include <curl/curl.h>

#include "core/dynlib.hpp"

namespace numcheck::llm::detail {

#define NUMCHECK_CURL_FUNCTIONS(X)                 \
  X(easy_init, curl_easy_init)                     \
  X(easy_cleanup, curl_easy_cleanup)               \
  X(easy_setopt, curl_easy_setopt)                 \
  X(easy_getinfo, curl_easy_getinfo)               \
  X(easy_perform, curl_easy_perform)               \
  X(easy_strerror, curl_easy_strerror)             \
  X(slist_append, curl_slist_append)               \
  X(slist_free_all, curl_slist_free_all)           \
  X(multi_init, curl_multi_init)                   \
  X(multi_setopt, curl_multi_setopt)               \
  X(multi_add_handle, curl_multi_add_handle)       \
  X(multi_remove_handle, curl_multi_remove_handle) \
  X(multi_cleanup, curl_multi_cleanup)             \
  X(multi_perform, curl_multi_perform)             \
  X(multi_poll, curl_multi_poll)                   \
  X(multi_info_read, curl_multi_info_read)

struct CurlApi {
  NUMCHECK_CURL_FUNCTIONS(NUMCHECK_DYNLIB_MEMBER)
};

// Loads libcurl (NUMCHECK_LIBCURL_SONAME, "libcurl.so.4") and runs curl_global_init, once and
// thread-safely; throws Error naming the library when it cannot be loaded or lacks a function.
[[nodiscard]] const CurlApi& curl();

}  // namespace numcheck::llm::detail
