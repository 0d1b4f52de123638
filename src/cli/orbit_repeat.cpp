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

void setup(CLI::App& app) {
  auto a = std::make_shared<RepeatArgs>();
  app.add_option("--run", a->run, "Run folder of `numcheck orbit run` (run.json, responses.jsonl)")
      ->required();
  add_run_flags(app, a->opts);
  // The request is the recorded one: its sampling, system prompt and extra body are not flags here,
  // the cache is never used and a repeat is never resumed.
  for (const char* f : {"--seed", "--temperature", "--top-p", "--top-k", "--max-tokens",
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
  app.callback([a] {
    if (a->n == 0) fail(ErrorCode::kUsage, "--n must be at least 1");
    const fs::path run(a->run);
    if (!fs::is_regular_file(run / "run.json") || !fs::is_regular_file(run / "responses.jsonl")) {
      fail(ErrorCode::kUsage, "--run {}: not an orbit run folder (no run.json and responses.jsonl)", a->run);
    }
    const io::Json manifest = io::read_json_file(run / "run.json");
    if (manifest.value("kind", std::string()) != "orbit run") {
      fail(ErrorCode::kUsage, "--run {}: run.json is of kind '{}', not 'orbit run'", a->run,
           manifest.value("kind", std::string("?")));
    }
    take_system_from_run(a->opts, manifest, run / "run.json");
    const fs::path out = a->out.empty() ? run / "repeat" : fs::path(a->out);
    require_output_dir(out.string());
    if (fs::exists(out)) {
      fail(ErrorCode::kUsage, "{} exists (an earlier repeat): remove it or give another --out", out.string());
    }
    std::string bench_dir = a->bench;
    if (bench_dir.empty()) {
      if (manifest.contains("selection") && manifest["selection"].contains("benchmark_dir") &&
          manifest["selection"]["benchmark_dir"].is_string()) {
        bench_dir = manifest["selection"]["benchmark_dir"].get<std::string>();
      } else {
        fail(ErrorCode::kUsage, "run.json records no benchmark folder: give --bench");
      }
    }
    auto bench = std::make_shared<const orbit::Benchmark>(orbit::load_benchmark(bench_dir));
    if (manifest.contains("benchmark_sha256") && manifest["benchmark_sha256"].is_object()) {
      for (const auto& [file, hex] : bench->file_sha256) {
        if (manifest["benchmark_sha256"].contains(file) && manifest["benchmark_sha256"][file] != hex) {
          fail("{}: {} differs from the one the run was made on (sha256 {} recorded in {})", bench_dir, file,
               manifest["benchmark_sha256"][file].get<std::string>(), (run / "run.json").string());
        }
      }
    }

    // The recorded answers, sorted by prompt id, then a seeded sample of N.
    std::vector<io::Json> recorded;
    (void)llm::read_records(run / "responses.jsonl",
                            [&](const io::Json& r, std::size_t) { recorded.push_back(r); });
    std::sort(recorded.begin(), recorded.end(), [](const io::Json& x, const io::Json& y) {
      return x.value("prompt_id", std::string()) < y.value("prompt_id", std::string());
    });
    if (recorded.empty()) fail("--run {}: responses.jsonl holds no answered prompt", a->run);
    Rng rng(a->seed, "orbit-repeat");
    const std::size_t n = std::min(a->n, recorded.size());
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t j = i + static_cast<std::size_t>(rng.below(recorded.size() - i));
      std::swap(recorded[i], recorded[j]);
    }
    recorded.resize(n);

    // Work items that rebuild each recorded request exactly.
    llm::SolveFn solver = llm::benchmark_solver(bench);
    a->opts.no_cache = true;
    a->opts.resume = false;
    a->opts.api = manifest.value("api", std::string("chat"));
    auto backend = llm::make_backend(a->opts, solver);
    llm::RunSettings s = llm::settings_from(a->opts);
    s.kind = "orbit repeat";
    s.id_field = "prompt_id";
    s.use_cache = false;
    std::vector<llm::WorkItem> items;
    std::optional<io::Json> extra;
    for (const auto& rec : recorded) {
      const std::string id = rec.value("prompt_id", std::string());
      const orbit::View* v = bench->find_view(id);
      if (v == nullptr)
        fail("{}: prompt {} is not in the benchmark {}", (run / "responses.jsonl").string(), id, bench_dir);
      if (!rec.contains("request") || !rec["request"].is_object()) {
        fail("{}: the record of {} holds no request", (run / "responses.jsonl").string(), id);
      }
      const io::Json& req = rec["request"];
      llm::WorkItem it;
      it.item_id = id;
      if (req.contains("messages") && req["messages"].is_array()) {
        for (const auto& m : req["messages"]) {
          const std::string role = m.value("role", std::string());
          if (role == "user") it.prompt = m.value("content", std::string());
          if (role == "system") it.system_prompt = m.value("content", std::string());
        }
      } else {
        it.prompt = req.value("prompt", std::string());
      }
      if (req.contains("temperature")) it.sampling.temperature = req["temperature"].get<double>();
      if (req.contains("top_p")) it.sampling.top_p = req["top_p"].get<double>();
      if (req.contains("top_k")) it.sampling.top_k = req["top_k"].get<std::int64_t>();
      if (req.contains("seed")) it.sampling.seed = req["seed"].get<std::uint64_t>();
      if (req.contains("max_tokens")) it.sampling.max_tokens = req["max_tokens"].get<std::int64_t>();
      if (req.contains("frequency_penalty"))
        it.sampling.frequency_penalty = req["frequency_penalty"].get<double>();
      if (req.contains("presence_penalty"))
        it.sampling.presence_penalty = req["presence_penalty"].get<double>();
      io::Json e = io::Json::object();
      for (const auto& [k, val] : req.items()) {
        if (!runner_field(k)) e[k] = val;
      }
      if (extra && *extra != e) {
        fail("{}: the recorded requests carry different extra body fields; repeat them in separate runs",
             (run / "responses.jsonl").string());
      }
      extra = e;
      set_orbit_fields(it, *v);
      items.push_back(std::move(it));
    }
    s.extra_body = extra.value_or(io::Json::object());
    s.binding["repeat_of"] = fs::absolute(run).lexically_normal().string();

    fmt::print(stderr, "numcheck: note: {}\n", kWarning);
    llm::RunSummary sum;
    try {
      sum = run_session(items, s, *backend, out.string());
    } catch (...) {
      // A repeat that could not run (server down, preflight refused) leaves no folder behind that
      // would refuse the next try.
      std::error_code ec;
      fs::remove_all(out, ec);
      throw;
    }

    // Compare.
    std::map<std::string, io::Json> again;
    if (fs::exists(out / "responses.jsonl")) {
      (void)llm::read_records(out / "responses.jsonl", [&](const io::Json& r, std::size_t) {
        again[r.value("prompt_id", std::string())] = r;
      });
    }
    std::size_t answered = 0, bytes = 0, answers = 0, requests = 0, finish = 0;
    io::OrderedJson rows = io::OrderedJson::array();
    for (const auto& rec : recorded) {
      const std::string id = rec["prompt_id"].get<std::string>();
      const orbit::View& v = *bench->find_view(id);
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
        rows.push_back(row);
        continue;
      }
      const io::Json& r2 = it->second;
      ++answered;
      const Answer after = answer_of(r2, v);
      const bool b = r2.value("response", std::string()) == rec.value("response", std::string());
      const bool ans = before.same(after);
      const bool rq = r2.contains("request") && r2["request"] == rec["request"];
      const bool fr = r2.value("finish_reason", std::string()) == rec.value("finish_reason", std::string());
      bytes += b;
      answers += ans;
      requests += rq;
      finish += fr;
      io::OrderedJson rep = after.json();
      rep["finish_reason"] = r2.value("finish_reason", std::string());
      row["answered"] = true;
      row["repeat"] = rep;
      row["byte_identical"] = b;
      row["answer_identical"] = ans;
      row["request_identical"] = rq;
      rows.push_back(row);
    }
    io::OrderedJson j = io::OrderedJson::object();
    j["kind"] = "numcheck.orbit_repeat";
    j["version"] = 1;
    j["numcheck_version"] = kVersion;
    j["run_model"] = manifest.value("model", std::string());
    j["model"] = sum.model.empty() ? a->opts.model : sum.model;
    j["repeat_dir"] = fs::relative(fs::absolute(out), fs::absolute(run)).lexically_normal().string();
    j["seed"] = a->seed;
    j["n_requested"] = a->n;
    j["recorded_prompts"] = n == a->n ? io::OrderedJson(nullptr) : io::OrderedJson(n);
    j["selection"] =
        "seeded sample of the recorded prompts sorted by prompt_id (Rng(seed, \"orbit-repeat\"))";
    j["cache"] = false;
    io::OrderedJson c = io::OrderedJson::object();
    c["asked"] = n;
    c["answered"] = answered;
    c["byte_identical"] = bytes;
    c["answer_identical"] = answers;
    c["request_identical"] = requests;
    c["finish_reason_identical"] = finish;
    j["counts"] = c;
    j["answer"] =
        "the strict parser's parsed value in the question's unit, compared as exact rationals; when neither "
        "parses, the same strict outcome";
    j["warning"] = kWarning;
    j["items"] = rows;
    io::write_file_atomic(run / "repeat.json", io::to_pretty(j));
    fmt::print(
        "repeat check: {} prompts asked again, {} answered; byte-identical {}/{}, answer-identical {}/{}\n",
        n, answered, bytes, n, answers, n);
    if (requests != answered) {
      fmt::print(
          stderr,
          "numcheck: warning: {} of {} repeated requests differ from the recorded ones (another model name "
          "or endpoint?)\n",
          answered - requests, answered);
    }
    fmt::print("wrote {}\n", (run / "repeat.json").string());
    if (sum.unanswered > 0) {
      throw Error(
          ErrorCode::kIncomplete,
          fmt::format("{} of {} repeated prompts are unanswered (see {}); they count as not identical",
                      sum.unanswered, n, (out / "errors.jsonl").string()));
    }
  });
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
