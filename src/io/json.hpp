#pragma once
// The one JSON/JSONL layer of numcheck. Every library reads and writes JSON through it:
//
//  - parsing: `parse_json` (throws Error) and `try_parse_json` (returns the error as a value);
//    errors name the file, line and column;
//  - typed field access: `Record` (an object plus where it came from) with string, integer (with
//    a range check), number, bool, optional, list and nested-object accessors whose errors name
//    the file, line and field, so that a bad data file never surfaces as "internal error";
//  - JSONL reading: `read_jsonl`, streaming record by record under one rule for blank and torn
//    lines (below);
//  - writing: `to_line` (one JSONL record) and `to_pretty` (manifests), both never throwing on
//    invalid UTF-8.
//
// The JSONL rule (every reader in numcheck follows it):
//  1. A line that holds only spaces, tabs or "\r" is blank: skipped and counted
//     (JsonlStats::blank_lines), never an error.
//  2. A terminated line (ending in "\n") that is not a JSON object is malformed: an Error naming
//     "file:line" ("not valid JSON (...)" or "not a JSON object"), or, when the caller passes
//     `on_bad_line`, a JsonError value handed to it while reading goes on.
//  3. An unterminated last line is a torn record when it does not parse as a JSON object (a
//     crash cut it: a truncated object never parses). Torn records are never records; they are
//     counted (JsonlStats::torn_line/torn_bytes) and, under TornTail::kError (the default),
//     reported as an error "file:N: last line is not terminated (torn by a crash?)". An
//     unterminated last line that is a complete object is a record (files written by other tools
//     often lack the final newline) -- except under TornTail::kAppendLog, for files numcheck
//     appends to itself, where any unterminated tail is torn and left for repair_torn_tail.
//
// The record callback sees only `Record`, whose accessors do not expose the parser; a faster
// parser (simdjson on-demand) can be put behind `read_jsonl` for hot paths without changing its
// callers. `Record::json()` is the escape hatch for code that needs the whole value.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

namespace numcheck::io {

using Json = nlohmann::json;                 // objects with sorted keys (hashing, comparison)
using OrderedJson = nlohmann::ordered_json;  // objects in insertion order (records we write)

// ------------------------------------------------------------------------------ errors as values

// What is wrong and where: `where` is "file:line" (or "file", or "" for text from memory),
// `field` the dotted path of the field at fault ("usage.completion_tokens", "" for the record).
struct JsonError {
  std::string where;
  std::string field;
  std::string message;  // "must be a string", "not valid JSON (...)", ...
  bool torn = false;    // an unterminated last line (rule 3)

  // "where: field 'f' message" or "where: message"; never starts with ": " when where is empty.
  [[nodiscard]] std::string what() const;
  // Throws Error(kInvalidInput, what()).
  [[noreturn]] void raise() const;
};

template <typename J>
struct JsonResult {
  std::optional<J> value;
  JsonError error;  // meaningful when !value
  [[nodiscard]] bool ok() const noexcept { return value.has_value(); }
};

// ------------------------------------------------------------------------------ parsing

// Parses text; `where` ("responses.jsonl:12") prefixes the error message. Never throws.
[[nodiscard]] JsonResult<Json> try_parse_json(std::string_view text, std::string_view where);
[[nodiscard]] JsonResult<OrderedJson> try_parse_ordered_json(std::string_view text, std::string_view where);
// The same, throwing Error ("where: invalid JSON at line L, column C: ...").
[[nodiscard]] Json parse_json(std::string_view text, std::string_view where);
[[nodiscard]] OrderedJson parse_ordered_json(std::string_view text, std::string_view where);
// Reads and parses a whole JSON file.
[[nodiscard]] Json read_json_file(const std::filesystem::path& path);
[[nodiscard]] OrderedJson read_ordered_json_file(const std::filesystem::path& path);

// ------------------------------------------------------------------------------ writing

// Compact one-line form; invalid UTF-8 in strings is replaced with U+FFFD, never thrown on.
[[nodiscard]] std::string to_line(const Json& j);
[[nodiscard]] std::string to_line(const OrderedJson& j);
// Indented form for manifests and reports (2 spaces, trailing newline).
[[nodiscard]] std::string to_pretty(const OrderedJson& j);
[[nodiscard]] std::string to_pretty(const Json& j);

// ------------------------------------------------------------------------------ typed access

// A JSON object and where it came from. Accessors throw Error naming where and the field:
//   Record r = Record::of(j, "views.jsonl:7");
//   std::string id = r.string("prompt_id");               // missing or not a string: Error
//   auto n = r.integer("tokens", 0);                       // integer >= 0 (and <= INT64_MAX)
//   Record usage = r.object("usage");  usage.integer("completion_tokens", 0);
//     -> "views.jsonl:7: field 'usage.completion_tokens' must be an integer >= 0"
// The `opt_` accessors return nullopt for an absent field and for null. The Record refers to the
// JSON value, which must outlive it.
template <typename J>
class BasicRecord {
 public:
  using Int = std::int64_t;
  static constexpr Int kMinInt = std::numeric_limits<Int>::min();
  static constexpr Int kMaxInt = std::numeric_limits<Int>::max();

