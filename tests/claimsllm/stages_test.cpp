// The claim pipeline's model stages against the test server's canned claims mode: decomposition
// (ClaimDecomp, ProgramFC) and the LLM verifier with good, malformed and refused answers, parse
// failures recorded and counted with their raw text, the paper's sampling settings sent and
// recorded, identical outputs on a second run and after a resumed one, few-shot prompts that never
// hold the verified claim, and relevance through /v1/embeddings.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "claims/load.hpp"
#include "claimsllm/stages.hpp"
#include "core/error.hpp"
#include "embeddings_server.hpp"
#include "io/files.hpp"
#include "llm/embeddings.hpp"
#include "llm/http_backend.hpp"
#include "test_server.hpp"

namespace numcheck::claimsllm {
namespace {

namespace fs = std::filesystem;

class StagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("numcheck_stages_{}_{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    testing::ServerOptions o;
    o.claims = true;
    server_ = std::make_unique<testing::TestServer>(o, llm::SolveFn{});
    server_->start();
  }
  void TearDown() override {
    server_->stop();
    fs::remove_all(dir_);
  }
  llm::RunSettings settings() const {
    llm::RunSettings s;
    s.model = "test-model";
    s.id_field = "id";
    s.retry.base_delay = std::chrono::milliseconds(1);
    s.retry.max_delay = std::chrono::milliseconds(5);
    s.retry.retries = 1;
    s.progress = llm::ProgressMode::kNone;
    s.use_cache = false;
    s.fsync = false;
    return s;
  }
  std::unique_ptr<llm::Backend> backend() const {
    llm::HttpConfig cfg;
    cfg.endpoints = {server_->base_url()};
    cfg.model = "test-model";
    return llm::make_http_backend(cfg);
  }
  std::vector<claims::Claim> claims_file() const {
    const std::string text =
        "{\"claim\": \"Texas added 2 million jobs in a decade.\"}\n"
        "{\"claim\": \"Crime fell 20% [malformed] in 2019.\"}\n"
        "{\"claim\": \"The budget was cut in half [refuse].\"}\n"
        "{\"claim\": \"Exports grew 5% [fail] last year.\"}\n"
        "{\"claim\": \"Wages rose 3 percent in 2018.\"}\n";
    const fs::path f = dir_ / "claims.jsonl";
    std::ofstream(f) << text;
    return claims::load_claims(f).claims;
  }
  static std::string slurp(const fs::path& p) { return io::read_file(p); }

