# FindDuckDB: DuckDB's C API (duckdb.h, libduckdb.so), as scripts/install-deps installs it.
#
# Looks in DuckDB_ROOT (a CMake or environment variable) first, then in the fixed prefix
# /opt/interloper-duckdb, then in the usual system places. Defines DuckDB_FOUND,
# DuckDB_INCLUDE_DIR, DuckDB_LIBRARY, DuckDB_VERSION and the imported target DuckDB::DuckDB,
# whose absolute library path makes CMake give every program linking it an rpath to it.
find_path(DuckDB_INCLUDE_DIR duckdb.h
  HINTS ${DuckDB_ROOT} ENV DuckDB_ROOT
  PATHS /opt/interloper-duckdb
  PATH_SUFFIXES include)
find_library(DuckDB_LIBRARY NAMES duckdb
  HINTS ${DuckDB_ROOT} ENV DuckDB_ROOT
  PATHS /opt/interloper-duckdb
  PATH_SUFFIXES lib)
if(DuckDB_INCLUDE_DIR)
  get_filename_component(_duckdb_prefix ${DuckDB_INCLUDE_DIR} DIRECTORY)
  if(EXISTS ${_duckdb_prefix}/VERSION)
    file(STRINGS ${_duckdb_prefix}/VERSION DuckDB_VERSION LIMIT_COUNT 1)
  endif()
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(DuckDB
  REQUIRED_VARS DuckDB_LIBRARY DuckDB_INCLUDE_DIR
  VERSION_VAR DuckDB_VERSION
  REASON_FAILURE_MESSAGE "run scripts/install-deps, or point DuckDB_ROOT at a prefix holding include/duckdb.h and lib/libduckdb.so")
mark_as_advanced(DuckDB_INCLUDE_DIR DuckDB_LIBRARY)

if(DuckDB_FOUND AND NOT TARGET DuckDB::DuckDB)
  add_library(DuckDB::DuckDB SHARED IMPORTED)
  set_target_properties(DuckDB::DuckDB PROPERTIES
    IMPORTED_LOCATION ${DuckDB_LIBRARY}
    IMPORTED_NO_SONAME FALSE
    INTERFACE_INCLUDE_DIRECTORIES ${DuckDB_INCLUDE_DIR})
endif()
