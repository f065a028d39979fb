// Int8 networks: post-training static quantisation of a Network, as PyTorch's eager-mode recipe
// does it (BatchNorm already folded into the convs by Network::conv_bn), with the arithmetic of
// kernels/common/quantize.hpp; and the plan that runs one in int8 from input to logits.
//
// Calibration (min/max observer): the FP32 network runs on calibration inputs and each
// activation's range, widened to include 0, becomes its quint8 scale (range / 255) and zero point.
// Weights: per output channel, symmetric: scale = max|w| / 127.5, q = clamp(nearbyint(w / scale),
// -128, 127), PyTorch's per_channel_symmetric qint8. Pools keep their input's quantisation; an add
// has its own; the network's input is quantised (QuantStub) and its output dequantised
// (DeQuantStub) inside the timed forward, as a quantised PyTorch model does.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/common/int8_kernel.hpp"
#include "models/network.hpp"
#include "models/observer.hpp"

namespace convlab {

// Conv and linear layers carry int8 weights and run on int8 kernels.
inline bool has_int8_weights(const Layer& l) { return l.kind == LayerKind::conv || l.kind == LayerKind::linear; }
// Pools keep their input's quantisation (a max commutes with the affine map, an average nearly).
inline bool keeps_input_quantisation(const Layer& l) {
  return l.kind == LayerKind::max_pool || l.kind == LayerKind::avg_pool || l.kind == LayerKind::global_avg_pool;
}

// The item shape layer `l` reads (its first input's).
Shape layer_input_item(const Network& net, const Layer& l);
// The problem an int8 kernel runs for a conv or linear layer; a linear layer is the 1x1
// convolution of in_features channels of one pixel.
ConvProblem int8_problem(const Network& net, const Layer& l, std::int64_t batch);

struct QuantizedWeights {  // a conv's or a linear layer's
  std::vector<std::int8_t> weight;  // PyTorch's layout (OIHW, or out x in)
  std::vector<float> weight_scale, bias;
};

class QuantizedNetwork {
 public:
  // Calibrates on `calibration` (FP32 inputs, whole batch items of net's input shape), fed 16 at a
  // time as PyTorch's calibration loop feeds them, each activation's range from `observer`
  // (models/observer.hpp) over [0, quant_max] (kReducedQuantMax: PyTorch's reduce_range), and
  // quantises every weight. Throws InputError when the network holds a layer int8 cannot run (a
  // softmax anywhere but last).
  QuantizedNetwork(const Network& net, std::span<const float> calibration, std::string source,
                   Observer observer = Observer::minmax, std::int32_t quant_max = kQuantMax);
  // From given parts (an interchange file, models/quantized_file.hpp): the input's and each
  // layer's quantisation (the pools' are made their input's here) and each conv and linear
  // layer's weights.
  QuantizedNetwork(const Network& net, QuantParams input, std::vector<QuantParams> activations,
                   std::vector<QuantizedWeights> weights, std::string source);

  const Network& network() const { return net_; }
  QuantParams input() const { return input_; }
  // Layer `index`'s output quantisation, or the input's for Network::kNetworkInput.
  QuantParams activation(int index) const { return index == Network::kNetworkInput ? input_ : activations_.at(index); }
  const QuantizedWeights& weights(int layer) const { return weights_.at(layer); }
  // Where the activations' quantisation came from, e.g. "min/max calibration on 32 seeded inputs".
  const std::string& source() const { return source_; }
  // The model's parameters as stored: int8 weights, FP32 per-channel scales and biases.
  std::size_t parameter_bytes() const;

 private:
  const Network& net_;
  QuantParams input_;
  std::vector<QuantParams> activations_;  // one per layer (a softmax's is unused)
  std::vector<QuantizedWeights> weights_;  // conv and linear layers; empty for the others
  std::string source_;
};

// Per output channel symmetric qint8 of `rows` rows of `weight`.
QuantizedWeights quantize_weights(std::span<const float> weight, std::span<const float> bias, std::int64_t rows);

class Int8NetworkPlan {
 public:
  // Every conv and linear layer runs `kernel_id` (an int8 kernel) where it supports the layer at
  // this batch, else the first other int8 kernel of ours that does (the depthwise one), else
  // cpu.20_int8_reference. Throws InputError for an unknown kernel id.
  Int8NetworkPlan(const QuantizedNetwork& q, std::int64_t batch, const std::string& kernel_id);

  // The FP32 input: forward() quantises it, runs every layer on quint8 and dequantises the output.
  Tensor& input() { return input_; }
  void forward();
  // forward() with each layer's time in layer_ms (one per layer; the input's quantisation counts in
  // the first layer's, the output's dequantisation in the last's), for `run --per-layer`.
  void forward_timed(std::span<double> layer_ms);
  const Tensor& output() const { return output_; }
  // Layer `layer`'s output of the last forward, dequantised (a softmax's: its FP32 output).
  std::vector<float> dequantized(int layer) const;
  // Layer `index` alone, on what the buffers of its inputs hold: `validate` puts the reference's
  // bytes there (activation_bytes) to judge each layer on its own inputs.
  void run_layer(int index);
  // The quint8 buffer of layer `index`'s output, or of the quantised input (Network::kNetworkInput).
  std::span<std::uint8_t> activation_bytes(int index);

  std::int64_t batch() const { return batch_; }
  const MemoryAccount& memory() const { return memory_; }
  // The int8 kernel each conv or linear layer runs, in layer order (empty for the others).
  const std::vector<std::string>& kernel_ids() const { return kernel_ids_; }
  // Why a layer's kernel was chosen (cpu.auto_int8's measurement), empty when nothing chose.
  std::string explain(int layer) const { return convs_.at(layer) ? convs_[layer]->explain() : std::string(); }

 private:
  const std::uint8_t* bytes(int index) const;

  const QuantizedNetwork& q_;
  std::int64_t batch_;
  Tensor input_, output_;
  std::vector<std::uint8_t> quantized_input_;
  std::vector<std::vector<std::uint8_t>> activations_;
  std::vector<std::unique_ptr<PlannedInt8Conv>> convs_;  // null for the layers that are not conv or linear
  std::vector<std::string> kernel_ids_;
  std::unique_ptr<float[], detail::AlignedFree> workspace_;
  MemoryAccount memory_;
};

}  // namespace convlab