  fs::path dir_;
  std::unique_ptr<testing::TestServer> server_;
};

TEST_F(StagesTest, ClaimDecompRecordsParseFailuresAndSendsThePapersSettings) {
  server_->set_faults({{"[fail]", testing::FaultKind::k400}});
  const auto cl = claims_file();
  DecomposeSpec spec;
  spec.method = claims::DecompMethod::kClaimDecomp;
  spec.prompt = claims::builtin_prompt("claimdecomp");
  auto s = settings();
  apply_prompt_sampling(s, spec.prompt, {"max_tokens"});
  s.sampling.max_tokens = 99;
  auto b = backend();
  const auto sum = llm::run_items(decompose_items(cl, spec), s, *b, dir_ / "d");
  EXPECT_EQ(sum.unanswered, 1u);
  const StageCounts c = write_decompositions(cl, spec, dir_ / "d");
  EXPECT_EQ(c.records, 5u);
  EXPECT_EQ(c.ok, 2u);
  EXPECT_EQ(c.parse_failures, 2u);
  EXPECT_EQ(c.errors, 1u);
  const auto d = claims::load_decompositions(dir_ / "d" / "decompositions.jsonl");
  ASSERT_EQ(d.size(), 5u);
  EXPECT_EQ(d[0].id, "claims:1");
  EXPECT_EQ(d[0].status, "ok");
  EXPECT_EQ(d[0].questions.size(), 3u);
  EXPECT_EQ(d[0].questions[0], "Is it true that Texas added 2 million jobs in a decade?");
  EXPECT_EQ(d[1].status, "parse_failure");
  EXPECT_TRUE(d[1].questions.empty());  // never a default decomposition
  EXPECT_EQ(*d[1].raw, "Sure! Here is how I would check it: look it up.");
  EXPECT_EQ(d[2].status, "parse_failure");
  EXPECT_NE(d[2].raw->find("sorry"), std::string::npos);
  EXPECT_EQ(d[3].status, "error");
  EXPECT_NE(d[3].reason.find("HTTP 400"), std::string::npos) << d[3].reason;
  // The paper's sampling settings went out with every request (max_tokens from the caller) and
  // are recorded in run.json.
  for (const auto& body : server_->requests()) {
    EXPECT_EQ(body["temperature"], 0.3);
    EXPECT_EQ(body["frequency_penalty"], 0.6);
    EXPECT_EQ(body["presence_penalty"], 0.8);
    EXPECT_EQ(body["max_tokens"], 99);
  }
  const io::Json run = io::read_json_file(dir_ / "d" / "run.json");
  EXPECT_EQ(run["binding"]["sampling"]["frequency_penalty"], 0.6);
  EXPECT_EQ(run["binding"]["sampling"]["presence_penalty"], 0.8);
  const io::Json m = io::read_json_file(dir_ / "d" / "decompose.json");
  EXPECT_EQ(m["counts"]["parse_failures"], 2);
  EXPECT_EQ(m["prompt"]["sha256"], spec.prompt.sha256);
}

TEST_F(StagesTest, ProgramFcSameOutputTwiceAndAfterResume) {
  const auto cl = claims_file();
  DecomposeSpec spec;
  spec.method = claims::DecompMethod::kProgramFc;
  spec.prompt = claims::builtin_prompt("programfc");
  auto s = settings();
  apply_prompt_sampling(s, spec.prompt, {});
  const auto items = decompose_items(cl, spec);
  {
    auto b = backend();
    (void)llm::run_items(items, s, *b, dir_ / "whole");
    (void)write_decompositions(cl, spec, dir_ / "whole");
  }
  {
    auto b = backend();
    (void)llm::run_items(items, s, *b, dir_ / "again");
    (void)write_decompositions(cl, spec, dir_ / "again");
  }
  {
    // A first session that got through two claims, then a resumed one.
    auto b = backend();
    (void)llm::run_items({items.begin(), items.begin() + 2}, s, *b, dir_ / "cut");
    s.resume = true;
    (void)llm::run_items(items, s, *b, dir_ / "cut");
    (void)write_decompositions(cl, spec, dir_ / "cut");
  }
  const std::string whole = slurp(dir_ / "whole" / "decompositions.jsonl");
  EXPECT_EQ(whole, slurp(dir_ / "again" / "decompositions.jsonl"));
  EXPECT_EQ(whole, slurp(dir_ / "cut" / "decompositions.jsonl"));
  const auto d = claims::load_decompositions(dir_ / "whole" / "decompositions.jsonl");
  ASSERT_EQ(d.size(), 5u);
  EXPECT_EQ(d[0].status, "ok");
  ASSERT_TRUE(d[0].program.has_value());
  EXPECT_EQ(d[0].program->back(), "label = Predict(fact_1 and fact_2)");
  EXPECT_EQ(d[0].questions.size(), 3u);
  EXPECT_EQ(d[1].status, "parse_failure");  // print(...) is not a step
  EXPECT_EQ(d[3].status, "ok");
}

std::vector<claims::VerifyInput> verify_inputs() {
  std::vector<claims::VerifyInput> v;
  const std::vector<std::pair<std::string, claims::Verdict>> rows = {
      {"Texas added 2 million jobs [true].", claims::Verdict::kTrue},
      {"Crime fell 20% [false] in 2019.", claims::Verdict::kFalse},
      {"The budget was cut in half [malformed].", claims::Verdict::kConflicting},
      {"Wages rose 3 percent [refuse] in 2018.", claims::Verdict::kTrue},
      {"Exports grew 5% [conflicting] last year.", claims::Verdict::kConflicting},
      {"Rents doubled [true] since 2010.", claims::Verdict::kTrue},
      {"Crime fell 20% [false] in 2019.", claims::Verdict::kFalse},  // duplicate text, other id
      {"Taxes rose by $900 [false] per family.", claims::Verdict::kFalse}};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    claims::VerifyInput x;
    x.id = fmt::format("val:{}", i + 1);
    x.claim = rows[i].first;
    x.label = rows[i].second;
    x.questions = {"Is it so?"};
    x.evidence = {fmt::format("evidence for claim {}", i + 1)};
    v.push_back(std::move(x));
  }
  return v;
}

