#include "view/runs.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/prng.hpp"
#include "grade/grade.hpp"
#include "view/lines.hpp"
#include "view/records.hpp"

namespace numcheck::view {
namespace {

// Outcome filters besides the grader's outcomes (grade::outcome_from_name); "" is none.
constexpr std::array<std::string_view, 5> kOtherOutcomeFilters = {"wrong", "unscored", "broken", "error", ""};
constexpr std::size_t kOrbitTextBytes = std::size_t{64} << 10;

// The score record of a response line, the fields a row shows.
struct ScoreFields {
  std::uint64_t line = 0;
  std::string base_id, template_id, view, expected, answer_unit;
  std::string strict, strict_value, audit, audit_value;
  std::vector<std::string> rules;
};

std::string opt_text(const io::LineRecord& r, std::string_view key) {
  return std::string(text_field(r, key));
}

ScoreFields score_fields(const io::LineRecord& r) {
  ScoreFields s;
  s.line = static_cast<std::uint64_t>(r.opt_integer("line", 0).value_or(0));
  s.base_id = opt_text(r, "base_id");
  s.template_id = opt_text(r, "template");
  s.view = opt_text(r, "view");
  s.expected = opt_text(r, "expected");
  s.answer_unit = opt_text(r, "answer_unit");
  if (auto st = r.opt_object("strict")) {
    s.strict = opt_text(*st, "outcome");
    s.strict_value = opt_text(*st, "value");
  }
  if (auto au = r.opt_object("audit")) {
    s.audit = opt_text(*au, "outcome");
    s.audit_value = opt_text(*au, "value");
    if (auto rules = au->opt_strings("rules")) s.rules = std::move(*rules);
  }
  return s;
}

// scores.jsonl read alongside responses.jsonl: the score of response line n, if any.
class ScoreWalk {
 public:
  ScoreWalk(const std::optional<std::filesystem::path>& path, std::uint64_t offset, std::size_t cap) {
    if (path) {
      reader_.emplace(*path, offset, cap);
      name_ = path->filename().string();
    }
    next_offset_ = offset;
  }
  const ScoreFields* at_line(std::uint64_t line) {
    if (!reader_) return nullptr;
    while (!done_ && (!have_ || pending_.line < line)) advance();
    return have_ && pending_.line == line ? &pending_ : nullptr;
  }
  // Where the first score not yet handed out starts.
  [[nodiscard]] std::uint64_t offset() const noexcept { return have_ ? pending_offset_ : next_offset_; }

