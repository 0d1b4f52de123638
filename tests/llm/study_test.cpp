// The study file parser (llm/study.hpp): every field lands in the run options it stands for,
// paths are relative to the study file's folder, and malformed, unknown or duplicate entries are
// errors naming the field.
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "llm/options.hpp"
#include "llm/study.hpp"

namespace numcheck::llm {
namespace {

std::string error_of(const std::string& text) {
  try {
    (void)parse_study(text, "s.json", "/studies");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Study, EveryFieldReachesTheRunOptions) {
  const Study st = parse_study(R"({
    "format": "numcheck-study/1", "seed": 42, "description": "x",
    "selection": {"bases": 20, "templates": ["CV", "FC"], "views": ["canonical", "percent"],
                  "base_ids_file": "ids.txt", "seed": 9},
    "systems": [
      {"name": "a.1_b-c", "endpoints": ["http://h1:8080/v1", "http://h2:8080/v1"], "model": "m",
       "api": "completions", "api_key_env": "KEY_VAR",
       "sampling": {"temperature": 0.6, "top_p": 0.95, "top_k": 20, "seed": 7,
                    "frequency_penalty": 0.5, "presence_penalty": -0.5},
       "max_tokens": 4096, "extra_body": {"chat_template_kwargs": {"enable_thinking": true}},
       "system_prompt": "Be exact.", "model_file": "models/a.gguf", "concurrency": 8,
       "timeout_s": 120.5, "retries": 2},
      {"name": "sim", "system": "reference", "inject": "times_ten=0.1"}]})",
                               "s.json", "/studies");
  EXPECT_EQ(st.seed, 42u);
  EXPECT_EQ(st.selection.bases, std::optional<std::size_t>(20));
  EXPECT_EQ(st.selection.templates, (std::vector<std::string>{"CV", "FC"}));
  EXPECT_EQ(st.selection.views, (std::vector<std::string>{"canonical", "percent"}));
  EXPECT_EQ(st.selection.base_ids_file, std::filesystem::path("/studies/ids.txt"));
  EXPECT_EQ(st.selection.seed, std::optional<std::uint64_t>(9));
  ASSERT_EQ(st.systems.size(), 2u);
  const RunOptions& o = st.systems[0].options;
  EXPECT_EQ(st.systems[0].name, "a.1_b-c");
  EXPECT_EQ(o.endpoints, (std::vector<std::string>{"http://h1:8080/v1", "http://h2:8080/v1"}));
  EXPECT_EQ(o.model, "m");
  EXPECT_EQ(o.api, "completions");
  EXPECT_EQ(o.api_key_env, "KEY_VAR");
  EXPECT_EQ(o.temperature, 0.6);
  EXPECT_EQ(o.top_p, 0.95);
  EXPECT_EQ(o.top_k, std::optional<std::int64_t>(20));
  EXPECT_EQ(o.seed, 7u);
  EXPECT_EQ(o.frequency_penalty, std::optional<double>(0.5));
  EXPECT_EQ(o.presence_penalty, std::optional<double>(-0.5));
  EXPECT_EQ(o.max_tokens, 4096);
  EXPECT_EQ(o.extra_body, R"({"chat_template_kwargs":{"enable_thinking":true}})");
  EXPECT_EQ(o.system_prompt, "Be exact.");
  EXPECT_EQ(o.model_file, "/studies/models/a.gguf");
  EXPECT_EQ(o.concurrency, 8u);
  EXPECT_EQ(o.timeout_s, 120.5);
  EXPECT_EQ(o.retries, 2);
  const RunOptions& r = st.systems[1].options;
  EXPECT_EQ(r.system, "reference");
  EXPECT_EQ(r.inject, "times_ten=0.1");
  EXPECT_TRUE(r.endpoints.empty());
  // Defaults are the runner's (the paper's greedy settings).
  EXPECT_EQ(r.temperature, 0.0);
  EXPECT_EQ(r.max_tokens, 1024);
  EXPECT_EQ(r.top_k, std::optional<std::int64_t>(1));
  EXPECT_EQ(st.sha256.size(), 64u);
}

// "top_k": null sends none (as --no-top-k, for APIs that refuse the field); the run settings then
// carry no top_k, and a negative one is still an error.
TEST(Study, ANullTopKIsNotSent) {
  const Study st = parse_study(R"({"format": "numcheck-study/1",
    "systems": [{"name": "hosted", "endpoint": "https://api.example.com/v1", "model": "m",
                 "sampling": {"top_k": null, "temperature": 0.5}}]})",
                               "s.json", "/studies");
  ASSERT_EQ(st.systems.size(), 1u);
  const RunOptions& o = st.systems[0].options;
  EXPECT_FALSE(o.top_k.has_value());
  EXPECT_EQ(o.temperature, 0.5);
  const RunSettings s = settings_from(o);
  EXPECT_FALSE(s.sampling.top_k.has_value());
  EXPECT_EQ(s.sampling.temperature, 0.5);
  EXPECT_EQ(settings_from(RunOptions{}).sampling.top_k, std::optional<std::int64_t>(1));
  EXPECT_NE(error_of(R"({"format": "numcheck-study/1", "systems": [{"name": "h", "endpoint": "http://h/v1",
    "model": "m", "sampling": {"top_k": -1}}]})")
                .find("top_k"),
            std::string::npos);
}

