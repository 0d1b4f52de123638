// read_jsonl_fast: the JSONL rule of json.hpp on simdjson (DOM parser, run-time dispatched kernels), with
// nlohmann as the fallback for every line the walk does not accept (see json.hpp).
#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "core/error.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "io/jsonl_rule.hpp"
#include "io/ordered_bytes.hpp"

namespace numcheck::io {

using Kind = FlatValue::Kind;

bool FlatValue::operator==(const FlatValue& o) const noexcept {
  if (key != o.key || end != o.end) return false;
  // Integers by value: "-0" is signed to nlohmann and may be unsigned here; every accessor gives 0.
  const auto integral = [](const FlatValue& f) {
    return f.kind == Kind::kUnsigned || f.kind == Kind::kInteger;
  };
  if (integral(*this) && integral(o)) {
    if (kind == o.kind) return kind == Kind::kUnsigned ? u == o.u : i == o.i;
    const FlatValue& s = kind == Kind::kInteger ? *this : o;  // the signed one
    const FlatValue& n = kind == Kind::kInteger ? o : *this;
    return s.i >= 0 && static_cast<std::uint64_t>(s.i) == n.u;
  }
  if (kind != o.kind) return false;
  switch (kind) {
    case Kind::kBool:
      return boolean == o.boolean;
    case Kind::kFloat:
      // Bit for bit, kept as written: 0.0 and -0.0 differ and a NaN equals itself, which == on
      // doubles would not give (the check's concern about such values is the behaviour wanted).
      return std::memcmp(&d, &o.d, sizeof d) == 0;  // NOLINT(bugprone-suspicious-memory-comparison)
    case Kind::kString:
      return text == o.text;
    default:
      return true;
  }
}

// ------------------------------------------------------------------------------ LineRecord

const FlatValue* LineRecord::find(std::string_view key) const {
  const auto& v = *v_;
  const std::size_t first = at_ + 1;
  const std::size_t end = v[at_].end;
  // A record's members are unique (the walk refuses duplicates, as nlohmann keeps only the last).
  // Readers mostly ask for them in the line's order: the search starts after the member found
  // last (a member's end is where the next begins) and wraps around.
  const std::size_t start = next_ > first && next_ < end ? next_ : first;
  for (std::size_t c = start; c < end; c = v[c].end) {
    if (v[c].key == key) {
      next_ = v[c].end;
      return &v[c];
    }
  }
  for (std::size_t c = first; c < start; c = v[c].end) {
    if (v[c].key == key) {
      next_ = v[c].end;
      return &v[c];
    }
  }
  return nullptr;
}

std::vector<std::string_view> LineRecord::keys() const {
  std::vector<std::string_view> out;
  const auto& v = *v_;
  for (std::size_t c = at_ + 1; c < v[at_].end; c = v[c].end) out.push_back(v[c].key);
  return out;
}

bool LineRecord::has(std::string_view key) const {
  const FlatValue* f = find(key);
  return f != nullptr && !f->is_null();
}

const FlatValue& LineRecord::at(std::string_view key) const {
  const FlatValue* f = find(key);
  if (f == nullptr) {
    if (where_.empty()) fail("missing field '{}'", path(key));
    fail("{}: missing field '{}'", where_, path(key));
  }
  return *f;
}

JsonError LineRecord::field_error(std::string_view key, std::string_view message) const {
  return {std::string(where_), path(key), std::string(message)};
}

void LineRecord::fail_field(std::string_view key, std::string_view message) const {
  field_error(key, message).raise();
}

std::string_view LineRecord::string_view(std::string_view key) const {
  const FlatValue& f = at(key);
  if (!f.is_string()) fail_field(key, "must be a string");
  return f.text;
}

std::string LineRecord::string(std::string_view key) const { return std::string(string_view(key)); }

std::optional<std::string_view> LineRecord::opt_string_view(std::string_view key) const {
  const FlatValue* f = find(key);
  if (f == nullptr || f->is_null()) return std::nullopt;
  if (!f->is_string()) fail_field(key, "must be a string or null");
  return f->text;
}

std::optional<std::string> LineRecord::opt_string(std::string_view key) const {
  if (const auto v = opt_string_view(key)) return std::string(*v);
  return std::nullopt;
}

LineRecord::Int LineRecord::integer(std::string_view key, Int min, Int max) const {
  const FlatValue& f = at(key);
  Int n = 0;
  if (f.kind == Kind::kUnsigned) {
    if (f.u > static_cast<std::uint64_t>(kMaxInt)) fail_field(key, detail::integer_rule(min, max));
    n = static_cast<Int>(f.u);
  } else if (f.kind == Kind::kInteger) {
    n = f.i;
  } else {
    fail_field(key, detail::integer_rule(min, max));
  }
  if (n < min || n > max) fail_field(key, detail::integer_rule(min, max));
  return n;
}

std::optional<LineRecord::Int> LineRecord::opt_integer(std::string_view key, Int min, Int max) const {
  if (!has(key)) return std::nullopt;
  return integer(key, min, max);
}

double LineRecord::number(std::string_view key) const {
  const FlatValue& f = at(key);
  switch (f.kind) {
    case Kind::kUnsigned:
      return static_cast<double>(f.u);
    case Kind::kInteger:
      return static_cast<double>(f.i);
    case Kind::kFloat:
      return f.d;
    default:
      fail_field(key, "must be a number");
  }
}

bool LineRecord::boolean(std::string_view key) const {
  const FlatValue& f = at(key);
  if (f.kind != Kind::kBool) fail_field(key, "must be true or false");
  return f.boolean;
}

std::optional<bool> LineRecord::opt_boolean(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return boolean(key);
}

std::vector<std::string> LineRecord::strings(std::string_view key) const {
  std::vector<std::string> out;
  out.reserve(string_count(key));  // checks that it is a list of strings
  const FlatValue& f = at(key);
  const auto& v = *v_;
  for (std::size_t c = static_cast<std::size_t>(&f - v.data()) + 1; c < f.end; c = v[c].end) {
    out.emplace_back(v[c].text);
  }
  return out;
}

std::size_t LineRecord::string_count(std::string_view key) const {
  const FlatValue& f = at(key);
  if (!f.is_array()) fail_field(key, "must be a list of strings");
  std::size_t n = 0;
  const auto& v = *v_;
  for (std::size_t c = static_cast<std::size_t>(&f - v.data()) + 1; c < f.end; c = v[c].end) {
    if (!v[c].is_string()) fail_field(key, "must be a list of strings");
    ++n;
  }
  return n;
}

std::optional<std::vector<std::string>> LineRecord::opt_strings(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return strings(key);
}

LineRecord LineRecord::object(std::string_view key) const {
  const FlatValue& f = at(key);
  if (!f.is_object()) fail_field(key, "must be an object");
  return {*v_, static_cast<std::size_t>(&f - v_->data()), where_, path(key) + "."};
}

std::optional<LineRecord> LineRecord::opt_object(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return object(key);
}

// ------------------------------------------------------------------------------ the two parse paths

namespace {

// `keys` is scratch space (kept by the caller between lines, so no allocation per object).
bool has_duplicate_keys(const std::vector<FlatValue>& v, std::size_t object,
                        std::vector<std::string_view>& keys) {
  keys.clear();
  for (std::size_t c = object + 1; c < v[object].end; c = v[c].end) keys.push_back(v[c].key);
  if (keys.size() < 2) return false;
  if (keys.size() <= 24) {
    // Records have a dozen or two members: every pair, by length before bytes.
    for (std::size_t i = 1; i < keys.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (keys[i].size() == keys[j].size() && keys[i] == keys[j]) return true;
      }
    }
    return false;
  }
  std::sort(keys.begin(), keys.end());
  return std::adjacent_find(keys.begin(), keys.end()) != keys.end();
}

// True when the text holds a byte below 0x20, eight bytes at a time (Anderson's "determine if a
// word has a byte less than n", exact for n <= 128).
bool has_control_byte(std::string_view text) noexcept {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
  const char* p = text.data();
  const std::size_t n = text.size();
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t x = 0;
    std::memcpy(&x, p + i, sizeof x);
    if (((x - kOnes * 0x20) & ~x & kHighs) != 0) return true;
  }
  for (; i < n; ++i) {
    if (static_cast<unsigned char>(p[i]) < 0x20) return true;
  }
  return false;
}

}  // namespace