TEST_F(StagesTest, FewShotVerifierNeverShowsTheClaimAndScoresUnparseableAsWrong) {
  const auto in = verify_inputs();
  VerifySpec spec;
  spec.prompt = claims::builtin_prompt("verify_few_shot");
  spec.shots = 3;
  spec.folds = 2;
  auto s = settings();
  apply_prompt_sampling(s, spec.prompt, {});
  const auto items = verify_items(in, in, spec);
  ASSERT_EQ(items.size(), in.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    // The claim text occurs exactly once in its prompt: as the input, never as an example.
    const std::string& p = items[i].prompt;
    const std::string& text = in[i].claim;
    EXPECT_EQ(p.find(text), p.rfind(text)) << p;
    EXPECT_EQ(items[i].fields["shots"].size(), 3u);
    for (const auto& id : items[i].fields["shots"]) EXPECT_NE(id.get<std::string>(), in[i].id);
  }
  auto b = backend();
  (void)llm::run_items(items, s, *b, dir_ / "v");
  const StageCounts c = write_predictions(in, spec, dir_ / "v");
  EXPECT_EQ(c.records, 8u);
  EXPECT_EQ(c.parse_failures, 2u);  // malformed, refused
  EXPECT_EQ(c.ok, 6u);
  // What the server saw: no prompt holds its own claim twice.
  for (const auto& body : server_->requests()) {
    EXPECT_EQ(body["temperature"], 0.3);
    EXPECT_FALSE(body.contains("frequency_penalty"));
  }
  const io::Json m = io::read_json_file(dir_ / "v" / "manifest.json");
  EXPECT_EQ(m["method"], "llm");
  EXPECT_EQ(m["counts"]["by_label"]["unparseable"], 2);
  // 6 right of 8 (markers match the gold labels); the 2 unparseable count as wrong.
  EXPECT_EQ(m["counts"]["correct_of_gold"], 6);
  EXPECT_EQ(m["counts"]["with_gold"], 8);
  EXPECT_EQ(m["answers"]["parse_failures"], 2);
  std::size_t lines = 0;
  io::for_each_line(dir_ / "v" / "verdicts.jsonl", [&](const io::Line& l) {
    const io::Json j = io::Json::parse(l.text);
    if (j["status"] == "parse_failure") {
      EXPECT_EQ(j["label"], "unparseable");
      EXPECT_TRUE(j.contains("raw"));
    } else {
      EXPECT_EQ(j["shots"].size(), 3u);
    }
    ++lines;
  });
  EXPECT_EQ(lines, 8u);
  lines = 0;
  io::for_each_line(dir_ / "v" / "predictions.jsonl", [&](const io::Line&) { ++lines; });
  EXPECT_EQ(lines, 8u);
  // The predictions load as a prediction file of `claims evaluate` (an unparseable label is an issue
  // of its record, never a silent drop).
  claims::LoadOptions o;
  o.require_text = false;
  const auto loaded = claims::load_claims(dir_ / "v" / "predictions.jsonl", o);
  EXPECT_EQ(loaded.claims.size() + loaded.issues.size(), 8u);
}

