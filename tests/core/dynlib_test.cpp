// SharedLibrary and load_library: the one way numcheck loads libcurl, libxgboost, SQLite, ICU, ... on first
// use. A library that is missing, or lacks a function, is a numcheck::Error naming it and what needed it; a
// bound function is the library's own.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "core/dynlib.hpp"

namespace numcheck {
namespace {

std::string error_of(void (*f)()) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    return e.what();
  }
  return "(no error)";
}

TEST(SharedLibrary, AMissingLibraryNamesItselfAndWhatNeedsIt) {
  const auto msg = error_of([] { core::SharedLibrary("libnowhere", "libnowhere-numcheck.so.0", "a test"); });
  EXPECT_EQ(msg.rfind("cannot load libnowhere (libnowhere-numcheck.so.0), needed for a test: ", 0), 0U)
      << msg;
  EXPECT_NE(msg.find("libnowhere-numcheck.so.0: cannot open shared object file"), std::string::npos) << msg;
}

TEST(SharedLibrary, BindsAFunctionAndRefusesAMissingOne) {
  const core::SharedLibrary libc("libc", "libc.so.6", "a test");
  decltype(&::strlen) len = nullptr;
  libc.bind(len, "strlen");
  ASSERT_NE(len, nullptr);
  EXPECT_EQ(len("numcheck"), 8U);
  const auto msg = error_of([] {
    const core::SharedLibrary lib("libc", "libc.so.6", "a test");
    decltype(&::strlen) f = nullptr;
    lib.bind(f, "numcheck_no_such_function");
  });
  EXPECT_EQ(msg, "libc (libc.so.6) has no function numcheck_no_such_function");
}

// A table declared by a list macro: every member is bound to the function it names, and a
// renaming macro (as ICU's headers have) is expanded before the symbol is looked up.
#define NUMCHECK_TEST_RENAMED numcheck_test_renamed
#define numcheck_test_renamed strlen
#define NUMCHECK_TEST_FUNCTIONS(X) \
  X(length, strlen)                \
  X(compare, strcmp)               \
  X(renamed, numcheck_test_renamed)
struct TestApi {
  NUMCHECK_TEST_FUNCTIONS(NUMCHECK_DYNLIB_MEMBER)
};

TEST(SharedLibrary, LoadLibraryBindsEveryMemberOfTheTable) {
  const auto api = core::load_library<TestApi>(
      "libc", "libc.so.6", "a test",
      [](const core::SharedLibrary& lib, TestApi& api) { NUMCHECK_TEST_FUNCTIONS(NUMCHECK_DYNLIB_BIND) });
  ASSERT_NE(api.length, nullptr);
  ASSERT_NE(api.compare, nullptr);
  ASSERT_NE(api.renamed, nullptr);
  EXPECT_EQ(api.length("numcheck"), 8U);
  EXPECT_EQ(api.compare("a", "a"), 0);
  EXPECT_EQ(api.renamed("abc"), 3U);  // looked up as "strlen", not "numcheck_test_renamed"
  EXPECT_STREQ(NUMCHECK_DYNLIB_NAME(NUMCHECK_TEST_RENAMED), "strlen");
}

}  // namespace
}  // namespace numcheck
