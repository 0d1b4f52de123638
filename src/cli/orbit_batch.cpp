// numcheck orbit batch export|import: an orbit run through a batch engine instead of live
// requests (OpenAI's Batch API, vLLM's run_batch). See docs/batch.md.
//   export  the prompts of a selection as a batch input file (the request bodies `orbit run`
//           sends) and its manifest (FILE.manifest.json: benchmark, selection, request settings)
//   import  the batch's output file(s) as a run folder `orbit score` reads like a live run's
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cli/cli_util.hpp"
#include "cli/command.hpp"
#include "cli/orbit_steps.hpp"
#include "cli/run_flags.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"
#include "llm/batch.hpp"
#include "llm/options.hpp"
#include "orbit/benchmark.hpp"

namespace numcheck::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kManifestFormat = "numcheck-orbit-batch/1";

fs::path manifest_path(const fs::path& input) {
  fs::path p = input;
  p += ".manifest.json";
  return p;
}

llm::Api api_of(const std::string& api) {
  return api == "completions" ? llm::Api::kCompletions : llm::Api::kChat;
}

// The request settings a manifest records (the RunOptions fields that shape a request body).
io::OrderedJson request_json(const llm::RunOptions& o) {
  io::OrderedJson j = io::OrderedJson::object();
  j["model"] = o.model;
  j["api"] = o.api;
  j["temperature"] = o.temperature;
  j["top_p"] = o.top_p;
  j["top_k"] = o.top_k ? io::OrderedJson(*o.top_k) : io::OrderedJson();  // null: not sent
  j["seed"] = o.seed;
  j["max_tokens"] = o.max_tokens;
  j["frequency_penalty"] = o.frequency_penalty ? io::OrderedJson(*o.frequency_penalty) : io::OrderedJson();
  j["presence_penalty"] = o.presence_penalty ? io::OrderedJson(*o.presence_penalty) : io::OrderedJson();
  j["system_prompt"] = o.system_prompt;
  j["extra_body"] = o.extra_body;
  j["model_file"] = o.model_file;
  return j;
}

llm::RunOptions options_of(const io::OrderedRecord& r) {
  llm::RunOptions o;
  o.model = r.string("model");
  o.api = r.string("api");
  if (o.api != "chat" && o.api != "completions") r.fail_field("api", "must be \"chat\" or \"completions\"");
  o.temperature = r.number("temperature");
  o.top_p = r.number("top_p");
  // null: not sent (--no-top-k); absent: refused, as a manifest with no top_k is not ours
  o.top_k = r.contains("top_k") ? r.opt_integer("top_k") : std::optional<std::int64_t>(r.integer("top_k"));
  o.seed = r.unsigned_integer("seed");
  o.max_tokens = r.integer("max_tokens", 1);
  o.frequency_penalty = r.opt_number("frequency_penalty");
  o.presence_penalty = r.opt_number("presence_penalty");
  o.system_prompt = r.string("system_prompt");
  o.extra_body = r.string("extra_body");
  o.model_file = r.string("model_file");
  o.no_cache = true;
  return o;
}

io::OrderedJson selection_json(const orbit::SelectionSpec& s) {
  io::OrderedJson j = io::OrderedJson::object();
  j["bases"] = s.bases ? io::OrderedJson(*s.bases) : io::OrderedJson();
  j["templates"] = s.templates;
  j["views"] = s.views;
  j["base_ids_file"] = s.base_ids_file ? io::OrderedJson(s.base_ids_file->string()) : io::OrderedJson();
  return j;
}

orbit::SelectionSpec selection_of(const io::OrderedRecord& r) {
  orbit::SelectionSpec s;
  if (r.has("bases")) s.bases = r.unsigned_integer("bases");
  s.templates = r.strings("templates");
  s.views = r.strings("views");
  if (auto f = r.opt_string("base_ids_file")) s.base_ids_file = *f;
  return s;
}

// A batch exports what a live run would send, and sends nothing itself.
void refuse_live_flags(const llm::RunOptions& o) {
  if (!o.endpoints.empty() || !o.system.empty() || !o.api_key_env.empty() || o.resume) {
    fail(ErrorCode::kUsage,
         "orbit batch sends no request: --endpoint, --system, --api-key-env and --resume belong to `orbit "
         "run`");
  }
}

