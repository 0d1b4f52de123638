#pragma once
// Shared libraries loaded on first use with dlopen: libcurl (HTTP), libxgboost (the tree
// learners), liblinear (the linear learner), SQLite (the response cache), ICU and libstemmer
// (tokenizing) are opened the first time a command needs them, so every other command starts
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

}  // namespace numcheck::core