struct FastLineParser::Impl {
  simdjson::dom::parser parser;        // kernels chosen at run time (AVX2 here, scalar elsewhere)
  std::string buffer;                  // the line with simdjson's padding
  std::vector<std::string_view> keys;  // scratch for the duplicate-key check

  // Appends the element (and what it holds) to out; false when the walk does not accept it.
  bool value(simdjson::dom::element e, std::string_view key, std::vector<FlatValue>& out) {
    using T = simdjson::dom::element_type;
    const std::size_t me = out.size();
    out.emplace_back();
    out[me].key = key;
    switch (e.type()) {
      case T::OBJECT: {
        out[me].kind = Kind::kObject;
        for (const auto [k, v] : simdjson::dom::object(e)) {
          if (!value(v, k, out)) return false;
        }
        out[me].end = static_cast<std::uint32_t>(out.size());
        return !has_duplicate_keys(out, me, keys);  // nlohmann keeps the last: its way
      }
      case T::ARRAY:
        out[me].kind = Kind::kArray;
        for (const auto v : simdjson::dom::array(e)) {
          if (!value(v, {}, out)) return false;
        }
        break;
      case T::STRING:
        out[me].kind = Kind::kString;
        out[me].text = std::string_view(e);
        break;
      case T::INT64: {
        // nlohmann: a non-negative integer is unsigned, a negative one signed.
        const std::int64_t i = std::int64_t(e);
        if (i >= 0) {
          out[me].kind = Kind::kUnsigned;
          out[me].u = static_cast<std::uint64_t>(i);
        } else {
          out[me].kind = Kind::kInteger;
          out[me].i = i;
        }
        break;
      }
      case T::UINT64:
        out[me].kind = Kind::kUnsigned;
        out[me].u = std::uint64_t(e);
        break;
      case T::DOUBLE:
        out[me].kind = Kind::kFloat;
        out[me].d = double(e);
        // simdjson reads the token "-0" as the double -0.0, nlohmann as the integer 0: a negative
        // zero goes to the DOM path, which decides. Every other zero ("0.0", "0e5", "-0.0" aside)
        // is a double to both and stays here (runner records carry "temperature":0.0).
        if (out[me].d == 0 && std::signbit(out[me].d)) return false;
        break;
      case T::BOOL:
        out[me].kind = Kind::kBool;
        out[me].boolean = bool(e);
        break;
      case T::NULL_VALUE:
        out[me].kind = Kind::kNull;
        break;
    }
    out[me].end = static_cast<std::uint32_t>(out.size());
    return true;
  }
};

