// `convlab validate`: runs a network on a PyTorch input with each chosen kernel and compares every
// layer's output with PyTorch's (tools/export_torch.py writes the three files). The judgement
// (bench/check/tolerance.hpp) is relative to the reference's magnitude.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/check/tolerance.hpp"
#include "kernels/gpu/runtime.hpp"
#include "models/network.hpp"
#include "models/safetensors.hpp"

namespace convlab {

struct LayerComparison {
  std::string layer;      // convlab's layer name; "output" for the logits
  std::int64_t elems = 0;
  double max_abs = 0;     // max |got - expect|
  double max_rel = 0;     // max |got - expect| / |expect| where |expect| >= kRelativeErrorFloor x peak
  double normalised = 0;  // ||got - expect|| / ||expect||
  double peak = 0;        // max |expect|
  // int8 only (bench/check/validate_int8.hpp): the layer's output scale; on the reference's inputs,
  // max |got - expect| in quanta of it and the share of elements a quantum or more apart; the same
  // through the whole network from the input (chained_*, reported, not judged).
  double scale = 0, max_quanta = 0, off_share = 0, chained_quanta = 0, chained_off_share = 0;
  // FP32: the normalised error through the whole network from the input (reported); the numbers
  // above are the layer's own, on the reference's inputs, where `own_inputs`.
  double chained_normalised = 0;
  bool own_inputs = false;  // judged on the reference's inputs (else on the whole network's run)
  bool judged = true;       // false when nothing judges it (int8 without the layer's inputs; the
                            // logits, when their layer was judged on its own inputs)
  bool pass = false;
};

// Compares one layer. NaN or infinity in `got` fails.
LayerComparison compare_layer(const std::string& layer, std::span<const float> got, std::span<const float> expect,
                              const Tolerance& tolerance);

struct KernelValidation {
  std::string kernel;
  int conv_layers = 0, conv_layers_run = 0;  // the kernel ran these; cpu.00_reference the others
  Tolerance tolerance;
  std::vector<LayerComparison> layers;  // in network order, then "output" (unless the last layer is so named)
  std::vector<std::string> not_stored;  // GPU: convs fused into the layer after them (compared there)
  std::string first_divergent;          // the first layer that fails; empty when none
  std::int64_t items = 0, top1_agree = 0;
  bool top1_ok = true;  // every disagreement is a near tie of the reference
  bool pass = false;
};

// Runs `net` on `input` (N x C x H x W) and compares each layer that `expect` holds. On the CPU each
// layer whose inputs `expect` holds is judged run alone on them, so that its error is its own and
// does not grow with depth (a 50-layer network amplifies the first layers' rounding tenfold); the
// whole network's run from the input is reported beside it, and its logits judged by top-1. GPU
// kernels are judged on the whole network's run (their plans fuse layers). `kernel_id`
// runs every conv layer it supports and the backend's simplest kernel the others (cpu.00_reference,
// cuda.00_naive, metal.00_naive), so that a kernel made for one kind of layer (depthwise, 1x1) is
// validated inside real networks too. GPU kernels run on `gpu` (the device, or the CPU emulator of
// their backend), the whole network on it. Throws InputError when the kernel supports no conv
// layer of the network, or a GPU kernel comes without a runtime.
KernelValidation validate_kernel(const Network& net, const StoredTensor& input, const TensorFile& expect,
                                 const std::string& kernel_id, gpu::GpuRuntime* gpu = nullptr);

// The kernels of `backend` that support at least one conv layer of `net`, in list order.
std::vector<std::string> kernels_covering(const Network& net, Backend backend);

// Checks that input and expect fit `net` before any kernel runs; throws InputError naming the
// offending tensor.
void check_reference(const Network& net, const TensorFile& input, const TensorFile& expect);

// Counts the items whose predicted class matches the reference's; a flip fails unless the
// reference's top-2 margin is within `near_tie`. Then sets first_divergent and pass from v.layers.
void judge_top1(KernelValidation& v, std::span<const float> got_logits, std::span<const float> want_logits,
                std::int64_t batch, double near_tie);

std::string describe(const KernelValidation& v);  // a per-layer table and the verdict
nlohmann::json to_json(const KernelValidation& v);

}  // namespace convlab