// The items and settings of an export, from the benchmark, the selection and the options.
struct Prepared {
  std::vector<llm::WorkItem> items;
  llm::RunSettings settings;
  llm::BatchRequests requests;
};

Prepared prepare(const std::string& bench_dir, const orbit::SelectionSpec& sel, const llm::RunOptions& o) {
  Prepared p;
  p.settings = llm::settings_from(o);
  orbit::Benchmark bench = orbit::load_benchmark(bench_dir);
  orbit::verify_benchmark(bench);
  p.items = orbit_items(bench, bench_dir, sel, /*take_prompts=*/true, p.settings);
  p.requests = llm::batch_requests(p.items, p.settings, api_of(o.api));
  return p;
}

// ---- export ------------------------------------------------------------------------------------

struct ExportArgs {
  std::string bench, out, templates, views, base_ids;
  std::optional<std::size_t> bases;
  llm::RunOptions opts;
};

void setup_export(CLI::App& app) {
  auto a = std::make_shared<ExportArgs>();
  app.footer(
      help_footer("numcheck orbit batch export --bench out/bench --out batch/in.jsonl --bases 100 --model "
                  "Qwen/Qwen3-4B",
                  {"written"}));
  app.add_option("--bench", a->bench, "Benchmark directory written by `numcheck orbit generate`")->required();
  app.add_option("--out", a->out,
                 "Batch input file to write (JSONL, one request line per prompt); its manifest is written "
                 "beside it as FILE.manifest.json")
      ->required();
  app.add_option("--bases", a->bases, "A stratified, seeded sample of N bases (as `orbit run --bases`)");
  app.add_option("--templates", a->templates, "Comma-separated template ids (default: all)");
  app.add_option("--views", a->views, "Comma-separated views or 'all' (as `orbit run --views`)");
  app.add_option("--base-ids", a->base_ids, "File with the base ids to export, one per line ('#' comments)");
  add_run_flags(app, a->opts);
  app.callback([a] {
    refuse_live_flags(a->opts);
    if (a->opts.model.empty())
      fail(ErrorCode::kUsage, "--model is required: every request line names the model");
    orbit::SelectionSpec sel;
    sel.bases = a->bases;
    sel.templates = split_list(a->templates);
    sel.views = split_list(a->views);
    if (!a->base_ids.empty()) sel.base_ids_file = a->base_ids;
    const Prepared p = prepare(a->bench, sel, a->opts);

    io::OrderedJson m = io::OrderedJson::object();
    m["format"] = kManifestFormat;
    m["numcheck_version"] = kVersion;
    m["input_file"] = fs::path(a->out).filename().string();
    m["input_sha256"] = io::sha256_hex(p.requests.lines);
    m["requests"] = p.items.size();
    m["url"] = llm::batch_url(api_of(a->opts.api));
    m["custom_id"] = "<prompt_id>#<first 16 hex digits of the request body's sha256>";
    m["benchmark_dir"] = a->bench;
    m["benchmark_sha256"] = p.settings.binding["benchmark_sha256"];
    m["selection"] = selection_json(sel);
    m["request"] = request_json(a->opts);
    const fs::path out(a->out);
    if (out.has_parent_path()) fs::create_directories(out.parent_path());
    io::write_file_atomic(out, p.requests.lines);
    io::write_file_atomic(manifest_path(out), io::to_pretty(m));
    fmt::print("{}: {} request lines for {} ({}); manifest {}\n", a->out, p.items.size(), a->opts.model,
               llm::batch_url(api_of(a->opts.api)), manifest_path(out).string());
    fmt::print(
        "next: run the batch, then numcheck orbit batch import --bench {} --batch-input {} "
        "--batch-output OUTPUT.jsonl --out RUNDIR\n",
        a->bench, a->out);
  });
}

// ---- import ------------------------------------------------------------------------------------

struct ImportArgs {
  std::string bench, input, out;
  std::vector<std::string> outputs;
};

