// --fresh-process N: the cold start a user meets. Each of N new processes (this binary run again
// through /proc/self/exe, with the hidden `fresh-process-child` command) builds the network, plans
// it and runs one forward, then reports the time from just before the parent started it to the
// result: the parent passes a steady_clock reading on the command line, and steady_clock is
// CLOCK_MONOTONIC, one clock for every process on the machine. So the figure includes exec,
// loading the libraries, building and planning the network, and the first forward's cold caches.
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "bench/lab.hpp"

namespace convlab {

// Runs config.fresh_processes new processes one after the other, for `kernel` at `batch`.
// Throws InputError when one fails or reports nothing.
FreshProcesses measure_fresh_processes(const LabConfig& config, const std::string& kernel, std::int64_t batch);

struct FreshChildOptions {
  std::string model, kernel, weights;
  std::int64_t batch = 1;
  std::uint64_t seed = 1;
  int threads = 0;
  std::int64_t since_ns = 0;  // the parent's steady_clock just before it started this process
};

// The hidden child command; it prints "<total ms> <forward ms>" on one line.
CLI::App* add_fresh_child_command(CLI::App& app, FreshChildOptions& options);
int run_fresh_child(const FreshChildOptions& options);

}  // namespace convlab