 private:
  void advance() {
    have_ = false;
    FileLine l;
    while (reader_->next(l)) {
      next_offset_ = l.next;
      if (parser_.parse(l, ++count_, name_, reader_->readable_after(l)) != LineParser::Kind::kRecord)
        continue;
      try {
        pending_ = score_fields(parser_.record());
      } catch (const Error&) {
        continue;  // a score record of the wrong shape: the row shows as unscored
      }
      pending_offset_ = l.offset;
      have_ = true;
      return;
    }
    done_ = true;
  }
  std::optional<LineReader> reader_;
  LineParser parser_;
  std::string name_;
  ScoreFields pending_;
  std::uint64_t pending_offset_ = 0, next_offset_ = 0, count_ = 0;
  bool have_ = false, done_ = false;
};

// The prompt a response record was asked: request.messages' last content, or request.prompt.
std::string_view prompt_of(const io::LineRecord& r) {
  const io::FlatValue* req = r.find("request");
  if (req == nullptr || !req->is_object()) return {};
  const auto& v = r.values();
  const auto at = static_cast<std::size_t>(req - v.data());
  std::string_view found;
  for (std::size_t i = at + 1; i < req->end; i = v[i].end) {
    if (v[i].key == "prompt" && v[i].is_string()) return v[i].text;
    if (v[i].key != "messages" || !v[i].is_array()) continue;
    for (std::size_t m = i + 1; m < v[i].end; m = v[m].end) {
      if (!v[m].is_object()) continue;
      for (std::size_t f = m + 1; f < v[m].end; f = v[f].end)
        if (v[f].key == "content" && v[f].is_string()) found = v[f].text;
    }
  }
  return found;
}

bool outcome_matches(const RowFilter& f, const ScoreFields* s) {
  if (f.outcome.empty()) return true;
  if (f.outcome == "unscored") return s == nullptr;
  if (f.outcome == "broken" || s == nullptr) return false;
  const std::string& o = f.layer == "audit" ? s->audit : s->strict;
  return f.outcome == "wrong" ? o != "correct" : o == f.outcome;
}

io::OrderedJson grade_json(const std::string& outcome, const std::string& value) {
  return {{"outcome", outcome}, {"value", value.empty() ? io::OrderedJson() : io::OrderedJson(value)}};
}

// The row of a response record, or nullopt when the filter leaves it out.
std::optional<io::OrderedJson> record_row(const io::LineRecord& r, std::uint64_t line, const ScoreFields* s,
                                          const RowFilter& f, const PageLimits& limits) {
  std::string_view base = text_field(r, "base_id");
  std::string_view tmpl = text_field(r, "template");
  std::string_view view = text_field(r, "view");
  if (s != nullptr) {
    if (base.empty()) base = s->base_id;
    if (tmpl.empty()) tmpl = s->template_id;
    if (view.empty()) view = s->view;
  }
  if (!f.template_id.empty() && tmpl != f.template_id) return std::nullopt;
  if (!f.view.empty() && view != f.view) return std::nullopt;
  if (!outcome_matches(f, s)) return std::nullopt;
  const std::string_view pid = text_field(r, "prompt_id");
  const std::string_view response = text_field(r, "response");
  if (!f.query.empty() && !contains_folded(pid, f.query) && !contains_folded(base, f.query) &&
      !contains_folded(response, f.query) && !contains_folded(prompt_of(r), f.query))
    return std::nullopt;
  bool cut = false;
  const std::string_view shown = clip_utf8(response, limits.text_bytes, cut);
  io::OrderedJson row = {{"line", line},       {"prompt_id", pid},
                         {"base_id", base},    {"template", tmpl},
                         {"view", view},       {"finish_reason", text_field(r, "finish_reason")},
                         {"response", shown},  {"response_bytes", response.size()},
                         {"response_cut", cut}};
  if (s != nullptr) {
    row["strict"] = grade_json(s->strict, s->strict_value);
    row["audit"] = grade_json(s->audit, s->audit_value);
    row["audit"]["rules"] = s->rules;
    row["expected"] = s->expected;
    row["answer_unit"] = s->answer_unit;
  }
  return row;
}

std::uint64_t parse_number(std::string_view text, std::string_view whole) {
  std::uint64_t v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || text.empty())
    fail(ErrorCode::kUsage, "not a cursor: '{}'", whole.substr(0, 64));
  return v;
}

void check_filter(const RowFilter& f) {
  if (!grade::outcome_from_name(f.outcome) &&
      std::find(kOtherOutcomeFilters.begin(), kOtherOutcomeFilters.end(), f.outcome) ==
          kOtherOutcomeFilters.end())
    fail(ErrorCode::kUsage, "unknown outcome '{}'", f.outcome.substr(0, 64));
  if (std::find(grade::kLayerNames.begin(), grade::kLayerNames.end(), f.layer) == grade::kLayerNames.end())
    fail(ErrorCode::kUsage, "unknown layer '{}' (strict or audit)", f.layer.substr(0, 64));
}

// A page of errors.jsonl (prompts whose attempts ran out): the same cursor, over that file.
io::OrderedJson error_rows(const RunSource& run, const RowFilter& f, const Cursor& from,
                           const PageLimits& limits) {
  io::OrderedJson out = io::OrderedJson::object();
  out["rows"] = io::OrderedJson::array();
  out["next"] = nullptr;
  out["scanned_to_line"] = 0;
  if (!run.errors) return out;
  LineReader reader(*run.errors, from.offset, limits.line_cap);
  LineParser parser;
  const std::string name = run.errors->filename().string();
  std::uint64_t line = from.lines;
  FileLine fl;
  while (out["rows"].size() < limits.rows && reader.next(fl)) {
    const auto kind = parser.parse(fl, ++line, name, reader.readable_after(fl));
    if (kind == LineParser::Kind::kBlank) continue;
    if (kind == LineParser::Kind::kBroken) {
      out["rows"].push_back({{"line", line}, {"broken", parser.error()}, {"bytes", fl.bytes}});
      continue;
    }
    const io::LineRecord r = parser.record();
    const std::string_view pid = text_field(r, "prompt_id");
    const std::string_view error = text_field(r, "error");
    if ((!f.template_id.empty() && text_field(r, "template") != f.template_id) ||
        (!f.view.empty() && text_field(r, "view") != f.view) ||
        (!f.query.empty() && !contains_folded(pid, f.query) && !contains_folded(error, f.query)))
      continue;
    bool cut = false;
    out["rows"].push_back({{"line", line},
                           {"prompt_id", pid},
                           {"base_id", text_field(r, "base_id")},
                           {"template", text_field(r, "template")},
                           {"view", text_field(r, "view")},
                           {"error", clip_utf8(error, limits.text_bytes, cut)}});
  }
  FileLine peek;
  LineReader probe(*run.errors, reader.offset(), 64);
  if (probe.next(peek)) out["next"] = Cursor{reader.offset(), line, 0}.str();
  out["scanned_to_line"] = line;
  return out;
}

}  // namespace

