# Use ccache when present; CCACHE_BASEDIR makes a fresh clone hit the cache.
# Not for profile-guided builds: a cached object could carry an older profile.
find_program(FABRICSIM_CCACHE ccache)
if(FABRICSIM_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER AND FABRICSIM_PGO STREQUAL "OFF")
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}
                                  CCACHE_NOHASHDIR=1 ${FABRICSIM_CCACHE})
endif()
