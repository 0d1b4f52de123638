// numcheck claims questions-quality: diversity ((1 - self-BLEU) + word position deviation) and,
// with an endpoint, relevance (question-claim embedding cosine through /v1/embeddings) of
// decomposed questions, as in the QuanTemp paper's Table 5. See docs/claims-reference.md, "Question quality".
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "claims/decompose.hpp"
#include "claims/load.hpp"
#include "claims/question_quality.hpp"
#include "claimsllm/stages.hpp"
#include "cli/cli_util.hpp"
#include "cli/command.hpp"
#include "core/error.hpp"
#include "doc/document.hpp"
#include "io/files.hpp"
#include "llm/cache.hpp"
#include "llm/embeddings.hpp"

namespace numcheck::cli {
namespace {

struct Args {
  std::string questions;
  std::vector<std::string> endpoints;
  std::string model;
  std::string api_key_env;
  std::string json_out;
  std::string embed_run, cache_dir;
  bool resume = false, no_cache = false;
  std::size_t concurrency = 4;
  std::size_t embed_batch = 64;
  int retries = 4;
  double retry_base_s = 1.0;
  double timeout_s = 120;
};

// A decompositions JSONL (claims decompose output) or any claims file with questions.
std::vector<claims::Decomposition> load_questions(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".jsonl" || ext == ".ndjson") {
    bool decompositions = false;
    io::for_each_line(path, [&](const io::Line& l) {
      if (l.number != 1) return;
      const auto j = io::try_parse_json(l.text, path);
      decompositions =
          j.ok() && j.value->is_object() && j.value->contains("questions") && j.value->contains("id");
    });
    if (decompositions) return claims::load_decompositions(path);
  }
  const auto loaded = claims::load_claims(path);
  report_issues(loaded.issues);
  return claims::released_decompositions(loaded.claims);
}

void setup(CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--questions", a->questions,
                 "decompositions.jsonl from `claims decompose`, or a claims file with questions "
                 "(test_claimdecomp.csv)")
      ->required();
  app.add_option("--endpoint", a->endpoints,
                 "OpenAI-compatible base URL including /v1 (POST /embeddings), for relevance; repeatable");
  app.add_option("--model", a->model, "Embedding model name (with --endpoint)");
  app.add_option("--api-key-env", a->api_key_env, "Environment variable holding the API key");
  app.add_option("--embed-run", a->embed_run,
                 "Embeddings runner directory (default: the --json file + .embeddings)");
  app.add_flag("--resume", a->resume, "Continue the embeddings runner directory");
  app.add_flag("--no-cache", a->no_cache, "Neither read nor write the response cache");
  app.add_option("--cache-dir", a->cache_dir, "Response cache folder");
  app.add_option("--concurrency", a->concurrency, "Embedding requests in flight")->capture_default_str();
  app.add_option("--embed-batch", a->embed_batch, "Texts per embeddings request (the input array)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{2048}))
      ->capture_default_str();
  app.add_option("--retries", a->retries, "Extra attempts after a retryable failure")->capture_default_str();
  app.add_option("--retry-base-delay", a->retry_base_s, "First backoff delay (s)")->capture_default_str();
  app.add_option("--timeout", a->timeout_s, "Seconds per embeddings request")->capture_default_str();
  app.add_option("--json", a->json_out, "Also write the figures as JSON to this file");
  app.footer(
      "Relevance is the cosine between question and claim embeddings from /v1/embeddings (one vector per "
      "text, through the runner: cache, retries, resume, every answer checked against a probe's dimension "
      "and model), not the paper's BERTScore (token embeddings).");
  app.callback([a] {
    if (a->endpoints.empty() != a->model.empty())
      fail(ErrorCode::kUsage, "relevance needs both --endpoint and --model");
    if (!a->endpoints.empty() && a->embed_run.empty() && a->json_out.empty())
      fail(ErrorCode::kUsage,
           "relevance needs --embed-run DIR (or --json FILE: DIR is then FILE.embeddings)");
    const auto records = load_questions(a->questions);
    claims::QuestionQuality q = claims::question_quality(records);
    if (!a->endpoints.empty()) {
      llm::EmbedOptions eo;
      eo.kind = "claims questions-quality embeddings";
      eo.endpoints = a->endpoints;
      eo.model = a->model;
      if (!a->api_key_env.empty()) {
        const char* key = std::getenv(a->api_key_env.c_str());
        if (key == nullptr || *key == 0)
          fail(ErrorCode::kUsage, "--api-key-env {}: that environment variable is not set", a->api_key_env);
        eo.api_key = key;
      }
      eo.run_dir = a->embed_run.empty() ? std::filesystem::path(a->json_out + ".embeddings")
                                        : std::filesystem::path(a->embed_run);
      eo.resume = a->resume;
      eo.use_cache = !a->no_cache;
      if (!a->cache_dir.empty()) eo.cache_path = llm::default_cache_path(a->cache_dir);
      eo.concurrency = a->concurrency;
      eo.batch_size = a->embed_batch;
      eo.retries = a->retries;
      eo.retry_base_s = a->retry_base_s;
      eo.timeout_s = a->timeout_s;
      claimsllm::add_relevance(q, records, eo);
    }
    using doc::html::Cell;
    doc::html::Table t;
    t.header = {"measure", "value"};
    auto row = [&](std::string name, std::string value, bool emph = false) {
      t.rows.push_back({Cell{std::move(name), false, emph, {}, {}}, Cell::num(std::move(value))});
    };
    row("records", fmt::format("{}", q.records));
    row("scored (status ok, with questions)", fmt::format("{}", q.scored));
    row("not ok", fmt::format("{}", q.not_ok));
    row("questions per claim",
        fmt::format("{:.2f}",
                    q.scored > 0 ? static_cast<double>(q.questions) / static_cast<double>(q.scored) : 0.0));
    row("claims with 2+ questions", fmt::format("{}", q.diversity_claims));
    row("self-BLEU", fmt::format("{:.3f}", q.self_bleu));
    row("1 - self-BLEU", fmt::format("{:.3f}", 1.0 - q.self_bleu));
    row("WPD", fmt::format("{:.3f}", q.wpd));
    row("diversity = (1 - self-BLEU) + WPD", fmt::format("{:.3f}", q.diversity), true);
    row("yes/no questions", fmt::format("{:.1f}%", 100.0 * q.yes_no_share));
    if (q.relevance)
      row(fmt::format("relevance (embedding cosine, {})", q.relevance_model),
          fmt::format("{:.3f}", *q.relevance), true);
    else
      row("relevance", "not measured (give --endpoint and --model)");
    doc::Document d;
    d.table(std::move(t));
    fmt::print("{}", d.to_markdown());
    if (!a->json_out.empty()) {
      io::OrderedJson j = claims::question_quality_json(q);
      j["questions_file"] = a->questions;
      io::write_file_atomic(a->json_out, io::to_pretty(j));
    }
  });
}

const CommandRegistration reg{{"claims",
                               "questions-quality",
                               "Diversity and relevance of decomposed questions (QuanTemp Table 5)",
                               setup,
                               "numcheck claims questions-quality --questions cd-qwen/decompositions.jsonl",
                               {"printed", "some texts got no embedding (run again with --resume)"}}};

}  // namespace
}  // namespace numcheck::cli