std::string Cursor::str() const { return fmt::format("{}.{}.{}", offset, lines, score_offset); }

Cursor Cursor::parse(std::string_view text) {
  const auto a = text.find('.');
  const auto b = a == std::string_view::npos ? a : text.find('.', a + 1);
  if (b == std::string_view::npos) fail(ErrorCode::kUsage, "not a cursor: '{}'", text.substr(0, 64));
  return {parse_number(text.substr(0, a), text), parse_number(text.substr(a + 1, b - a - 1), text),
          parse_number(text.substr(b + 1), text)};
}

io::OrderedJson run_rows(const RunSource& run, const RowFilter& filter, const Cursor& from,
                         const PageLimits& limits) {
  check_filter(filter);
  if (filter.outcome == "error") return error_rows(run, filter, from, limits);
  LineReader reader(run.responses, from.offset, limits.line_cap);
  ScoreWalk scores(run.scores, from.score_offset, limits.line_cap);
  LineParser parser;
  const std::string name = run.responses.filename().string();
  io::OrderedJson rows = io::OrderedJson::array();
  std::uint64_t line = from.lines;
  std::uint64_t read = 0;
  FileLine fl;
  bool more = false;
  while (rows.size() < limits.rows) {
    if (read >= limits.scan_bytes) {
      more = true;
      break;
    }
    if (!reader.next(fl)) break;
    ++line;
    read += fl.next - fl.offset;
    const auto kind = parser.parse(fl, line, name, reader.readable_after(fl));
    if (kind == LineParser::Kind::kBlank) continue;
    const ScoreFields* s = scores.at_line(line);
    if (kind == LineParser::Kind::kBroken) {
      const bool any =
          filter.template_id.empty() && filter.view.empty() && filter.query.empty() && filter.outcome.empty();
      if (any || filter.outcome == "broken")
        rows.push_back({{"line", line}, {"broken", parser.error()}, {"bytes", fl.bytes}});
      continue;
    }
    if (auto row = record_row(parser.record(), line, s, filter, limits)) rows.push_back(std::move(*row));
  }
  if (!more) {
    FileLine peek;  // a full page may end exactly at the end of the file
    LineReader probe(run.responses, reader.offset(), 64);
    more = probe.next(peek);
  }
  io::OrderedJson out = io::OrderedJson::object();
  out["rows"] = std::move(rows);
  out["next"] =
      more ? io::OrderedJson(Cursor{reader.offset(), line, scores.offset()}.str()) : io::OrderedJson();
  out["scanned_to_line"] = line;
  return out;
}

