// The supplement archive's checks (report/supplement.hpp): SHA256SUMS must list every other member
// exactly once with its hash, supplement.json must be ours; anything else is an Error naming the
// member. (Building and rebuilding a real study: tests/integration/supplement_cli_test.cpp.)
#include "report/supplement.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "fixture.hpp"
#include "io/files.hpp"
#include "io/sha256.hpp"
#include "io/tar.hpp"

namespace numcheck::report {
namespace {

const std::string kInfo = R"({"kind": "numcheck.orbit_supplement", "version": 1, "report_args": {}})";

std::string sums_of(const std::vector<io::TarMember>& ms) {
  std::string s;
  for (const auto& m : ms) s += io::sha256_hex(m.bytes) + "  " + m.path + "\n";
  return s;
}

std::string archive(std::vector<io::TarMember> data, const std::optional<std::string>& sums = std::nullopt) {
  data.insert(data.begin(), io::TarMember{"supplement.json", kInfo});
  const std::string s = sums.value_or(sums_of(data));
  data.insert(data.begin(), io::TarMember{"SHA256SUMS", s});
  return io::write_ustar(data);
}

void expect_error(const std::string& tar, const std::string& words) {
  try {
    (void)read_supplement(tar, "s.tar");
    ADD_FAILURE() << "no error; wanted: " << words;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(Supplement, ChecksEveryMemberAgainstTheManifest) {
  const std::vector<io::TarMember> data = {{"out/a.jsonl", "{}\n"}, {"out/b.json", "[]"}};
  const Supplement ok = read_supplement(archive(data), "s.tar");
  EXPECT_EQ(ok.members.size(), 4u);
  EXPECT_EQ(ok.info["kind"], "numcheck.orbit_supplement");

  std::vector<io::TarMember> with_info = data;
  with_info.insert(with_info.begin(), io::TarMember{"supplement.json", kInfo});
  // A member missing from the manifest, a listed member missing, a wrong hash, a line twice.
  std::vector<io::TarMember> fewer(with_info.begin(), with_info.end() - 1);
  expect_error(archive(data, sums_of(fewer)), "'out/b.json' is not listed");
  std::vector<io::TarMember> more = with_info;
  more.push_back({"out/c", "x"});
  expect_error(archive(data, sums_of(more)), "lists 'out/c', which the archive does not hold");
  std::vector<io::TarMember> changed = with_info;
  changed[1].bytes = "{ }\n";
  expect_error(archive(data, sums_of(changed)), "'out/a.jsonl' does not match its SHA-256");
  expect_error(archive(data, sums_of(with_info) + sums_of({with_info[1]})), "lists 'out/a.jsonl' twice");
  expect_error(archive(data, "not a manifest\n"), "malformed line");
  expect_error(archive(data, sums_of(with_info).substr(0, sums_of(with_info).size() - 1)), "not terminated");
  // No manifest at all; a foreign supplement.json.
  expect_error(io::write_ustar(data), "no SHA256SUMS");
  std::vector<io::TarMember> foreign = {{"supplement.json", R"({"kind": "other"})"}};
  foreign.insert(foreign.begin(), io::TarMember{"SHA256SUMS", sums_of(foreign)});
  expect_error(io::write_ustar(foreign), "not one written by");
}

TEST(Supplement, ExtractsUnderTheFolderOnly) {
  const auto dir = testing::fresh_dir("supplement_extract");
  const Supplement s = read_supplement(archive({{"out/run/run.json", "{}"}}), "s.tar");
  extract_supplement(s, dir);
  EXPECT_EQ(io::read_file(dir / "out/run/run.json"), "{}");
  Supplement evil = s;
  evil.members.push_back({"../escape", "x"});
  EXPECT_THROW(extract_supplement(evil, dir / "sub"), Error);
  EXPECT_FALSE(std::filesystem::exists(dir / "escape"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace numcheck::report
