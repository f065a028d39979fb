// The measurement protocol, identical for every backend:
//   1. the caller plans the workload (not timed);
//   2. cold run: the first run after planning, timed alone and reported apart;
//   3. warmup: W untimed runs;
//   4. T trials, each: synchronize, read clock, run, synchronize, read clock. Every trial is kept.
// Resident memory is read before the cold run and after the trials; the high-water mark is reset
// before the cold run so that the peak covers the runs alone.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "bench/harness/clock.hpp"
#include "bench/harness/device.hpp"

namespace convlab {

struct Protocol {
  int warmup = 10;
  int trials = 100;
  // Interleaved rounds: before each timed run, untimed runs of the same workload for at least this
  // long (one at least). See measure_interleaved.
  double settle_ms = 1.0;
};

struct Measurement {
  double cold_ms = 0;
  std::vector<double> samples_ms;         // host time of each trial, in trial order
  std::vector<double> device_samples_ms;  // device time of each trial, when the device has a clock
  double cold_device_ms = 0;
  std::uint64_t rss_before_bytes = 0, rss_after_bytes = 0, peak_rss_bytes = 0;
  bool peak_rss_is_process_lifetime = false;  // the high-water mark could not be reset
  DeviceMemory device_memory_before, device_memory;  // before the cold run, after the trials
};

// `run` is one forward pass at one batch size, submitted to `device`. Throws InputError when
// trials < 1 or warmup < 0, Interrupted when a SIGINT arrives (bench/harness/interrupt.hpp).
Measurement measure(const std::function<void()>& run, Device& device, const Protocol& protocol,
                    Clock& clock);

// Several workloads measured together, for a machine whose speed drifts (a shared VM, where a
// busy spell can last seconds): the cold runs in order, the warmup runs round-robin, then
// `trials` rounds that each time every workload once, the order rotated each round so that none
// always follows the same one. A slow spell then falls on all of them alike and their ratios
// hold, where one after the other (all of A's trials, then all of B's) compares different spells.
// Each timed run follows untimed runs of the same workload, at least one and at least
// protocol.settle_ms together, so it finds its own data in cache, and the core in the state its
// own work leaves it, as it would one after the other. Without the untimed run, batch-1 layers
// measured 1.1-1.6x slower; with one run (0.1 ms), kernels with Eigen's im2col (3 ms) in the rounds
// still ran 1.5-2.5x slower than without it, and not alike: cpu.07 over cpu.05 on a stride-2
// depthwise layer 1.12-1.18x, where without cpu.01, or after 0.5 ms or more of its own runs, it is
// 0.73-0.99x (Zen 5 VM, 2026-12-06). What lingers that long (clocks, caches, the vector units'
// power) this VM cannot show; 1 ms covers it there, and costs nothing to a workload that runs longer.
// The resident memory is the set's: every Measurement gets the same figures. measure() is the
// case of one workload. A workload marked `alone` (the oracle) is measured by itself after the
// rounds, in its place among the results: long scalar runs among the rounds made the next
// workloads' trials up to 2x slower (Ice Lake VM, 2026-12-03), and nobody compares its speed closely.
struct Workload {
  std::function<void()> run;
  Device* device;
  bool alone = false;
};
std::vector<Measurement> measure_interleaved(const std::vector<Workload>& workloads, const Protocol& protocol,
                                             Clock& clock);

}  // namespace convlab
