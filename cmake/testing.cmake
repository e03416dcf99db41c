# fabricsim_add_gtest(<target> SOURCES ... [LIBS ...] [SYSTEMC] [TIMEOUT s] [LABELS ...])
# Registers every TEST of the binary with CTest as its own process. SystemC
# allows one elaboration per process, so for SYSTEMC binaries this is what
# makes several simulating tests per file possible; it also keeps one bad
# test from taking the others down.
include(GoogleTest)

function(fabricsim_add_gtest target)
  cmake_parse_arguments(T "SYSTEMC" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  add_executable(${target} ${T_SOURCES})
  fabricsim_target_options(${target})
  if(T_SYSTEMC)
    target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/testbenches/common/sc_gtest_main.cpp)
    target_link_libraries(${target} PRIVATE fabricsim_models GTest::gtest ${T_LIBS})
  else()
    target_link_libraries(${target} PRIVATE GTest::gtest_main ${T_LIBS})
  endif()
  target_compile_definitions(${target} PRIVATE
    FABRICSIM_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    FABRICSIM_BINARY_DIR="${PROJECT_BINARY_DIR}")
  gtest_discover_tests(${target}
    DISCOVERY_MODE PRE_TEST
    PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "${T_LABELS}")
endfunction()