  // Checks that j is an object ("where: expected a JSON object" otherwise).
  [[nodiscard]] static BasicRecord of(const J& j, std::string_view where);
  [[nodiscard]] static std::optional<BasicRecord> try_of(const J& j, std::string_view where,
                                                         JsonError& error);

  [[nodiscard]] const J& json() const noexcept { return *j_; }
  [[nodiscard]] const std::string& where() const noexcept { return where_; }
  // The dotted path of a field of this record ("usage.completion_tokens").
  [[nodiscard]] std::string path(std::string_view key) const;

  [[nodiscard]] bool contains(std::string_view key) const;  // present, maybe null
  [[nodiscard]] bool has(std::string_view key) const;       // present and not null
  [[nodiscard]] const J* find(std::string_view key) const;  // nullptr when absent
  [[nodiscard]] const J& at(std::string_view key) const;    // Error when absent

  [[nodiscard]] std::string string(std::string_view key) const;
  [[nodiscard]] std::optional<std::string> opt_string(std::string_view key) const;
  [[nodiscard]] Int integer(std::string_view key, Int min = kMinInt, Int max = kMaxInt) const;
  [[nodiscard]] std::optional<Int> opt_integer(std::string_view key, Int min = kMinInt,
                                               Int max = kMaxInt) const;
  // A non-negative integer up to max (for seeds and counts that may exceed INT64_MAX).
  [[nodiscard]] std::uint64_t unsigned_integer(
      std::string_view key, std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) const;
  [[nodiscard]] double number(std::string_view key) const;
  [[nodiscard]] std::optional<double> opt_number(std::string_view key) const;
  [[nodiscard]] bool boolean(std::string_view key) const;
  [[nodiscard]] std::optional<bool> opt_boolean(std::string_view key) const;
  // A list of strings (an empty list is fine).
  [[nodiscard]] std::vector<std::string> strings(std::string_view key) const;
  // strings(key).size(), under the same check, without copying the strings.
  [[nodiscard]] std::size_t string_count(std::string_view key) const;
  [[nodiscard]] std::optional<std::vector<std::string>> opt_strings(std::string_view key) const;
  // A nested object; its errors name "outer.inner".
  [[nodiscard]] BasicRecord object(std::string_view key) const;
  [[nodiscard]] std::optional<BasicRecord> opt_object(std::string_view key) const;
  // A list of objects; element i's errors name "key[i].inner".
  [[nodiscard]] std::vector<BasicRecord> objects(std::string_view key) const;
  // A list (of anything); Error when the field is missing or not a list.
  [[nodiscard]] const J& array(std::string_view key) const;

  // The error for a field, as a value or thrown: "where: field 'path' message".
  [[nodiscard]] JsonError field_error(std::string_view key, std::string_view message) const;
  [[noreturn]] void fail_field(std::string_view key, std::string_view message) const;

