# Records the version and git commit for provenance (generated header core/version.h). A copy of
# the tree whose .git does not match it (e.g. shipped to a GPU host) names its commit through the
# environment: MIGSCOPE_GIT_COMMIT=$(git rev-parse --short=12 HEAD).
if(DEFINED ENV{MIGSCOPE_GIT_COMMIT})
  set(MIGSCOPE_GIT_COMMIT "$ENV{MIGSCOPE_GIT_COMMIT}")
else()
  execute_process(
    COMMAND git rev-parse --short=12 HEAD
    WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}"
    OUTPUT_VARIABLE MIGSCOPE_GIT_COMMIT
    OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET)
endif()
if(NOT MIGSCOPE_GIT_COMMIT)
  set(MIGSCOPE_GIT_COMMIT "unknown")
endif()
configure_file("${CMAKE_SOURCE_DIR}/src/core/version.h.in"
               "${CMAKE_BINARY_DIR}/generated/core/version.h" @ONLY)
