// numcheck claims questions-quality: diversity ((1 - self-BLEU) + word position deviation) and,
// with an endpoint, relevance (question-claim embedding cosine through /v1/embeddings) of
// decomposed questions, as in the QuanTemp paper's Table 5. See docs/claims.md, "Question quality".
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

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
#include "llm/embeddings.hpp"

namespace numcheck::cli {
namespace {

struct Args {
  std::string questions;
  std::string endpoint;
  std::string model;
  std::string api_key_env;
  std::string json_out;
  std::size_t batch = 64;
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
  app.add_option("--endpoint", a->endpoint, "OpenAI-compatible base URL with /v1/embeddings, for relevance");
  app.add_option("--model", a->model, "Embedding model name (with --endpoint)");
  app.add_option("--api-key-env", a->api_key_env, "Environment variable holding the API key");
  app.add_option("--batch", a->batch, "Texts per embeddings request")->capture_default_str();
  app.add_option("--timeout", a->timeout_s, "Seconds per embeddings request")->capture_default_str();
  app.add_option("--json", a->json_out, "Also write the figures as JSON to this file");
  app.footer(
      "Relevance is the cosine between question and claim embeddings from /v1/embeddings (one vector per "
      "text), not the paper's BERTScore (token embeddings).");
  app.callback([a] {
    if (a->endpoint.empty() != a->model.empty())
      fail(ErrorCode::kUsage, "relevance needs both --endpoint and --model");
    const auto records = load_questions(a->questions);
    claims::QuestionQuality q = claims::question_quality(records);
    if (!a->endpoint.empty()) {
      llm::EmbeddingConfig cfg;
      cfg.endpoint = a->endpoint;
      cfg.model = a->model;
      cfg.batch = a->batch;
      cfg.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(a->timeout_s * 1000));
      if (!a->api_key_env.empty()) {
        const char* key = std::getenv(a->api_key_env.c_str());
        if (key == nullptr || *key == 0)
          fail(ErrorCode::kUsage, "--api-key-env {}: that environment variable is not set", a->api_key_env);
        cfg.api_key = key;
      }
      claimsllm::add_relevance(q, records, cfg);
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

const CommandRegistration reg{{"claims", "questions-quality",
                               "Diversity and relevance of decomposed questions (QuanTemp Table 5)", setup}};

}  // namespace
}  // namespace numcheck::cli