 private:
  BasicRecord(const J& j, std::string where, std::string prefix)
      : j_(&j), where_(std::move(where)), prefix_(std::move(prefix)) {}
  const J* j_;
  std::string where_;
  std::string prefix_;  // "usage." for a nested record
};

using Record = BasicRecord<Json>;
using OrderedRecord = BasicRecord<OrderedJson>;

// Legacy one-liners over Record (kept for plain objects without a Record at hand).
[[nodiscard]] const Json& require(const Json& obj, std::string_view key, std::string_view where);
[[nodiscard]] std::string require_string(const Json& obj, std::string_view key, std::string_view where);

// ------------------------------------------------------------------------------ JSONL reading

enum class TornTail {
  kError,      // a torn last line is an error (or handed to on_bad_line)
  kAppendLog,  // any unterminated tail is torn, counted and skipped (files numcheck appends to)
};

struct JsonlStats {
  std::size_t lines = 0;        // lines seen, including blank and torn ones
  std::size_t records = 0;      // records handed to the callback
  std::size_t blank_lines = 0;  // rule 1
  std::size_t bad_lines = 0;    // rule 2, handed to on_bad_line
  std::size_t torn_line = 0;    // rule 3: the torn line's number, 0 when none
  std::size_t torn_bytes = 0;   // its length in bytes
};

template <typename J>
struct BasicJsonlOptions {
  TornTail torn = TornTail::kError;
  // When set, malformed and torn lines are handed here (with their line number) and reading
  // goes on; otherwise they are thrown as Error.
  std::function<void(const JsonError&, std::size_t line)> on_bad_line;
};

// Streams the file record by record (memory: one line). fn(record, line_number). A missing file
// is Error(kIo) "path: file not found". read_jsonl(path, fn) reads into Json (sorted keys);
// read_jsonl<OrderedJson>(path, fn) keeps each object's key order.
template <typename J = Json>
JsonlStats read_jsonl(const std::filesystem::path& path,
                      const std::type_identity_t<std::function<void(const BasicRecord<J>&, std::size_t)>>& fn,
                      const BasicJsonlOptions<J>& options = {});

using JsonlOptions = BasicJsonlOptions<Json>;
using OrderedJsonlOptions = BasicJsonlOptions<OrderedJson>;

// The same over text in memory; `name` stands for the file in messages.
template <typename J = Json>
JsonlStats read_jsonl_text(
    std::string_view text, std::string_view name,
    const std::type_identity_t<std::function<void(const BasicRecord<J>&, std::size_t)>>& fn,
    const BasicJsonlOptions<J>& options = {});

// Parses one line of a JSONL file under the rule above (`terminated`: it ended in "\n"). Returns
// nullopt for a blank line (error.message empty) or a malformed/torn one (error set).
template <typename J>
std::optional<J> parse_jsonl_line(std::string_view text, bool terminated, TornTail torn,
                                  std::string_view where, JsonError& error);

// True for a line holding only spaces, tabs and "\r".
[[nodiscard]] bool is_blank_line(std::string_view text) noexcept;

// ------------------------------------------------------------------------------ fast JSONL reading

// The hot readers (responses in `orbit score`, score files in `orbit report`) read through
// read_jsonl_fast: simdjson parses each line (its DOM parser, whose SIMD kernels are chosen at
// run time; Debian's simdjson 3.0.1 header builds the on-demand API only for the compile-time
// target, which without -mavx2 is its scalar kernel), the parse is walked once into a flat list
// of values (strings unescaped, numbers classified as nlohmann classifies them), and the callback
// reads it through LineRecord, whose accessors and errors are Record's.
// Same JSONL rule, same stats, same errors: a line the walk does not accept (invalid JSON, a
// duplicate key, a control byte, a \uD800-\uDFFF escape, anything simdjson refuses, a value that is
// not an object) is parsed by nlohmann instead, which gives the error of read_jsonl or, for a line
// it accepts, the record (duplicate keys: the last one, as nlohmann keeps). So a line is a record
// exactly when read_jsonl would make it one, with the same values; fuzz/fuzz_jsonl_line.cpp checks
// that the walk never accepts a line nlohmann refuses and never reads other values.

// One value of a line: pre-order, a container's members follow it up to `end`.
struct FlatValue {
  enum class Kind : std::uint8_t { kNull, kBool, kUnsigned, kInteger, kFloat, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  std::uint64_t u = 0;    // kUnsigned
  std::int64_t i = 0;     // kInteger
  double d = 0;           // kFloat
  std::string_view key;   // member name (object members)
  std::string_view text;  // kString: the unescaped string
  std::uint32_t end = 0;  // index one past the last value inside this one

