// `numcheck doctor` with the real CLI: the libraries numcheck needs are found on this machine (the
// build machine has them all), with their paths and Debian packages; a data folder that lacks
// files is reported with the missing ones and exit code 3.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "cli_support.hpp"
#include "io/json.hpp"

namespace numcheck::testing {
namespace {

namespace fs = std::filesystem;

const io::Json* library(const io::Json& report, std::string_view soname_prefix) {
  for (const auto& l : report["libraries"]) {
    if (l["soname"].get<std::string>().rfind(soname_prefix, 0) == 0) return &l;
  }
  return nullptr;
}

TEST(DoctorCli, FindsEveryNeededLibraryAndDataFileOnThisMachine) {
  const auto r = run_cli("doctor");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* name : {"libcurl", "SQLite", "ICU (libicuuc)", "libstemmer", "liblinear", "libcurl4",
                           "libsqlite3-0", "libstemmer0d", "liblinear4", "units.json"}) {
    EXPECT_NE(r.out.find(name), std::string::npos) << name << "\n" << r.out;
  }
  EXPECT_EQ(r.out.find("MISSING"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Everything numcheck needs is found."), std::string::npos) << r.out;

  const auto j = run_cli("doctor --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const io::Json report = io::parse_json(j.out, "doctor --json");
  EXPECT_EQ(report["ok"], true);
  EXPECT_EQ(report["missing"], 0);
  const struct {
    const char* soname;
    const char* package_prefix;
  } needed[] = {{"libcurl.so.4", "libcurl4"},     {"libsqlite3.so.0", "libsqlite3-0"},
                {"libicuuc.so.", "libicu"},       {"libstemmer.so.0d", "libstemmer0d"},
                {"liblinear.so.4", "liblinear4"}, {"libcpp-httplib.so.0.11", "libcpp-httplib0.11"}};
  for (const auto& n : needed) {
    const io::Json* l = library(report, n.soname);
    ASSERT_NE(l, nullptr) << n.soname;
    EXPECT_EQ((*l)["found"], true) << l->dump();
    EXPECT_TRUE(fs::exists((*l)["path"].get<std::string>())) << l->dump();
    EXPECT_EQ((*l)["debian_package"].get<std::string>().rfind(n.package_prefix, 0), 0u) << l->dump();
    EXPECT_EQ((*l)["optional"], false) << l->dump();
  }
  // ICU, libstemmer, liblinear and cpp-httplib are linked: read from the process, not loaded by doctor.
  for (const char* linked :
       {"libicuuc.so.", "libstemmer.so.0d", "liblinear.so.4", "libcpp-httplib.so.0.11"}) {
    EXPECT_EQ((*library(report, linked))["loaded"], "linked") << linked;
  }
  // The ICU package carries the version of the library found (libicu72 for libicuuc.so.72).
  const io::Json& icu = *library(report, "libicuuc.so.");
  const std::string version = icu["soname"].get<std::string>().substr(std::string("libicuuc.so.").size());
  EXPECT_EQ(icu["debian_package"], "libicu" + version);
  // XGBoost is optional: listed whether found or not.
  const io::Json* xgb = library(report, "libxgboost.so.0");
  ASSERT_NE(xgb, nullptr);
  EXPECT_EQ((*xgb)["optional"], true);
  EXPECT_EQ((*xgb)["loaded"], "on first use");
  for (const auto& f : report["data_files"]) {
    EXPECT_EQ(f["found"], true) << f.dump();
    EXPECT_EQ(f["sha256"].get<std::string>().size(), 64u) << f.dump();
    EXPECT_EQ(f["bytes"].get<std::uintmax_t>(), fs::file_size(f["path"].get<std::string>())) << f.dump();
  }
}

TEST(DoctorCli, AMissingDataFileIsReportedAndExitsNonZero) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("numcheck_doctor_{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir / "orbit");
  fs::copy_file(fs::path(NUMCHECK_SOURCE_DIR) / "data" / "units.json", dir / "units.json");

  const auto r = run_cli(fmt::format("doctor --data-dir '{}'", dir.string()));
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("MISSING orbit/default_spec.json"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("MISSING units.json"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Everything numcheck needs is found."), std::string::npos) << r.out;

  const auto j = run_cli(fmt::format("doctor --json --data-dir '{}'", dir.string()));
  EXPECT_EQ(j.exit_code, 3) << j.err;
  const io::Json report = io::parse_json(j.out, "doctor --json");
  EXPECT_EQ(report["ok"], false);
  bool units_found = false, spec_missing = false;
  for (const auto& f : report["data_files"]) {
    if (f["file"] == "units.json")
      units_found = f["found"] == true && f["path"] == (dir / "units.json").string();
    if (f["file"] == "orbit/default_spec.json") spec_missing = f["found"] == false && f["path"].is_null();
  }
  EXPECT_TRUE(units_found) << j.out;
  EXPECT_TRUE(spec_missing) << j.out;
  EXPECT_EQ(report["missing"], report["data_files"].size() - 1);

  // An empty folder: every data file missing.
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto e = run_cli(fmt::format("doctor --data-dir '{}'", dir.string()));
  EXPECT_EQ(e.exit_code, 3) << e.out << e.err;
  EXPECT_NE(e.out.find("MISSING units.json"), std::string::npos) << e.out;
  fs::remove_all(dir);
}

TEST(DoctorCli, HelpHasAnExample) {
  const auto r = run_cli("doctor --help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Example:\n  numcheck doctor"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("; 3 a needed library or data file is missing"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--json"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace numcheck::testing
