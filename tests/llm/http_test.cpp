// Pieces of the HTTP backend: response parsing, error messages, Retry-After, credentials in URLs,
// the cache key, the masking of an echoed key, and endpoint URLs that name a route.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "llm/cache.hpp"
#include "llm/http_backend.hpp"
#include "test_server.hpp"

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

// The fast path (simdjson's walk) takes the bodies servers send (compact JSON) and gives exactly
// what the DOM path gives; whatever it does not take (pretty-printed bodies, duplicate keys,
// surrogate escapes, errors, odd shapes) the DOM path decides.
TEST(ParseCompletion, FastPathTakesCompactBodiesAndAgreesWithTheDom) {
  struct Case {
    const char* body;
    Api api;
    bool fast;  // the fast path takes it
  };
  const Case cases[] = {
      {R"({"choices":[{"finish_reason":"stop","index":0,"message":{"role":"assistant","content":"FINAL: 2.75 L","reasoning_content":"r"}}],"created":1,"model":"m","system_fingerprint":"b1","object":"chat.completion","usage":{"completion_tokens":10,"prompt_tokens":5,"total_tokens":15},"timings":{"prompt_n":5,"prompt_ms":1.25,"per_s":-0.5e3,"x":[1,2.5,{"y":null,"b":true}],"neg":-7,"big":18446744073709551615}})",
       Api::kChat, true},
      {R"({"choices":[{"message":{"content":"caf\u00e9 \"q\" \\ \n\t \u2603 \u00ff","reasoning":"why"},"finish_reason":"length"}],"model":"x"})",
       Api::kChat, true},
      {R"({"choices":[{"message":{"content":null},"finish_reason":"stop"}],"usage":5,"timings":[1]})",
       Api::kChat, true},
      {R"({"choices":[{"message":{},"finish_reason":7}],"model":3})", Api::kChat, true},
      {R"({"choices":[{"text":"FINAL: 1","finish_reason":"stop"},{"text":"other"}],"usage":{}})",
       Api::kCompletions, true},
      {"{\n  \"choices\": [{\"message\": {\"content\": \"pretty\"}}]\n}", Api::kChat, false},
      {R"({"choices":[{"message":{"content":"a","content":"b"}}]})", Api::kChat, false},
      {R"({"choices":[{"message":{"content":"\ud83d\ude00"}}]})", Api::kChat, false},
      {R"({"error":{"message":"x"},"choices":[{"message":{"content":"a"}}]})", Api::kChat, false},
      {R"({"choices":[{"message":{"content":5}}]})", Api::kChat, false},
      {R"({"choices":[]})", Api::kChat, false},
      {R"({"choices":[{"text":"t"}]})", Api::kChat, false},
      {R"({"choices":[{"message":{"content":"c"}}]})", Api::kCompletions, false},
      {R"({"data":[{"embedding":[0.5,1]}]})", Api::kEmbeddings, false},
      {R"({"choices":[{"message":{"content":"a"}}]} x)", Api::kChat, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    const ParsedBody dom = detail::parse_completion_dom(c.body, c.api);
    Completion fast;
    EXPECT_EQ(detail::parse_completion_fast(c.body, c.api, fast), c.fast);
    const ParsedBody both = parse_completion_body(c.body, c.api);
    EXPECT_EQ(both.ok, dom.ok);
    EXPECT_EQ(both.error, dom.error);
    EXPECT_TRUE(both.completion == dom.completion);
    if (c.fast) {
      ASSERT_TRUE(dom.ok) << dom.error;
      EXPECT_TRUE(fast == dom.completion);
    }
  }
  // A body over 1 MiB takes the DOM path (the fast parser would keep room for it for good).
  const std::string big =
      R"({"choices":[{"message":{"content":")" + std::string(std::size_t{1} << 20, 'a') + R"("}}]})";
  Completion fast;
  EXPECT_FALSE(detail::parse_completion_fast(big, Api::kChat, fast));
  const ParsedBody b = parse_completion_body(big, Api::kChat);
  ASSERT_TRUE(b.ok);
  EXPECT_EQ(b.completion.content.size(), std::size_t{1} << 20);
  const ParsedBody p = parse_completion_body(cases[0].body, Api::kChat);
  EXPECT_EQ(p.completion.timings["per_s"], -500.0);
  EXPECT_TRUE(p.completion.timings["big"].is_number_unsigned());
  EXPECT_TRUE(p.completion.timings["neg"].is_number_integer());
  EXPECT_EQ(p.completion.reasoning, "r");
}