  [[nodiscard]] bool is_null() const noexcept { return kind == Kind::kNull; }
  [[nodiscard]] bool is_object() const noexcept { return kind == Kind::kObject; }
  [[nodiscard]] bool is_array() const noexcept { return kind == Kind::kArray; }
  [[nodiscard]] bool is_string() const noexcept { return kind == Kind::kString; }
  [[nodiscard]] bool is_number() const noexcept {
    return kind == Kind::kUnsigned || kind == Kind::kInteger || kind == Kind::kFloat;
  }
  [[nodiscard]] bool operator==(const FlatValue& o) const noexcept;
};

// A record of read_jsonl_fast: Record's accessors over a line's flat values (valid during the
// callback only). `find` gives the value (nullptr when absent) to test its kind.
class LineRecord {
 public:
  using Int = std::int64_t;
  static constexpr Int kMinInt = std::numeric_limits<Int>::min();
  static constexpr Int kMaxInt = std::numeric_limits<Int>::max();

  LineRecord(const std::vector<FlatValue>& values, std::size_t object, std::string_view where,
             std::string prefix = "")
      : v_(&values), at_(object), where_(where), prefix_(std::move(prefix)) {}
  // The same record with another `where` ("" for errors without a place).
  [[nodiscard]] LineRecord with_where(std::string_view where) const { return {*v_, at_, where, prefix_}; }

  [[nodiscard]] std::string_view where() const noexcept { return where_; }
  [[nodiscard]] std::string path(std::string_view key) const { return prefix_ + std::string(key); }
  // The line's values (this record is values()[index()]).
  [[nodiscard]] const std::vector<FlatValue>& values() const noexcept { return *v_; }
  [[nodiscard]] std::size_t index() const noexcept { return at_; }
  [[nodiscard]] const FlatValue* find(std::string_view key) const;
  [[nodiscard]] bool contains(std::string_view key) const { return find(key) != nullptr; }
  [[nodiscard]] bool has(std::string_view key) const;
  [[nodiscard]] const FlatValue& at(std::string_view key) const;
  // The member names, in the line's order.
  [[nodiscard]] std::vector<std::string_view> keys() const;

  [[nodiscard]] std::string string(std::string_view key) const;
  [[nodiscard]] std::string_view string_view(std::string_view key) const;  // valid during the callback
  [[nodiscard]] std::optional<std::string> opt_string(std::string_view key) const;
  // opt_string without a copy (valid during the callback).
  [[nodiscard]] std::optional<std::string_view> opt_string_view(std::string_view key) const;
  [[nodiscard]] Int integer(std::string_view key, Int min = kMinInt, Int max = kMaxInt) const;
  [[nodiscard]] std::optional<Int> opt_integer(std::string_view key, Int min = kMinInt,
                                               Int max = kMaxInt) const;
  [[nodiscard]] double number(std::string_view key) const;
  [[nodiscard]] bool boolean(std::string_view key) const;
  [[nodiscard]] std::optional<bool> opt_boolean(std::string_view key) const;
  [[nodiscard]] std::vector<std::string> strings(std::string_view key) const;
  // strings(key).size(), under the same check, without copying the strings.
  [[nodiscard]] std::size_t string_count(std::string_view key) const;
  [[nodiscard]] std::optional<std::vector<std::string>> opt_strings(std::string_view key) const;
  [[nodiscard]] LineRecord object(std::string_view key) const;
  [[nodiscard]] std::optional<LineRecord> opt_object(std::string_view key) const;

  [[nodiscard]] JsonError field_error(std::string_view key, std::string_view message) const;
  [[noreturn]] void fail_field(std::string_view key, std::string_view message) const;

