#pragma once
// SQLite, loaded on first use. Only the response cache (llm/cache.hpp) keeps a database, so commands
// that run no model start without libsqlite3: the executable does not link it; the cache calls it
// through this table, which dlopen()s it the first time a cache is opened (core/dynlib.hpp). Only
// its header is used at build time.
#include <sqlite3.h>

#include "core/dynlib.hpp"

namespace numcheck::llm::detail {

#define NUMCHECK_SQLITE3_FUNCTIONS(X)       \
  X(bind_int64, sqlite3_bind_int64)         \
  X(bind_text, sqlite3_bind_text)           \
  X(busy_timeout, sqlite3_busy_timeout)     \
  X(changes, sqlite3_changes)               \
  X(clear_bindings, sqlite3_clear_bindings) \
  X(close, sqlite3_close)                   \
  X(column_bytes, sqlite3_column_bytes)     \
  X(column_int64, sqlite3_column_int64)     \
  X(column_text, sqlite3_column_text)       \
  X(db_config, sqlite3_db_config)           \
  X(errmsg, sqlite3_errmsg)                 \
  X(exec, sqlite3_exec)                     \
  X(finalize, sqlite3_finalize)             \
  X(free, sqlite3_free)                     \
  X(open_v2, sqlite3_open_v2)               \
  X(prepare_v2, sqlite3_prepare_v2)         \
  X(prepare_v3, sqlite3_prepare_v3)         \
  X(reset, sqlite3_reset)                   \
  X(step, sqlite3_step)

struct SqliteApi {
  NUMCHECK_SQLITE3_FUNCTIONS(NUMCHECK_DYNLIB_MEMBER)
};

// Loads libsqlite3 (NUMCHECK_LIBSQLITE3_SONAME, default "libsqlite3.so.0"), once and thread-safely;
// throws Error naming the library when it cannot be loaded or lacks a function.
[[nodiscard]] const SqliteApi& sqlite();

}  // namespace numcheck::llm::detail