void setup_import(CLI::App& app) {
  auto a = std::make_shared<ImportArgs>();
  app.footer(
      help_footer("numcheck orbit batch import --bench out/bench --batch-input batch/in.jsonl --batch-output "
                  "batch/out.jsonl --out out/run-batch",
                  {"every prompt answered",
                   "some prompts unanswered: an error line (kept in errors.jsonl) or no line in the output",
                   "error (one line on stderr; refused output lines are listed, nothing is written)"}));
  app.add_option("--bench", a->bench, "Benchmark directory the batch was exported from")->required();
  app.add_option("--batch-input", a->input,
                 "The batch input file `orbit batch export` wrote (its FILE.manifest.json beside it)")
      ->required();
  app.add_option("--batch-output", a->outputs,
                 "Batch output file (OpenAI Batch API or vLLM run_batch format); repeat for the output of a "
                 "retried batch")
      ->required();
  app.add_option("--out", a->out, "Run folder to write (responses.jsonl, errors.jsonl, run.json)")
      ->required();
  app.callback([a] {
    require_output_dir(a->out);
    const fs::path mpath = manifest_path(a->input);
    if (!fs::is_regular_file(mpath))
      fail(ErrorCode::kUsage, "--batch-input {}: no manifest {} beside it (written by `orbit batch export`)",
           a->input, mpath.string());
    const std::string mtext = io::read_file(mpath);
    const io::OrderedJson mj = io::parse_ordered_json(mtext, mpath.string());
    const auto m = io::OrderedRecord::of(mj, mpath.string());
    if (m.string("format") != kManifestFormat)
      m.fail_field("format", fmt::format("must be \"{}\"", kManifestFormat));
    const std::string input_sha = m.string("input_sha256");
    const std::string input_bytes = io::read_file(a->input);
    if (io::sha256_hex(input_bytes) != input_sha) {
      fail("{}: its sha256 is not the one its manifest {} records: the file was changed after the export",
           a->input, mpath.string());
    }
    const llm::RunOptions opts = options_of(m.object("request"));
    const Prepared p = prepare(a->bench, selection_of(m.object("selection")), opts);
    if (io::to_line(p.settings.binding.at("benchmark_sha256")) != io::to_line(mj.at("benchmark_sha256"))) {
      fail(ErrorCode::kUsage,
           "--bench {}: not the benchmark the batch was exported from ({} records its files' sha256)",
           a->bench, mpath.string());
    }
    if (io::sha256_hex(p.requests.lines) != input_sha) {
      fail(
          "{}: the requests made now from --bench {} and the manifest differ from the exported ones (another "
          "numcheck version, or a --base-ids file that changed?); export the batch again",
          a->input, a->bench);
    }
    std::vector<fs::path> outputs(a->outputs.begin(), a->outputs.end());
    io::OrderedJson prov = io::OrderedJson::object();
    prov["input_file"] = fs::path(a->input).filename().string();
    prov["manifest_sha256"] = io::sha256_hex(mtext);
    const llm::BatchImport r =
        llm::import_batch(p.items, p.settings, api_of(opts.api), outputs, prov, a->out);
    fmt::print("{}\n", llm::batch_summary(r, a->out, "prompts"));
    fmt::print("next: numcheck orbit score --bench {} --responses {} --out {}\n", a->bench,
               (fs::path(a->out) / "responses.jsonl").string(), (fs::path(a->out) / "scores.jsonl").string());
    llm::check_batch_complete(r, a->out, "prompts");
  });
}

void setup(CLI::App& app) {
  app.require_subcommand(1);
  setup_export(*app.add_subcommand(
      "export", "Write a selection's prompts as a batch input file (OpenAI Batch API / vLLM run_batch)"));
  setup_import(*app.add_subcommand("import", "Turn a batch's output file into a run folder"));
}

const CommandRegistration reg{
    {"orbit",
     "batch",
     "Run a benchmark as a batch (OpenAI Batch API, vLLM run_batch): export requests, import answers",
     setup,
     "numcheck orbit batch export --bench out/bench --out batch/in.jsonl --model Qwen/Qwen3-4B",
     {"done", "some prompts unanswered (import)"}}};

}  // namespace
}  // namespace numcheck::cli