// BM25 few-shot selection (the retrieval index's scorer over the pool's claim texts): the most
// similar labelled claims come first, never the verified claim (same id) nor one with its text
// (other id, other case and spacing), the same items twice, and the same outputs through the
// test server on two runs.
TEST_F(StagesTest, Bm25ShotsAreSimilarNeverTheClaimAndDeterministic) {
  const auto in = verify_inputs();
  std::vector<claims::VerifyInput> pool;
  auto add = [&](std::string id, std::string text, claims::Verdict v) {
    claims::VerifyInput x;
    x.id = std::move(id);
    x.claim = std::move(text);
    x.label = v;
    x.evidence = {"pool evidence"};
    pool.push_back(std::move(x));
  };
  add("train:1", "Unemployment in Ohio was 4 percent.", claims::Verdict::kTrue);
  add("val:2", "Crime fell 20% [false] in 2019.", claims::Verdict::kFalse);         // the claim itself
  add("train:2", "  crime FELL 20% [false]   in 2019. ", claims::Verdict::kFalse);  // its text again
  add("train:3", "Violent crime fell 20 percent in Chicago in 2019.", claims::Verdict::kTrue);
  add("train:4", "The city budget was cut by a third.", claims::Verdict::kConflicting);
  add("train:5", "Crime in 2019 fell.", claims::Verdict::kConflicting);
  add("train:6", "Wages rose in 2018 for teachers.", claims::Verdict::kTrue);
  add("train:7", "Rents doubled in Berlin since 2010.", claims::Verdict::kFalse);
  VerifySpec spec;
  spec.prompt = claims::builtin_prompt("verify_few_shot");
  spec.shots = 2;
  spec.selection = claims::ShotSelection::kBm25;
  const auto items = verify_items(in, pool, spec);
  const auto again = verify_items(in, pool, spec);
  ASSERT_EQ(items.size(), in.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    EXPECT_EQ(items[i].prompt, again[i].prompt);
    EXPECT_EQ(items[i].fields["shots"], again[i].fields["shots"]);
    const std::string& p = items[i].prompt;
    EXPECT_EQ(p.find(in[i].claim), p.rfind(in[i].claim)) << p;
    for (const auto& id : items[i].fields["shots"]) {
      const std::string sid = id.get<std::string>();
      EXPECT_NE(sid, in[i].id);
      if (in[i].claim == "Crime fell 20% [false] in 2019.") {
        EXPECT_NE(sid, "train:2");
      }
    }
  }
  // val:2 "Crime fell 20% [false] in 2019.": the Chicago claim and "Crime in 2019 fell." share the
  // most terms; the claim itself and its copy are left out.
  EXPECT_EQ(items[1].fields["shots"].dump(), R"(["train:3","train:5"])");
  EXPECT_EQ(items[5].fields["shots"][0].get<std::string>(), "train:7");  // "Rents doubled ... since 2010."
  auto s = settings();
  apply_prompt_sampling(s, spec.prompt, {});
  auto b = backend();
  (void)llm::run_items(items, s, *b, dir_ / "a");
  (void)write_predictions(in, spec, dir_ / "a");
  (void)llm::run_items(again, s, *b, dir_ / "b");
  (void)write_predictions(in, spec, dir_ / "b");
  EXPECT_EQ(slurp(dir_ / "a" / "predictions.jsonl"), slurp(dir_ / "b" / "predictions.jsonl"));
  EXPECT_EQ(io::read_json_file(dir_ / "a" / "manifest.json")["shot_selection"], "bm25");
}

TEST_F(StagesTest, ZeroShotVerifier) {
  const auto in = verify_inputs();
  VerifySpec spec;
  spec.prompt = claims::builtin_prompt("verify_zero_shot");
  auto s = settings();
  apply_prompt_sampling(s, spec.prompt, {});
  auto b = backend();
  (void)llm::run_items(verify_items(in, {}, spec), s, *b, dir_ / "z");
  const StageCounts c = write_predictions(in, spec, dir_ / "z");
  // The server answers "Verdict: X" as Table 12's prompt asks: every well-formed answer parses.
  EXPECT_EQ(c.ok, 6u) << slurp(dir_ / "z" / "verdicts.jsonl");
  EXPECT_EQ(c.parse_failures, 2u);
  ASSERT_FALSE(server_->requests().empty());
  for (const auto& body : server_->requests()) {
    // The paper's temperature, and no top_k (top_k 1 would make the temperature do nothing).
    EXPECT_EQ(body["temperature"], 0.3);
    EXPECT_FALSE(body.contains("top_k")) << body.dump();
  }
  const io::Json run = io::read_json_file(dir_ / "z" / "run.json");
  EXPECT_FALSE(run["binding"]["sampling"].contains("top_k"));
}

TEST_F(StagesTest, TopKIsSentOnlyWhenTheUserSetsIt) {
  const auto in = verify_inputs();
  VerifySpec spec;
  spec.prompt = claims::builtin_prompt("verify_zero_shot");
  auto s = settings();
  s.sampling.top_k = 40;  // --top-k 40
  apply_prompt_sampling(s, spec.prompt, {"top_k"});
  auto b = backend();
  (void)llm::run_items(verify_items(in, {}, spec), s, *b, dir_ / "k");
  ASSERT_FALSE(server_->requests().empty());
  for (const auto& body : server_->requests()) EXPECT_EQ(body["top_k"], 40);
  // A prompt file that sets top_k has it sent too.
  spec.prompt.sampling["top_k"] = 5;
  auto s2 = settings();
  apply_prompt_sampling(s2, spec.prompt, {});
  ASSERT_TRUE(s2.sampling.top_k.has_value());
  EXPECT_EQ(*s2.sampling.top_k, 5);
}