namespace {

using Entries = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

// One scan of a JSONL file: (hash of the record's base id, offset) per record, sorted.
// The base id of a line as numcheck's runner and `orbit score` write it, without parsing it:
// `{"prompt_id":"<id>","base_id":"<base>"` with no escape in either string. "" for any other
// line, which is then parsed. (In JSON an unescaped quote only ends a string, so these are the
// object's first two members; a wrong guess would only make a miss, as every record found through
// the index is parsed and its base id compared.)
std::string_view leading_base_id(std::string_view line) {
  constexpr std::string_view kHead = R"({"prompt_id":")";
  constexpr std::string_view kMid = R"(","base_id":")";
  if (line.substr(0, kHead.size()) != kHead) return {};
  const std::size_t pid_end = line.find('"', kHead.size());
  if (pid_end == std::string_view::npos ||
      line.substr(kHead.size(), pid_end - kHead.size()).find('\\') != std::string_view::npos)
    return {};
  if (line.substr(pid_end, kMid.size()) != kMid) return {};
  const std::size_t begin = pid_end + kMid.size();
  const std::size_t end = line.find('"', begin);
  if (end == std::string_view::npos || end == begin) return {};
  const std::string_view base = line.substr(begin, end - begin);
  return base.find('\\') == std::string_view::npos ? base : std::string_view();
}

Entries index_file(const std::filesystem::path& path, std::uint64_t& records) {
  LineReader reader(path, 0);
  LineParser parser;
  const std::string name = path.filename().string();
  Entries out;
  FileLine fl;
  std::size_t line = 0;
  while (reader.next(fl)) {
    ++line;
    if (const std::string_view fast = leading_base_id(fl.text); !fast.empty()) {
      out.emplace_back(fnv1a64(fast), fl.offset);
      ++records;
      continue;
    }
    if (parser.parse(fl, line, name, reader.readable_after(fl)) != LineParser::Kind::kRecord) continue;
    const io::LineRecord r = parser.record();
    std::string_view base = text_field(r, "base_id");
    if (base.empty()) {  // an orbit prompt id is "<base id>:<view>"
      const std::string_view pid = text_field(r, "prompt_id");
      base = pid.substr(0, std::min(pid.size(), pid.rfind(':')));
    }
    if (base.empty()) continue;
    out.emplace_back(fnv1a64(base), fl.offset);
    ++records;
  }
  std::sort(out.begin(), out.end());
  out.shrink_to_fit();
  return out;
}

// The records at `entries` of `hash` whose base id is `base` (a hash collision is read and dropped).
std::vector<io::Json> read_records(const std::filesystem::path& path, const Entries& entries,
                                   std::uint64_t hash, std::string_view base) {
  std::vector<io::Json> out;
  const auto lo = std::lower_bound(entries.begin(), entries.end(), std::make_pair(hash, std::uint64_t{0}));
  LineParser parser;
  for (auto it = lo; it != entries.end() && it->first == hash; ++it) {
    LineReader reader(path, it->second);
    FileLine fl;
    if (!reader.next(fl) ||
        parser.parse(fl, 0, path.filename().string(), reader.readable_after(fl)) != LineParser::Kind::kRecord)
      continue;
    const io::LineRecord r = parser.record();
    const std::string_view pid = text_field(r, "prompt_id");
    const std::string_view b = text_field(r, "base_id");
    if (b != base && (!b.empty() || pid.substr(0, std::min(pid.size(), pid.rfind(':'))) != base)) continue;
    out.push_back(io::unflatten(r.values(), 0));
  }
  return out;
}

