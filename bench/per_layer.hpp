// `convlab run --per-layer`: where the forward pass spends its time. Each layer is timed with
// steady_clock inside NetworkPlan::forward_timed (a separate entry point: the plain forward()
// used for the latency figures pays nothing for it), over the run's warmup and trials; the
// median per layer and its share of the sum of medians show which convolution dominates at
// batch 1 and which at batch 32.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "bench/harness.hpp"
#include "models/network.hpp"

namespace convlab {

struct LayerTime {
  std::string layer;
  LayerKind kind;
  std::string kernel;   // conv layers: the kernel that ran it
  double median_ms = 0;
  double share = 0;     // median_ms / the sum of every layer's median
};

std::vector<LayerTime> profile_layers(NetworkPlan& plan, const Network& net, const Protocol& protocol);
// The same for any executor: forward_timed fills one time per layer (GpuNetworkPlan's
// synchronises after each layer); kernels names each conv layer's kernel (empty elsewhere).
std::vector<LayerTime> profile_layers(const std::function<void(std::span<double>)>& forward_timed, const Network& net,
                                      const std::vector<std::string>& kernels, const Protocol& protocol);
std::string describe(const std::vector<LayerTime>& times);

}  // namespace convlab
