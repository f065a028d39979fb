// --fresh-process N: the cold start a user meets. Each of N new processes (this binary run again
// through /proc/self/exe, with the hidden `fresh-process-child` command) builds the network, plans
// it and runs one forward, then reports the time from just before the parent started it to the
// result: the parent passes a steady_clock reading on the command line, and steady_clock is
// CLOCK_MONOTONIC, one clock for every process on the machine. So the figure includes exec,
// loading the libraries, building and planning the network, and the first forward's cold caches.
#pragma once

#include <cstdint>
#include <string>

#include "bench/harness/model_bench.hpp"

namespace convlab {

// Runs config.fresh_processes new processes one after the other, for `kernel` at `batch`.
// Throws InputError when one fails or reports nothing.
FreshProcesses measure_fresh_processes(const ModelBenchConfig& config, const std::string& kernel, std::int64_t batch);

struct FreshChildOptions {
  std::string model, kernel, weights;
  std::int64_t batch = 1;
  std::uint64_t seed = 1;
  int threads = 0;
  std::int64_t since_ns = 0;  // the parent's steady_clock just before it started this process
  // An int8 kernel: the network is quantised in the process, as the parent's run did it (from the
  // interchange file, or by its calibration, which then counts in the cold start).
  std::string quantized, observer = "minmax";
  int calibration = 32;
  bool reduce_range = false;
};

// The name of the hidden child command (bench/commands/fresh_child_command.cpp).
inline constexpr const char* kFreshChildCommand = "fresh-process-child";
// What the child runs; it prints "<total ms> <forward ms>" on one line.
int run_fresh_child(const FreshChildOptions& options);

}  // namespace convlab
