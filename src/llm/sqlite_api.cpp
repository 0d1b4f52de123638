#include "llm/sqlite_api.hpp"

#include "core/dynlib.hpp"

#ifndef NUMCHECK_LIBSQLITE3_SONAME
#define NUMCHECK_LIBSQLITE3_SONAME "libsqlite3.so.0"
#endif

namespace numcheck::llm::detail {
namespace {

SqliteApi load() {
  const core::SharedLibrary lib("SQLite", NUMCHECK_LIBSQLITE3_SONAME, "the response cache");
  SqliteApi api{};
  lib.bind(api.bind_text, "sqlite3_bind_text");
  lib.bind(api.busy_timeout, "sqlite3_busy_timeout");
  lib.bind(api.changes, "sqlite3_changes");
  lib.bind(api.clear_bindings, "sqlite3_clear_bindings");
  lib.bind(api.close, "sqlite3_close");
  lib.bind(api.column_bytes, "sqlite3_column_bytes");
  lib.bind(api.column_int64, "sqlite3_column_int64");
  lib.bind(api.column_text, "sqlite3_column_text");
  lib.bind(api.errmsg, "sqlite3_errmsg");
  lib.bind(api.exec, "sqlite3_exec");
  lib.bind(api.finalize, "sqlite3_finalize");
  lib.bind(api.free, "sqlite3_free");
  lib.bind(api.open_v2, "sqlite3_open_v2");
  lib.bind(api.prepare_v2, "sqlite3_prepare_v2");
  lib.bind(api.prepare_v3, "sqlite3_prepare_v3");
  lib.bind(api.reset, "sqlite3_reset");
  lib.bind(api.step, "sqlite3_step");
  return api;  // the library stays loaded for the life of the process
}

}  // namespace

const SqliteApi& sqlite() {
  static const SqliteApi api = load();  // thread-safe; a failed load throws and is retried next time
  return api;
}

}  // namespace numcheck::llm::detail
