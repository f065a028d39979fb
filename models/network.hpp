// Networks. A Network is the architecture and its weights, independent of batch size; a
// NetworkPlan is that network planned for one batch size with one kernel per conv layer, owning
// every buffer the forward pass touches, so that forward() allocates nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels/common/kernel.hpp"
#include "kernels/common/tensor.hpp"
#include "kernels/cpu/ops.hpp"
#include "models/layer_walk.hpp"

namespace convlab {

enum class LayerKind { conv, max_pool, avg_pool, global_avg_pool, linear, add, softmax };
std::string_view to_string(LayerKind kind);

struct Layer {
  std::string name;  // the PyTorch module name, e.g. "conv1", "layer2.0.conv1"
  LayerKind kind;
  std::vector<int> inputs;  // indices of earlier layers; kNetworkInput for the network input
  Shape out_item;           // output shape of one batch item (n = 1)
  ConvProblem conv;         // conv: the problem at batch 1
  Epilogue epilogue;        // conv: fused activation
  bool relu = false;        // linear, add: ReLU after
  ops::Pool2d pool;         // max_pool, avg_pool
  std::vector<float> weight, bias;  // conv: OIHW; linear: out x in (PyTorch's layouts)
};

// Where a network's parameters come from: seeded initialisation or a safetensors file
// (models/weight_file.hpp). Called with the PyTorch state_dict name ("conv1.weight",
// "bn1.running_var"), the tensor's shape and its fan-in (the channel count for BatchNorm).
using WeightSource = std::function<std::vector<float>(const std::string& name,
                                                      const std::vector<std::int64_t>& shape,
                                                      std::int64_t fan_in)>;
// Deterministic weights drawn from a generator seeded by (seed, name): every tensor is the same
// whatever order it is asked for in. The role comes from the name and rank: conv and linear
// weights are He-normal (std sqrt(2 / fan_in)) so activations stay alive through every layer
// (PyTorch's default uniform init makes small nets' logits hardly depend on the input); biases
// uniform(+-1/sqrt(fan_in)); BatchNorm statistics are non-trivial (gamma in [0.5, 1.5), mean in
// [-0.5, 0.5), var in [0.5, 2)) so that folding them is really exercised.
WeightSource seeded_weights(std::uint64_t seed);
// Deterministic values in [-1, 1) from (seed, stream); used for inputs.
void fill_uniform(std::span<float> out, std::uint64_t seed, std::uint64_t stream);

class Network {
 public:
  static constexpr int kNetworkInput = -1;

  Network(std::string name, Shape input_item, WeightSource weights);

  // Builders: each appends one layer fed by `input` (an earlier layer index, or kNetworkInput)
  // and returns its index. Shapes are resolved here; a mismatch throws InputError.
  int conv(const std::string& name, int input, std::int64_t out_channels, std::int64_t kernel,
           std::int64_t stride, std::int64_t pad, std::int64_t groups, bool bias, Activation activation);
  // The general form (an imported model's): the geometry of `geometry` (output channels, kernel,
  // strides, padding, dilations, groups; its n, c, h, w become the input's), weights as above.
  int conv(const std::string& name, int input, const ConvProblem& geometry, bool bias, Activation activation);
  // A bias-free conv followed by the BatchNorm2d module `bn` (eps 1e-5), folded into the conv's
  // weights and bias here, at build time; the layer is named after the conv and its output is
  // the BatchNorm's output after `activation`.
  int conv_bn(const std::string& name, const std::string& bn, int input, std::int64_t out_channels,
              std::int64_t kernel, std::int64_t stride, std::int64_t pad, std::int64_t groups, Activation activation);
  int max_pool(const std::string& name, int input, ops::Pool2d pool);
  int avg_pool(const std::string& name, int input, ops::Pool2d pool);
  int global_avg_pool(const std::string& name, int input);
  int linear(const std::string& name, int input, std::int64_t out_features, bool relu);
  int add(const std::string& name, int a, int b, bool relu);
  int softmax(const std::string& name, int input);