FastLineParser::FastLineParser() : impl_(std::make_unique<Impl>()) {}
FastLineParser::~FastLineParser() = default;

bool FastLineParser::walk(std::string_view line, std::vector<FlatValue>& out, std::size_t readable_after) {
  out.clear();
  Impl& m = *impl_;
  // The parser's buffers sized for a long line (a 50 MB response), and its copy if one was made, go
  // back at the next shorter line instead of staying with the thread for the rest of the file.
  constexpr std::size_t kKeep = std::size_t{4} << 20;
  if ((m.buffer.capacity() > kKeep || m.parser.capacity() > kKeep) &&
      line.size() + simdjson::SIMDJSON_PADDING <= kKeep) {
    std::string().swap(m.buffer);
    m.parser = simdjson::dom::parser{};
  }
  // What the walk leaves to nlohmann: control bytes (JSON allows none inside strings, and simdjson
  // does not check) and surrogate escapes (nlohmann refuses unpaired ones, simdjson may not).
  if (has_control_byte(line)) return false;  // tabs between tokens too: rare
  for (std::size_t p = line.find("\\u"); p != std::string_view::npos; p = line.find("\\u", p + 2)) {
    if (p + 2 < line.size() && (line[p + 2] == 'd' || line[p + 2] == 'D')) return false;
  }
  const char* text = line.data();
  if (readable_after < simdjson::SIMDJSON_PADDING) {             // simdjson may read that far past the end
    m.buffer.reserve(line.size() + simdjson::SIMDJSON_PADDING);  // one allocation, no copy to grow
    m.buffer.assign(line);
    m.buffer.resize(line.size() + simdjson::SIMDJSON_PADDING, ' ');
    text = m.buffer.data();
  }
  simdjson::dom::element root;
  // The whole line is validated (structure, strings, numbers, nothing after the value).
  if (m.parser.parse(text, line.size(), false).get(root) != simdjson::SUCCESS) return false;
  if (root.type() != simdjson::dom::element_type::OBJECT) return false;
  if (!m.value(root, {}, out)) {
    out.clear();
    return false;
  }
  return true;
}

