#include "orbit/score.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <optional>
#include <queue>
#include <thread>

#include "core/error.hpp"
#include "core/ordered_parallel.hpp"
#include "core/version.hpp"
#include "io/files.hpp"
#include "io/json_writer.hpp"
#include "io/ordered_bytes.hpp"
#include "io/sha256.hpp"

namespace numcheck::orbit {
namespace fs = std::filesystem;

namespace {

// One record's fields, viewed in the line's parsed values (valid during the record's callback).
struct Parsed {
  std::string_view prompt_id;
  std::string_view response;
  std::string_view finish_reason;
  std::optional<std::int64_t> completion_tokens;
};

// Reads one record's fields (prompt_id first, so that issues can name it); field errors throw
// Error "field 'x' must be ..." (the record has no `where`: the issue carries the line).
Parsed parse_record(const io::LineRecord& r, std::string_view& prompt_id) {
  Parsed p;
  p.prompt_id = r.string_view("prompt_id");
  prompt_id = p.prompt_id;
  (void)r.at("response");  // required, may be null
  p.response = r.opt_string_view("response").value_or("");
  (void)r.at("finish_reason");
  p.finish_reason = r.opt_string_view("finish_reason").value_or("");
  // The completion token count: usage.completion_tokens, else top-level completion_tokens.
  const io::FlatValue* usage = r.find("usage");
  if (usage != nullptr && usage->is_object() && r.object("usage").has("completion_tokens")) {
    p.completion_tokens = r.object("usage").integer("completion_tokens", 0);
  } else {
    p.completion_tokens = r.opt_integer("completion_tokens", 0);
  }
  return p;
}

// {"correct": n, "truncation_error": n, ...}: the graded outcomes (not "missing"), in this order.
io::OrderedJson outcome_counts(const std::array<std::size_t, grade::kOutcomeCount>& n) {
  io::OrderedJson o = io::OrderedJson::object();
  for (const auto oc :
       {grade::Outcome::kCorrect, grade::Outcome::kTruncationError, grade::Outcome::kFormatError,
        grade::Outcome::kParseError, grade::Outcome::kUnitError, grade::Outcome::kValueError}) {
    o[std::string(grade::outcome_name(oc))] = n.at(static_cast<std::size_t>(oc));
  }
  return o;
}

}  // namespace

std::string_view issue_kind_name(ScoreIssueKind k) noexcept {
  switch (k) {
    case ScoreIssueKind::kMalformed:
      return "malformed";
    case ScoreIssueKind::kUnknownPrompt:
      return "unknown_prompt";
    case ScoreIssueKind::kDuplicate:
      return "duplicate";
    case ScoreIssueKind::kMissing:
      return "missing";
  }
  return "unknown";
}

std::size_t ScoreTally::count(ScoreIssueKind k) const {
  std::size_t n = 0;
  for (const auto& i : issues) n += i.kind == k ? 1 : 0;
  return n;
}

void GradeCounts::add(const grade::Grade& g) {
  ++records;
  ++strict.at(static_cast<std::size_t>(g.strict.outcome));
  ++audit.at(static_cast<std::size_t>(g.audit.outcome));
  recovered += g.audit.recovered ? 1 : 0;
  multiple_final += g.strict.multiple_final ? 1 : 0;
  if (g.audit.magnitude_k) ++magnitude_drops[*g.audit.magnitude_k];
}

namespace {

// What the workers of scan_responses produce for one block of the responses file, in line order.
struct ScanBlock {
  struct Event {
    std::size_t line = 0;
    std::optional<ScoreIssue> issue;  // set: a problem; else a graded record in `prompt`
    ScoredPrompt prompt;
    std::size_t text_begin = 0, text_size = 0;  // its rendered line in `text`
  };
  std::vector<Event> events;
  std::string text;
  grade::Question question;  // reused: its expected value's limbs
  std::size_t next = 0;      // the prompt after the last one found: where the next record likely is
  // Set when the calling thread has taken the events: the worker that gets the slot next clears it
  // (memory is freed on the thread that allocated it, not on the calling thread).
  bool taken = false;
  void begin() {
    if (!taken) return;
    events.clear();
    text.clear();
    taken = false;
  }
};

// The one pass both scorers share: grades each record (on `threads` threads, block by block) and
// takes the first record of every benchmark prompt, in file order: `render` (on the workers, may
// be empty) writes what the caller keeps of a graded record, `on_graded` (on the calling thread,
// file order) gets it with those bytes (and, when `render` is given, without the grade's values
// and rules: the bytes have them); tally.counts adds it. Every problem becomes an issue
// (missing prompts last, in benchmark order). The result does not depend on `threads`.
void scan_responses(const BenchmarkIndex& bench, const fs::path& responses, const num::UnitRegistry& units,
                    std::size_t threads, ScoreTally& s,
                    const std::function<void(const ScoredPrompt&, std::string&)>& render,
                    const std::function<void(ScoredPrompt&&, std::string_view)>& on_graded) {
  verify_benchmark(bench);
  {
    // Each answer unit is resolved once; the error names the first prompt asking for an unknown one.
    std::vector<std::int8_t> known(bench.units().size(), -1);
    for (std::size_t i = 0; i < bench.size(); ++i) {
      std::int8_t& k = known[bench.unit_id(i)];
      if (k < 0) {
        const std::string_view u = bench.answer_unit(i);
        k = (u.empty() || grade::resolve_unit(u, units) != nullptr) ? 1 : 0;
      }
      if (k == 0) {
        fail("{}: prompt '{}' asks for unit '{}', which the unit registry does not know",
             (bench.dir / "views.jsonl").string(), bench.prompt_id(i), bench.answer_unit(i));
      }
    }
  }
  if (!fs::is_regular_file(responses)) fail(ErrorCode::kIo, "{}: file not found", responses.string());

  // Line of the scored record per prompt, 0 = none.
  std::vector<std::uint32_t> first_line(bench.size(), 0);
  io::ParallelJsonl how;
  how.threads = core::thread_count(threads);
  std::vector<ScanBlock> blocks(io::parallel_jsonl_slots(how.threads));
  how.on_bad_line = [&](std::size_t slot, const io::JsonError& e, std::size_t line) {
    blocks[slot].begin();
    blocks[slot].events.push_back(
        {line, ScoreIssue{ScoreIssueKind::kMalformed, line, "", e.message}, {}, 0, 0});
  };
  // Blocks of 256 KiB (about 600 responses): the ring of 2 x threads + 1 of them, their graded
  // records and score lines stay a few MB, whatever the file's size.
  how.block_bytes = std::size_t{256} << 10;
  for (auto& b : blocks) b.events.reserve(1024);  // about a block's records: no regrowth copies
  how.on_record = [&](std::size_t slot, const io::LineRecord& record, std::size_t line_number) {
    ScanBlock& b = blocks[slot];
    b.begin();
    if (line_number > std::numeric_limits<std::uint32_t>::max()) {
      fail("{}: more than {} lines", responses.string(), std::numeric_limits<std::uint32_t>::max());
    }
    ScanBlock::Event& ev = b.events.emplace_back();
    ev.line = line_number;
    std::string_view prompt_id;
    std::optional<Parsed> rec;
    try {
      rec = parse_record(record.with_where(""), prompt_id);
    } catch (const Error& e) {
      ev.issue = ScoreIssue{ScoreIssueKind::kMalformed, line_number, std::string(prompt_id), e.what()};
      return;
    }
    const auto found = bench.find(rec->prompt_id, b.next);
    if (!found) {
      ev.issue = ScoreIssue{ScoreIssueKind::kUnknownPrompt, line_number, std::string(rec->prompt_id),
                            fmt::format("prompt_id '{}' is not in the benchmark", rec->prompt_id)};
      return;
    }
    const std::size_t idx = *found;
    b.next = idx + 1;
    if (!b.question.expected.assign(bench.expected(idx))) {
      fail("expected answer: '{}' is not an exact rational (expected an integer or p/q)",
           bench.expected(idx));
    }
    b.question.canonical_unit.assign(bench.answer_unit(idx));
    ScoredPrompt& p = ev.prompt;
    p.view_index = idx;
    p.line = line_number;
    p.completion_tokens = rec->completion_tokens;
    p.grade = grade::grade_response(rec->response, b.question, rec->finish_reason, units);
    p.finish_reason = rec->finish_reason;
    if (render) {
      ev.text_begin = b.text.size();
      render(p, b.text);
      ev.text_size = b.text.size() - ev.text_begin;
      // Rendered: the counts need only the outcomes, so the values' memory goes back now, on the
      // thread that took it (and is handed out again for the next record) instead of a block later.
      p.grade.strict.value.reset();
      p.grade.audit.value.reset();
      p.grade.audit.rules = {};
    }
  };
  how.on_block = [&](std::size_t slot) {
    ScanBlock& b = blocks[slot];
    if (b.taken) return;  // no record in this block: the events are the last block's
    b.taken = true;
    for (auto& ev : b.events) {
      if (ev.issue) {
        s.issues.push_back(std::move(*ev.issue));
        continue;
      }
      const std::size_t idx = ev.prompt.view_index;
      if (first_line[idx] != 0) {
        s.issues.push_back({ScoreIssueKind::kDuplicate, ev.line, std::string(bench.prompt_id(idx)),
                            fmt::format("duplicate prompt_id '{}' (first record at line {})",
                                        bench.prompt_id(idx), first_line[idx])});
        continue;
      }
      first_line[idx] = static_cast<std::uint32_t>(ev.line);
      s.counts.add(ev.prompt.grade);
      on_graded(std::move(ev.prompt), std::string_view(b.text).substr(ev.text_begin, ev.text_size));
    }
  };
  io::Sha256 hash;
  how.on_bytes = [&](std::string_view bytes) { hash.update(bytes); };
  const io::JsonlStats stats = io::read_jsonl_fast_parallel(responses, how);
  s.responses_sha256 = hash.hex_digest();
  s.lines = stats.lines;
  s.blank_lines = stats.blank_lines;
  for (std::size_t i = 0; i < bench.size(); ++i) {
    if (first_line[i] == 0) {
      s.issues.push_back({ScoreIssueKind::kMissing, 0, std::string(bench.prompt_id(i)),
                          fmt::format("prompt '{}' has no response record", bench.prompt_id(i))});
    }
  }
}

// Nothing is written from an index read from the index cache before its check passed.
void require_confirmed(const BenchmarkIndex& bench) {
  if (!bench.confirmed()) {
    fail(ErrorCode::kIo,
         "{}: the benchmark's cached index does not match its files (bases.jsonl or views.jsonl changed "
         "since it was made, or the cache file is damaged); nothing written: score again",
         bench.dir.string());
  }
}

// One score record from a prompt's fields.
io::OrderedJson record_json(std::string_view prompt_id, std::string_view base_id, std::string_view view,
                            std::optional<std::string_view> family, std::string_view template_id,
                            const std::string& expected, std::string_view answer_unit,
                            const ScoredPrompt& p) {
  io::OrderedJson r = io::OrderedJson::object();
  r["prompt_id"] = prompt_id;
  r["base_id"] = base_id;
  r["view"] = view;
  r["family"] = family ? io::OrderedJson(*family) : io::OrderedJson(nullptr);
  r["template"] = template_id;
  r["expected"] = expected;
  r["answer_unit"] = answer_unit;
  r["finish_reason"] = p.finish_reason;
  if (p.completion_tokens) r["completion_tokens"] = *p.completion_tokens;
  r["line"] = p.line;
  io::OrderedJson g = grade::to_json(p.grade);
  r["strict"] = std::move(g["strict"]);
  r["audit"] = std::move(g["audit"]);
  return r;
}

// The same record written straight into `out` with its newline: to_line(record_json(...)) + "\n".
void append_record_line(std::string& out, std::string_view prompt_id, std::string_view base_id,
                        std::string_view view, std::optional<std::string_view> family,
                        std::string_view template_id, std::string_view expected, std::string_view answer_unit,
                        const ScoredPrompt& p) {
  using io::literals::operator""_key;
  io::JsonWriter w(out);
  w.begin_object();
  w.key("prompt_id"_key).value(prompt_id);
  w.key("base_id"_key).value(base_id);
  w.key("view"_key).value(view);
  w.key("family"_key).value(family);
  w.key("template"_key).value(template_id);
  w.key("expected"_key).value(expected);
  w.key("answer_unit"_key).value(answer_unit);
  w.key("finish_reason"_key).value(p.finish_reason);
  if (p.completion_tokens) w.key("completion_tokens"_key).value(*p.completion_tokens);
  w.key("line"_key).value(static_cast<std::uint64_t>(p.line));
  grade::write_json_members(w, p.grade);
  w.end_object();
  out.push_back('\n');
}

}  // namespace

void append_score_line(std::string& out, const BenchmarkIndex& bench, const ScoredPrompt& p) {
  const std::size_t i = p.view_index;
  append_record_line(out, bench.prompt_id(i), bench.base_id(i), bench.view(i), bench.family(i),
                     bench.template_id(i), bench.expected(i), bench.answer_unit(i), p);
}

Scores score_responses(const Benchmark& bench, const fs::path& responses, const num::UnitRegistry& units,
                       std::size_t threads) {
  return score_responses(BenchmarkIndex::of(bench), responses, units, threads);
}

Scores score_responses(const BenchmarkIndex& bench, const fs::path& responses, const num::UnitRegistry& units,
                       std::size_t threads) {
  Scores s;
  std::vector<std::optional<ScoredPrompt>> by_view(bench.size());
  scan_responses(bench, responses, units, threads, s, {},
                 [&](ScoredPrompt&& p, std::string_view) { by_view[p.view_index] = std::move(p); });
  for (auto& p : by_view) {
    if (p) s.records.push_back(std::move(*p));
  }
  return s;
}

std::string format_issue(const ScoreIssue& issue, const fs::path& responses) {
  if (issue.line == 0) return fmt::format("{}: {}", responses.string(), issue.message);
  return fmt::format("{}:{}: {}", responses.string(), issue.line, issue.message);
}

void check_complete(const ScoreTally& scores, const fs::path& responses) {
  if (scores.issues.empty()) return;
  const std::size_t malformed = scores.count(ScoreIssueKind::kMalformed);
  const std::size_t unknown = scores.count(ScoreIssueKind::kUnknownPrompt);
  const std::size_t duplicate = scores.count(ScoreIssueKind::kDuplicate);
  const std::size_t missing = scores.count(ScoreIssueKind::kMissing);
  const std::string first = format_issue(scores.issues.front(), responses);
  if (malformed + unknown + duplicate > 0) {
    fail(ErrorCode::kInvalidInput,
         "{}: {} malformed, {} unknown prompt_id, {} duplicate, {} missing; first: {}; nothing written "
         "(--allow-partial scores the valid records)",
         responses.string(), malformed, unknown, duplicate, missing, first);
  }
  fail(ErrorCode::kIncomplete,
       "{}: {} of the benchmark's prompts have no response record; first: {}; nothing written "
       "(--allow-partial scores the answered prompts)",
       responses.string(), missing, first);
}

io::OrderedJson score_record(const Benchmark& bench, const ScoredPrompt& p) {
  const View& v = bench.views.at(p.view_index);
  std::optional<std::string_view> family;
  if (v.family) family = *v.family;
  return record_json(v.prompt_id, v.base_id, v.view, family, v.template_id, v.expected.str(), v.answer_unit,
                     p);
}

io::OrderedJson score_record(const BenchmarkIndex& bench, const ScoredPrompt& p) {
  const std::size_t i = p.view_index;
  return record_json(bench.prompt_id(i), bench.base_id(i), bench.view(i), bench.family(i),
                     bench.template_id(i), std::string(bench.expected(i)), bench.answer_unit(i), p);
}

SystemInfo read_system_info(const fs::path& responses) {
  SystemInfo info;
  info.name = responses.stem().string();
  info.source = "file_name";
  const fs::path run = responses.parent_path() / "run.json";
  std::error_code ec;
  if (!fs::is_regular_file(run, ec)) return info;
  const io::Json j = io::read_json_file(run);
  const io::Record r = io::Record::of(j, run.string());
  if (auto n = r.opt_string("system_name")) {  // a study's system name (numcheck orbit study)
    if (n->empty()) r.fail_field("system_name", "must be a non-empty string");
    info.name = std::move(*n);
    info.source = "run.json";
  } else if (auto m = r.opt_string("model")) {
    if (m->empty()) r.fail_field("model", "must be a non-empty string");
    info.name = std::move(*m);
    info.source = "run.json";
  }
  if (auto sim = r.opt_boolean("simulated")) info.simulated = *sim;
  return info;
}

void check_run_benchmark(const fs::path& responses, const BenchmarkIndex& bench) {
  const fs::path run = responses.parent_path() / "run.json";
  std::error_code ec;
  if (!fs::is_regular_file(run, ec)) return;
  const io::Json j = io::read_json_file(run);
  const io::Record r = io::Record::of(j, run.string());
  const auto binding = r.opt_object("binding");
  if (!binding) return;
  const auto files = binding->opt_object("benchmark_sha256");
  if (!files) return;
  for (const char* name : {"views.jsonl", "bases.jsonl"}) {
    const auto recorded = files->opt_string(name);
    const auto now = bench.file_sha256.find(name);
    if (!recorded || now == bench.file_sha256.end() || *recorded == now->second) continue;
    std::string asked_from;
    if (const auto sel = r.opt_object("selection"))
      asked_from = sel->opt_string("benchmark_dir").value_or("");
    fail(ErrorCode::kUsage,
         "{}: these responses answer another benchmark: {} records {} with sha256 {}, but {} has sha256 {}; "
         "score them against the benchmark they were asked from{} (nothing written)",
         responses.string(), run.string(), name, *recorded, (bench.dir / name).string(), now->second,
         asked_from.empty() ? "" : fmt::format(" (--bench {})", asked_from));
  }
}

fs::path score_manifest_path(const fs::path& out) {
  fs::path p = out;
  p += ".manifest.json";
  return p;
}

io::OrderedJson score_manifest(const BenchmarkIndex& bench, const ScoreTally& scores,
                               const fs::path& responses, const fs::path& out, std::string_view scores_sha256,
                               bool allow_partial) {
  const SystemInfo sys = read_system_info(responses);
  io::OrderedJson m = io::OrderedJson::object();
  m["format"] = "numcheck-orbit-scores/1";
  m["numcheck_version"] = kVersion;
  m["grader"] = {{"strict", "appendix_b"}, {"audit", "audit_v2"}};
  m["system"] = {{"name", sys.name}, {"simulated", sys.simulated}, {"source", sys.source}};

  io::OrderedJson b = io::OrderedJson::object();
  b["dir"] = bench.dir.string();
  b["manifest_sha256"] = io::sha256_hex(bench.manifest_json);
  const io::OrderedJson generator = generator_provenance(bench);
  for (const auto& [key, value] : generator.items()) b[key] = value;
  io::OrderedJson files = io::OrderedJson::object();
  const auto recorded = manifest_file_hashes(bench);
  for (const auto& [name, hash] : bench.file_sha256) files[name] = hash;
  for (const auto& [name, hash] : recorded) {
    if (!files.contains(name)) files[name] = hash;
  }
  b["files"] = std::move(files);
  b["prompts"] = bench.size();
  m["benchmark"] = std::move(b);
  if (!bench.selection.is_null()) {
    m["selection"] = bench.selection;
    m["selection"]["records_outside"] = scores.outside_selection;
  }

  m["responses"] = {
      {"path", responses.string()},
      {"sha256", scores.responses_sha256.empty() ? io::sha256_file(responses) : scores.responses_sha256},
      {"lines", scores.lines},
      {"blank_lines", scores.blank_lines}};
  m["scores"] = {
      {"path", out.string()}, {"sha256", std::string(scores_sha256)}, {"records", scores.counts.records}};
  m["partial"] = !scores.issues.empty();
  m["allow_partial"] = allow_partial;

  const GradeCounts& c = scores.counts;
  io::OrderedJson strict = outcome_counts(c.strict);
  io::OrderedJson audit = outcome_counts(c.audit);
  io::OrderedJson mag = io::OrderedJson::object();
  for (const auto& [k, n] : c.magnitude_drops) mag[std::to_string(k)] = n;
  m["counts"] = {
      {"records", c.records},     {"strict", std::move(strict)},        {"audit", std::move(audit)},
      {"recovered", c.recovered}, {"multiple_final", c.multiple_final}, {"magnitude_drops", std::move(mag)}};

  io::OrderedJson issues = io::OrderedJson::object();
  for (const auto k : {ScoreIssueKind::kMalformed, ScoreIssueKind::kUnknownPrompt, ScoreIssueKind::kDuplicate,
                       ScoreIssueKind::kMissing}) {
    io::OrderedJson list = io::OrderedJson::array();
    for (const auto& i : scores.issues) {
      if (i.kind != k) continue;
      if (k == ScoreIssueKind::kMissing) {
        list.push_back(i.prompt_id);
      } else {
        io::OrderedJson e = {{"line", i.line}, {"message", i.message}};
        if (!i.prompt_id.empty()) e["prompt_id"] = i.prompt_id;
        list.push_back(std::move(e));
      }
    }
    issues[std::string(issue_kind_name(k))] = std::move(list);
  }
  m["issues"] = std::move(issues);
  return m;
}

void write_scores(const Benchmark& bench, const Scores& scores, const fs::path& responses,
                  const fs::path& out, bool allow_partial) {
  write_scores(BenchmarkIndex::of(bench), scores, responses, out, allow_partial);
}

void write_scores(const BenchmarkIndex& bench, const Scores& scores, const fs::path& responses,
                  const fs::path& out, bool allow_partial) {
  require_confirmed(bench);
  std::string body;
  body.reserve(scores.records.size() * 512);
  for (const auto& p : scores.records) append_score_line(body, bench, p);
  const std::string sha = io::sha256_hex(body);
  // The manifest is computed before anything is written so that a failure leaves no half output.
  const std::string manifest =
      io::to_pretty(score_manifest(bench, scores, responses, out, sha, allow_partial));
  io::write_file_atomic(out, body);
  io::write_file_atomic(score_manifest_path(out), manifest);
}

}  // namespace numcheck::orbit

