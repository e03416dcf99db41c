# Every dependency comes from Debian (scripts/setup installs them).
find_package(PkgConfig REQUIRED)
# SystemC ships no CMake package: pkg-config is the only way in.
pkg_check_modules(SystemC REQUIRED IMPORTED_TARGET GLOBAL systemc)
find_package(fmt REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(GTest REQUIRED)
find_package(Threads REQUIRED)
# GNU MPFR: correctly rounded reference for the reduction ALU test.
pkg_check_modules(MPFR REQUIRED IMPORTED_TARGET mpfr)
# Verilator: RTL co-simulation (rtl/), and its bundled GTKWave FST writer.
find_package(verilator REQUIRED HINTS $ENV{VERILATOR_ROOT})
find_package(ZLIB REQUIRED)