namespace {

void flatten_into(const OrderedJson& j, std::string_view key, std::vector<FlatValue>& out) {
  const std::size_t me = out.size();
  out.emplace_back();
  out[me].key = key;
  switch (j.type()) {
    case OrderedJson::value_t::object:
      out[me].kind = Kind::kObject;
      for (const auto& [k, v] : j.items()) flatten_into(v, k, out);
      break;
    case OrderedJson::value_t::array:
      out[me].kind = Kind::kArray;
      for (const auto& v : j) flatten_into(v, {}, out);
      break;
    case OrderedJson::value_t::string:
      out[me].kind = Kind::kString;
      out[me].text = j.get_ref<const std::string&>();
      break;
    case OrderedJson::value_t::boolean:
      out[me].kind = Kind::kBool;
      out[me].boolean = j.get<bool>();
      break;
    case OrderedJson::value_t::number_unsigned:
      out[me].kind = Kind::kUnsigned;
      out[me].u = j.get<std::uint64_t>();
      break;
    case OrderedJson::value_t::number_integer:
      out[me].kind = Kind::kInteger;
      out[me].i = j.get<std::int64_t>();
      break;
    case OrderedJson::value_t::number_float:
      out[me].kind = Kind::kFloat;
      out[me].d = j.get<double>();
      break;
    default:
      out[me].kind = Kind::kNull;
      break;
  }
  out[me].end = static_cast<std::uint32_t>(out.size());
}

}  // namespace

void flatten(const OrderedJson& j, std::vector<FlatValue>& out) {
  out.clear();
  flatten_into(j, {}, out);
}

Json unflatten(const std::vector<FlatValue>& values, std::size_t index) {
  const FlatValue& v = values.at(index);
  switch (v.kind) {
    case Kind::kNull:
      return nullptr;
    case Kind::kBool:
      return v.boolean;
    case Kind::kUnsigned:
      return v.u;
    case Kind::kInteger:
      return v.i;
    case Kind::kFloat:
      return v.d;
    case Kind::kString:
      return std::string(v.text);
    case Kind::kArray: {
      Json a = Json::array();
      for (std::size_t i = index + 1; i < v.end; i = values[i].end) a.push_back(unflatten(values, i));
      return a;
    }
    case Kind::kObject: {
      Json o = Json::object();
      for (std::size_t i = index + 1; i < v.end; i = values[i].end)
        o[std::string(values[i].key)] = unflatten(values, i);
      return o;
    }
  }
  return nullptr;
}

// ------------------------------------------------------------------------------ reading

namespace {

// What a thread needs to parse lines: the simdjson parser, the flat values, the place text.
struct LineState {
  FastLineParser parser;
  std::vector<FlatValue> values;
  std::string where;
};

struct FastReader {
  std::string_view name;
  const std::function<void(const LineRecord&, std::size_t)>& fn;
  const JsonlOptions& options;
  LineState& st;
  JsonlStats stats{};
  std::size_t where_prefix = 0;  // st.where's "<name>:" bytes (0: not written yet)

