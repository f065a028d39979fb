// Timing planned kernels inside plan, for the kernels that choose by measuring (cpu.auto between
// kernels, cpu.02 between register tiles): buffers sized for all of them, one timed run, and
// the autos' interleaved measurement.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include <omp.h>

#include "kernels/common/int8_kernel.hpp"
#include "kernels/common/kernel.hpp"
#include "kernels/common/tensor.hpp"
#include "kernels/common/timing_memory.hpp"

namespace convlab::cpu {

// For each of `plans`, all planned for problem p, its own input (a fixed pattern: timing does not
// depend on the values, but for int8 kernels on whether the bytes are under 128:
// set_input_levels), output and workspace. FP32 kernels read floats, int8 kernels
// (PlannedInt8Conv) bytes.
// Its own, as in `conv`'s timing (bench/harness/conv_bench.cpp) and in a network, where no other
// kernel has just read a layer's input: shared buffers let each candidate find the data another
// left in cache, which favours some over others. mobilenet-v2's strided depthwise layer at batch
// 32 (14.4 MB of input, Zen 5 VM): timed on shared buffers cpu.05 ran 0.84-0.90 ms and cpu.07
// 0.92-0.95, on their own 1.07-1.30 and 0.88-1.01; cpu.auto chose cpu.05 in 6 plans of 6 where
// `conv --interleave` then measured cpu.07 1.2x faster.
template <class Plan>
class TimingBuffers {
 public:
  using Value = std::conditional_t<std::is_same_v<Plan, PlannedInt8Conv>, std::uint8_t, float>;

  TimingBuffers(const ConvProblem& p, const std::vector<const Plan*>& plans) : elems_(p.input_elems()) {
    for (const Plan* plan : plans)
      own_.push_back({.plan = plan,
                      .input = timing_floats(floats_for(p.input_elems())),
                      .output = timing_floats(floats_for(p.output_elems())),
                      .workspace = timing_floats((plan->workspace_bytes() + sizeof(float) - 1) / sizeof(float))});
    if constexpr (std::is_same_v<Value, float>) {
      for (const Own& o : own_)
        for (std::int64_t i = 0; i < elems_; ++i) o.input[i] = static_cast<float>(i % 7) * 0.25f - 0.75f;
    } else {
      set_input_levels(256);
    }
  }

  // int8: input bytes over [0, levels), levels <= 256 (128: a seven-bit input, int8_simd.hpp).
  void set_input_levels(int levels) {
    for (const Own& o : own_)
      for (std::int64_t i = 0; i < elems_; ++i) values(o.input)[i] = static_cast<Value>(i * 37 % levels);
  }

  // The output of `plan`'s last run.
  const Value* output(const Plan& plan) const { return values(own(plan).output); }

  // One run of `plan` on its buffers, in milliseconds.
  double time_ms(const Plan& plan) const {
    const Own& o = own(plan);
    const auto start = std::chrono::steady_clock::now();
    plan.run(values(o.input), values(o.output), o.workspace.get());
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }

 private:
  struct Own {
    const Plan* plan;
    TimingFloats input, output, workspace;  // reused from plan to plan in a network (timing_memory.hpp)
  };
  std::vector<Own> own_;
  std::int64_t elems_;

  const Own& own(const Plan& plan) const {
    for (const Own& o : own_)
      if (o.plan == &plan) return o;
    throw std::logic_error("TimingBuffers: a plan it was not made for");
  }
  static Value* values(const TimingFloats& f) { return reinterpret_cast<Value*>(f.get()); }
  static std::size_t floats_for(std::int64_t values) {
    return (static_cast<std::size_t>(values) * sizeof(Value) + sizeof(float) - 1) / sizeof(float);
  }
};
using PlanTimingBuffers = TimingBuffers<PlannedConv>;

// Sets the threads that OpenMP regions and plans read (omp_get_max_threads) for a scope: a plan
// made, or run, on fewer threads than the process has (cpu.auto's network on one thread).
class ScopedMaxThreads {
 public:
  explicit ScopedMaxThreads(int threads) : saved_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~ScopedMaxThreads() { omp_set_num_threads(saved_); }
  ScopedMaxThreads(const ScopedMaxThreads&) = delete;
  ScopedMaxThreads& operator=(const ScopedMaxThreads&) = delete;

