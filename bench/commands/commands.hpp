// Every `convlab` subcommand, each in its own file of bench/commands/ (<name>_command.cpp).
// add_<name>_command registers the subcommand and its options on `app` and returns it with the
// action that runs it; cli.cpp only wires them together and turns errors into exit codes.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace convlab {

struct Command {
  CLI::App* app;            // the subcommand; the top-level app for the default lab
  std::function<int()> run;  // returns the exit code (bench/commands/cli.hpp)
};

Command add_lab_command(CLI::App& app);  // `convlab` alone: the teaching lab (run_command.cpp)
Command add_run_command(CLI::App& app);
Command add_conv_command(CLI::App& app);
Command add_validate_command(CLI::App& app);
Command add_sweep_command(CLI::App& app);
Command add_report_command(CLI::App& app);
Command add_compare_command(CLI::App& app);
Command add_policy_command(CLI::App& app);
Command add_peak_command(CLI::App& app);
Command add_kernels_command(CLI::App& app);
Command add_models_command(CLI::App& app);
Command add_quantize_command(CLI::App& app);
Command add_env_command(CLI::App& app);
Command add_overhead_command(CLI::App& app);
Command add_fresh_child_command(CLI::App& app);  // hidden: the parent's tool for --fresh-process

}  // namespace convlab
