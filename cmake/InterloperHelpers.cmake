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

# il_add_layer(<name> [HEADERS <public headers>] [BELOW <lower layers>] [LIBS <third-party>])
#
# One layer of the library: the object library `il_<name>` built from src/interloper/<name>/*.cpp
# (the folder may be empty or missing). The layer compiles against an include root of its own,
# <build>/layers/<name>, that holds links to exactly its public headers (include/interloper/<h>)
# and to its private folder (src/interloper/<name>/). Linking a lower layer adds that layer's
# root, so a file sees its own layer and the layers below it and nothing else: an include of a
# higher layer's header fails to compile. Every public header is also compiled on its own inside
# its layer, so a public header that includes a higher one fails the same way.
function(il_add_layer name)
  cmake_parse_arguments(ARG "" "" "HEADERS;BELOW;LIBS" ${ARGN})
  set(root ${PROJECT_BINARY_DIR}/layers/${name})
  file(REMOVE_RECURSE ${root}/interloper)
  file(MAKE_DIRECTORY ${root}/interloper ${root}/header_check)
  set(private_dir ${PROJECT_SOURCE_DIR}/src/interloper/${name})
  if(IS_DIRECTORY ${private_dir})
    file(CREATE_LINK ${private_dir} ${root}/interloper/${name} SYMBOLIC)
  endif()
  set(sources)
  set_property(GLOBAL APPEND PROPERTY IL_LAYER_HEADERS ${ARG_HEADERS})
  foreach(header ${ARG_HEADERS})
    unset(old_text)
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/include/interloper/${header}
         ${root}/interloper/${header} SYMBOLIC)
    string(REPLACE "." "_" check ${header})
    set(check_file ${root}/header_check/${check}.cpp)
    set(check_text "#include \"interloper/${header}\"  // compiles on its own, within its layer\n")
    if(EXISTS ${check_file})
      file(READ ${check_file} old_text)
    endif()
    if(NOT old_text STREQUAL check_text)
      file(WRITE ${check_file} ${check_text})
    endif()
    list(APPEND sources ${check_file})
  endforeach()
  file(GLOB layer_sources CONFIGURE_DEPENDS ${private_dir}/*.cpp)
  list(APPEND sources ${layer_sources})
  set(target il_${name})
  if(sources)
    add_library(${target} OBJECT ${sources})
    il_set_warnings(${target})
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_include_directories(${target} PUBLIC ${root})
    foreach(lower ${ARG_BELOW})
      target_link_libraries(${target} PUBLIC il_${lower})
    endforeach()
    target_link_libraries(${target} PUBLIC ${ARG_LIBS})
    set_property(GLOBAL APPEND PROPERTY IL_LAYER_OBJECTS $<TARGET_OBJECTS:${target}>)
  else()
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE ${root})
    foreach(lower ${ARG_BELOW})
      target_link_libraries(${target} INTERFACE il_${lower})
    endforeach()
    target_link_libraries(${target} INTERFACE ${ARG_LIBS})
  endif()
endfunction()

# Every header in include/interloper/ belongs to exactly one layer, and interloper.hpp includes
# every other one. Checked when CMake configures, so a new public header cannot be forgotten.
function(il_check_public_headers)
  get_property(assigned GLOBAL PROPERTY IL_LAYER_HEADERS)
  file(GLOB headers RELATIVE ${PROJECT_SOURCE_DIR}/include/interloper CONFIGURE_DEPENDS
       ${PROJECT_SOURCE_DIR}/include/interloper/*.hpp)
  file(READ ${PROJECT_SOURCE_DIR}/include/interloper/interloper.hpp umbrella)
  foreach(header ${headers})
    list(FIND assigned ${header} at)
    if(at EQUAL -1)
      message(FATAL_ERROR "include/interloper/${header} belongs to no layer: add it to the "
                          "HEADERS of its il_add_layer in CMakeLists.txt")
    endif()
    if(NOT header STREQUAL "interloper.hpp")
      string(FIND "${umbrella}" "#include \"interloper/${header}\"" found)
      if(found EQUAL -1)
        message(FATAL_ERROR "include/interloper/interloper.hpp does not include ${header}")
      endif()
    endif()
  endforeach()
endfunction()
