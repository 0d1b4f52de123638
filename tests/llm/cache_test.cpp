// The response cache (llm/cache.hpp): a SQLite database any number of connections and processes
// share; entries checked on every hit; an earlier numcheck's cache copied in once; errors that turn
// a run's connection off instead of stopping the run (a full disk, a folder that cannot be made);
// processes killed mid-commit.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <sqlite3.h>

#include <fmt/format.h>

#include "core/error.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"
#include "llm/cache.hpp"

namespace numcheck::llm {
namespace {

namespace fs = std::filesystem;

class CacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int counter = 0;
    dir_ = fs::temp_directory_path() / fmt::format("numcheck_cache_{}_{}", ::getpid(), counter++);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

const io::Json kIdentity = {{"model", "m"}};
std::string key(int i) { return cache_key(kIdentity, io::Json{{"q", i}}); }
std::string req(int i) { return request_hash(io::Json{{"q", i}}); }
Completion answer(int i, std::size_t pad = 0) {
  Completion c;
  c.content = fmt::format("answer {}", i) + std::string(pad, '.');
  c.finish_reason = "stop";
  c.model = "m";
  return c;
}

// Puts from .. to-1 (identity {"model": "m"}, request {"q": i}, completion "answer i") and commits.
void fill(ResponseCache& cache, int from, int to, const std::string& model = "m", std::size_t pad = 0) {
  for (int i = from; i < to; ++i) cache.put(key(i), req(i), model, kIdentity, answer(i, pad));
  cache.commit();
}

// Whether `content` is answer i: "answer i", then nothing, padding or " again" (the fixture).
bool is_answer(const std::string& content, int i) {
  const std::string a = fmt::format("answer {}", i);
  return content.compare(0, a.size(), a) == 0 &&
         (content.size() == a.size() || content[a.size()] == '.' || content[a.size()] == ' ');
}

// How many of from .. to-1 a new connection serves, each with its own answer.
int served(const fs::path& path, int from, int to) {
  ResponseCache cache(path);
  int n = 0;
  for (int i = from; i < to; ++i) {
    const auto hit = cache.get(key(i), req(i));
    if (!hit) continue;
    EXPECT_TRUE(is_answer(hit->content, i)) << hit->content;
    ++n;
  }
  return n;
}

// SQL run on the database directly (the sqlite3 shell, a hand edit); the first column of the first
// row of the last statement's result, as text.
std::string sql(const fs::path& path, const std::string& statements) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  std::string first;
  char* err = nullptr;
  const int rc = sqlite3_exec(
      db, statements.c_str(),
      [](void* out, int n, char** values, char**) {
        auto& s = *static_cast<std::string*>(out);
        if (s.empty() && n > 0 && values[0] != nullptr) s = values[0];
        return 0;
      },
      &first, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err != nullptr ? err : "") << " in " << statements;
  sqlite3_free(err);
  sqlite3_close(db);
  return first;
}

// The runner builds the keys from the lines it already serialized: they must equal the keys of the
// JSON values (so caches written before stay valid), for nested, unicode and invalid-UTF-8 bodies.
TEST(CacheKeys, FromLinesEqualFromValues) {
  const io::Json identity = {{"model", "m"}, {"build", {{"commit", "abc"}, {"n", 7}}}};
  const std::vector<io::Json> bodies = {
      io::Json::object(),
      {{"model", "m"},
       {"messages", {{{"role", "user"}, {"content", "3/4 of 2 L \u00e9 \"q\"\n"}}}},
       {"temperature", 0.3},
       {"seed", 20260725}},
      {{"z", 1}, {"a", {1, 2.5, nullptr, true}}, {"bad", std::string("\xff\xfe x")}},
  };
  for (const auto& body : bodies) {
    EXPECT_EQ(cache_key_from_lines(io::to_line(identity), io::to_line(body)), cache_key(identity, body))
        << body.dump(-1, ' ', false, io::Json::error_handler_t::replace);
    EXPECT_EQ(request_hash_from_line(io::to_line(body)), request_hash(body));
  }
  EXPECT_NE(cache_key_from_lines(io::to_line(identity), io::to_line(bodies[1])),
            cache_key_from_lines(io::to_line(io::Json{{"model", "n"}}), io::to_line(bodies[1])));
}

// The runner hashes the part of every key before the request body once (CacheKeyHasher) and goes on
// from a copy of it for each body: the same keys as cache_key for identities of every length (the
// part before the body ending at every place in a 64-byte block), one hasher used again and again.
TEST(CacheKeys, OneHasherForManyBodiesGivesTheSameKeys) {
  std::vector<io::Json> bodies;
  bodies.reserve(6);
  for (int i = 0; i < 6; ++i) {
    bodies.push_back(
        {{"model", "m"},
         {"messages", {{{"role", "user"}, {"content", std::string(static_cast<std::size_t>(i * 29), 'q')}}}},
         {"seed", i}});
  }
  for (std::size_t len = 0; len < 140; ++len) {
    const io::Json identity = {{"model", std::string(len, 'm')}, {"build", nullptr}};
    const CacheKeyHasher hasher(io::to_line(identity));
    for (int round = 0; round < 2; ++round) {
      for (const auto& body : bodies) {
        ASSERT_EQ(hasher.key(io::to_line(body)), cache_key(identity, body)) << "identity of " << len;
      }
    }
  }
}

// Stored answers are served by every connection after their commit (none before), with their
// fields; a lookup with another request hash is a miss counted in rejected(); hits are counted
// (by the connection that commits them, here another one: take_hits/add_hits) and listed by stats.
TEST_F(CacheTest, StoresServesAndCountsHits) {
  const fs::path path = default_cache_path(dir_);
  EXPECT_EQ(path.filename(), "responses.sqlite3");
  ResponseCache writer(path);
  ResponseCache reader(path);
  Completion c = answer(0);
  c.reasoning = "thinking";
  c.usage = {{"completion_tokens", 3}};
  c.timings = {{"predicted_ms", 1.5}};
  c.system_fingerprint = "fp";
  writer.put(key(0), req(0), "m", kIdentity, c);
  EXPECT_FALSE(reader.get(key(0), req(0)).has_value());  // not committed yet
  writer.commit();
  const auto hit = reader.get(key(0), req(0));
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(completion_to_json(*hit), completion_to_json(c));
  EXPECT_FALSE(reader.get(key(0), req(1)).has_value());
  EXPECT_EQ(reader.rejected(), 1u);
  EXPECT_FALSE(reader.get(key(1), req(1)).has_value());  // a plain miss
  EXPECT_EQ(reader.rejected(), 1u);
  writer.add_hits(reader.take_hits());
  fill(writer, 1, 4, "other");
  const CacheStats st = reader.stats();
  EXPECT_EQ(st.entries, 4u);
  EXPECT_EQ(st.hits, 1u);
  ASSERT_EQ(st.per_model.size(), 2u);
  EXPECT_EQ(st.per_model[0], (std::pair<std::string, std::uint64_t>{"m", 1}));
  EXPECT_EQ(st.per_model[1], (std::pair<std::string, std::uint64_t>{"other", 3}));
  EXPECT_EQ(st.oldest.size(), 20u);
  EXPECT_LE(st.oldest, st.newest);
  EXPECT_GT(st.bytes, 0u);
  EXPECT_EQ(writer.clear("other"), 3u);
  EXPECT_EQ(served(path, 0, 4), 1);
  EXPECT_EQ(writer.clear(), 1u);
  EXPECT_EQ(reader.stats().entries, 0u);
}

// The database is what docs/runner.md says, for the sqlite3 shell: WAL journal, one `entries` table
// with these columns, the schema's version.
TEST_F(CacheTest, TheDatabaseIsReadableWithTheSqliteShell) {
  const fs::path path = default_cache_path(dir_);
  {
    ResponseCache cache(path);
    fill(cache, 0, 2);
    (void)cache.get(key(1), req(1));
    cache.commit();
    EXPECT_EQ(sql(path, "PRAGMA journal_mode"), "wal");
  }
  EXPECT_EQ(sql(path, "PRAGMA user_version"), "3");
  EXPECT_EQ(sql(path, "SELECT group_concat(name, ',') FROM pragma_table_info('entries')"),
            "key,request_sha256,check_sha256,model,identity,created,completion,hits");
  EXPECT_EQ(sql(path, "SELECT count(*) FROM entries WHERE model = 'm' AND identity = '{\"model\":\"m\"}'"),
            "2");
  EXPECT_EQ(sql(path, fmt::format("SELECT hits FROM entries WHERE key = '{}'", key(1))), "1");
  EXPECT_EQ(
      sql(path,
          fmt::format("SELECT json_extract(completion, '$.content') FROM entries WHERE key = '{}'", key(1))),
      "answer 1");
  EXPECT_EQ(sql(path, fmt::format("SELECT request_sha256 FROM entries WHERE key = '{}'", key(0))), req(0));
}

// A row changed by hand is a miss counted in rejected(), never served: its completion edited, its
// check edited, a row moved to another key, a completion that is not JSON.
TEST_F(CacheTest, AnEditedOrMovedRowIsAMissNeverServed) {
  const fs::path path = default_cache_path(dir_);
  {
    ResponseCache cache(path);
    fill(cache, 0, 6);
  }
  sql(path,
      fmt::format("UPDATE entries SET completion = replace(completion, 'answer', 'ANSWER') WHERE key = '{}';"
                  "UPDATE entries SET check_sha256 = '{}' WHERE key = '{}';"
                  "UPDATE entries SET key = '{}' WHERE key = '{}';"
                  "UPDATE entries SET completion = 'x', check_sha256 = '{}' WHERE key = '{}'",
                  key(0), std::string(64, '0'), key(1), key(9), key(2),
                  io::sha256_hex(key(3) + "\n" + req(3) + "\nx"), key(3)));
  ResponseCache cache(path);
  for (int i : {0, 1, 3}) EXPECT_FALSE(cache.get(key(i), req(i)).has_value()) << i;
  EXPECT_FALSE(cache.get(key(9), req(9)).has_value());  // key 2's row under key 9: another request
  EXPECT_EQ(cache.rejected(), 4u);
  EXPECT_EQ(served(path, 4, 6), 2);
}

// put() commits by itself once set_batch_size() entries wait: another connection sees none of a
// batch before, all of it after. One commit keeps each entry's model and identity.
TEST_F(CacheTest, ABatchIsCommittedWholeAtItsSize) {
  const fs::path path = default_cache_path(dir_);
  ResponseCache writer(path);
  writer.set_batch_size(4);
  for (int i = 0; i < 3; ++i) writer.put(key(i), req(i), "m", kIdentity, answer(i));
  EXPECT_EQ(served(path, 0, 3), 0);
  writer.put_entry(ResponseCache::make_entry(key(3), req(3), answer(3)), "m2",
                   R"({"build":"b","model":"m2"})");
  EXPECT_EQ(served(path, 0, 4), 4);
  EXPECT_EQ(sql(path, fmt::format("SELECT model || ' ' || identity FROM entries WHERE key = '{}'", key(3))),
            R"(m2 {"build":"b","model":"m2"})");
  EXPECT_EQ(sql(path, fmt::format("SELECT model || ' ' || identity FROM entries WHERE key = '{}'", key(2))),
            R"(m {"model":"m"})");
}

// The store-format fixture (tests/llm/data/store_cache: written by numcheck's own store before the
// SQLite cache, with its code: entries 0-4 of model m, entry 5 of model "other" with every field
// set, hits 1 and 2 for entries 0 and 1, entry 2 stored twice) copied into `dir`.
void copy_fixture(const fs::path& dir) {
  for (const char* f : {"responses.cache", "responses.cache.index"})
    fs::copy_file(fs::path(NUMCHECK_SOURCE_DIR) / "tests/llm/data/store_cache" / f, dir / f);
}

// A store-format cache beside a new database is copied in once, with its hits and every field of
// its answers; its files are left as they were; a row removed later is not copied again.
TEST_F(CacheTest, AStoreFormatCacheIsCopiedInOnce) {
  copy_fixture(dir_);
  const std::string entries_before = io::read_file(dir_ / "responses.cache");
  const fs::path path = default_cache_path(dir_);
  {
    ResponseCache cache(path);
    const CacheStats st = cache.stats();
    EXPECT_EQ(st.entries, 6u);
    EXPECT_EQ(st.hits, 3u);
    ASSERT_EQ(st.per_model.size(), 2u);
    EXPECT_EQ(st.per_model[1], (std::pair<std::string, std::uint64_t>{"other", 1}));
    for (int i = 0; i < 5; ++i) {
      const auto hit = cache.get(key(i), req(i));
      ASSERT_TRUE(hit.has_value()) << i;
      EXPECT_EQ(hit->content, i == 2 ? "answer 2 again" : fmt::format("answer {}", i));
    }
    const io::Json other = {{"model", "other"}, {"build", "b1"}};
    const auto hit = cache.get(cache_key(other, io::Json{{"q", 5}}), req(5));
    ASSERT_TRUE(hit.has_value());
    EXPECT_EQ(hit->content, "caf\u00e9 \"quoted\"\nline");
    EXPECT_EQ(hit->reasoning, "thinking");
    EXPECT_EQ(hit->finish_reason, "length");
    EXPECT_EQ(hit->system_fingerprint, "fp");
    EXPECT_EQ(hit->timings, (io::Json{{"predicted_ms", 1.5}}));
    EXPECT_EQ(sql(path, fmt::format("SELECT hits FROM entries WHERE key = '{}'", key(1))), "2");
    EXPECT_EQ(sql(path, fmt::format("SELECT identity FROM entries WHERE key = '{}'", key(0))),
              R"({"model":"m"})");
  }
  EXPECT_EQ(io::read_file(dir_ / "responses.cache"), entries_before);
  sql(path, fmt::format("DELETE FROM entries WHERE key = '{}'", key(0)));
  EXPECT_EQ(served(path, 0, 5), 4);  // opened again: nothing copied twice
  EXPECT_EQ(ResponseCache(path).stats().entries, 5u);
}

// A damaged store is copied as far as it is whole: a record whose completion was changed fails its
// check and is left out, bytes that are no record (garbage, a record torn by a crash at the end) are
// passed over, and without its index the entries come without hits.
TEST_F(CacheTest, ADamagedStoreIsCopiedAsFarAsItIsWhole) {
  copy_fixture(dir_);
  std::string entries = io::read_file(dir_ / "responses.cache");
  const std::size_t at = entries.find("answer 3");
  ASSERT_NE(at, std::string::npos);
  entries[at] = 'A';
  const std::size_t second = entries.find("CNR1", 20);
  ASSERT_NE(second, std::string::npos);
  entries.insert(second, "garbage CNR1 \x05\x00");
  entries += entries.substr(second, 40);  // a torn record at the end
  io::write_file_atomic(dir_ / "responses.cache", entries);
  fs::remove(dir_ / "responses.cache.index");
  const fs::path path = default_cache_path(dir_);
  ResponseCache cache(path);
  EXPECT_EQ(cache.stats().entries, 5u);
  EXPECT_EQ(cache.stats().hits, 0u);
  EXPECT_FALSE(cache.get(key(3), req(3)).has_value());
  EXPECT_EQ(served(path, 0, 5), 4);
}

// read_store on every cut of the fixture's entries file and index (what a crash or a short copy
// leaves): whatever it returns is a whole record of the fixture, and it never reads past the bytes.
TEST_F(CacheTest, ReadingAStoreCutAnywhereFindsOnlyItsWholeRecords) {
  const fs::path d = fs::path(NUMCHECK_SOURCE_DIR) / "tests/llm/data/store_cache";
  const std::string entries = io::read_file(d / "responses.cache");
  const std::string index = io::read_file(d / "responses.cache.index");
  std::vector<std::string> keys;
  EXPECT_EQ(
      detail::read_store(entries, index, [&](const detail::StoreRecord& r) { keys.emplace_back(r.key); }),
      7u);
  for (std::size_t cut = 0; cut <= entries.size(); ++cut) {
    const std::string part = entries.substr(0, cut);  // its own buffer: a read past it is caught by ASan
    const std::string part_index = index.substr(0, std::min(cut, index.size()));
    std::size_t n = 0;
    (void)detail::read_store(part, part_index, [&](const detail::StoreRecord& r) {
      EXPECT_EQ(r.key, keys[n]) << cut;
      ++n;
    });
  }
  EXPECT_EQ(detail::read_store("not a cache", index, [](const detail::StoreRecord&) {}), 0u);
}

// A store's entries file of answers 0 .. n-1, written with the format as docs/runner.md describes
// it: a header, then per record the magic number "CNR1", the length of the rest and seven fields of
// a length and bytes each (all little-endian).
void write_store(const fs::path& path, int n) {
  const auto le32 = [](std::string& out, std::size_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xffU));
  };
  std::string file = "numcheck-cache1\n";
  for (int i = 0; i < n; ++i) {
    const auto e = ResponseCache::make_entry(key(i), req(i), answer(i, 300));
    const std::string fields[] = {
        e.key, e.request_sha256, e.check, "m", R"({"model":"m"})", "2026-11-01T00:00:00Z", e.completion};
    std::string rest;
    for (const auto& f : fields) {
      le32(rest, f.size());
      rest += f;
    }
    file += "CNR1";
    le32(file, rest.size());
    file += rest;
  }
  io::write_file_atomic(path, file);
}