std::string json_text(const io::Json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The prompt of a response record (io::Json form; see prompt_of).
std::string json_prompt(const io::Json& r) {
  const auto req = r.find("request");
  if (req == r.end() || !req->is_object()) return {};
  if (const auto p = req->find("prompt"); p != req->end() && p->is_string()) return p->get<std::string>();
  std::string found;
  if (const auto m = req->find("messages"); m != req->end() && m->is_array())
    for (const auto& msg : *m)
      if (msg.is_object() && msg.contains("content") && msg["content"].is_string()) found = msg["content"];
  return found;
}

void put_text(io::Json& member, const char* key, const std::string& text) {
  bool cut = false;
  member[key] = std::string(clip_utf8(text, kOrbitTextBytes, cut));
  member[std::string(key) + "_bytes"] = text.size();
  member[std::string(key) + "_cut"] = cut;
}

io::Json orbit_member(const io::Json& response, const io::Json* score) {
  io::Json m = io::Json::object();
  m["prompt_id"] = json_text(response, "prompt_id");
  m["view"] = json_text(response, "view");
  m["template"] = json_text(response, "template");
  m["finish_reason"] = json_text(response, "finish_reason");
  put_text(m, "prompt", json_prompt(response));
  put_text(m, "response", json_text(response, "response"));
  if (score != nullptr) {
    for (const char* key : {"strict", "audit", "expected", "answer_unit", "line"})
      if (score->contains(key)) m[key] = (*score)[key];
    if (m["view"] == "") m["view"] = json_text(*score, "view");
    if (m["template"] == "") m["template"] = json_text(*score, "template");
  }
  return m;
}

bool correct_in(const io::Json& m, const char* layer) {
  const auto it = m.find(layer);
  return it != m.end() && it->is_object() && it->value("outcome", "") == "correct";
}

}  // namespace

void OrbitIndex::build() {
  const auto t0 = std::chrono::steady_clock::now();
  records_ = 0;
  responses_ = index_file(run_.responses, records_);
  if (run_.scores) {
    std::uint64_t n = 0;
    scores_ = index_file(*run_.scores, n);
  }
  build_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  built_ = true;
}

io::Json OrbitIndex::orbit(std::string_view base_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!built_) build();
  const std::uint64_t h = fnv1a64(base_id);
  const std::vector<io::Json> responses = read_records(run_.responses, responses_, h, base_id);
  if (responses.empty())
    fail(ErrorCode::kUsage, "no record of base '{}' in this run", base_id.substr(0, 200));
  std::vector<io::Json> scores;
  if (run_.scores) scores = read_records(*run_.scores, scores_, h, base_id);
  io::Json members = io::Json::array();
  for (const auto& r : responses) {
    const std::string pid = json_text(r, "prompt_id");
    const io::Json* score = nullptr;
    for (const auto& s : scores)
      if (json_text(s, "prompt_id") == pid) score = &s;
    members.push_back(orbit_member(r, score));
  }
  // The base first (its canonical view), then the views in file order.
  std::stable_sort(members.begin(), members.end(), [](const io::Json& a, const io::Json& b) {
    return a["view"] == "canonical" && b["view"] != "canonical";
  });
  const io::Json base = members.front();
  for (auto& m : members) {
    for (const char* layer : {"strict", "audit"}) {
      const bool both = m.contains(layer) && base.contains(layer);
      m[std::string("flip_") + layer] = both && correct_in(m, layer) != correct_in(base, layer);
    }
  }
  io::Json out = io::Json::object();
  out["base_id"] = base_id;
  out["members"] = std::move(members);
  out["index"] = {{"records", records_},
                  {"bytes", (responses_.capacity() + scores_.capacity()) * sizeof(responses_[0])},
                  {"build_ms", build_ms_}};
  return out;
}
}  // namespace numcheck::view
