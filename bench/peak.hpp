// The machine's measured peak: FP32 FMA throughput and memory bandwidth. Every report that shows
// GFLOP/s also shows the percentage of this measured peak: peaks are measured, never assumed.
#pragma once

#include <nlohmann/json.hpp>

namespace convlab {

struct Peak {
  int simd_lanes = 0;           // FP32 lanes of the SIMD width this build targets
  int threads = 0;              // OpenMP threads of the all-threads figures
  double gflops_one = 0;        // FMA throughput, one thread
  double gflops_all = 0;        // FMA throughput, all threads
  double read_gbs = 0;          // memory read bandwidth, all threads (sum over a large array)
  double triad_gbs = 0;         // STREAM triad a = b + s c, all threads, 3 x 4 bytes per element
};

// quick: about 0.1 s (FMA only, for the % of peak beside results); full: about 2 s, with bandwidth.
Peak measure_peak(bool quick);
nlohmann::json to_json(const Peak& peak);

}  // namespace convlab
