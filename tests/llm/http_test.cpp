// Pieces of the HTTP backend that need no server: response parsing, error messages, Retry-After,
// credentials in URLs, and the cache key.
#include <gtest/gtest.h>

#include "llm/cache.hpp"
#include "llm/http_backend.hpp"

namespace numcheck::llm {
namespace {

TEST(ParseCompletion, ChatWithReasoningUsageTimings) {
  const auto p = parse_completion_body(
      R"({"model":"qwen","system_fingerprint":"b10107","choices":[{"index":0,"finish_reason":"length",
          "message":{"role":"assistant","content":"FINAL: 3 L","reasoning_content":"think"}}],
          "usage":{"completion_tokens":5},"timings":{"predicted_n":5}})",
      Api::kChat);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.completion.content, "FINAL: 3 L");
  EXPECT_EQ(p.completion.reasoning, "think");
  EXPECT_EQ(p.completion.finish_reason, "length");
  EXPECT_EQ(p.completion.model, "qwen");
  EXPECT_EQ(p.completion.system_fingerprint, "b10107");
  EXPECT_EQ(p.completion.usage["completion_tokens"], 5);
  EXPECT_EQ(p.completion.timings["predicted_n"], 5);
}

TEST(ParseCompletion, CompletionsRouteAndNullContent) {
  const auto p =
      parse_completion_body(R"({"choices":[{"text":"FINAL: 1","finish_reason":"stop"}]})", Api::kCompletions);
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.completion.content, "FINAL: 1");
  const auto q = parse_completion_body(R"({"choices":[{"message":{"content":null},"finish_reason":"stop"}]})",
                                       Api::kChat);
  ASSERT_TRUE(q.ok);
  EXPECT_EQ(q.completion.content, "");
}

TEST(ParseCompletion, MalformedBodiesAreErrorsNotCrashes) {
  for (const char* bad :
       {"", "{", "[]", "{\"choices\": []}", "{\"choices\": [1]}", "{\"choices\": [{}]}",
        "{\"choices\": [{\"message\": {\"content\": 5}}]}", "{\"error\": {\"message\": \"x\"}}", "\xff\xfe",
        "{\"choices\": [{\"message\": {\"content\": \"\xff\"}}]}"}) {
    const auto p = parse_completion_body(bad, Api::kChat);
    EXPECT_FALSE(p.ok) << bad;
    EXPECT_FALSE(p.error.empty());
  }
}

TEST(ErrorMessage, OpenAiShapesAndRawText) {
  EXPECT_EQ(error_message_from_body(R"({"error":{"message":"model not found","type":"x"}})"),
            "model not found");
  EXPECT_EQ(error_message_from_body(R"({"error":"overloaded"})"), "overloaded");
  EXPECT_EQ(error_message_from_body(R"({"detail":"Not Found"})"), "Not Found");
  EXPECT_EQ(error_message_from_body("Bad Gateway\n"), "Bad Gateway ");
  EXPECT_LE(error_message_from_body(std::string(10000, 'a')).size(), 203u);
}

TEST(RetryAfter, SecondsAndDates) {
  EXPECT_EQ(parse_retry_after("7"), 7.0);
  EXPECT_EQ(parse_retry_after(" 1.5 "), 1.5);
  EXPECT_FALSE(parse_retry_after(""));
  EXPECT_FALSE(parse_retry_after("soon"));
  const auto past = parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT");
  ASSERT_TRUE(past);
  EXPECT_EQ(*past, 0.0);
}

TEST(StripCredentials, RemovesUserInfoOnly) {
  EXPECT_EQ(strip_credentials("http://user:secret@host:8080/v1"), "http://host:8080/v1");
  EXPECT_EQ(strip_credentials("https://host/v1"), "https://host/v1");
  EXPECT_EQ(strip_credentials("http://host/v1/x@y"), "http://host/v1/x@y");
}

TEST(CacheKey, ModelIdentityBuildAndEveryBodyFieldCount) {
  const io::Json id1 = {{"model", "m"}, {"build", "b1"}};
  const io::Json id2 = {{"model", "m"}, {"build", "b2"}};
  const io::Json id3 = {{"model", "n"}, {"build", "b1"}};
  const io::Json body =
      io::Json::parse(R"({"model":"m","seed":1,"temperature":0,"messages":[{"role":"user","content":"q"}]})");
  const io::Json reordered =
      io::Json::parse(R"({"messages":[{"role":"user","content":"q"}],"temperature":0,"seed":1,"model":"m"})");
  io::Json other_seed = body;
  other_seed["seed"] = 2;
  io::Json extra = body;
  extra["cache_prompt"] = false;
  const std::string k = cache_key(id1, body);
  EXPECT_EQ(k.size(), 64u);
  EXPECT_EQ(k, cache_key(id1, reordered));
  EXPECT_NE(k, cache_key(id2, body));
  EXPECT_NE(k, cache_key(id3, body));
  EXPECT_NE(k, cache_key(id1, other_seed));
  EXPECT_NE(k, cache_key(id1, extra));
}

}  // namespace
}  // namespace numcheck::llm
