// The `convlab validate` subcommand: its options and what it runs (bench/validate.hpp does the
// comparing). Kept out of cli.cpp so each command stays one short file.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace convlab {

struct ValidateOptions {
  std::string model, weights, input, expect;
  std::string backend = "cpu";
  std::string kernels = "all";
  std::string json;
  int threads = 0;
};

CLI::App* add_validate_command(CLI::App& app, ValidateOptions& options);

// Exit 0 when every kernel passes, 1 when any fails; throws InputError for bad usage (exit 2).
int run_validate(const ValidateOptions& options);

}  // namespace convlab