  void line(std::string_view text, std::size_t number, bool terminated, std::size_t readable_after = 0) {
    stats.lines = number;
    // "<name>:<number>" (fmt through a back_inserter cost about 2% of loading a benchmark); the
    // "<name>:" written once per block.
    if (where_prefix == 0) {
      st.where.assign(name);
      st.where += ':';
      where_prefix = st.where.size();
    } else {
      st.where.resize(where_prefix);
    }
    char digits[24];
    st.where.append(digits, std::to_chars(digits, digits + sizeof digits, number).ptr);
    if (is_blank_line(text)) {
      ++stats.blank_lines;
      return;
    }
    // A terminated line the walk accepts is a record; everything else (an unterminated last
    // line included, whose rule depends on the torn-tail option) goes the nlohmann way.
    if (terminated && st.parser.walk(text, st.values, readable_after)) {
      ++stats.records;
      fn(LineRecord(st.values, 0, st.where), number);
      return;
    }
    JsonError error;
    auto j = parse_jsonl_line<OrderedJson>(text, terminated, options.torn, st.where, error);
    if (!j) {
      detail::take_bad_line(error, number, text.size(), options.torn, options.on_bad_line, stats);
      return;
    }
    flatten(*j, st.values);
    ++stats.records;
    fn(LineRecord(st.values, 0, st.where), number);
  }

  // The lines of a block of whole lines (LineBlockReader) whose first line is number `first`;
  // `padding` bytes after the block may be read (LineBlock::readable_after).
  void block(std::string_view text, std::size_t first, std::size_t padding) {
    std::size_t number = first - 1;
    const char* const readable_end = text.data() + text.size() + padding;
    detail::for_each_text_line(text, [&](std::string_view l, std::size_t, bool terminated) {
      line(l, ++number, terminated, static_cast<std::size_t>(readable_end - (l.data() + l.size())));
    });
  }
};

void add_stats(JsonlStats& total, const JsonlStats& s) {
  total.lines = std::max(total.lines, s.lines);
  total.records += s.records;
  total.blank_lines += s.blank_lines;
  total.bad_lines += s.bad_lines;
  if (s.torn_line != 0) {
    total.torn_line = s.torn_line;
    total.torn_bytes = s.torn_bytes;
  }
}

// The slot whose block this thread is parsing (read by the bad-line hook, set by BlockRing::run).
thread_local std::size_t current_slot = 0;

// The ring of blocks of read_jsonl_fast_parallel and its worker threads.
class BlockRing {
 public:
  BlockRing(std::string_view name, const ParallelJsonl& how, std::size_t slots)
      : name_(name), how_(how), slots_(slots) {
    if (how.on_bad_line) {
      options_.on_bad_line = [this](const JsonError& e, std::size_t line) {
        how_.on_bad_line(current_slot, e, line);
      };
    }
    options_.torn = how.torn;
  }
  BlockRing(const BlockRing&) = delete;
  BlockRing& operator=(const BlockRing&) = delete;
  ~BlockRing() { stop(); }

  struct Slot {
    LineBlock block;
    std::size_t first_line = 0;
    JsonlStats stats;
    std::exception_ptr error;
    bool done = false;
  };
  Slot& slot(std::size_t i) { return slots_[i]; }

  void start(std::size_t threads) {
    for (std::size_t t = 0; t < threads; ++t) workers_.emplace_back([this] { work(); });
  }
  void submit(std::size_t i) {
    {
      const std::lock_guard<std::mutex> lock(mu_);
      slots_[i].done = false;
      queue_.push_back(i);
    }
    work_cv_.notify_one();
  }
  void wait_done(std::size_t i) {
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [&] { return slots_[i].done; });
  }
  // Parses slot i's lines on this thread.
  void run(std::size_t i, LineState& st) {
    Slot& s = slots_[i];
    s.stats = {};
    s.error = nullptr;
    current_slot = i;
    // Nothing may escape a worker: any exception is the block's error (its stats are then moot,
    // the read ends with it).
    try {
      const std::function<void(const LineRecord&, std::size_t)> fn =
          [this, i](const LineRecord& r, std::size_t n) { how_.on_record(i, r, n); };
      FastReader r{name_, fn, options_, st};
      r.block(s.block.text(), s.first_line, s.block.readable_after());
      s.stats = r.stats;
    } catch (...) {
      s.error = std::current_exception();
    }
  }
  void stop() {
    {
      const std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
      queue_.clear();
    }
    work_cv_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
  }

