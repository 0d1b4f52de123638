#pragma once
// SQLite, loaded on first use. Earlier numcheck versions kept the response cache in a SQLite
// database; the store that replaced it (llm/cache.hpp) reads one only to copy its entries in, once,
// when the store is made beside it. The executable does not link libsqlite3: the copy calls it
// through this table, which dlopen()s it then (core/dynlib.hpp). Only its header is used at build
// time.
#include <sqlite3.h>

#include "core/dynlib.hpp"

namespace numcheck::llm::detail {

#define NUMCHECK_SQLITE3_FUNCTIONS(X)   \
  X(busy_timeout, sqlite3_busy_timeout) \
  X(close, sqlite3_close)               \
  X(column_bytes, sqlite3_column_bytes) \
  X(column_int64, sqlite3_column_int64) \
  X(column_text, sqlite3_column_text)   \
  X(errmsg, sqlite3_errmsg)             \
  X(finalize, sqlite3_finalize)         \
  X(open_v2, sqlite3_open_v2)           \
  X(prepare_v2, sqlite3_prepare_v2)     \
  X(step, sqlite3_step)

struct SqliteApi {
  NUMCHECK_SQLITE3_FUNCTIONS(NUMCHECK_DYNLIB_MEMBER)
};

// Loads libsqlite3 (NUMCHECK_LIBSQLITE3_SONAME, default "libsqlite3.so.0"), once and thread-safely;
// throws Error naming the library when it cannot be loaded or lacks a function.
[[nodiscard]] const SqliteApi& sqlite();

}  // namespace numcheck::llm::detail
