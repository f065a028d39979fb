// A network planned on a GPU runtime (kernels/gpu/runtime.hpp: CUDA's or Metal's, on the device
// or on the CPU emulator running the same kernel sources): the GPU counterpart of NetworkPlan.
// Weights are uploaded once here; every activation lives in device memory for the whole forward,
// and only the input and the output cross to the host, when asked (upload_input,
// download_output), so model-only and with-transfers runs are timed apart.
//
// A conv whose output only feeds the layer right after it writes that layer's output itself,
// and its own output is never materialised (see materialised()):
// - a residual add (ResNet's second conv): the conv's epilogue adds the other branch and applies
//   the add's ReLU;
// - a max, average or global average pool, where the conv's kernel can pool in its last pass
//   (the kernel's row says fuses_pool: cuda.06's reduction, so at batch 1 lab-cnn's pool2 and its
//   global average pool). The forward then has one launch fewer per fused layer.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kernels/gpu/gpu_conv.hpp"
#include "models/network.hpp"

namespace convlab {

class GpuNetworkPlan : public LayerWalk {
 public:
  // kernels: a kernel id of the runtime's backend per conv layer (cuda.00_naive ... cuda.auto on
  // CUDA, metal.00_naive ... metal.auto on Metal). Throws InputError when one is not a kernel of
  // that backend or does not support its layer; std::bad_alloc when the batch does not fit in
  // device memory.
  GpuNetworkPlan(const Network& net, std::int64_t batch, const KernelSelection& kernels, gpu::GpuRuntime& rt,
                 bool fuse = true);

  Tensor& input() { return host_input_; }  // the host copy, filled by the caller
  void upload_input();                     // host input -> device (stream-ordered)
  void download_output();                  // device output -> output() (after synchronize)
  const Tensor& output() const { return host_output_; }
  // forward() (every layer, on the device; launches only) and forward_timed() are LayerWalk's.
  // Timed, a layer fused into the conv before it shows about 0: its work is in the conv's time.

  // For checking: layer i's output copied to the host (synchronises). Throws InputError for a
  // conv fused into the following layer: its output never exists.
  Tensor download_activation(int layer);
  bool materialised(int layer) const { return !fused_[static_cast<std::size_t>(layer)]; }

  const MemoryAccount& memory() const { return memory_; }
  // The kernel that runs each conv layer, in layer order (empty for other layers): an auto
  // kernel's choice, not cuda.auto or metal.auto. As NetworkPlan::kernel_ids(), for the per-layer profile.
  const std::vector<std::string>& kernel_ids() const { return kernel_ids_; }
  // "cuda.02_implicit_gemm", with "+ residual add fused" or "+ max_pool fused" (the layer after
  // it) where that applies; empty for other layers.
  std::string explain(int layer) const;

 private:
  void run_layer(std::size_t layer, const Operands& x) override;
  float* buffer(int index) override;
  void synchronize() override { rt_.synchronize(); }

  gpu::GpuRuntime& rt_;
  Tensor host_input_, host_output_;
  gpu::DeviceBuffer input_;
  std::vector<gpu::DeviceBuffer> activations_;    // empty for a fused conv
  std::vector<std::optional<gpu::GpuConv>> convs_;
  std::vector<gpu::DeviceBuffer> linear_weights_, linear_biases_;  // by layer; empty elsewhere
  std::vector<bool> fused_;                        // conv i writes layer i + 1's output
  std::vector<std::string> kernel_ids_;
  MemoryAccount memory_;
};

}  // namespace convlab
