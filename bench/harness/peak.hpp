// The machine's measured peak: FP32 FMA throughput and memory bandwidth. Every report that shows
// GFLOP/s also shows the percentage of this measured peak: peaks are measured, never assumed.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace convlab {

struct TileCeiling {
  int k_blocks = 0, pixels = 0;  // its accumulators: output-channel blocks x pixels
  double gflops_one = 0, gflops_all = 0;
};

struct Peak {
  int simd_lanes = 0;           // FP32 lanes of the SIMD width this build targets
  int threads = 0;              // OpenMP threads of the all-threads figures
  double gflops_one = 0;        // FMA throughput, one thread
  double gflops_all = 0;        // FMA throughput, all threads
  double gflops_all_after = 0;  // the same, measured again (quick) after a run's trials; 0: not
  // cpu.02's register tiles (kernels/cpu/microkernel.hpp) on data that stays in L1: the most a
  // direct kernel built on each can reach here, whatever its memory traffic (full measure only).
  std::vector<TileCeiling> tiles;
  // Int8 (bench/harness/int8_peak.cpp), in GOP/s (2 ops per multiply-add); 0 where the ISA has no
  // probe (only x86 with AVX2 or later so far).
  std::string int8_instruction;     // the fastest int8 multiply-accumulate of this build's ISA
  double int8_gops_one = 0, int8_gops_all = 0;
  double int8_gops_all_after = 0;  // as gflops_all_after, for int8 rows' % of peak; 0: not measured
  double int16_pair_gops_one = 0, int16_pair_gops_all = 0;  // vpmaddwd + vpaddd: exact int16 pairs
  // One empty OpenMP parallel region on all threads, back to back (median): the fork and join
  // that every call of a threaded kernel or op pays, however little work it shares. 0: not measured
  // (one thread, or the quick measurement).
  double parallel_region_us = 0;
  double read_gbs = 0;          // memory read bandwidth, all threads (sum over a large array)
  double triad_gbs = 0;         // STREAM triad a = b + s c, all threads, 3 x 4 bytes per element
};

// Why a measured peak may not be this machine's: other work on the cores before or after the
// measurement (other_busy_cores_now, -1 when unknown), all threads no faster than one, a tile
// ceiling above the FMA peak (the FMA loop met a busier moment). Empty when none applies.
std::vector<std::string> peak_warnings(const Peak& peak, double busy_before, double busy_after);

// quick: about 0.1 s (FMA only, for the % of peak beside results); full: about 5 s, with the
// register tiles' ceilings and bandwidth.
Peak measure_peak(bool quick);
// Fills peak's read and triad bandwidth (all threads; three 256 MiB arrays, about a second).
void measure_bandwidth(Peak& peak);
// The thread counts a figure is measured on: 1 and all, once when all is 1.
std::vector<int> peak_thread_counts(int all_threads);
// Keeps `value`, measured on `threads` threads, where it is best: in `one` for 1 thread, in `all`
// for all threads, in both when all is 1 (then `all` is no longer left at 0).
void keep_best(double value, int threads, int all_threads, double& one, double& all);
// Fills peak's int8 figures (its `threads` set): best of `repetitions`, `iterations` rounds each.
void measure_int8_peak(Peak& peak, long iterations, int repetitions);
// The median time of `regions` empty parallel regions of `threads` threads, run back to back, in us.
double parallel_region_us(int threads, int regions);
nlohmann::json to_json(const Peak& peak);
// A register tile of k_blocks x max_tile_width(k_blocks) on L1-resident data: GFLOP/s summed
// over `threads` threads, `calls` tiles each (one repetition of the TileCeiling measurement).
// k_blocks: 2 or kMaxKBlocks, the shapes cpu.02 uses for wide layers. `sum` is the total of every
// accumulator of every call, and `expected_sum` what the FMAs must give: equal (to float rounding)
// only if no FMA was optimised away, which a rate could not show (it is noisy, and meaningless
// under emulation).
struct TileRun {
  double gflops = 0, sum = 0, expected_sum = 0;
};
TileRun register_tile_run(int k_blocks, int threads, long calls);

}  // namespace convlab
