// cpu.auto's threads for a network's whole forward: all of them, or one where that measured faster.
//
// Why: at every layer the threads start together and join at its end (microseconds: `convlab
// peak` prints what a parallel region costs), and, our reading (no counters on the VM), each
// layer reads lines the other core wrote. At batch 1 the small networks' layers take 3-25 us
// each: on a 2-core Zen 5 VM the four small networks ran 1.2-1.5x faster on one thread than on
// two, and cpu.auto choosing one thread layer by layer (one thread won 15 of their 24 layers
// timed alone) gained nothing (docs/kernel-notes.md, "One thread at batch 1"). So the choice is
// the forward's: plan the network on one thread too, time both forwards interleaved
// (plan_timing.hpp) and keep the faster, remembered in cpu.auto's cache. Only cpu.auto and cpu.auto_int8 choose: every other
// kernel runs on the threads it is given, which is what the batch lab's one-thread exercise shows.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kernels/cpu/plan_timing.hpp"
#include "models/network.hpp"
#include "models/quantized_network.hpp"

namespace convlab {

// A network planned with `kernel` for `batch`, its input filled from `seed`, and the threads its
// forward runs on. Plan: NetworkPlan (FP32) or Int8NetworkPlan.
template <class Plan>
struct PlannedForwardOf {
  std::shared_ptr<Plan> plan;
  int threads = 1;
  std::string why;  // cpu.auto's measurement, or where it was remembered; empty: not measured

  // The forward on its threads (OpenMP's for the rest of the process untouched).
  void forward() const {
    const cpu::ScopedMaxThreads scope(threads);
    plan->forward();
  }
};
using PlannedForward = PlannedForwardOf<NetworkPlan>;
using PlannedInt8Forward = PlannedForwardOf<Int8NetworkPlan>;

// `model` names the network in cpu.auto's cache (with the batch and the threads). cpu.auto and
// cpu.auto_int8 choose; every other kernel runs on all threads.
PlannedForward plan_forward(const Network& net, const std::string& model, std::int64_t batch, const std::string& kernel,
                            std::uint64_t seed);
PlannedInt8Forward plan_int8_forward(const QuantizedNetwork& q, const std::string& model, std::int64_t batch,
                                     const std::string& kernel, std::uint64_t seed);

}  // namespace convlab
