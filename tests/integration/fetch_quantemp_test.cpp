// scripts/fetch-quantemp.sh against local file:// URLs: verified downloads succeed, a file whose
// SHA-256 does not match the built-in upstream hashes is refused and removed.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "cli_support.hpp"

namespace numcheck::testing {
namespace {
namespace fs = std::filesystem;

int run(const std::string& cmd) {
  const int st = std::system(("(" + cmd + ") >/dev/null 2>&1").c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(FetchQuantemp, VerifiesHashesOverFileUrls) {
  if (run("command -v curl") != 0 || run("command -v sha256sum") != 0)
    GTEST_SKIP() << "curl or sha256sum missing";
  const auto dir = fresh_dir("fetch_quantemp");
  const std::string script = std::string(NUMCHECK_SOURCE_DIR) + "/scripts/fetch-quantemp.sh";
  fs::create_directories(dir / "up" / "raw_data");
  std::ofstream(dir / "up" / "raw_data" / "val_claims_quantemp.json") << "[{\"claim\": \"x\"}]\n";
  // sha256 of the 17 bytes above
  std::ofstream(dir / "m.txt") << "# test manifest\nraw_data/val_claims_quantemp.json "
                                  "8bcc8b0d5b4e5c0f6b1b5b8b8d8f0d1b5c9b0b2f4a8e3c3a8c1e0e6b5a1b2c3d\n";
  const std::string base = " --base-url 'file://" + (dir / "up").string() + "'";
  // Wrong hash: refused, nothing left behind.
  EXPECT_EQ(run(script + " --dest '" + (dir / "a").string() + "'" + base + " --manifest '" +
                (dir / "m.txt").string() + "'"),
            1);
  EXPECT_FALSE(fs::exists(dir / "a" / "val_claims_quantemp.json"));
  EXPECT_FALSE(fs::exists(dir / "a" / "val_claims_quantemp.json.part"));
  // Built-in upstream hashes: the local stand-in is not the upstream file, so it is refused too.
  EXPECT_EQ(run(script + " --dest '" + (dir / "b").string() + "'" + base), 1);
  EXPECT_FALSE(fs::exists(dir / "b" / "val_claims_quantemp.json"));
  // The right hash: verified and kept; a second run finds it present.
  ASSERT_EQ(run("cd '" + dir.string() +
                "' && echo \"raw_data/val_claims_quantemp.json $(sha256sum "
                "up/raw_data/val_claims_quantemp.json | cut -d' ' -f1)\" > ok.txt"),
            0);
  EXPECT_EQ(run(script + " --dest '" + (dir / "c").string() + "'" + base + " --manifest '" +
                (dir / "ok.txt").string() + "'"),
            0);
  EXPECT_TRUE(fs::exists(dir / "c" / "val_claims_quantemp.json"));
  EXPECT_EQ(run(script + " --dest '" + (dir / "c").string() + "'" + base + " --manifest '" +
                (dir / "ok.txt").string() + "'"),
            0);
  EXPECT_EQ(run(script + " --bogus"), 2);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace numcheck::testing
