// A thin C++ face of GTKWave's FST writer (fstapi, bundled with Verilator),
// compiled in fst_writer.cpp so its C sources and warnings stay there.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace fabricsim {

void* fst_open(const std::string& path);  // nullptr on failure; timescale 1 ps
void fst_scope(void* ctx, const std::string& name);
void fst_upscope(void* ctx);
std::uint32_t fst_var(void* ctx, const std::string& name, int width);
void fst_time(void* ctx, std::uint64_t t);
void fst_value(void* ctx, std::uint32_t handle, const char* bits);  // '0'/'1', msb first
void fst_close(void* ctx);

// Reading back (tests): value changes per full signal name ("a.b.sig"),
// the initial dump included. Empty if the file cannot be read.
std::map<std::string, std::size_t> fst_count_changes(const std::string& path);
// Every change of one signal (full name; aliases work): time and value bits,
// msb first. Empty if the file cannot be read or has no such signal.
std::vector<std::pair<std::uint64_t, std::string>> fst_changes(const std::string& path,
                                                               const std::string& name);

}  // namespace fabricsim
