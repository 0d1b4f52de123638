#pragma once
// SQLite, loaded on first use. Only the response cache (llm/cache.hpp) keeps a database, so commands
// that run no model start without libsqlite3: the executable does not link it; the cache calls it
// through this table, which dlopen()s it the first time a cache is opened (core/dynlib.hpp). Only
// its header is used at build time.
#include <sqlite3.h>

namespace numcheck::llm::detail {

struct SqliteApi {
  decltype(&::sqlite3_bind_text) bind_text;
  decltype(&::sqlite3_busy_timeout) busy_timeout;
  decltype(&::sqlite3_changes) changes;
  decltype(&::sqlite3_clear_bindings) clear_bindings;
  decltype(&::sqlite3_close) close;
  decltype(&::sqlite3_column_bytes) column_bytes;
  decltype(&::sqlite3_column_int64) column_int64;
  decltype(&::sqlite3_column_text) column_text;
  decltype(&::sqlite3_errmsg) errmsg;
  decltype(&::sqlite3_exec) exec;
  decltype(&::sqlite3_finalize) finalize;
  decltype(&::sqlite3_free) free;
  decltype(&::sqlite3_open_v2) open_v2;
  decltype(&::sqlite3_prepare_v2) prepare_v2;
  decltype(&::sqlite3_prepare_v3) prepare_v3;
  decltype(&::sqlite3_reset) reset;
  decltype(&::sqlite3_step) step;
};

// Loads libsqlite3 (NUMCHECK_LIBSQLITE3_SONAME, default "libsqlite3.so.0"), once and thread-safely;
// throws Error naming the library when it cannot be loaded or lacks a function.
[[nodiscard]] const SqliteApi& sqlite();

}  // namespace numcheck::llm::detail
