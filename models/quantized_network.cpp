#include "models/quantized_network.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include <fmt/format.h>

#include "kernels/common/error.hpp"

namespace convlab {

Shape layer_input_item(const Network& net, const Layer& l) {
  return l.inputs[0] == Network::kNetworkInput ? net.input_item() : net.layers()[l.inputs[0]].out_item;
}

ConvProblem int8_problem(const Network& net, const Layer& l, std::int64_t batch) {
  if (l.kind == LayerKind::conv) return l.conv.with_batch(batch);
  return ConvProblem{.n = batch, .c = layer_input_item(net, l).item_elems(), .h = 1, .w = 1, .k = l.out_item.c(), .name = l.name};
}

QuantizedWeights quantize_weights(std::span<const float> weight, std::span<const float> bias, std::int64_t rows) {
  QuantizedWeights q;
  q.bias.assign(bias.begin(), bias.end());
  const std::size_t row = weight.size() / static_cast<std::size_t>(rows);
  q.weight.resize(weight.size());
  for (std::int64_t k = 0; k < rows; ++k) {
    const auto w = weight.subspan(static_cast<std::size_t>(k) * row, row);
    float amax = 0;
    for (const float v : w) amax = std::max(amax, std::fabs(v));
    const float scale = std::max(amax / 127.5f, FLT_EPSILON);
    q.weight_scale.push_back(scale);
    for (std::size_t i = 0; i < row; ++i)
      q.weight[static_cast<std::size_t>(k) * row + i] =
          static_cast<std::int8_t>(std::clamp(std::nearbyint(w[i] / scale), -128.0f, 127.0f));
  }
  return q;
}

QuantizedNetwork::QuantizedNetwork(const Network& net, QuantParams input, std::vector<QuantParams> activations,
                                   std::vector<QuantizedWeights> weights, std::string source)
    : net_(net), input_(input), activations_(std::move(activations)), weights_(std::move(weights)), source_(std::move(source)) {
  for (std::size_t i = 0; i < net.layers().size(); ++i)
    if (keeps_input_quantisation(net.layers()[i])) activations_[i] = activation(net.layers()[i].inputs[0]);
}

std::size_t QuantizedNetwork::parameter_bytes() const {
  std::size_t bytes = 0;
  for (const QuantizedWeights& w : weights_)
    bytes += w.weight.size() + (w.weight_scale.size() + w.bias.size()) * sizeof(float);
  return bytes;
}

}  // namespace convlab
