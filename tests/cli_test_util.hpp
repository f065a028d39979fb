// Helpers for tests that run the convlab binary as a user would: its exit code, stdout, stderr.
#pragma once

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace convlab::test {
namespace fs = std::filesystem;

struct Outcome {
  int code;
  std::string out, err;
};

inline std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline fs::path scratch() {
  const fs::path dir = fs::temp_directory_path() / ("convlab_cli_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

// Runs a shell command line (e.g. one that sets limits before exec'ing convlab) as a user would.
inline Outcome run_convlab_with(const std::string& command) {
  const fs::path dir = scratch();
  const std::string cmd = command + " >" + (dir / "out").string() + " 2>" + (dir / "err").string() + " </dev/null";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "out"), slurp(dir / "err")};
}

inline Outcome run_convlab(const std::string& args) { return run_convlab_with(std::string(CONVLAB_BINARY) + " " + args); }

inline std::size_t lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

inline void check_usage_error(const std::string& args, const std::string& message) {
  CAPTURE(args);
  const Outcome o = run_convlab(args);
  CHECK(o.code == 2);
  CHECK(lines(o.err) == 1);
  CHECK_MESSAGE(o.err.find(message) != std::string::npos, o.err);
  CHECK(o.err.rfind("convlab: error: ", 0) == 0);
}

}  // namespace convlab::test
