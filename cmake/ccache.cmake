# Use ccache when present; CCACHE_BASEDIR makes a fresh clone hit the cache.
find_program(FABRICSIM_CCACHE ccache)
if(FABRICSIM_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}
                                  CCACHE_NOHASHDIR=1 ${FABRICSIM_CCACHE})
endif()
