// How CTest runs the tests: every test gets the build's cache folder, never the user's. It is a
// test property, which gtest_discover_tests once dropped without a word (given outside
// PROPERTIES): the tests then wrote their caches into ~/.cache/numcheck.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "io/json.hpp"

namespace numcheck {
namespace {

// The values of property `name` of one test in `ctest --show-only=json-v1`.
std::vector<std::string> property(const io::Json& test, const std::string& name) {
  std::vector<std::string> out;
  if (!test.contains("properties")) return out;
  for (const auto& p : test["properties"]) {
    if (p.value("name", "") != name) continue;
    if (p["value"].is_array()) {
      for (const auto& v : p["value"]) out.push_back(v.get<std::string>());
    } else if (p["value"].is_string()) {
      out.push_back(p["value"].get<std::string>());
    }
  }
  return out;
}

bool has(const std::vector<std::string>& values, const std::string& want) {
  return std::find(values.begin(), values.end(), want) != values.end();
}

TEST(CtestSetup, EveryTestHasTheBuildsCacheFolder) {
  const std::string cmd =
      fmt::format("ctest --test-dir '{}' --show-only=json-v1 2>/dev/null", NUMCHECK_BINARY_DIR);
  std::FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string text;
  char buf[65536];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
  ASSERT_EQ(::pclose(p), 0) << cmd;
  const io::Json j = io::Json::parse(text);
  const std::string cache = fmt::format("NUMCHECK_CACHE_DIR={}/test-cache", NUMCHECK_BINARY_DIR);
  std::size_t tests = 0;
  for (const auto& t : j["tests"]) {
    const std::string name = t.value("name", "");
    ++tests;
    EXPECT_TRUE(has(property(t, "ENVIRONMENT"), cache)) << name << " would use the user's cache folder";
  }
  EXPECT_GT(tests, 100u);
}

}  // namespace
}  // namespace numcheck