namespace numcheck::orbit {

ScoreTally score_to_file(const Benchmark& bench, const fs::path& responses, const fs::path& out,
                         bool allow_partial, const std::function<void(ScoreTally&)>& review,
                         const num::UnitRegistry& units, std::size_t threads) {
  return score_to_file(BenchmarkIndex::of(bench), responses, out, allow_partial, review, units, threads);
}

ScoreTally score_to_file(const BenchmarkIndex& bench, const fs::path& responses, const fs::path& out,
                         bool allow_partial, const std::function<void(ScoreTally&)>& review,
                         const num::UnitRegistry& units, std::size_t threads, std::size_t window_cap) {
  // Each prompt's score line's length (0: no record) and, once lines go to the spool, where it sits
  // there (4 + 8 bytes a prompt; the offsets only when needed).
  std::vector<std::uint32_t> lengths(bench.size(), 0);
  std::vector<std::uint64_t> offsets;
  ScoreTally tally;
  // The spool first: it removes the folders it had to create when nothing is written.
  io::SpoolFile spool(out);
  io::AtomicFile file(out);
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  // Lines gather in one buffer while the other's bytes are hashed on a thread of their own (so
  // hashing the output costs this thread nothing): flush writes the buffer, hands it to the
  // hasher and takes the other one back once it is hashed.
  std::optional<io::Sha256> hash(std::in_place);
  const std::function<void(std::string_view)> hash_bytes = [&hash](std::string_view b) { hash->update(b); };
  std::string buffers[2];
  std::string* buffer = &buffers[0];
  std::size_t pushed = 0;
  io::OrderedBytes hasher(hash_bytes);  // after what it reads: destroyed (joined) first
  // While the graded records come in benchmark order, their lines go straight to the output file,
  // hashed as they go: it is the scores file already. `orbit run` finishes its requests a few
  // hundred prompts apart (c requests in flight), so lines wait in a reorder window of up to
  // window_cap bytes and leave it smallest prompt first. A record that belongs before a line
  // already written moves what was written, and the window, into the spool, and the rest follows
  // it there; the file is then written from the spool in benchmark order. (A prompt's second
  // record never gets here: scan_responses reports it as a duplicate.)
  bool direct = true;
  std::size_t last_index = 0;
  std::uint64_t direct_size = 0;
  struct Waiting {
    std::size_t index;
    std::string line;
  };
  const auto later = [](const Waiting& a, const Waiting& b) { return a.index > b.index; };
  std::priority_queue<Waiting, std::vector<Waiting>, decltype(later)> window(later);
  std::size_t window_bytes = 0;
  const auto flush = [&] {
    file.write(*buffer);
    hasher.push(*buffer);
    ++pushed;
    buffer = buffer == &buffers[0] ? &buffers[1] : &buffers[0];
    hasher.wait(pushed - 1);
    buffer->clear();
  };
  const auto write_first_waiting = [&] {
    const Waiting& w = window.top();
    direct_size += w.line.size();
    last_index = w.index;
    buffer->append(w.line);
    window_bytes -= w.line.size();
    window.pop();
    if (buffer->size() >= kChunk) flush();
  };
  const auto to_spool = [&] {
    flush();
    hasher.wait(pushed);  // the hash starts again below
    // The lines written so far lie in the file in benchmark order, one after another.
    offsets.assign(bench.size(), 0);
    std::uint64_t pos = 0;
    for (std::size_t i = 0; i <= last_index; ++i) {
      offsets[i] = pos;
      pos += lengths[i];
    }
    std::string piece;
    for (std::uint64_t at = 0; at < direct_size; at += kChunk) {
      piece.clear();
      file.read_back(at, static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, direct_size - at)), piece);
      (void)spool.append(piece);  // at offset `at`: the spool was empty
    }
    file.reset();
    hash.emplace();
    direct = false;
    for (; !window.empty(); window.pop()) offsets[window.top().index] = spool.append(window.top().line);
    window_bytes = 0;
  };
  const auto render = [&](const ScoredPrompt& p, std::string& text) {
    const std::size_t begin = text.size();
    append_score_line(text, bench, p);
    if (text.size() - begin > std::numeric_limits<std::uint32_t>::max()) {
      fail("{}: the score line of prompt '{}' is longer than 4 GB", responses.string(),
           bench.prompt_id(p.view_index));
    }
  };
  scan_responses(bench, responses, units, threads, tally, render,
                 [&](ScoredPrompt&& p, std::string_view line) {
                   if (direct && (direct_size == 0 || p.view_index > last_index)) {
                     lengths[p.view_index] = static_cast<std::uint32_t>(line.size());
                     window.push({p.view_index, std::string(line)});
                     window_bytes += line.size();
                     while (window_bytes > window_cap) write_first_waiting();
                     return;
                   }
                   if (direct) to_spool();
                   lengths[p.view_index] = static_cast<std::uint32_t>(line.size());
                   offsets[p.view_index] = spool.append(line);
                 });
  review(tally);  // may throw: the output's temporary file and the spool go with the stack
  require_confirmed(bench);

  if (direct) {
    while (!window.empty()) write_first_waiting();
    flush();
  } else {
    // Runs of lines that lie one after another in the spool are read with one read each, up to a
    // chunk.
    std::uint64_t run_begin = 0, run_size = 0;
    for (std::size_t i = 0; i < offsets.size(); ++i) {
      if (lengths[i] == 0) continue;
      if (run_size != 0 && (offsets[i] != run_begin + run_size || run_size + lengths[i] > kChunk)) {
        spool.read(run_begin, static_cast<std::size_t>(run_size), *buffer);
        run_size = 0;
        if (buffer->size() >= kChunk) flush();
      }
      if (run_size == 0) run_begin = offsets[i];
      run_size += lengths[i];
    }
    if (run_size != 0) spool.read(run_begin, static_cast<std::size_t>(run_size), *buffer);
    flush();
  }
  hasher.wait(pushed);
  const std::string sha = hash->hex_digest();
  // As write_scores: the manifest is made before either file is in place.
  const std::string manifest =
      io::to_pretty(score_manifest(bench, tally, responses, out, sha, allow_partial));
  file.commit();
  io::write_file_atomic(score_manifest_path(out), manifest);
  return tally;
}

}  // namespace numcheck::orbit
