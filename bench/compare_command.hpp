// The `convlab compare A.json B.json` subcommand: rows matched by model (or conv problem),
// backend, kernel, mode and batch; each pair judged from its stored trials (bench/ab_test.hpp).
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace convlab {

struct CompareOptions {
  std::string a, b;
  std::uint64_t seed = 1;
  int resamples = 2000;
  double noise_percent = 5;
};

CLI::App* add_compare_command(CLI::App& app, CompareOptions& options);
// Exit 0 once compared (whatever the verdicts); throws InputError (exit 2) for a bad file.
int run_compare(const CompareOptions& options);

}  // namespace convlab
