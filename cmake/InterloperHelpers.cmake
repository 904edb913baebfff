# Shared build helpers: warnings for every target, one test binary per layer.

function(il_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    # GCC 12 reports a false -Wrestrict inside std::string at -O2 and above.
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
endfunction()

# il_add_layer_test(<layer> [LIBS ...]): one GoogleTest binary `<layer>_test` built from
# tests/<layer>/*.cpp and registered with ctest, test by test.
function(il_add_layer_test layer)
  cmake_parse_arguments(ARG "" "" "LIBS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${layer}/*.cpp)
  if(NOT sources)
    return()
  endif()
  add_executable(${layer}_test ${sources})
  il_set_warnings(${layer}_test)
  target_include_directories(${layer}_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${layer}_test PRIVATE interloper GTest::gtest GTest::gtest_main ${ARG_LIBS})
  # Where the tests find the built tools and the source tree (golden files, examples).
  target_compile_definitions(${layer}_test PRIVATE
    IL_TEST_BINARY_DIR="${PROJECT_BINARY_DIR}" IL_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  gtest_discover_tests(${layer}_test
    DISCOVERY_MODE PRE_TEST
    TEST_FILTER "-*.DISABLED_*:DISABLED_*.*"
    PROPERTIES ENVIRONMENT "TZ=UTC")
endfunction()
