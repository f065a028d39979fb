// The `convlab policy` subcommand: which dynamic-batching policy (max batch, max wait) serves a
// declared Poisson arrival rate within a p99 SLO, from latency per batch measured now or read
// from a results file; bench/batching_sim.hpp simulates each policy.
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace convlab {

struct PolicyOptions {
  std::string model = "lab-cnn";
  std::string backend = "cpu";
  std::string kernel;  // empty: <backend>.auto where it runs the model, else the file's only kernel
  double rate = 0;     // requests per second
  double slo_p99_ms = 0;
  std::string from;    // a results file; empty: measure now
  std::string batches = "1,2,4,8,16,32";  // measured now
  std::string max_waits = "0,1,2,5,10";   // ms
  int warmup = 3, trials = 40;
  int threads = 0;
  std::int64_t requests = 20000;
  std::uint64_t seed = 1;
};

CLI::App* add_policy_command(CLI::App& app, PolicyOptions& options);
// Exit 0 with a recommendation or the reason none meets the SLO; InputError (exit 2) for bad input.
int run_policy(const PolicyOptions& options);

}  // namespace convlab