// The cache stores completion_line(c): to_line(completion_to_json(c)), written directly.
TEST(CacheEntry, CompletionLineIsTheDomsLine) {
  Completion c;
  EXPECT_EQ(completion_line(c), io::to_line(completion_to_json(c)));
  c.content = "FINAL: 3 \xce\xbb \"q\" \\ \x01 \xff end";
  c.reasoning = "r\n\xe2\x82";
  c.finish_reason = "length";
  c.usage = io::Json::parse(R"({"b":1,"a":-2,"c":[1.5,null]})");
  c.timings = io::Json::parse(R"({"ms":0.125})");
  c.model = "m";
  c.system_fingerprint = "fp";
  c.simulated_fault = "none";  // not stored
  EXPECT_EQ(completion_line(c), io::to_line(completion_to_json(c)));
  EXPECT_TRUE(completion_from_json(io::Json::parse(completion_line(c))).content ==
              "FINAL: 3 \xce\xbb \"q\" \\ \x01 \xef\xbf\xbd end");
}

}  // namespace
}  // namespace numcheck::llm

namespace numcheck::llm {
namespace {

TEST(RedactSecret, LiteralAndJsonEscapedSpellingsAreMasked) {
  const std::string key = "sk-a/b\"c";
  EXPECT_EQ(redact_secret("x sk-a/b\"c y", key), "x [redacted] y");
  EXPECT_EQ(redact_secret(R"(x sk-a\/b\"c y)", key), "x [redacted] y");
  EXPECT_EQ(redact_secret(R"(x \u0073\u006B-a\/b\u0022c y)", key), "x [redacted] y");
  EXPECT_EQ(redact_secret(R"({"m":"sk-a\/b\"c","n":"sk-a/b\"c"})", key),
            R"({"m":"[redacted]","n":"[redacted]"})");
  // Non-ASCII characters as backslash-u escapes and as a surrogate pair.
  const std::string wide = "k\xc3\xa9y\xf0\x9f\x98\x80!";  // "kéy😀!"
  EXPECT_EQ(redact_secret(R"(<k\u00e9y\ud83d\ude00!>)", wide), "<[redacted]>");
  EXPECT_EQ(redact_secret(R"(<k\u00E9y\uD83D\uDE00!>)", wide), "<[redacted]>");
  // Texts that only look like it are left alone; an empty secret masks nothing.
  EXPECT_EQ(redact_secret(R"(sk-a\/b\"d sk-a\u002fb)", key), R"(sk-a\/b\"d sk-a\u002fb)");
  EXPECT_EQ(redact_secret(R"(\u00zz \)", key), R"(\u00zz \)");
  EXPECT_EQ(redact_secret("anything", ""), "anything");
}

TEST(RetryAfter, TheDateFormsOfRfc9110) {
  const auto imf = parse_retry_after("Sun, 06 Nov 2094 08:49:37 GMT");
  const auto asc = parse_retry_after("Sun Nov  6 08:49:37 2094");
  ASSERT_TRUE(imf);
  ASSERT_TRUE(asc);
  EXPECT_GT(*imf, 60.0 * 60 * 24 * 365 * 60);
  EXPECT_NEAR(*imf, *asc, 2.0);
  EXPECT_EQ(parse_retry_after("Sunday, 06-Nov-94 08:49:37 GMT"), 0.0);  // 1994: past
}

TEST(EndpointUrl, AFullRouteUrlNamesItsBaseUrl) {
  EXPECT_EQ(base_of_route_url("http://127.0.0.1:8080/v1/chat/completions"), "http://127.0.0.1:8080/v1");
  EXPECT_EQ(base_of_route_url("https://api.example.com/v1/chat/completions/"), "https://api.example.com/v1");
  EXPECT_EQ(base_of_route_url("http://h:1/v1/completions"), "http://h:1/v1");
  EXPECT_EQ(base_of_route_url("http://h:1/v1/embeddings?x=1"), "http://h:1/v1");
  EXPECT_EQ(base_of_route_url("http://h:1/v1/models"), "http://h:1/v1");
  EXPECT_FALSE(base_of_route_url("http://h:1/v1"));
  EXPECT_FALSE(base_of_route_url("http://h:1/"));
  EXPECT_FALSE(base_of_route_url("http:///completions"));
}

// Pasting the full URL of the chat route is a usage error naming the base URL, before any request.
TEST(EndpointUrl, AFullRouteUrlIsRefusedBeforeAnyRequest) {
  testing::TestServer server(testing::ServerOptions{}, SolveFn{});
  server.start();
  for (const char* route : {"/chat/completions", "/completions", "/embeddings"}) {
    HttpConfig cfg;
    const std::string base = "http://user:pw@127.0.0.1:" + std::to_string(server.port()) + "/v1";
    cfg.endpoints = {base + route};
    cfg.model = "test-model";
    try {
      (void)make_http_backend(cfg);
      ADD_FAILURE() << route << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kUsage);
      const std::string what = e.what();
      EXPECT_NE(what.find("give the base URL the routes hang off: --endpoint " + strip_credentials(base)),
                std::string::npos)
          << what;
      EXPECT_EQ(what.find("pw"), std::string::npos) << what;
    }
  }
  EXPECT_EQ(server.post_count(), 0u);
  EXPECT_EQ(server.models_count(), 0u);
  server.stop();
}

}  // namespace
}  // namespace numcheck::llm