// The copy of a store is one transaction: a process killed in the middle of it leaves no entry of
// it (and no version), and the next open copies the whole store.
TEST_F(CacheTest, AProcessKilledWhileCopyingAStoreLeavesItForTheNextOpen) {
  constexpr int kEntries = 40000;
  write_store(dir_ / "responses.cache", kEntries);
  const fs::path path = default_cache_path(dir_);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    try {
      ResponseCache cache(path);
    } catch (...) {  // NOLINT(bugprone-empty-catch): the child's end is its exit
    }
    ::_exit(0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  ::kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  if (!WIFSIGNALED(status)) GTEST_SKIP() << "the copy ended before the kill";
  if (fs::exists(path)) {
    EXPECT_EQ(sql(path, "PRAGMA integrity_check"), "ok");
    EXPECT_EQ(sql(path, "PRAGMA user_version"), "0");
  }
  EXPECT_EQ(ResponseCache(path).stats().entries, static_cast<std::uint64_t>(kEntries));
  EXPECT_EQ(served(path, kEntries - 5, kEntries), 5);
}

// A SQLite cache of the numcheck versions before the store (an `entries` table with key_prefix, or
// before it a `responses` table) at the database's path is converted in place once: its rows with a
// check served with their hits, rows without one left out, its tables gone.
TEST_F(CacheTest, AnEarlierSqliteCacheIsConvertedInPlace) {
  const fs::path path = default_cache_path(dir_);
  std::string rows;
  for (int i = 0; i < 3; ++i) {
    const auto e = ResponseCache::make_entry(key(i), req(i), answer(i));
    rows += fmt::format(
        "INSERT INTO entries VALUES ({}, '{}', 'm', '{{\"model\":\"m\"}}', '{}', '2026-11-01T00:00:00Z', {}, "
        "'{}', {});",
        i, e.key, e.completion, i + 1, e.request_sha256, i == 2 ? "NULL" : "'" + e.check + "'");
    rows += fmt::format(
        "INSERT INTO responses VALUES ('{}', 'm', '{{}}', '{}', '2026-10-01T00:00:00Z', 5, '{}', '{}');",
        key(i + 10), ResponseCache::make_entry(key(i + 10), req(i + 10), answer(i + 10)).completion,
        req(i + 10), ResponseCache::make_entry(key(i + 10), req(i + 10), answer(i + 10)).check);
  }
  sql(path,
      "CREATE TABLE entries (key_prefix INTEGER NOT NULL, key TEXT NOT NULL, model TEXT NOT NULL, identity "
      "TEXT "
      "NOT NULL, completion TEXT NOT NULL, created TEXT NOT NULL, hits INTEGER NOT NULL DEFAULT 0, "
      "request_sha256 "
      "TEXT, check_sha256 TEXT); CREATE UNIQUE INDEX entries_key_prefix ON entries(key_prefix);"
      "CREATE INDEX entries_model ON entries(model);"
      "CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT, identity TEXT, completion TEXT, created "
      "TEXT, "
      "hits INTEGER, request_sha256 TEXT, check_sha256 TEXT);" +
          rows);
  {
    ResponseCache cache(path);
    EXPECT_EQ(cache.stats().entries, 5u);
    EXPECT_EQ(cache.stats().hits, 1u + 2u + 15u);
  }
  EXPECT_EQ(served(path, 0, 3), 2);
  EXPECT_EQ(served(path, 10, 13), 3);
  EXPECT_EQ(sql(path, "SELECT group_concat(name, ',') FROM sqlite_master WHERE type = 'table'"), "entries");
}

// A file at the cache's path that is not a numcheck cache (text, another program's database) is an
// error naming it, and is left as it was.
TEST_F(CacheTest, AFileThatIsNotACacheIsAnErrorAndLeftAlone) {
  const fs::path path = dir_ / "responses.sqlite3";
  for (const bool database : {false, true}) {
    fs::remove(path);
    if (database) {
      sql(path, "CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('mine')");
    } else {
      io::write_file_atomic(path, std::string(5000, 'x'));
    }
    const std::string before = io::read_file(path);
    try {
      ResponseCache cache(path);
      ADD_FAILURE() << "opened " << database;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kIo);
      EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    }
    EXPECT_EQ(io::read_file(path), before);
    ResponseCache run(path, ResponseCache::OnError::kGoOn);  // a run's connection: off, nothing thrown
    EXPECT_NE(run.failure(), "");
    EXPECT_FALSE(run.get(key(0), req(0)).has_value());
  }
}

