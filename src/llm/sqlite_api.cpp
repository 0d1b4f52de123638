#include "llm/sqlite_api.hpp"

#ifndef NUMCHECK_LIBSQLITE3_SONAME
#define NUMCHECK_LIBSQLITE3_SONAME "libsqlite3.so.0"
#endif

namespace numcheck::llm::detail {
const SqliteApi& sqlite() {
  // Thread-safe; a failed load throws and is retried next time.
  static const SqliteApi api =
      core::load_library<SqliteApi>("SQLite", NUMCHECK_LIBSQLITE3_SONAME, "the response cache",
                                    [](const core::SharedLibrary& lib, SqliteApi& api) {
                                      NUMCHECK_SQLITE3_FUNCTIONS(NUMCHECK_DYNLIB_BIND)
                                    });
  return api;
}

}  // namespace numcheck::llm::detail