TEST(Study, MalformedEntriesNameTheirField) {
  const std::string ok_sys = R"({"name": "a", "endpoint": "http://h/v1", "model": "m")";
  auto study = [](const std::string& systems) {
    return R"({"format": "numcheck-study/1", "systems": [)" + systems + "]}";
  };
  EXPECT_NE(error_of(study(ok_sys + R"(, "temprature": 0})")).find("temprature"), std::string::npos);
  EXPECT_NE(error_of(study(ok_sys + R"(, "sampling": {"temp": 0}})")).find("sampling.temp"),
            std::string::npos);
  EXPECT_NE(error_of(study(ok_sys + R"(, "sampling": {"top_p": 2}})")).find("top_p"), std::string::npos);
  EXPECT_NE(error_of(study(ok_sys + R"(, "max_tokens": 0})")).find("max_tokens"), std::string::npos);
  EXPECT_NE(error_of(study(ok_sys + R"(, "extra_body": [1]})")).find("extra_body"), std::string::npos);
  EXPECT_NE(error_of(study(ok_sys + R"(, "system": "reference"})")).find("system"), std::string::npos);
  EXPECT_NE(error_of(study(ok_sys + "}," + ok_sys + "}")).find("two systems"), std::string::npos);
  EXPECT_NE(error_of(study(R"({"name": "a", "model": "m"})")).find("endpoint"), std::string::npos);
  EXPECT_NE(error_of(study(R"({"name": "a", "endpoint": "http://h/v1"})")).find("model"), std::string::npos);
  EXPECT_NE(error_of(study(R"({"name": "a", "system": "reference", "inject": 3})")).find("inject"),
            std::string::npos);
  for (const char* bad : {"", ".hidden", "-x", "a/b", "a b", "ü"}) {
    EXPECT_NE(
        error_of(study(std::string(R"({"name": ")") + bad + R"(", "system": "reference"})")).find("name"),
        std::string::npos)
        << bad;
  }
  EXPECT_NE(error_of(R"({"format": "numcheck-study/2", "systems": []})").find("format"), std::string::npos);
  EXPECT_NE(error_of(R"({"format": "numcheck-study/1", "systems": []})").find("systems"), std::string::npos);
  EXPECT_NE(error_of(R"({"format": "numcheck-study/1", "system": []})").find("system"), std::string::npos);
  EXPECT_NE(error_of("[1, 2]").find("s.json"), std::string::npos);
  EXPECT_EQ(error_of(study(ok_sys + "}")), "");
}

TEST(Study, SystemNamesArePlainFolderNames) {
  EXPECT_TRUE(valid_system_name("qwen3-8b_Q4.K"));
  EXPECT_TRUE(valid_system_name(std::string(64, 'a')));
  EXPECT_FALSE(valid_system_name(std::string(65, 'a')));
  EXPECT_FALSE(valid_system_name(".."));
  EXPECT_FALSE(valid_system_name("a/b"));
  EXPECT_FALSE(valid_system_name(""));
}

}  // namespace
}  // namespace numcheck::llm
