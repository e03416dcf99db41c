# Profile-guided optimisation (scripts/build --pgo; docs/performance.md).
#   FABRICSIM_PGO=GENERATE  instrumented build: runs write .gcda profiles to
#                           FABRICSIM_PGO_DIR
#   FABRICSIM_PGO=USE       optimised with the profiles in FABRICSIM_PGO_DIR
# Both link-time optimise. The profiles change code layout, inlining and
# branch order only: no floating-point contraction or fast-math (see
# project_options.cmake), so results are bit for bit those of a plain build.
set(FABRICSIM_PGO OFF CACHE STRING "Profile-guided optimisation: OFF, GENERATE or USE")
set_property(CACHE FABRICSIM_PGO PROPERTY STRINGS OFF GENERATE USE)
set(FABRICSIM_PGO_DIR "" CACHE PATH "Directory of the .gcda profiles (FABRICSIM_PGO)")

if(NOT FABRICSIM_PGO MATCHES "^(OFF|GENERATE|USE)$")
  message(FATAL_ERROR "FABRICSIM_PGO='${FABRICSIM_PGO}': allowed are OFF, GENERATE, USE")
endif()
if(NOT FABRICSIM_PGO STREQUAL "OFF")
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    message(FATAL_ERROR "FABRICSIM_PGO=${FABRICSIM_PGO}: needs GCC (compiler is ${CMAKE_CXX_COMPILER_ID})")
  endif()
  if(FABRICSIM_SANITIZE)
    message(FATAL_ERROR "FABRICSIM_PGO=${FABRICSIM_PGO} with FABRICSIM_SANITIZE=ON: choose one")
  endif()
  if(NOT IS_ABSOLUTE "${FABRICSIM_PGO_DIR}")
    message(FATAL_ERROR "FABRICSIM_PGO=${FABRICSIM_PGO}: FABRICSIM_PGO_DIR must be an absolute "
                        "path (got '${FABRICSIM_PGO_DIR}')")
  endif()
  include(CheckIPOSupported)
  check_ipo_supported(RESULT fabricsim_ipo OUTPUT fabricsim_ipo_why)
  if(NOT fabricsim_ipo)
    message(FATAL_ERROR "FABRICSIM_PGO: link-time optimisation unsupported: ${fabricsim_ipo_why}")
  endif()
  set(CMAKE_INTERPROCEDURAL_OPTIMIZATION ON)
  # Profiles are named after object paths relative to the build tree, so the
  # instrumented and the optimised build may live in different directories.
  set(fabricsim_pgo_prefix -fprofile-prefix-path=${PROJECT_BINARY_DIR})
  if(FABRICSIM_PGO STREQUAL "GENERATE")
    # One simulation thread: no atomic counter updates needed.
    add_compile_options(-fprofile-generate=${FABRICSIM_PGO_DIR} -fprofile-update=single
                        ${fabricsim_pgo_prefix})
    add_link_options(-fprofile-generate=${FABRICSIM_PGO_DIR})
  else()
    file(GLOB_RECURSE fabricsim_gcda "${FABRICSIM_PGO_DIR}/*.gcda")
    if(NOT fabricsim_gcda)
      message(FATAL_ERROR "FABRICSIM_PGO=USE: no profiles (.gcda) in FABRICSIM_PGO_DIR="
                          "'${FABRICSIM_PGO_DIR}'; scripts/build --pgo makes them")
    endif()
    # Code the training did not run keeps its normal optimisation
    # (partial training); files edited since the training fall back to it
    # too (coverage mismatch) instead of failing the build.
    add_compile_options(-fprofile-use=${FABRICSIM_PGO_DIR} -fprofile-partial-training
                        -Wno-missing-profile -Wno-coverage-mismatch ${fabricsim_pgo_prefix})
  endif()
endif()