 private:
  const std::vector<FlatValue>* v_;
  std::size_t at_;
  std::string_view where_;
  std::string prefix_;
  // Where find starts: the member after the one it found last (a lookup cache, so a record is used
  // on one thread at a time, as during its callback).
  mutable std::size_t next_ = 0;
};

// read_jsonl with LineRecord (see above). Same rule, options (torn tail, on_bad_line) and stats.
JsonlStats read_jsonl_fast(const std::filesystem::path& path,
                           const std::function<void(const LineRecord&, std::size_t)>& fn,
                           const JsonlOptions& options = {});
JsonlStats read_jsonl_fast_text(std::string_view text, std::string_view name,
                                const std::function<void(const LineRecord&, std::size_t)>& fn,
                                const JsonlOptions& options = {});

// read_jsonl_fast on several threads, for callers whose work per record is independent (orbit
// score grades each response, the benchmark index checks each view): the calling thread reads the
// file in blocks of whole lines (about 1 MiB; LineBlockReader) and numbers their lines; worker
// threads parse a block's lines under the same rule as read_jsonl_fast and call on_record (or
// on_bad_line) for them in order; the calling thread then calls on_block for each block in file
// order. `slot` (below parallel_jsonl_slots(threads)) names the block's place in a ring in which
// the caller keeps what its callbacks produce per block: a slot is handed out again only after
// on_block(slot) returned, and only one thread at a time works on a slot.
// Errors: an exception from on_record (or a bad line without on_bad_line) ends its block's work;
// on_block is still called for that block (with what came before the error) and the exception is
// then rethrown on the calling thread; later blocks are dropped. So the error given is the first in
// file order, after exactly the records the sequential reader would have handed out before it.
// threads == 1 does all of it on the calling thread. Same stats as read_jsonl_fast.
struct ParallelJsonl {
  std::size_t threads = 1;
  TornTail torn = TornTail::kError;
  std::function<void(std::size_t slot, const LineRecord& record, std::size_t line)> on_record;  // workers
  // When set, malformed and torn lines go here (workers) and reading goes on; otherwise thrown.
  std::function<void(std::size_t slot, const JsonError& error, std::size_t line)> on_bad_line;
  std::function<void(std::size_t slot)> on_block;  // the calling thread, blocks in file order
  // Every byte of the file once, in order: on a thread of its own while the blocks are parsed
  // (the calling thread when threads == 1); done before read_jsonl_fast_parallel returns.
  std::function<void(std::string_view bytes)> on_bytes;
  std::size_t block_bytes = std::size_t{1} << 20;
};
[[nodiscard]] std::size_t parallel_jsonl_slots(std::size_t threads) noexcept;
JsonlStats read_jsonl_fast_parallel(const std::filesystem::path& path, const ParallelJsonl& how);

// The two parse paths of read_jsonl_fast, exposed for the fuzzer and the tests: the simdjson walk
// of one line (false when it does not accept it: the caller falls back to nlohmann) and the flat
// form of a parsed nlohmann value (its strings stay in `j`).
class FastLineParser {
 public:
  FastLineParser();
  ~FastLineParser();
  FastLineParser(const FastLineParser&) = delete;
  FastLineParser& operator=(const FastLineParser&) = delete;
  // `readable_after`: bytes after the line that may be read, not parsed (the rest of its block):
  // with 64 or more (simdjson's padding) the line is parsed where it lies, else from a copy.
  [[nodiscard]] bool walk(std::string_view line, std::vector<FlatValue>& out, std::size_t readable_after = 0);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};
void flatten(const OrderedJson& j, std::vector<FlatValue>& out);
// The other way: the value at values[index] (and what it holds) as a Json, the value nlohmann
// would have parsed from the same text (number kinds kept; object members sorted, as Json keeps them).
[[nodiscard]] Json unflatten(const std::vector<FlatValue>& values, std::size_t index);

namespace detail {
// "must be a non-negative integer", "must be an integer from a to b", ...: Record's integer rule.
[[nodiscard]] std::string integer_rule(std::int64_t min, std::int64_t max);
}  // namespace detail

}  // namespace numcheck::io