  const std::string& name() const { return name_; }
  const std::vector<Layer>& layers() const { return layers_; }
  Shape input_item() const { return input_item_; }
  Shape output_item() const { return layers_.empty() ? input_item_ : layers_.back().out_item; }
  std::int64_t parameter_count() const;
  double flops_per_item() const;  // convolutions and linear layers, 2 FLOPs per multiply-add
  // Layer `index`'s minimum work and memory traffic at `batch`, a roofline's coordinates: FLOPs as
  // flops_per_item counts them (0 for pools and adds), and the bytes of its inputs, weights and
  // output each crossing memory once, `element_bytes` per activation and weight element (4 FP32,
  // 1 int8) and 4 per bias. What a kernel really moves is more (reordering, re-reads past the
  // caches): the minimum is what the roofline's bound is computed from.
  struct Work { double flops = 0, bytes = 0; };
  Work layer_work(std::size_t index, std::int64_t batch, int element_bytes) const;

 private:
  Shape item_shape(int input) const;
  int push(Layer layer);

  std::string name_;
  Shape input_item_;
  WeightSource weights_;
  std::vector<Layer> layers_;
};

// Which kernel each conv layer runs: a default, overridden per layer name.
struct KernelSelection {
  std::string default_kernel = "cpu.00_reference";
  std::map<std::string, std::string> per_layer;
  const std::string& for_layer(const std::string& layer) const;
};

// Empty when `kernel_id` (a registry id) supports conv layer `layer` at batch `batch`, else why
// not, naming the kernel and the layer. The one check both executors plan with.
std::string unsupported_reason(const Layer& layer, std::int64_t batch, const std::string& kernel_id);
// Empty when every conv layer of `net` is supported by `kernel_id` at batch 1, else the first
// reason not.
std::string unsupported_reason(const Network& net, const std::string& kernel_id);

struct MemoryAccount {
  std::size_t weights_bytes = 0;      // what the planned kernels and linear layers hold
  std::size_t activations_bytes = 0;  // input + every layer output, at this batch size
  std::size_t workspace_bytes = 0;    // the scratch buffer shared by the conv kernels
};

class NetworkPlan : public LayerWalk {
 public:
  // Plans every layer for `batch` (not timed) and allocates every buffer. Throws InputError for
  // an unknown or unsupporting kernel, std::bad_alloc when the batch does not fit in memory.
  NetworkPlan(const Network& net, std::int64_t batch, const KernelSelection& kernels);

  // forward() (input() -> output()) and forward_timed() are LayerWalk's; they allocate nothing.

  // Only the layout conversions the conv kernels do inside forward() (see
  // PlannedConv::run_layout_changes_only), so their cost can be reported apart. False when no
  // layer's kernel changes layout.
  bool has_layout_changes() const;
  void layout_changes_only();
  // Whether some conv layer's kernel does fewer multiplies than counted (PlannedConv::effective_flops).
  bool effective_flops() const;

  Tensor& input() { return input_; }
  const Tensor& input() const { return input_; }
  const Tensor& output() const { return activations_.back(); }
  const Tensor& activation(int layer) const { return activations_.at(layer); }
  Tensor& activation(int layer) { return activations_.at(layer); }  // to feed forward_layer
  const MemoryAccount& memory() const { return memory_; }
  // The kernel id each conv layer runs, in layer order (empty for non-conv layers): cpu.auto's
  // choice, not cpu.auto, so that the per-layer profile names what ran.
  const std::vector<std::string>& kernel_ids() const { return kernel_ids_; }
  // What a choosing kernel (cpu.auto) chose for conv layer `layer`, and why; empty otherwise.
  std::string explain(int layer) const { return convs_.at(layer) ? convs_[layer]->explain() : std::string(); }

 private:
  void run_layer(std::size_t layer, const Operands& x) override;
  float* buffer(int index) override;

  Tensor input_;
  std::vector<Tensor> activations_;
  std::vector<std::unique_ptr<PlannedConv>> convs_;  // null for non-conv layers
  std::vector<std::string> kernel_ids_;
  std::unique_ptr<float[], detail::AlignedFree> workspace_;
  MemoryAccount memory_;
};

}  // namespace convlab
