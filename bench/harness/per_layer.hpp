// `convlab run --per-layer`: where the forward pass spends its time. Each layer is timed with
// steady_clock inside NetworkPlan::forward_timed (a separate entry point: the plain forward()
// used for the latency figures pays nothing for it), over the run's warmup and trials; the
// median per layer and its share of the sum of medians show which convolution dominates at
// batch 1 and which at batch 32.
#pragma once

#include <string>
#include <vector>

#include "bench/harness/harness.hpp"
#include "models/gpu_network.hpp"
#include "models/network.hpp"
#include "models/quantized_network.hpp"

namespace convlab {

struct LayerTime {
  std::string layer;
  LayerKind kind;
  std::string kernel;   // conv layers: the kernel that ran it
  double median_ms = 0;
  double share = 0;     // median_ms / the sum of every layer's median
};

// Either plan: each has forward_timed (GpuNetworkPlan's synchronises after each layer) and
// kernel_ids (the kernel of each conv layer).
std::vector<LayerTime> profile_layers(NetworkPlan& plan, const Network& net, const Protocol& protocol);
std::vector<LayerTime> profile_layers(GpuNetworkPlan& plan, const Network& net, const Protocol& protocol);
std::vector<LayerTime> profile_layers(Int8NetworkPlan& plan, const Network& net, const Protocol& protocol);
std::string describe(const std::vector<LayerTime>& times);

}  // namespace convlab
