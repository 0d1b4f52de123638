#pragma once
// Shared libraries loaded on first use with dlopen: libcurl (HTTP), libxgboost (the tree
// learners), liblinear (the linear learner), ICU and
// libstemmer (tokenizing) are opened the first time a command needs them, so every other command starts
// without them and what they pull in. One rule for all: a library that cannot be
// opened, or lacks a function, is a numcheck::Error that names it and what needed it.
// Only the libraries' headers are used at build time; the library stays loaded for the life of
// the process.

#include <dlfcn.h>

#include <string_view>

#include "core/error.hpp"

namespace numcheck::core {

class SharedLibrary {
 public:
  // `name` as users know it ("libcurl"), `soname` the file dlopen looks for ("libcurl.so.4"),
  // `needed_for` what needs it ("HTTP").
  SharedLibrary(std::string_view name, const char* soname, std::string_view needed_for)
      : name_(name), soname_(soname), handle_(::dlopen(soname, RTLD_NOW | RTLD_LOCAL)) {
    if (handle_ == nullptr) {
      const char* why = ::dlerror();
      fail(ErrorCode::kIo, "cannot load {} ({}), needed for {}: {}", name, soname, needed_for,
           why != nullptr ? why : "");
    }
  }

  // Sets `slot` (a function pointer, e.g. decltype(&::curl_easy_init)) to the function `symbol`.
  template <typename F>
  void bind(F& slot, const char* symbol) const {
    void* sym = ::dlsym(handle_, symbol);
    if (sym == nullptr) fail(ErrorCode::kIo, "{} ({}) has no function {}", name_, soname_, symbol);
    slot = reinterpret_cast<F>(sym);
  }

 private:
  std::string_view name_;
  const char* soname_;
  void* handle_;
};

// Loads a library and fills its table of functions: `bind(lib, api)` binds every member (see
// NUMCHECK_DYNLIB_BIND). The library stays loaded for the life of the process.
template <typename Api, typename Bind>
[[nodiscard]] Api load_library(std::string_view name, const char* soname, std::string_view needed_for,
                               Bind&& bind) {
  const SharedLibrary lib(name, soname, needed_for);
  Api api{};
  bind(lib, api);
  return api;
}

}  // namespace numcheck::core

// A library's table is written once, as a list macro of (member, function) pairs:
//   #define NUMCHECK_SQLITE3_FUNCTIONS(X) X(step, sqlite3_step) X(reset, sqlite3_reset) ...
//   struct SqliteApi { NUMCHECK_SQLITE3_FUNCTIONS(NUMCHECK_DYNLIB_MEMBER) };
//   ... core::load_library<SqliteApi>(..., [](const core::SharedLibrary& lib, SqliteApi& api) {
//         NUMCHECK_SQLITE3_FUNCTIONS(NUMCHECK_DYNLIB_BIND) });
// so every member is bound, and each function is named once. The member's type is the header's
// declaration of the function; the symbol looked up is the function's name after macro expansion
// (ICU's headers rename ubrk_open to ubrk_open_72, its exported name).
#define NUMCHECK_DYNLIB_NAME2(function) #function
#define NUMCHECK_DYNLIB_NAME(function) NUMCHECK_DYNLIB_NAME2(function)
// NOLINTNEXTLINE(bugprone-macro-parentheses): `member` is the name being declared, not an expression
#define NUMCHECK_DYNLIB_MEMBER(member, function) decltype(&::function) member;
#define NUMCHECK_DYNLIB_BIND(member, function) lib.bind(api.member, NUMCHECK_DYNLIB_NAME(function));
