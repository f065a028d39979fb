// `convlab sweep`: one model across batch sizes, model-only and end-to-end, for the batch 1 versus
// batch 32 exercise: per batch the latency distribution, per-item latency, throughput and peak
// memory, and where memory runs out. Kept out of cli.cpp so each command stays one short file.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "bench/lab_command.hpp"

namespace convlab {

struct SweepOptions {
  RunOptions run;     // batches, kernels, protocol... (the sweep's own defaults: see add_sweep_command)
  std::string modes;  // "model-only", "end-to-end" or both, comma-separated
};

CLI::App* add_sweep_command(CLI::App& app, SweepOptions& options);

// Exit codes as `convlab run`: 3 when some batch ran out of memory (the others are still measured).
int run_sweep(const SweepOptions& options);

}  // namespace convlab
