// The tests that read the real QuanTemp data find it where NUMCHECK_QUANTEMP says, as the claims
// job and the scripts do, not only in a shared/ folder beside the repository: every such test goes
// through tests/support/quantemp_data.hpp.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../support/quantemp_data.hpp"
#include "io/files.hpp"

namespace numcheck::testing {
namespace {

namespace fs = std::filesystem;

TEST(QuantempData, TheVariableNamesTheFolder) {
  const char* old = std::getenv("NUMCHECK_QUANTEMP");
  const std::string keep = old != nullptr ? old : "";
  ::setenv("NUMCHECK_QUANTEMP", "/data/elsewhere/quantemp", 1);
  EXPECT_EQ(quantemp_dir(), fs::path("/data/elsewhere/quantemp"));
  ::setenv("NUMCHECK_QUANTEMP", "", 1);
  EXPECT_EQ(quantemp_dir(), fs::path(NUMCHECK_SOURCE_DIR) / ".." / "shared" / "data" / "quantemp");
  if (old != nullptr) {
    ::setenv("NUMCHECK_QUANTEMP", keep.c_str(), 1);
  } else {
    ::unsetenv("NUMCHECK_QUANTEMP");
  }
}

// No test builds the data path itself (which would skip on a clone whose data lives elsewhere).
TEST(QuantempData, EveryRealDataTestUsesTheHelper) {
  std::vector<std::string> offenders;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(NUMCHECK_SOURCE_DIR) / "tests")) {
    if (!e.is_regular_file() || e.path().extension() != ".cpp" ||
        e.path().filename() == "quantemp_env_test.cpp")
      continue;
    const std::string text = io::read_file(e.path());
    if (text.find("shared/data/quantemp") != std::string::npos ||
        text.find(R"("shared" / "data")") != std::string::npos)
      offenders.push_back(fs::relative(e.path(), NUMCHECK_SOURCE_DIR).string());
  }
  EXPECT_TRUE(offenders.empty()) << "build the QuanTemp path with quantemp_dir(): "
                                 << ::testing::PrintToString(offenders);
}

}  // namespace
}  // namespace numcheck::testing
