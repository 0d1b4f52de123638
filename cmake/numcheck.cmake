# numcheck_library(NAME DEPS...): a static library from every .cpp in the current folder.
function(numcheck_library name)
  file(GLOB _srcs CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*.cpp")
  if(_srcs)
    add_library(${name} STATIC ${_srcs})
    target_include_directories(${name} PUBLIC "${PROJECT_SOURCE_DIR}/src")
    target_link_libraries(${name} PUBLIC ${ARGN})
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
