# Precompiled headers: the third-party headers nearly every file includes (nlohmann/json, fmt, the
# standard containers; CLI11 for the CLI, GoogleTest for the tests) are parsed once per target
# instead of once per file. Parsing them is most of a small file's compile time (CLI11 alone is
# about 5 s of CPU per file, nlohmann/json 2 s, GoogleTest 3 s). A target of fewer than four files
# gets none: making the header costs about as much as it saves there.
set(NUMCHECK_PCH_HEADERS <algorithm> <filesystem> <functional> <map> <memory> <optional> <string>
    <string_view> <vector> <fmt/format.h> <nlohmann/json.hpp>)
# numcheck_pch(TARGET SOURCE_COUNT [EXTRA_HEADERS...])
function(numcheck_pch target count)
  if(NUMCHECK_PCH AND count GREATER_EQUAL 4)
    target_precompile_headers(${target} PRIVATE ${NUMCHECK_PCH_HEADERS} ${ARGN})
  endif()
endfunction()

# numcheck_library(NAME DEPS...): a static library from every .cpp in the current folder.
function(numcheck_library name)
  file(GLOB _srcs CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*.cpp")
  if(_srcs)
    add_library(${name} STATIC ${_srcs})
    target_include_directories(${name} PUBLIC "${PROJECT_SOURCE_DIR}/src")
    target_link_libraries(${name} PUBLIC ${ARGN})
    list(LENGTH _srcs _n)
    numcheck_pch(${name} ${_n})
  else()  # header-only so far
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE "${PROJECT_SOURCE_DIR}/src")
    target_link_libraries(${name} INTERFACE ${ARGN})
  endif()
endfunction()

# numcheck_test_suite(NAME LABEL DEPS...): one GoogleTest executable from every .cpp in the folder,
# each test registered with CTest and labelled (ctest -L unit / -L integration).
function(numcheck_test_suite name label)
  file(GLOB _srcs CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*.cpp")
  if(NOT _srcs)
    return()
  endif()
  add_executable(${name} ${_srcs})
  target_link_libraries(${name} PRIVATE ${ARGN} GTest::gtest GTest::gmock GTest::gtest_main)
  target_include_directories(${name} PRIVATE "${PROJECT_SOURCE_DIR}/tests/support")  # header-only helpers
  list(LENGTH _srcs _n)
  numcheck_pch(${name} ${_n} <gtest/gtest.h> <gmock/gmock.h>)
  if(NUMCHECK_PCH AND _n GREATER_EQUAL 4 AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # With a precompiled header g++ 12 no longer treats libstdc++'s inlined std::string code as a
    # system header, and its known false alarms on `std::string(n, c) + "..."` at -O2
    # (-Warray-bounds, -Wstringop-overflow, -Wrestrict; GCC bugs 105329, 105651) reach the tests'
    # string building. The tests only: src/ keeps every warning.
    target_compile_options(${name} PRIVATE -Wno-array-bounds -Wno-stringop-overflow -Wno-restrict)
  endif()
  target_compile_definitions(${name} PRIVATE
    NUMCHECK_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    NUMCHECK_BINARY_DIR="${PROJECT_BINARY_DIR}"
    NUMCHECK_CLI="$<TARGET_FILE:numcheck>")
  if(label STREQUAL "integration")
    add_dependencies(${name} numcheck)
  endif()
  # The tests' cache folder (model responses, benchmark indexes) is the build's, not the user's.
  # (ENVIRONMENT is a test property: outside PROPERTIES gtest_discover_tests ignores it.)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60
                       PROPERTIES LABELS ${label} ENVIRONMENT "NUMCHECK_CACHE_DIR=${PROJECT_BINARY_DIR}/test-cache"
                       WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
endfunction()
