# Read by ctest after the discovered tests of this folder (tests/integration/CMakeLists.txt): the
# tests that take minutes, started first so that they run beside the short ones.
set_tests_properties(MainJob.TheClaimsStepsOfASmokeRunSendWhatTheyAnnounce PROPERTIES COST 10000)
