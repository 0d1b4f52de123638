#include "io/cache_dir.hpp"

#include <cstdlib>

namespace numcheck::io {

namespace fs = std::filesystem;

fs::path user_cache_dir() {
  if (const char* d = std::getenv("NUMCHECK_CACHE_DIR"); d != nullptr && *d != 0) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != 0) return fs::path(x) / "numcheck";
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != 0)
    return fs::path(h) / ".cache" / "numcheck";
  return fs::temp_directory_path() / "numcheck-cache";
}

}  // namespace numcheck::io
