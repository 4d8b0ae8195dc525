# Run as `cmake -DCOMMAND=a;b;c -DEXPECT_EXIT=N -DEXPECT_MESSAGE=text -P RunErrorTest.cmake`: runs
# COMMAND and fails unless it exits with EXPECT_EXIT and its stderr+stdout contains EXPECT_MESSAGE.
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(NOT "${status}" STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "expected exit ${EXPECT_EXIT}, got ${status}\noutput:\n${all}")
endif()
string(FIND "${all}" "${EXPECT_MESSAGE}" found)
if(found EQUAL -1)
  message(FATAL_ERROR "expected the message '${EXPECT_MESSAGE}'\noutput:\n${all}")
endif()
