// numcheck orbit repeat: the repeat check of the orbit paper (section 4.2). Re-asks N recorded
// prompts of an `orbit run` folder with exactly the recorded request (prompt, sampling, extra
// body), never from the response cache, through the same runner and client, and counts the
// responses that are byte-identical and answer-identical (the strict parser's parsed answer) to
// the recorded ones. Writes RUN/repeat.json (and the repeat's own run folder, RUN/repeat by
// default). See docs/orbit.md ("Repeat check").
#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "cli/cli_util.hpp"
#include "cli/command.hpp"
#include "cli/orbit_steps.hpp"
#include "cli/run_flags.hpp"
#include "core/error.hpp"
#include "core/prng.hpp"
#include "core/version.hpp"
#include "grade/grade.hpp"
#include "io/files.hpp"
#include "io/json.hpp"
#include "io/sha256.hpp"
#include "llm/http_backend.hpp"
#include "llm/reference.hpp"
#include "llm/runner.hpp"
#include "orbit/benchmark.hpp"

namespace numcheck::cli {
namespace {

namespace fs = std::filesystem;

struct RepeatArgs {
  std::string run;
  std::size_t n = 10;
  std::uint64_t seed = 20260725;
  std::string bench;
  std::string out;
  llm::RunOptions opts;
};

// Shown on the terminal and recorded in repeat.json.
constexpr const char* kWarning =
    "A repeat check characterizes only the prompts repeated. Greedy decoding does not make a server "
    "deterministic: llama-server reuses cached prompt prefixes (cache_prompt, on by default) and batches "
    "requests of parallel slots (--parallel N), both of which change the floating-point order of a "
    "computation. For a meaningful check run the server with one slot (--parallel 1) and send "
    "\"cache_prompt\": false in the request body (orbit run --extra-body '{\"cache_prompt\": false}'), "
    "with one request in flight (--concurrency 1).";

// The request fields the runner owns (llm::build_request_body); everything else in a recorded
// request is extra body.
bool runner_field(const std::string& k) {
  static constexpr const char* kOwn[] = {
      "model", "messages", "prompt",     "temperature",       "top_p",
      "top_k", "seed",     "max_tokens", "frequency_penalty", "presence_penalty"};
  return std::any_of(std::begin(kOwn), std::end(kOwn), [&](const char* o) { return k == o; });
}

// The strict parser's answer: the parsed value, or the failure outcome when nothing parsed.
struct Answer {
  grade::Outcome outcome = grade::Outcome::kMissing;
  std::optional<num::Rational> value;
  [[nodiscard]] bool same(const Answer& o) const {
    if (value || o.value) return value && o.value && *value == *o.value;
    return outcome == o.outcome;
  }
  [[nodiscard]] io::OrderedJson json() const {
    io::OrderedJson j = io::OrderedJson::object();
    j["strict_outcome"] = std::string(grade::outcome_name(outcome));
    j["value"] = value ? io::OrderedJson(value->str()) : io::OrderedJson(nullptr);
    return j;
  }
};
Answer answer_of(const io::Json& rec, const orbit::View& v) {
  const auto g = grade::grade_strict(rec.value("response", std::string()), {v.expected, v.answer_unit},
                                     rec.value("finish_reason", std::string("stop")));
  return Answer{g.outcome, g.value};
}

std::string without_trailing_slash(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// The system of the run, from its run.json, for every system flag the user did not give; a flag
// given that names another system (model, endpoint, --system, --inject) is a usage error here,
// before any folder is made or request sent: re-asking another model measures nothing.
void take_system_from_run(llm::RunOptions& o, const io::Json& manifest, const fs::path& run_json) {
  const io::Record r = io::Record::of(manifest, run_json.string());
  const std::string system = r.opt_string("system").value_or("");
  const bool reference = system == "reference";
  const std::string how =
      "(omit the system flags: `orbit repeat` takes the endpoint and model from run.json)";
  if (reference) {
    if (!o.endpoints.empty() || !o.model.empty()) {
      fail(ErrorCode::kUsage,
           "{} was made with --system reference; --endpoint/--model name another system {}",
           run_json.string(), how);
    }
    const llm::FaultRates recorded =
        r.has("inject")
            ? llm::FaultRates{r.object("inject").number("times_ten"), r.object("inject").number("markdown"),
                              r.object("inject").number("unit_slip"), r.object("inject").number("truncation")}
            : llm::FaultRates{};
    const std::string recorded_spec =
        fmt::format("times_ten={},markdown={},unit_slip={},truncation={}", recorded.times_ten,
                    recorded.markdown, recorded.unit_slip, recorded.truncation);
    if (!o.inject.empty() && llm::to_json(llm::parse_fault_rates(o.inject)) !=
                                 llm::to_json(llm::parse_fault_rates(recorded_spec))) {
      fail(ErrorCode::kUsage, "--inject {} differs from the run's faults ({} in {}) {}", o.inject,
           recorded_spec, run_json.string(), how);
    }
    o.system = "reference";
    o.inject = recorded_spec;
    return;
  }
  if (o.system == "reference") {
    fail(ErrorCode::kUsage, "--system reference: {} was made with the endpoint(s) it records {}",
         run_json.string(), how);
  }
  const std::string model = r.opt_string("model_requested").value_or("");
  const std::vector<std::string> endpoints = r.opt_strings("endpoints").value_or(std::vector<std::string>{});
  if (!o.model.empty() && !model.empty() && o.model != model) {
    fail(ErrorCode::kUsage, "--model {} differs from the model the run asked, {} (recorded in {}) {}",
         o.model, model, run_json.string(), how);
  }
  if (!o.endpoints.empty() && !endpoints.empty()) {
    std::set<std::string> given, recorded;
    for (const auto& e : o.endpoints) given.insert(without_trailing_slash(llm::strip_credentials(e)));
    for (const auto& e : endpoints) recorded.insert(without_trailing_slash(e));
    if (given != recorded) {
      fail(ErrorCode::kUsage,
           "--endpoint {} differs from the endpoint(s) the run asked, {} (recorded in {}) {}",
           fmt::join(o.endpoints, " "), fmt::join(endpoints, " "), run_json.string(), how);
    }
  }
  if (o.model.empty()) o.model = model;
  if (o.endpoints.empty()) o.endpoints = endpoints;
  if (o.api_key_env.empty()) {
    if (const auto settings = r.opt_object("settings"))
      o.api_key_env = settings->opt_string("api_key_env").value_or("");
  }
  if (o.model.empty() || o.endpoints.empty()) {
    fail(ErrorCode::kUsage, "{} records no endpoint or model: give --endpoint URL --model NAME",
         run_json.string());
  }
}

// The run asked again: its folder, manifest, benchmark (checked against the hashes it was run on)
// and the folder the repeat writes.
struct RepeatSource {
  fs::path run;
  io::Json manifest;
  std::string bench_dir;
  std::shared_ptr<const orbit::Benchmark> bench;
  fs::path out;
};

RepeatSource open_run(RepeatArgs& a) {
  if (a.n == 0) fail(ErrorCode::kUsage, "--n must be at least 1");
  RepeatSource src;
  src.run = a.run;
  const fs::path run_json = src.run / "run.json";
  if (!fs::is_regular_file(run_json) || !fs::is_regular_file(src.run / "responses.jsonl")) {
    fail(ErrorCode::kUsage, "--run {}: not an orbit run folder (no run.json and responses.jsonl)", a.run);
  }
  src.manifest = io::read_json_file(run_json);
  const io::Record m = io::Record::of(src.manifest, run_json.string());
  const std::string kind = m.opt_string("kind").value_or("?");
  if (kind != "orbit run")
    fail(ErrorCode::kUsage, "--run {}: run.json is of kind '{}', not 'orbit run'", a.run, kind);
  take_system_from_run(a.opts, src.manifest, run_json);
  src.out = a.out.empty() ? src.run / "repeat" : fs::path(a.out);
  require_output_dir(src.out.string());
  if (fs::exists(src.out)) {
    fail(ErrorCode::kUsage, "{} exists (an earlier repeat): remove it or give another --out",
         src.out.string());
  }
  src.bench_dir = a.bench;
  if (src.bench_dir.empty()) {
    const auto selection = m.opt_object("selection");
    const auto dir = selection ? selection->opt_string("benchmark_dir") : std::nullopt;
    if (!dir) fail(ErrorCode::kUsage, "run.json records no benchmark folder: give --bench");
    src.bench_dir = *dir;
  }
  src.bench = std::make_shared<const orbit::Benchmark>(orbit::load_benchmark(src.bench_dir));
  if (const auto hashes = m.opt_object("benchmark_sha256")) {
    for (const auto& [file, hex] : src.bench->file_sha256) {
      const auto recorded = hashes->opt_string(file);
      if (recorded && *recorded != hex) {
        fail("{}: {} differs from the one the run was made on (sha256 {} recorded in {})", src.bench_dir,
             file, *recorded, run_json.string());
      }
    }
  }
  return src;
}

// The recorded answers sorted by prompt id, then a seeded sample of n of them.
std::vector<io::Json> sample_recorded(const fs::path& run, std::size_t n, std::uint64_t seed) {
  std::vector<io::Json> recorded;
  (void)llm::read_records(run / "responses.jsonl",
                          [&](const io::Json& r, std::size_t) { recorded.push_back(r); });
  std::sort(recorded.begin(), recorded.end(), [](const io::Json& x, const io::Json& y) {
    return x.value("prompt_id", std::string()) < y.value("prompt_id", std::string());
  });
  if (recorded.empty()) fail("--run {}: responses.jsonl holds no answered prompt", run.string());
  Rng rng(seed, "orbit-repeat");
  n = std::min(n, recorded.size());
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t j = i + static_cast<std::size_t>(rng.below(recorded.size() - i));
    std::swap(recorded[i], recorded[j]);
  }
  recorded.resize(n);
  return recorded;
}

// The work item that sends a recorded request again exactly: its prompt, system prompt and
// sampling; the request's other fields (those the runner does not own) go to `extra`.
llm::WorkItem work_item_of(const io::Json& rec, const RepeatSource& src, io::Json& extra) {
  const std::string where = (src.run / "responses.jsonl").string();
  const io::Record r = io::Record::of(rec, where);
  const std::string id = r.opt_string("prompt_id").value_or("");
  const orbit::View* v = src.bench->find_view(id);
  if (v == nullptr) fail("{}: prompt {} is not in the benchmark {}", where, id, src.bench_dir);
  const auto req = r.opt_object("request");
  if (!req) fail("{}: the record of {} holds no request", where, id);
  llm::WorkItem it;
  it.item_id = id;
  if (req->contains("messages")) {
    for (const auto& m : req->objects("messages")) {
      const std::string role = m.opt_string("role").value_or("");
      if (role == "user") it.prompt = m.opt_string("content").value_or("");
      if (role == "system") it.system_prompt = m.opt_string("content").value_or("");
    }
  } else {
    it.prompt = req->opt_string("prompt").value_or("");
  }
  it.sampling.temperature = req->opt_number("temperature");
  it.sampling.top_p = req->opt_number("top_p");
  it.sampling.top_k = req->opt_integer("top_k");
  if (req->has("seed")) it.sampling.seed = req->unsigned_integer("seed");
  it.sampling.max_tokens = req->opt_integer("max_tokens");
  it.sampling.frequency_penalty = req->opt_number("frequency_penalty");
  it.sampling.presence_penalty = req->opt_number("presence_penalty");
  extra = io::Json::object();
  for (const auto& [k, val] : req->json().items()) {
    if (!runner_field(k)) extra[k] = val;
  }
  set_orbit_fields(it, *v);
  return it;
}

// What repeat.json counts, and its per-prompt rows.
struct Comparison {
  std::size_t answered = 0, bytes = 0, answers = 0, requests = 0, finish = 0;
  io::OrderedJson rows = io::OrderedJson::array();
};

Comparison compare(const std::vector<io::Json>& recorded, const fs::path& out,
                   const orbit::Benchmark& bench) {
  std::map<std::string, io::Json> again;
  if (fs::exists(out / "responses.jsonl")) {
    (void)llm::read_records(out / "responses.jsonl", [&](const io::Json& r, std::size_t) {
      again[r.value("prompt_id", std::string())] = r;
    });
  }
  Comparison c;
  for (const auto& rec : recorded) {
    const std::string id = rec["prompt_id"].get<std::string>();
    const orbit::View& v = *bench.find_view(id);
    io::OrderedJson row = io::OrderedJson::object();
    row["prompt_id"] = id;
    const Answer before = answer_of(rec, v);
    io::OrderedJson orig = before.json();
    orig["finish_reason"] = rec.value("finish_reason", std::string());
    row["recorded"] = orig;
    auto it = again.find(id);
    if (it == again.end()) {
      row["answered"] = false;
      row["byte_identical"] = false;
      row["answer_identical"] = false;
      row["request_identical"] = false;
      c.rows.push_back(row);
      continue;
    }
    const io::Json& r2 = it->second;
    ++c.answered;
    const Answer after = answer_of(r2, v);
    const bool b = r2.value("response", std::string()) == rec.value("response", std::string());
    const bool ans = before.same(after);
    const bool rq = r2.contains("request") && r2["request"] == rec["request"];
    const bool fr = r2.value("finish_reason", std::string()) == rec.value("finish_reason", std::string());
    c.bytes += b;
    c.answers += ans;
    c.requests += rq;
    c.finish += fr;
    io::OrderedJson rep = after.json();
    rep["finish_reason"] = r2.value("finish_reason", std::string());
    row["answered"] = true;
    row["repeat"] = rep;
    row["byte_identical"] = b;
    row["answer_identical"] = ans;
    row["request_identical"] = rq;
    c.rows.push_back(row);
  }
  return c;
}

void write_repeat_json(const RepeatArgs& a, const RepeatSource& src, const llm::RunSummary& sum,
                       std::size_t n, Comparison c) {
  io::OrderedJson j = io::OrderedJson::object();
  j["kind"] = "numcheck.orbit_repeat";
  j["version"] = 1;
  j["numcheck_version"] = kVersion;
  j["run_model"] = src.manifest.value("model", std::string());
  j["model"] = sum.model.empty() ? a.opts.model : sum.model;
  j["repeat_dir"] = fs::relative(fs::absolute(src.out), fs::absolute(src.run)).lexically_normal().string();
  j["seed"] = a.seed;
  j["n_requested"] = a.n;
  j["recorded_prompts"] = n == a.n ? io::OrderedJson(nullptr) : io::OrderedJson(n);
  j["selection"] = "seeded sample of the recorded prompts sorted by prompt_id (Rng(seed, \"orbit-repeat\"))";
  j["cache"] = false;
  io::OrderedJson counts = io::OrderedJson::object();
  counts["asked"] = n;
  counts["answered"] = c.answered;
  counts["byte_identical"] = c.bytes;
  counts["answer_identical"] = c.answers;
  counts["request_identical"] = c.requests;
  counts["finish_reason_identical"] = c.finish;
  j["counts"] = counts;
  j["answer"] =
      "the strict parser's parsed value in the question's unit, compared as exact rationals; when neither "
      "parses, the same strict outcome";
  j["warning"] = kWarning;
  j["items"] = std::move(c.rows);
  io::write_file_atomic(src.run / "repeat.json", io::to_pretty(j));
}

void run_repeat(RepeatArgs& a) {
  const RepeatSource src = open_run(a);
  const std::vector<io::Json> recorded = sample_recorded(src.run, a.n, a.seed);
  const std::size_t n = recorded.size();

  a.opts.no_cache = true;
  a.opts.resume = false;
  a.opts.api = src.manifest.value("api", std::string("chat"));
  auto backend = llm::make_backend(a.opts, llm::benchmark_solver(src.bench));
  llm::RunSettings s = llm::settings_from(a.opts);
  s.kind = "orbit repeat";
  s.id_field = "prompt_id";
  s.use_cache = false;
  std::vector<llm::WorkItem> items;
  std::optional<io::Json> extra;
  for (const auto& rec : recorded) {
    io::Json e;
    items.push_back(work_item_of(rec, src, e));
    if (extra && *extra != e) {
      fail("{}: the recorded requests carry different extra body fields; repeat them in separate runs",
           (src.run / "responses.jsonl").string());
    }
    extra = std::move(e);
  }
  s.extra_body = extra.value_or(io::Json::object());
  s.binding["repeat_of"] = fs::absolute(src.run).lexically_normal().string();

  fmt::print(stderr, "numcheck: note: {}\n", kWarning);
  llm::RunSummary sum;
  try {
    sum = run_session(items, s, *backend, src.out.string());
  } catch (...) {
    // A repeat that could not run (server down, preflight refused) leaves no folder behind that
    // would refuse the next try.
    std::error_code ec;
    fs::remove_all(src.out, ec);
    throw;
  }

  Comparison c = compare(recorded, src.out, *src.bench);
  const std::size_t answered = c.answered, bytes = c.bytes, answers = c.answers, requests = c.requests;
  write_repeat_json(a, src, sum, n, std::move(c));
  fmt::print(
      "repeat check: {} prompts asked again, {} answered; byte-identical {}/{}, answer-identical {}/{}\n", n,
      answered, bytes, n, answers, n);
  if (requests != answered) {
    fmt::print(
        stderr,
        "numcheck: warning: {} of {} repeated requests differ from the recorded ones (another model name "
        "or endpoint?)\n",
        answered - requests, answered);
  }
  fmt::print("wrote {}\n", (src.run / "repeat.json").string());
  if (sum.unanswered > 0) {
    throw Error(ErrorCode::kIncomplete,
                fmt::format("{} of {} repeated prompts are unanswered (see {}); they count as not identical",
                            sum.unanswered, n, (src.out / "errors.jsonl").string()));
  }
}

void setup(CLI::App& app) {
  auto a = std::make_shared<RepeatArgs>();
  app.add_option("--run", a->run, "Run folder of `numcheck orbit run` (run.json, responses.jsonl)")
      ->required();
  add_run_flags(app, a->opts);
  // The request is the recorded one: its sampling, system prompt and extra body are not flags here,
  // the cache is never used and a repeat is never resumed.
  for (const char* f : {"--seed", "--temperature", "--top-p", "--top-k", "--no-top-k", "--max-tokens",
                        "--frequency-penalty", "--presence-penalty", "--extra-body", "--system-prompt",
                        "--resume", "--no-cache", "--api", "--cache-dir"}) {
    if (auto* o = app.get_option_no_throw(f)) app.remove_option(o);
  }
  app.add_option("--n", a->n, "Number of recorded prompts to ask again")->capture_default_str();
  app.add_option("--seed", a->seed, "Seed of the choice of prompts (a seeded sample of the recorded ones)")
      ->capture_default_str();
  app.add_option("--bench", a->bench,
                 "Benchmark of the run (default: the folder recorded in run.json), for the expected answers' "
                 "units");
  app.add_option("--out", a->out,
                 "Run folder of the repeated requests (default: RUN/repeat; must not exist)");
  app.footer(
      "The endpoint, model, API key variable (or --system reference and its --inject) are taken from "
      "run.json; a system flag that names another one is an error before any request. Writes "
      "RUN/repeat.json (also when some repeated prompts are unanswered). See docs/orbit.md.");
  app.callback([a] { run_repeat(*a); });
}

const CommandRegistration reg{
    {"orbit",
     "repeat",
     "Repeat check: ask N recorded prompts of a run again (no cache) and count byte- and answer-identical "
     "responses",
     setup,
     "numcheck orbit repeat --run out/runs/my-model --n 10",
     {"repeat.json written (whatever the counts)",
      "some repeated prompts unanswered (repeat.json is still written)"}}};

}  // namespace
}  // namespace numcheck::cli
