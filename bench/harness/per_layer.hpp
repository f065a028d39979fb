// `convlab run --per-layer`: where the forward pass spends its time. Each layer is timed with
// steady_clock inside NetworkPlan::forward_timed (a separate entry point: the plain forward()
// used for the latency figures pays nothing for it), over the run's warmup and trials; the
// median per layer and its share of the sum of medians show which convolution dominates at
// batch 1 and which at batch 32.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/harness/harness.hpp"
#include "models/gpu_int8_network.hpp"
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
  // The roofline's coordinates at the row's batch (Network::layer_work): FLOPs (0 for pools and
  // adds) and the minimum bytes moved. Files from before they were recorded read 0.
  double flops = 0, bytes = 0;
  double gflops() const { return median_ms > 0 ? flops / (median_ms * 1e6) : 0; }
  double intensity() const { return bytes > 0 ? flops / bytes : 0; }  // FLOP per byte
};

// Where a layer sits under the roofs of a machine's measured peak (`convlab peak`): the compute
// roof (FMA, or the int8 dot product for int8 rows) and the memory roof (read bandwidth x
// intensity). The bound is the lower of the two; empty when the layer has no FLOPs or a roof is
// not measured.
struct RooflinePoint {
  double roof_gflops = 0;   // min(compute roof, bandwidth x intensity)
  bool memory_bound = false;
  double percent_of_roof = 0;
};
std::optional<RooflinePoint> roofline_point(const LayerTime& t, double compute_gflops, double read_gbs);

// Any plan: each has forward_timed (the GPU plans' synchronise after each layer) and kernel_ids
// (the kernel of each conv layer).
std::vector<LayerTime> profile_layers(NetworkPlan& plan, const Network& net, const Protocol& protocol);
std::vector<LayerTime> profile_layers(GpuNetworkPlan& plan, const Network& net, const Protocol& protocol);
std::vector<LayerTime> profile_layers(Int8NetworkPlan& plan, const Network& net, const Protocol& protocol);
std::vector<LayerTime> profile_layers(GpuInt8NetworkPlan& plan, const Network& net, const Protocol& protocol);
std::string describe(const std::vector<LayerTime>& times);

}  // namespace convlab
