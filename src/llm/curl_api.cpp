#include "llm/curl_api.hpp"

#include <dlfcn.h>

#include <mutex>

#include "core/error.hpp"

#ifndef NUMCHECK_LIBCURL_SONAME
#define NUMCHECK_LIBCURL_SONAME "libcurl.so.4"
#endif

namespace numcheck::llm::detail {
namespace {

template <typename F>
void bind(void* lib, F& slot, const char* name) {
  void* sym = ::dlsym(lib, name);
  if (sym == nullptr) fail("libcurl ({}) has no function {}", NUMCHECK_LIBCURL_SONAME, name);
  slot = reinterpret_cast<F>(sym);
}

CurlApi load() {
  void* lib = ::dlopen(NUMCHECK_LIBCURL_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = ::dlerror();
    fail("cannot load libcurl ({}), needed for HTTP: {}", NUMCHECK_LIBCURL_SONAME, why != nullptr ? why : "");
  }
  CurlApi api{};
  bind(lib, api.easy_init, "curl_easy_init");
  bind(lib, api.easy_cleanup, "curl_easy_cleanup");
  bind(lib, api.easy_setopt, "curl_easy_setopt");
  bind(lib, api.easy_getinfo, "curl_easy_getinfo");
  bind(lib, api.easy_perform, "curl_easy_perform");
  bind(lib, api.easy_strerror, "curl_easy_strerror");
  bind(lib, api.slist_append, "curl_slist_append");
  bind(lib, api.slist_free_all, "curl_slist_free_all");
  bind(lib, api.multi_init, "curl_multi_init");
  bind(lib, api.multi_setopt, "curl_multi_setopt");
  bind(lib, api.multi_add_handle, "curl_multi_add_handle");
  bind(lib, api.multi_remove_handle, "curl_multi_remove_handle");
  bind(lib, api.multi_cleanup, "curl_multi_cleanup");
  bind(lib, api.multi_perform, "curl_multi_perform");
  bind(lib, api.multi_poll, "curl_multi_poll");
  bind(lib, api.multi_info_read, "curl_multi_info_read");
  bind(lib, api.getdate, "curl_getdate");
  decltype(&::curl_global_init) global_init = nullptr;
  bind(lib, global_init, "curl_global_init");
  global_init(CURL_GLOBAL_DEFAULT);
  return api;  // the library stays loaded for the life of the process
}

}  // namespace

const CurlApi& curl() {
  static const CurlApi api = load();  // thread-safe; a failed load throws and is retried next time
  return api;
}

}  // namespace numcheck::llm::detail
