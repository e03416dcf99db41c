// Running build/fabricsim as a user does, for the command-line tests.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace fabricsim_test {

inline const std::string kBin = FABRICSIM_BINARY_DIR "/fabricsim";
inline const std::string kSrc = FABRICSIM_SOURCE_DIR;

struct Result {
  int status;
  std::string output;  // stdout + stderr
};

// `fabricsim ARGS` through the shell, stderr joined to stdout.
inline Result sh(const std::string& args) {
  const std::string cmd = kBin + " " + args + " 2>&1";
  Result r{-1, ""};
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// A fresh directory name under the system's temporary directory.
inline std::string temp_dir(const std::string& tag) {
  const std::filesystem::path d = std::filesystem::temp_directory_path() /
                                  ("fabricsim_cli_" + tag + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  return d.string();
}

inline nlohmann::json load(const std::string& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

}  // namespace fabricsim_test
