// An int8 network (models/quantized_network.hpp) planned on a GPU runtime: Int8NetworkPlan's
// counterpart on the device, as GpuNetworkPlan is NetworkPlan's. Every activation is quint8 in
// device memory from the QuantStub to the DeQuantStub; the convs and linear layers run an int8
// GPU kernel (kernels/cuda/cuda_int8_kernels.inc), the pools and adds the u8 ops of
// kernels/cuda/ops_int8.cu. Both have the CPU's arithmetic, so every layer's bytes are the CPU
// int8 oracle's (tests/test_gpu_int8_network.cpp checks it on the emulator); only a last softmax,
// run in FP32 on the dequantised logits, may differ in its last bits.
//
// No fusion: each layer is its own launch (the int8 kernels have no residual or pool epilogue yet).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kernels/gpu/gpu_conv.hpp"
#include "models/quantized_network.hpp"

namespace convlab {

class GpuInt8NetworkPlan {
 public:
  // Every conv and linear layer runs `kernel_id` (one of the runtime's int8 kernels) where it
  // supports the layer at this batch, else cuda.22_int8_direct, which runs every problem. Throws
  // InputError when kernel_id is not an int8 kernel of the runtime; std::bad_alloc when the batch
  // does not fit in device memory.
  GpuInt8NetworkPlan(const QuantizedNetwork& q, std::int64_t batch, const std::string& kernel_id, gpu::GpuRuntime& rt);

  Tensor& input() { return host_input_; }  // the FP32 host copy, filled by the caller
  void upload_input();                     // host input -> device (stream-ordered)
  // Launches only: quantise the input, every layer, dequantise the logits (softmax in FP32 last).
  void forward();
  // forward() with each layer's time, synchronising after each (the input's quantisation counts
  // in the first layer's, the output's dequantisation in the last's), for `run --per-layer`.
  void forward_timed(std::span<double> layer_ms);
  void download_output();  // device output -> output() (after synchronize)
  const Tensor& output() const { return host_output_; }

  // Layer `index` alone, on what its inputs' device buffers hold (validate puts the reference's
  // bytes there with set_activation_bytes).
  void run_layer(int index);
  // Layer `index`'s quint8 output (or the quantised input, Network::kNetworkInput), copied from or
  // to the device; both synchronise.
  std::vector<std::uint8_t> activation_bytes(int index);
  void set_activation_bytes(int index, std::span<const std::uint8_t> bytes);
  // Layer `layer`'s output, dequantised on the host (a softmax's: its FP32 output). Synchronises.
  std::vector<float> dequantized(int layer);

  std::int64_t batch() const { return batch_; }
  const MemoryAccount& memory() const { return memory_; }
  // The int8 kernel of each conv or linear layer, in layer order (empty for the others).
  const std::vector<std::string>& kernel_ids() const { return kernel_ids_; }

 private:
  unsigned char* bytes(int index);
  std::size_t size(int index) const;  // bytes of layer `index`'s output (or the quantised input)

  const QuantizedNetwork& q_;
  std::int64_t batch_;
  gpu::GpuRuntime& rt_;
  Tensor host_input_, host_output_;
  gpu::DeviceBuffer input_, quantized_input_, output_, logits_;  // logits_: a last softmax's input
  std::vector<gpu::DeviceBuffer> activations_;                  // quint8, one per layer
  std::vector<std::optional<gpu::GpuInt8Conv>> convs_;
  std::vector<std::string> kernel_ids_;
  MemoryAccount memory_;
};

}  // namespace convlab