TEST_F(StagesTest, RelevanceThroughEmbeddings) {
  claims::Decomposition close{
      "a",         "the budget was cut in half", "m", {"was the budget cut in half?"}, std::nullopt, "ok", "",
      std::nullopt};
  claims::Decomposition far{
      "b", "the budget was cut in half", "m", {"did exports grow?"}, std::nullopt, "ok", "", std::nullopt};
  llm::EmbedOptions opt;
  opt.endpoints = {server_->base_url()};
  opt.model = "test-embed";
  opt.use_cache = false;
  opt.retry_base_s = 0.001;
  claims::QuestionQuality q1, q2;
  opt.run_dir = dir_ / "rel-close";
  add_relevance(q1, {close}, opt);
  opt.run_dir = dir_ / "rel-far";
  add_relevance(q2, {far}, opt);
  ASSERT_TRUE(q1.relevance && q2.relevance);
  EXPECT_GT(*q1.relevance, 0.8);
  EXPECT_LT(*q2.relevance, *q1.relevance);
  EXPECT_EQ(q1.relevance_model, "test-model");  // as the server reports it
  // The one client's run directory: the probe's dimension and model bind it.
  const io::Json run = io::read_json_file(dir_ / "rel-close" / "run.json");
  EXPECT_EQ(run["binding"]["embedding_model"], "test-model");
  EXPECT_GT(run["binding"]["embedding_dimension"].get<std::size_t>(), 0u);
}

// Relevance goes through the one embeddings client, with its checks: an answer of the wrong
// dimension or from another model is retried, then an error (never cached, never used), and the
// command's result is an Error (exit 3) until a resumed run gets every vector; the figure then
// equals the cosine mean computed here from the server's own vectors.
TEST(Relevance, WrongDimensionOrModelIsNeverUsedAndResumeCompletes) {
  testing::EmbeddingsServer server("hash-bow-64", 64);
  server.start();
  const fs::path dir = fs::temp_directory_path() / fmt::format("numcheck_relevance_{}", ::getpid());
  fs::remove_all(dir);
  const std::vector<claims::Decomposition> recs = {{"a",
                                                    "the budget was cut in half",
                                                    "m",
                                                    {"was the budget cut?", "odd dimension question?"},
                                                    std::nullopt,
                                                    "ok",
                                                    "",
                                                    std::nullopt},
                                                   {"b",
                                                    "exports grew by 5 percent",
                                                    "m",
                                                    {"did exports grow?", "impostor question?"},
                                                    std::nullopt,
                                                    "ok",
                                                    "",
                                                    std::nullopt}};
  server.set_faults(
      {{"odd dimension", "dimension", -1}, {"impostor", "model", -1}, {"budget was", "dimension", 1}});
  llm::EmbedOptions opt;
  opt.endpoints = {server.base_url()};
  opt.model = "hash-bow-64";
  opt.run_dir = dir / "run";
  opt.cache_path = dir / "responses.cache";
  opt.retries = 2;
  opt.retry_base_s = 0.001;
  claims::QuestionQuality q;
  try {
    add_relevance(q, recs, opt);
    ADD_FAILURE() << "texts without a vector must be an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIncomplete);
    EXPECT_NE(std::string(e.what()).find("2 of 6 texts got no embedding"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(q.relevance);
  server.set_faults({});
  const std::size_t posts = server.post_count();
  opt.resume = true;
  add_relevance(q, recs, opt);
  EXPECT_EQ(server.post_count() - posts, 2u);  // the probe and one batch of the two rejected texts
  auto cos = [&](const std::string& x, const std::string& y) {
    const auto a = server.vector_for(x), b = server.vector_for(y);
    double ab = 0, aa = 0, bb = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      ab += a[i] * b[i];
      aa += a[i] * a[i];
      bb += b[i] * b[i];
    }
    return ab / (std::sqrt(aa) * std::sqrt(bb));
  };
  double want = 0;
  for (const auto& r : recs) {
    double s = 0;
    for (const auto& qu : r.questions) s += cos(qu, r.claim);
    want += s / static_cast<double>(r.questions.size());
  }
  want /= static_cast<double>(recs.size());
  ASSERT_TRUE(q.relevance);
  EXPECT_NEAR(*q.relevance, want, 1e-12);
  EXPECT_EQ(q.relevance_model, "hash-bow-64");
  server.stop();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace numcheck::claimsllm
