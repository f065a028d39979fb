// `convlab peak`: this machine's measured ceilings, the denominators of every "% of peak".
#include <omp.h>

#include <memory>
#include <string>

#include <fmt/format.h>

#include "bench/commands/cli.hpp"
#include "bench/commands/cli_args.hpp"
#include "bench/commands/commands.hpp"
#include "bench/harness/environment.hpp"
#include "bench/harness/peak.hpp"
#include "bench/report/wording.hpp"

namespace convlab {

namespace {

int run_peak(int threads) {
  set_threads(threads);
  const int cpus = omp_get_num_procs();
  const double busy_before = other_busy_cores_now(cpus);
  const Peak p = measure_peak(/*quick=*/false);
  const double busy_after = other_busy_cores_now(cpus);
  // With one thread the all-threads figures are the one-thread ones: printed once.
  const bool several = p.threads > 1;
  const std::string all = count_of(p.threads, "thread");
  fmt::print("FP32 FMA peak ({} lanes per SIMD register, this build's ISA):\n"
             "  1 thread:   {:8.1f} GFLOP/s\n",
             p.simd_lanes, p.gflops_one);
  if (several) fmt::print("  {}: {:8.1f} GFLOP/s\n", all, p.gflops_all);
  fmt::print("cpu.02's register tiles (3x3 taps) on L1-resident data, the ceiling of a direct kernel:\n");
  for (const TileCeiling& t : p.tiles) {
    fmt::print("  {} x {:<2} 1 thread: {:6.1f} GFLOP/s ({:3.0f}% of the FMA peak)", t.k_blocks, t.pixels, t.gflops_one,
               100 * t.gflops_one / p.gflops_one);
    if (several) fmt::print("   {}: {:6.1f} ({:3.0f}%)", all, t.gflops_all, 100 * t.gflops_all / p.gflops_all);
    fmt::print("\n");
  }
  if (p.int8_gops_all > 0) {
    fmt::print("int8 peak ({}):\n"
               "  1 thread:   {:8.1f} GOP/s\n",
               p.int8_instruction, p.int8_gops_one);
    if (several)
      fmt::print("  {}: {:8.1f} GOP/s ({:.1f}x the FP32 FMA peak)\n", all, p.int8_gops_all, p.int8_gops_all / p.gflops_all);
    fmt::print("int16 pairs (vpmaddwd + vpaddd, exact: cpu.21's instructions): {:.1f} GOP/s", p.int16_pair_gops_one);
    if (several) fmt::print(", {}: {:.1f}", all, p.int16_pair_gops_all);
    fmt::print("\n");
  }
  if (p.parallel_region_us > 0)
    fmt::print("parallel region ({}, empty, back to back): {:.1f} us, the fork and join every threaded "
               "kernel call pays\n",
               all, p.parallel_region_us);
  fmt::print("memory bandwidth ({}, 256 MiB arrays):\n"
             "  read:       {:8.1f} GB/s\n"
             "  triad:      {:8.1f} GB/s (a = b + s c, 12 bytes per element)\n"
             "best of 5 repetitions each; machine balance {:.1f} FLOP per byte read\n",
             all, p.read_gbs, p.triad_gbs, p.gflops_all / p.read_gbs);
  fmt::print("other work on the cores: {:.2f} busy before, {:.2f} after (sampled while convlab slept)\n", busy_before,
             busy_after);
  for (const std::string& warning : peak_warnings(p, busy_before, busy_after)) fmt::print("WARNING: {}\n", warning);
  return kExitOk;
}

}  // namespace

Command add_peak_command(CLI::App& app) {
  auto threads = std::make_shared<int>(0);
  CLI::App* cmd = app.add_subcommand("peak", "Measure this machine's FP32 FMA peak and memory bandwidth");
  add_threads_option(*cmd, *threads);
  return {cmd, [threads] { return run_peak(*threads); }};
}

}  // namespace convlab