 private:
  int saved_;
};

inline double median_of(std::vector<double> v) {
  std::ranges::sort(v);
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The cpu.autos' measurement (FP32 and int8), robust on a noisy machine: each round runs every
// candidate once, in rotated order, so a busy spell falls on all of them; at least 5 rounds and
// 20 ms of timing; a lead under 5% (a close call) gets more rounds, up to 25 or 300 ms; a
// candidate whose fastest run is 30% behind the leader's median after 3 rounds is dropped: its
// fastest, not its median, so that a burst of another guest's work over two of its first three
// runs does not drop it (lab-cnn:conv1 at batch 32: cpu.08 dropped so, cpu.04 chosen, 5.5x
// slower). Each timed run follows an untimed run of the same candidate, as in the harness's
// interleaved trials (bench/harness/harness.hpp; there 1 ms of them at least, here one, which
// keeps plan time bounded on tiny layers): a kernel is then timed with its own weights
// and workspace in cache, as it runs in a network, not after the other candidates' (timed cold,
// Winograd F(2x2) lost 17% against the direct kernel on an 8x8 layer, where warm it wins by as
// much). spent_ms counts both runs: the cost.
// A lead the fastest runs contradict is not clear either: where the median leader's fastest run
// is 5% behind another candidate's fastest, and that candidate's median 5% behind the leader's,
// bursts of another guest's work fell on that candidate's runs more than on the others' (another
// process's work only ever adds time): more rounds, up to the budget. cpu.02's tiles for resnet18's
// layer4.0.conv1 at batch 8 (Zen 5) beside a script busy in 5-60 ms bursts: the medians alone chose
// 4 x 7 or 3 x 9 over 2 x 14 in 5 plans of 24, by "clear" leads; with this rule 1 of 24 (no fastest
// run 5% ahead of its). Unloaded, 2 x 14 in 12 of 12. One such choice had stayed in cpu.auto's file
// here and cost 6-12% in every later run.
// A choice still contradicted when the budget is spent is not `settled`: the callers use it, and
// do not remember it (remembered_note).
struct InterleavedTiming {
  std::vector<std::vector<double>> ms;  // per candidate, its timed runs
  std::vector<double> median;
  std::vector<bool> dropped;
  int rounds = 0;
  double spent_ms = 0;
  bool settled = true;  // no candidate's fastest run contradicts the median leader (above)
};

// What an explanation adds for a choice made on contradicted timings, which is not remembered.
inline const char* remembered_note(bool settled) {
  return settled ? "" : "; not remembered: the fastest runs contradict the medians (another process's bursts)";
}
inline const char* remembered_note(const InterleavedTiming& t) { return remembered_note(t.settled); }

// Times candidates 0..n-1 with `time_ms(i)` (one run of candidate i, in ms) until the leader is
// clear or the budget is spent.
template <class TimeOne>
InterleavedTiming time_interleaved(std::size_t n, TimeOne time_ms) {
  constexpr int kMinRounds = 5, kMaxRounds = 25, kDropAfterRounds = 3;
  constexpr double kMinMeasuringMs = 20;  // tiny layers: more rounds, so a median is not one timer tick
  constexpr int kRoundCap = 200;          // ...but no more than this (medians are re-sorted every round)
  constexpr double kCloseCall = 0.05;     // leads under 5% are re-checked with more rounds
  constexpr double kCloseCallBudgetMs = 300;
  constexpr double kDropBehind = 1.3;     // a candidate this much slower stops being timed
  InterleavedTiming t{.ms = std::vector<std::vector<double>>(n), .median = std::vector<double>(n, 0),
                      .dropped = std::vector<bool>(n, false)};
  while (true) {
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = (k + static_cast<std::size_t>(t.rounds)) % n;
      if (t.dropped[i]) continue;
      if (n > 1) t.spent_ms += time_ms(i);  // untimed: this candidate's data back in cache
      t.ms[i].push_back(time_ms(i));
      t.spent_ms += t.ms[i].back();
    }
    ++t.rounds;
    double leader = INFINITY;
    for (std::size_t i = 0; i < n; ++i)
      if (!t.dropped[i]) leader = std::min(leader, t.median[i] = median_of(t.ms[i]));
    if (t.rounds >= kDropAfterRounds)
      for (std::size_t i = 0; i < n; ++i)
        t.dropped[i] = t.dropped[i] || std::ranges::min(t.ms[i]) > kDropBehind * leader;
    if (t.rounds < kMinRounds || (t.spent_ms < kMinMeasuringMs && t.rounds < kRoundCap)) continue;
    double runner_up = INFINITY, leader_fastest = INFINITY;
    std::size_t active = 0;
    for (std::size_t i = 0; i < n; ++i) {
      active += !t.dropped[i];
      if (!t.dropped[i] && t.median[i] > leader) runner_up = std::min(runner_up, t.median[i]);
      if (!t.dropped[i] && t.median[i] == leader) leader_fastest = std::ranges::min(t.ms[i]);
    }
    t.settled = true;
    for (std::size_t i = 0; i < n; ++i)
      if (!t.dropped[i] && t.median[i] >= (1 + kCloseCall) * leader &&
          (1 + kCloseCall) * std::ranges::min(t.ms[i]) <= leader_fastest)
        t.settled = false;
    const bool clear = t.settled && (active == 1 || runner_up >= (1 + kCloseCall) * leader);
    if (clear || t.rounds >= kMaxRounds || t.spent_ms >= kCloseCallBudgetMs) return t;
  }
}

}  // namespace convlab::cpu
