#pragma once
// libcurl, loaded on first use. Commands that never talk HTTP (generate, score, report, ...) do not
// pay at start for libcurl and the ~30 shared libraries it pulls in (TLS, Kerberos, LDAP, SSH,
// ...): the executable does not link libcurl; the HTTP backend calls it through this table, which
// dlopen()s it the first time it is needed. Only libcurl's headers are used at build time.
#ifndef CURL_DISABLE_TYPECHECK
#define CURL_DISABLE_TYPECHECK  // the type-checking macros would hide the function names
#endif
#include <curl/curl.h>

namespace numcheck::llm::detail {

struct CurlApi {
  decltype(&::curl_easy_init) easy_init;
  decltype(&::curl_easy_cleanup) easy_cleanup;
  decltype(&::curl_easy_setopt) easy_setopt;
  decltype(&::curl_easy_getinfo) easy_getinfo;
  decltype(&::curl_easy_perform) easy_perform;
  decltype(&::curl_easy_strerror) easy_strerror;
  decltype(&::curl_slist_append) slist_append;
  decltype(&::curl_slist_free_all) slist_free_all;
  decltype(&::curl_multi_init) multi_init;
  decltype(&::curl_multi_setopt) multi_setopt;
  decltype(&::curl_multi_add_handle) multi_add_handle;
  decltype(&::curl_multi_remove_handle) multi_remove_handle;
  decltype(&::curl_multi_cleanup) multi_cleanup;
  decltype(&::curl_multi_perform) multi_perform;
  decltype(&::curl_multi_poll) multi_poll;
  decltype(&::curl_multi_info_read) multi_info_read;
  decltype(&::curl_getdate) getdate;
};

// Loads libcurl (NUMCHECK_LIBCURL_SONAME, "libcurl.so.4") and runs curl_global_init, once and
// thread-safely; throws Error naming the library when it cannot be loaded or lacks a function.
[[nodiscard]] const CurlApi& curl();

}  // namespace numcheck::llm::detail