// A full disk (here the database may not grow: max_page_count, SQLITE_FULL as on a full disk): the
// commit that needs room fails whole (none of its answers stored, the earlier ones still served).
// A `cache` command's connection throws naming the cache; a run's connection turns off and goes on:
// its later lookups miss and its puts and commits are dropped, nothing thrown.
TEST_F(CacheTest, AFullDiskFailsTheCommitWholeAndARunsConnectionGoesOn) {
  const fs::path path = default_cache_path(dir_);
  {
    ResponseCache first(path);
    fill(first, 0, 10);
  }
  {
    ResponseCache cache(path);
    cache.set_max_pages(1);  // no more pages than now
    for (int i = 10; i < 60; ++i) cache.put(key(i), req(i), "m", kIdentity, answer(i, 500));
    try {
      cache.commit();
      ADD_FAILURE() << "the full disk was not noticed";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kIo);
      EXPECT_NE(std::string(e.what()).find("full"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(served(path, 0, 60), 10);
  {
    ResponseCache run(path, ResponseCache::OnError::kGoOn);
    run.set_max_pages(1);
    EXPECT_TRUE(run.get(key(3), req(3)).has_value());
    for (int i = 10; i < 60; ++i) run.put(key(i), req(i), "m", kIdentity, answer(i, 500));
    run.commit();  // fails: the connection turns off
    EXPECT_NE(run.failure().find("full"), std::string::npos) << run.failure();
    EXPECT_FALSE(run.get(key(3), req(3)).has_value());
    run.put(key(70), req(70), "m", kIdentity, answer(70));
    run.commit();
    EXPECT_EQ(run.stats().entries, 0u);
  }
  EXPECT_EQ(served(path, 0, 71), 10);
  // A fresh cache on a full disk cannot even be made: the run's connection is off from the start.
  const fs::path fresh = dir_ / "fresh" / "responses.sqlite3";
  ::setenv("NUMCHECK_CACHE_MAX_PAGES", "1", 1);
  ResponseCache run(fresh, ResponseCache::OnError::kGoOn);
  ::unsetenv("NUMCHECK_CACHE_MAX_PAGES");
  EXPECT_NE(run.failure().find("full"), std::string::npos) << run.failure();
  fill(run, 0, 3);
}

// Processes writing one cache at once (each its own connection and batches) lose nothing: every
// entry of each is served afterwards, and the database is whole.
TEST_F(CacheTest, ProcessesWritingAtOnceLoseNothing) {
  const fs::path path = default_cache_path(dir_);
  { ResponseCache make(path); }
  constexpr int kWriters = 3, kEach = 600;
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 0;
      try {
        ResponseCache cache(path);
        cache.set_batch_size(50);
        for (int i = w * kEach; i < (w + 1) * kEach; ++i) {
          cache.put(key(i), req(i), "m", kIdentity, answer(i));
          if (i % 7 == 0) (void)cache.get(key(i - 1), req(i - 1));
        }
        cache.commit();
      } catch (...) {
        code = 1;
      }
      ::_exit(code);
    }
    children.push_back(pid);
  }
  for (const pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  EXPECT_EQ(served(path, 0, kWriters * kEach), kWriters * kEach);
  EXPECT_EQ(sql(path, "PRAGMA integrity_check"), "ok");
}

// A process killed (SIGKILL) at any moment, in the middle of a commit or not, leaves a whole
// database: every commit is there entirely or not at all (the entries are a multiple of the batch),
// every entry is served with its own answer, and the next process writes on.
TEST_F(CacheTest, AProcessKilledAtAnyMomentLeavesAWholeCache) {
  const fs::path path = default_cache_path(dir_);
  constexpr int kBatch = 200;
  { ResponseCache make(path); }
  for (int round = 0; round < 8; ++round) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      try {
        ResponseCache cache(path);
        cache.set_batch_size(kBatch);
        for (int i = round * 100000;; ++i) cache.put(key(i), req(i), "m", kIdentity, answer(i, 2000));
      } catch (...) {
        ::_exit(1);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + 37 * round));
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << round;
    EXPECT_EQ(sql(path, "PRAGMA integrity_check"), "ok") << round;
    EXPECT_EQ(std::stoi(sql(path, "SELECT count(*) FROM entries")) % kBatch, 0) << round;
  }
  // Every stored entry is served with its own answer: each round's keys were stored in order, whole
  // batches, so what is stored of a round is a run of keys from its first.
  int total = 0;
  {
    ResponseCache check(path);
    for (int round = 0; round < 8; ++round) {
      for (int i = round * 100000;; ++i) {
        const auto hit = check.get(key(i), req(i));
        if (!hit) break;
        ASSERT_TRUE(is_answer(hit->content, i)) << hit->content;
        ++total;
      }
    }
    EXPECT_EQ(check.rejected(), 0u);
  }
  EXPECT_EQ(total, std::stoi(sql(path, "SELECT count(*) FROM entries")));
  EXPECT_GT(total, 0);
  ResponseCache after(path);
  fill(after, -5, 0);
  EXPECT_EQ(served(path, -5, 0), 5);
}

}  // namespace
}  // namespace numcheck::llm