 private:
  void work() {
    LineState st;
    for (;;) {
      std::size_t i = 0;
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (stopping_) return;
        i = queue_.front();
        queue_.pop_front();
      }
      run(i, st);
      {
        const std::lock_guard<std::mutex> lock(mu_);
        slots_[i].done = true;
      }
      done_cv_.notify_all();
    }
  }

  std::string_view name_;
  const ParallelJsonl& how_;
  JsonlOptions options_;
  std::vector<Slot> slots_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<std::size_t> queue_;
  bool stopping_ = false;
};

}  // namespace

JsonlStats read_jsonl_fast(const std::filesystem::path& path,
                           const std::function<void(const LineRecord&, std::size_t)>& fn,
                           const JsonlOptions& options) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail(ErrorCode::kIo, "{}: file not found", path.string());
  const std::string name = path.string();
  LineState st;
  FastReader r{name, fn, options, st};
  for_each_line(path, [&](const Line& line) { r.line(line.text, line.number, line.terminated); });
  return r.stats;
}

JsonlStats read_jsonl_fast_text(std::string_view text, std::string_view name,
                                const std::function<void(const LineRecord&, std::size_t)>& fn,
                                const JsonlOptions& options) {
  LineState st;
  FastReader r{name, fn, options, st};
  detail::for_each_text_line(
      text, [&](std::string_view l, std::size_t number, bool terminated) { r.line(l, number, terminated); });
  return r.stats;
}

std::size_t parallel_jsonl_slots(std::size_t threads) noexcept {
  return 2 * std::max<std::size_t>(threads, 1) + 1;
}

JsonlStats read_jsonl_fast_parallel(const std::filesystem::path& path, const ParallelJsonl& how) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail(ErrorCode::kIo, "{}: file not found", path.string());
  const std::string name = path.string();
  const std::size_t threads = std::max<std::size_t>(how.threads, 1);
  const std::size_t slots = parallel_jsonl_slots(threads);
  LineBlockReader reader(path, how.block_bytes);
  BlockRing ring(name, how, slots);
  JsonlStats total;
  std::size_t lines = 0;  // numbered so far
  const auto finish = [&](std::size_t i) {
    BlockRing::Slot& s = ring.slot(i);
    add_stats(total, s.stats);
    if (how.on_block) how.on_block(i);
    if (s.error) std::rethrow_exception(s.error);
  };
  // The blocks' texts are the file's bytes in order (a block starts with the bytes the last one
  // carried over), so on_bytes gets them block by block: here, or on a thread of its own.
  if (threads == 1) {
    LineState st;
    while (reader.next(ring.slot(0).block)) {
      if (how.on_bytes) how.on_bytes(ring.slot(0).block.text());
      ring.slot(0).first_line = lines + 1;
      lines += count_lines(ring.slot(0).block.text());
      ring.run(0, st);
      finish(0);
    }
    return total;
  }
  std::optional<OrderedBytes> bytes;  // so the hashing of a file costs this thread nothing
  if (how.on_bytes) bytes.emplace(how.on_bytes);
  ring.start(threads);
  std::size_t next_read = 0, next_done = 0;
  bool eof = false;
  for (;;) {
    while (!eof && next_read - next_done < slots) {
      BlockRing::Slot& s = ring.slot(next_read % slots);
      if (!reader.next(s.block)) {
        eof = true;
        break;
      }
      s.first_line = lines + 1;
      lines += count_lines(s.block.text());
      if (bytes) bytes->push(s.block.text());
      ring.submit(next_read % slots);
      ++next_read;
    }
    if (next_done == next_read) break;
    ring.wait_done(next_done % slots);
    if (bytes) bytes->wait(next_done + 1);  // the slot is read into again after this
    finish(next_done % slots);
    ++next_done;
  }
  ring.stop();
  return total;
}

}  // namespace numcheck::io
