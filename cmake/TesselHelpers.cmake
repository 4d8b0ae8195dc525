# Small helpers shared by the CMakeLists of every layer.

# tessel_add_library(NAME SOURCES ... DEPS ...): one static library per layer, its public include
# root being src/ so that includes read "layout/layout.h".
function(tessel_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

# tessel_add_gtest(NAME SOURCES ... DEPS ... [LABELS ...]): one gtest binary registered with CTest.
# GPU tests pass LABELS gpu and skip themselves (GTEST_SKIP) when no GPU is present.
function(tessel_add_gtest name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/test)
  # A test's own code is glue around the libraries, which do the work and keep -O2; at -O1 the
  # large gtest bodies compile about a third faster, and the build is most of a CI run on 2 cores.
  target_compile_options(${name} PRIVATE $<$<CONFIG:RelWithDebInfo,Release>:-O1>)
  # One precompiled header for all tests (test/pch/test_pch.h), built by tessel_test_pch with the
  # same flags. GCC checks it with -Winvalid-pch and falls back to the headers if it cannot use it.
  if(TARGET tessel_test_pch)
    target_precompile_headers(${name} REUSE_FROM tessel_test_pch)
    # Through a PCH, GCC 12 loses that std::string's inlined char_traits code is a system header's
    # and reports its known -Warray-bounds / -Wstringop-* false positives on
    # `string + "..."` in test bodies (the same files compile quietly without the PCH).
    target_compile_options(${name} PRIVATE -Wno-array-bounds -Wno-stringop-overflow
                           -Wno-stringop-overread)
  endif()
  # NO_PRETTY_VALUES: a parameterized test is named by its suite's name generator, as gtest names
  # it, not by the printed GetParam() (for a struct, a byte dump holding heap addresses, different
  # in every build). Every INSTANTIATE_TEST_SUITE_P therefore passes a generator of readable names.
  if(ARG_LABELS)
    # A GPU test that finds no GPU calls GTEST_SKIP; CTest then reports it as skipped, not passed.
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 NO_PRETTY_VALUES
                         PROPERTIES LABELS "${ARG_LABELS}"
                         SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
  else()
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 NO_PRETTY_VALUES PROPERTIES LABELS "unit")
  endif()
endfunction()

# tessel_add_subdirectories_if_present(dir...): layers are added as they come into existence, so a
# folder without a CMakeLists.txt yet is skipped rather than breaking the build.
function(tessel_add_subdirectories_if_present)
  foreach(dir ${ARGN})
    if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${dir}/CMakeLists.txt)
      add_subdirectory(${dir})
    endif()
  endforeach()
endfunction()

# tessel_add_error_test(NAME EXIT N MESSAGE text ARGS tessel-arguments...): runs build/bin/tessel
# with ARGS and checks that it exits with N and prints MESSAGE (label "error"). For the bad-input
# tests of test/error/: a user error must give a message and a non-zero exit, never a crash.
function(tessel_add_error_test name)
  cmake_parse_arguments(ARG "" "EXIT;MESSAGE" "ARGS;ENVIRONMENT" ${ARGN})
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} "-DCOMMAND=$<TARGET_FILE:tessel>;${ARG_ARGS}"
                   -DEXPECT_EXIT=${ARG_EXIT} "-DEXPECT_MESSAGE=${ARG_MESSAGE}"
                   -P ${PROJECT_SOURCE_DIR}/cmake/RunErrorTest.cmake)
  set_tests_properties(${name} PROPERTIES LABELS "error")
  if(ARG_ENVIRONMENT)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${ARG_ENVIRONMENT}")
  endif()
endfunction()
