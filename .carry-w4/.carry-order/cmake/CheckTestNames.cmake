# Run as `cmake -DBUILD_DIR=dir -P CheckTestNames.cmake`: fails when a registered test's name holds a
# printed test parameter (gtest's byte dump of a struct, "GetParam() = ..."), which changes from
# build to build. Each INSTANTIATE_TEST_SUITE_P needs a name generator (see TesselHelpers.cmake).
execute_process(COMMAND ${CMAKE_CTEST_COMMAND} -N --test-dir ${BUILD_DIR}
                OUTPUT_VARIABLE listing RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "ctest -N failed:\n${listing}")
endif()
string(REGEX MATCHALL "Test +#[0-9]+: [^\n]*(GetParam|-byte object)[^\n]*" unstable "${listing}")
if(unstable)
  string(REPLACE ";" "\n" unstable "${unstable}")
  message(FATAL_ERROR "test names that embed a printed parameter:\n${unstable}")
endif()
